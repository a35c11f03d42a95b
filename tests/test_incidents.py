"""Misfires and the review of capability tasks (docs/CAPABILITIES.md) through the command
line on real stores:
each of the four classes opens exactly one incident, published on `_system` topic
`_system.capability.review`; `incident list|show|resolve`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from freezegun import freeze_time

from tests.capfixtures import published, refused
from tests.conftest import Cli, query

pytestmark = pytest.mark.cli

T0 = "2026-03-01T12:00:00Z"
FIELDS = {
    "id",
    "capability_id",
    "delegation_skill",
    "executor_skill",
    "failure_class",
    "sample_corr_ids",
    "created_at",
    "state",
}


@pytest.fixture(autouse=True)
def frozen():
    with freeze_time(T0):
        yield


@pytest.fixture
def review(cli: Cli, store, tmp_path) -> None:
    """`review` published (owner rev), and ops listening on the review topic."""
    cli.ok("subscribe", "_system", "_system.capability.review", "--as", "ops")
    published(cli, tmp_path)


def _task(cli: Cli, accept: bool = True) -> int:
    tid = int(
        cli.ok("task", "create", "--capability", "review", "check PR 7", "--as", "alice").stdout
    )
    if accept:
        cli.ok("task", "accept", str(tid), "--as", "rev")
    return tid


def _incidents(cli: Cli, *args: str) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = cli.ok("incident", "list", *args, "--json").json()["incidents"]
    return docs


def _published(cli: Cli) -> list[dict[str, Any]]:
    """The review notifications ops received."""
    msgs = cli.ok("receive", "--as", "ops", "--json").json()["messages"]
    assert all(m["topic"] == "_system.capability.review" for m in msgs)
    return [json.loads(m["content"]) for m in msgs]


def _state(cli: Cli, tid: int) -> str:
    state: str = cli.ok("task", "show", str(tid), "--json").json()["state"]
    return state


def test_an_eta_breach_opens_one_incident_on_the_first_tick_only(cli, store, review):
    tid = _task(cli)
    corr = cli.ok("task", "show", str(tid), "--json").json()["correlation_id"]
    with freeze_time("2026-03-01T12:10:00Z"):
        cli.ok("tick")
    with freeze_time("2026-03-01T12:20:00Z"):
        cli.ok("tick")  # a second tick: nothing new
        cli.ok("task", "list", "--json")  # readers catch up too: still nothing new
    [inc] = _incidents(cli)
    assert FIELDS <= set(inc)
    assert {k: inc[k] for k in FIELDS - {"id"}} == {
        "capability_id": "review",
        "delegation_skill": "skills/review-request@1.2",
        "executor_skill": "skills/review-exec@1.0",
        "failure_class": "eta_breach",
        "sample_corr_ids": [corr],
        "created_at": "2026-03-01T12:10:00.000Z",
        "state": "open",
    }
    assert inc["task_id"] == tid
    doc = cli.ok("task", "show", str(tid), "--json").json()
    assert doc["state"] == "incident"
    assert [e["event"] for e in doc["history"]][-2:] == ["overdue", "incident"]
    assert doc["history"][-1]["incident_id"] == inc["id"]
    [note] = _published(cli)
    assert note["id"] == inc["id"] and note["failure_class"] == "eta_breach"


def test_a_terminal_execution_error_opens_one_incident(cli, store, review):
    tid = _task(cli)
    cli.ok("task", "fail", str(tid), "--reason", "the repository is gone", "--as", "rev")
    cli.ok("tick")
    [inc] = _incidents(cli)
    assert (inc["failure_class"], inc["task_id"]) == ("execution_error", tid)
    doc = cli.ok("task", "show", str(tid), "--json").json()
    assert doc["state"] == "failed"  # final stays final; the incident is in its history
    assert [e["event"] for e in doc["history"]][-2:] == ["failed", "incident"]
    assert [n["failure_class"] for n in _published(cli)] == ["execution_error"]


def test_an_output_failing_its_schema_is_refused_and_opens_one_incident(cli, store, review):
    tid = _task(cli)
    for body in ('{"verdict": "maybe"}', "looks good to me"):
        r = cli("task", "complete", str(tid), body, "--as", "rev", "--json")
        assert r.exit_code == 3 and (r.error["code"], r.error["field"]) == (
            "output_mismatch",
            "body",
        )
    assert (
        "does not match"
        in cli("task", "complete", str(tid), '{"findings": []}', "--as", "rev", "--json").error[
            "message"
        ]
    )
    [inc] = _incidents(cli)  # one per task, however many tries
    assert inc["failure_class"] == "output_mismatch" and inc["task_id"] == tid
    assert "verdict" in inc["samples"][0]["error"]
    assert _state(cli, tid) == "incident"
    assert query(store, "SELECT count(*) FROM messages WHERE type = 'response'") == [(0,)]
    # the owner may still answer within the contract
    cli.ok("task", "complete", str(tid), '{"verdict": "ok"}', "--as", "rev")
    assert _state(cli, tid) == "completed"
    assert len(_published(cli)) == 1


def test_repeated_routing_misses_open_one_incident_per_threshold(cli, store, review, monkeypatch):
    monkeypatch.setenv("ACOMM_CAP_MISS_THRESHOLD", "2")
    cli.ok("capability", "unpublish", "review")

    def miss() -> None:
        r = cli("task", "create", "--capability", "review", "x", "--as", "alice")
        assert r.exit_code == 5

    miss()
    assert _incidents(cli) == []
    miss()
    [inc] = _incidents(cli)
    assert inc["failure_class"] == "routing_miss" and inc["sample_corr_ids"] == []
    assert [s["reason"] for s in inc["samples"]] == ["unpublished", "unpublished"]
    miss()  # counted, below the threshold again
    assert len(_incidents(cli)) == 1
    miss()
    assert [i["failure_class"] for i in _incidents(cli)] == ["routing_miss"] * 2


def test_misses_outside_the_window_do_not_add_up(cli, store, review, monkeypatch):
    monkeypatch.setenv("ACOMM_CAP_MISS_THRESHOLD", "2")
    monkeypatch.setenv("ACOMM_CAP_MISS_WINDOW", "10m")
    cli("task", "create", "--capability", "review", "--to", "bob", "x", "--as", "alice")
    with freeze_time("2026-03-01T12:11:00Z"):
        cli("task", "create", "--capability", "review", "--to", "bob", "x", "--as", "alice")
    assert _incidents(cli) == []
    assert query(store, "SELECT count(*) FROM routing_misses") == [(2,)]


def test_tasks_without_a_capability_or_for_distribution_open_none(cli, store, review):
    plain = int(cli.ok("task", "create", "--to", "bob", "x", "--as", "alice").stdout)
    cli.ok("task", "accept", str(plain), "--eta", "1m", "--as", "bob")
    with freeze_time("2026-03-01T13:00:00Z"):
        cli.ok("tick")
    assert _state(cli, plain) == "overdue" and _incidents(cli) == []


def test_resolve_show_and_list_by_state(cli, store, review):
    tid = _task(cli)
    cli.ok("task", "fail", str(tid), "--reason", "broke", "--as", "rev")
    [inc] = _incidents(cli, "--state", "open")
    iid = str(inc["id"])
    assert cli.ok("incident", "show", iid, "--json").json()["failure_class"] == "execution_error"
    with freeze_time("2026-03-01T13:00:00Z"):
        doc = cli.ok(
            "incident", "resolve", iid, "--note", "retried by hand", "--as", "lead", "--json"
        ).json()
    assert (doc["state"], doc["changed"], doc["note"], doc["resolved_by"], doc["resolved_at"]) == (
        "resolved",
        True,
        "retried by hand",
        "lead",
        "2026-03-01T13:00:00.000Z",
    )
    again = cli.ok("incident", "resolve", iid, "--json").json()
    assert again["changed"] is False and again["note"] == "retried by hand"
    assert _incidents(cli, "--state", "open") == []
    assert [i["id"] for i in _incidents(cli, "--state", "resolved")] == [inc["id"]]


def test_unknown_incidents_and_bad_states_are_refused(cli, store, review):
    refused(cli, store, ["incident", "show", "99"], 4, "not_found", "incident")
    refused(cli, store, ["incident", "resolve", "99"], 4, "not_found", "incident")
    assert cli("incident", "list", "--state", "closed").exit_code == 3
