"""Tasks: the lifecycle between agents of one store, through the command line on
real stores; time moved with freezegun in process and faketime for the installed program."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from acomm_cli.engine import opening, tasks
from acomm_cli.store import write
from tests.conftest import ACOMM, Cli, query, snapshot

pytestmark = pytest.mark.cli

T0 = "2026-03-01T12:00:00Z"
T0_MS = 1772366400000


def _create(
    cli: Cli, body: str = "run the tests", *extra: str, to: str = "bob", by: str = "alice"
) -> int:
    return int(cli.ok("task", "create", "--to", to, body, "--as", by, *extra).stdout)


def _show(cli: Cli, task_id: int) -> dict[str, Any]:
    doc: dict[str, Any] = cli.ok("task", "show", str(task_id), "--json").json()
    return doc


def _events(doc: dict[str, Any]) -> list[str]:
    return [e["event"] for e in doc["history"]]


@pytest.fixture(autouse=True)
def frozen():
    """Every test runs at T0 unless it moves the clock itself (an inner freeze_time)."""
    with freeze_time(T0):
        yield


@pytest.fixture
def started(cli: Cli, store: Path) -> int:
    """alice's task for bob, accepted with a 10 minute ETA at T0."""
    tid = _create(cli)
    cli.ok("task", "accept", str(tid), "--eta", "10m", "--plan", "unit first", "--as", "bob")
    return tid


# ---------------------------------------------------------------- the lifecycle


def test_create_sends_the_owner_a_command_and_both_sides_see_the_task(cli, store, tmp_path):
    (tmp_path / "s.json").write_text("{}")  # a capability must be published
    cli.ok("capability", "host", "bob", "skills/run@1")
    cli.ok(
        "capability",
        "publish",
        "test-runner",
        "--owner",
        "bob",
        "--delegation-skill",
        "skills/ask@1",
        "--executor-skill",
        "skills/run@1",
        "--schema",
        str(tmp_path / "s.json"),
        "--eta",
        "1h",
    )
    with freeze_time(T0):
        tid = _create(cli, "run the tests", "--capability", "test-runner")
    inbox = cli.ok("receive", "--as", "bob", "--json").json()["messages"]
    assert [(m["id"], m["type"], m["sender"], m["channel"]) for m in inbox] == [
        (tid, "command", "alice", "_dm:alice:bob")
    ]
    assert inbox[0]["metadata"]["capability"] == "test-runner"
    doc = _show(cli, tid)
    assert {
        k: doc[k] for k in ("id", "capability", "from", "to", "state", "eta_at", "progress")
    } == {
        "id": tid,
        "capability": "test-runner",
        "from": "alice",
        "to": "bob",
        "state": "created",
        "eta_at": "2026-03-01T13:00:00.000Z",
        "progress": 0,
    }
    assert doc["correlation_id"] == inbox[0]["correlation_id"]
    assert doc["history"] == [
        {
            "at": "2026-03-01T12:00:00.000Z",
            "event": "created",
            "by": "alice",
            "progress": None,
            "note": None,
            "eta_at": "2026-03-01T13:00:00.000Z",
            "event_id": doc["history"][0]["event_id"],
            "message_id": tid,
            "origin_node": None,
        }
    ]
    for who in ("alice", "bob"):  # creator and owner alike
        listed = cli.ok("task", "list", "--as", who, "--json").json()
        assert [t["id"] for t in listed["tasks"]] == [tid] and listed["total_count"] == 1
    assert cli.ok("task", "list", "--as", "carol", "--json").json()["tasks"] == []


def test_create_reads_the_body_from_stdin(cli, store):
    tid = int(
        cli.ok("task", "create", "--to", "bob", "--as", "alice", input="from a pipe\n").stdout
    )
    assert cli.ok("show", str(tid), "--json").json()["content"] == "from a pipe\n"


def test_accept_records_the_eta_and_acknowledges_in_progress(cli, started):
    doc = _show(cli, started)
    assert doc["state"] == "accepted"
    assert doc["eta_at"] == "2026-03-01T12:10:00.000Z" and doc["plan"] == "unit first"
    assert doc["history"][-1]["event"] == "accepted"
    assert doc["history"][-1]["eta_at"] == "2026-03-01T12:10:00.000Z"
    # the creator hears it as the ack of the task's command message, carrying the ETA
    [ack] = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert ack["type"] == "acknowledgment" and ack["content"] == "unit first"
    assert ack["metadata"] == {
        "task_id": str(started),
        "task_event": "accepted",
        "eta_at": "2026-03-01T12:10:00.000Z",
        "ack_for": str(started),
        "status": "in_progress",
    }
    assert ack["correlation_id"] == doc["correlation_id"]
    [d] = cli.ok("show", str(started), "--json").json()["deliveries"]
    assert (d["recipient"], d["ack_status"]) == ("bob", "in_progress")


def test_accept_takes_an_iso_time_and_works_without_an_eta(cli, store):
    with freeze_time(T0):
        a, b = _create(cli), _create(cli, "other")
        cli.ok("task", "accept", str(a), "--eta", "2026-03-01T15:00:00Z", "--as", "bob")
        cli.ok("task", "accept", str(b), "--as", "bob")
    assert _show(cli, a)["eta_at"] == "2026-03-01T15:00:00.000Z"
    assert (_show(cli, b)["state"], _show(cli, b)["eta_at"]) == ("accepted", None)


def test_updates_move_progress_and_keep_every_step_in_the_history(cli, started):
    with freeze_time("2026-03-01T12:02:00Z"):
        cli.ok("task", "update", str(started), "--progress", "40", "--note", "half", "--as", "bob")
    with freeze_time("2026-03-01T12:03:00Z"):
        cli.ok("task", "update", str(started), "--progress", "70", "--as", "bob")
        cli.ok("task", "update", str(started), "--note", "nearly", "--as", "bob")
    doc = _show(cli, started)
    assert (doc["state"], doc["progress"], doc["note"]) == ("updated", 70, "nearly")
    assert _events(doc) == ["created", "accepted", "updated", "updated", "updated"]
    assert [(e["progress"], e["note"]) for e in doc["history"][2:]] == [
        (40, "half"),
        (70, None),
        (None, "nearly"),
    ]
    # progress is the task's, not traffic: the creator's inbox has only the accept's ack
    assert len(cli.ok("receive", "--as", "alice", "--json").json()["messages"]) == 1


def test_complete_answers_the_creator_and_settles_the_delivery(cli, started):
    with freeze_time("2026-03-01T12:05:00Z"):
        out = cli.ok(
            "task", "complete", str(started), "all 412 pass", "--as", "bob", "--json"
        ).json()
    assert (out["state"], out["progress"], out["note"]) == ("completed", 100, "all 412 pass")
    assert out["finished_at"] == "2026-03-01T12:05:00.000Z"
    got = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    response = got[-1]
    assert (response["type"], response["content"], response["id"]) == (
        "response",
        "all 412 pass",
        out["result_message_id"],
    )
    assert response["correlation_id"] == out["correlation_id"]
    assert cli.ok("thread", out["correlation_id"], "--json").json()["messages"][0]["id"] == started
    [d] = cli.ok("show", str(started), "--json").json()["deliveries"]
    assert d["ack_status"] == "completed"


def test_complete_without_a_body_says_so(cli, started):
    cli.ok("task", "complete", str(started), "--as", "bob")
    response = cli.ok("receive", "--as", "alice", "--json").json()["messages"][-1]
    assert response["content"] == f"task {started} completed"
    assert _show(cli, started)["note"] is None


def test_fail_acknowledges_failed_with_the_reason(cli, started):
    out = cli.ok(
        "task", "fail", str(started), "--reason", "the runner is down", "--as", "bob", "--json"
    ).json()
    assert (out["state"], out["note"]) == ("failed", "the runner is down")
    ack = cli.ok("receive", "--as", "alice", "--json").json()["messages"][-1]
    assert (ack["type"], ack["content"], ack["metadata"]["status"]) == (
        "acknowledgment",
        "the runner is down",
        "failed",
    )
    assert ack["id"] == out["result_message_id"]


def test_the_owner_may_decline_a_task_it_never_accepted(cli, store):
    tid = _create(cli)
    cli.ok("task", "fail", str(tid), "--reason", "not mine", "--as", "bob")
    assert _events(_show(cli, tid)) == ["created", "failed"]


def test_a_task_acked_by_hand_still_moves(cli, store):
    """`acomm ack` on the task's message settles the delivery, not the task: the task's own
    commands still work, and send no second, backwards acknowledgement."""
    tid = _create(cli)
    cli.ok("ack", str(tid), "--status", "completed", "--as", "bob")
    cli.ok("task", "accept", str(tid), "--eta", "5m", "--as", "bob")
    cli.ok("task", "complete", str(tid), "done", "--as", "bob")
    assert _show(cli, tid)["state"] == "completed"
    kinds = [m["type"] for m in cli.ok("receive", "--as", "alice", "--json").json()["messages"]]
    assert kinds == ["acknowledgment", "response"]  # the hand ack, then the result


def test_task_list_filters_by_state(cli, started):
    other = _create(cli, "second")
    listed = cli.ok("task", "list", "--state", "created", "--json").json()
    assert [t["id"] for t in listed["tasks"]] == [other]
    assert [t["id"] for t in cli.ok("task", "list", "--json").json()["tasks"]] == [other, started]
    plain = cli.ok("task", "list").stdout.splitlines()
    assert [line.split("\t")[:4] for line in plain] == [
        [str(other), "alice", "bob", "created"],
        [str(started), "alice", "bob", "accepted"],
    ]


# ---------------------------------------------------------------- overdue


def test_tick_marks_a_task_overdue_once_its_eta_passes(cli, started):
    with freeze_time("2026-03-01T12:09:59Z"):
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 0
    with freeze_time("2026-03-01T12:10:00Z"):
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 1
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 0  # once
    doc = _show(cli, started)
    assert doc["state"] == "overdue"
    assert doc["history"][-1] == {
        "at": "2026-03-01T12:10:00.000Z",
        "event": "overdue",
        "by": None,
        "progress": None,
        "note": None,
        "eta_at": "2026-03-01T12:10:00.000Z",
        "event_id": doc["history"][-1]["event_id"],
        "message_id": None,
        "origin_node": None,
    }


def test_a_late_tick_writes_the_same_history(cli, started):
    with freeze_time("2026-03-01T18:00:00Z"):  # six hours late
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 1
    assert _show(cli, started)["history"][-1]["at"] == "2026-03-01T12:10:00.000Z"


def test_an_overdue_task_takes_progress_and_still_completes(cli, started):
    with freeze_time("2026-03-01T12:30:00Z"):
        cli.ok("tick")
        cli.ok("task", "update", str(started), "--progress", "90", "--as", "bob")
        assert _show(cli, started)["state"] == "overdue"  # the ETA stays missed
        cli.ok("task", "complete", str(started), "late but done", "--as", "bob")
    assert _events(_show(cli, started)) == [
        "created",
        "accepted",
        "overdue",
        "updated",
        "completed",
    ]


def test_show_and_list_see_an_overdue_task_before_any_tick(cli, started):
    with freeze_time("2026-03-01T12:11:00Z"):
        assert _show(cli, started)["state"] == "overdue"
        assert cli.ok("task", "list", "--state", "overdue", "--json").json()["total_count"] == 1
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 0  # already marked


def test_finished_tasks_never_become_overdue(cli, started):
    cli.ok("task", "complete", str(started), "--as", "bob")
    with freeze_time("2026-03-02T00:00:00Z"):
        assert cli.ok("tick", "--json").json()["tasks_overdue"] == 0
    assert _show(cli, started)["state"] == "completed"


@pytest.mark.process
def test_the_installed_program_under_faketime(tmp_path, store):
    """The whole lifecycle as a shell script runs it, the clock moved by faketime."""
    if shutil.which("faketime") is None:
        pytest.skip("faketime is not installed (make test installs it)")

    def at(when: str, *args: str) -> str:
        p = subprocess.run(
            ["faketime", "-f", f"@2026-03-01 {when}", ACOMM, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={"ACOMM_STORE": str(store), "PATH": "/usr/bin:/bin", "FAKETIME_DONT_RESET": "1"},
        )
        assert p.returncode == 0, (args, p.stderr)
        return p.stdout

    tid = at(
        "12:00:00", "task", "create", "--to", "bob", "build it", "--eta-required", "--as", "alice"
    ).strip()
    at("12:00:10", "task", "accept", tid, "--eta", "1m", "--as", "bob")
    at("12:00:20", "task", "update", tid, "--progress", "50", "--as", "bob")
    assert '"tasks_overdue": 1' in at("12:05:00", "tick", "--json")
    at("12:06:00", "task", "complete", tid, "built", "--as", "bob")
    rows = query(
        store, "SELECT event, at FROM task_events WHERE task_id = ? ORDER BY seq", int(tid)
    )
    assert [event for event, _ in rows] == [
        "created",
        "accepted",
        "updated",
        "overdue",
        "completed",
    ]
    at_ms = dict(rows)
    # faketime's clock runs on from where it was set, and a loaded machine may take seconds
    # to start a process: each event is dated within a few seconds after its faked time
    for event, offset in [("created", 0), ("accepted", 10), ("updated", 20), ("completed", 360)]:
        assert 0 <= at_ms[event] - (T0_MS + offset * 1000) < 8000, event
    assert at_ms["overdue"] == at_ms["accepted"] + 60_000  # the ETA, not the tick


# ---------------------------------------------------------------- refusals


def _refused(
    cli: Cli, store: Path, args: list[str], status: int, code: str, field: str | None = None
) -> dict[str, Any]:
    before = snapshot(store)
    r = cli(*args, "--json")
    assert r.exit_code == status, (args, r.stdout, r.stderr)
    if status != 2:
        assert r.error["code"] == code, r.error
        if field is not None:
            assert r.error["field"] == field, r.error
    assert snapshot(store) == before, "a refused command changed the store"
    return r.error if status != 2 else {}


def test_accepting_twice_is_refused(cli, store, started):
    err = _refused(
        cli,
        store,
        ["task", "accept", str(started), "--eta", "5m", "--as", "bob"],
        5,
        "invalid_state",
        "task",
    )
    assert "already accepted" in err["message"]


@pytest.mark.parametrize(
    "verb",
    [
        ["accept", "--eta", "5m"],
        ["update", "--progress", "10"],
        ["complete", "done"],
        ["fail", "--reason", "no"],
    ],
)
@pytest.mark.parametrize("who", ["alice", "carol"])  # the creator, a stranger
def test_only_the_owner_acts_on_a_task(cli, store, verb, who):
    tid = _create(cli)
    if verb[0] != "accept":
        cli.ok("task", "accept", str(tid), "--as", "bob")
    err = _refused(
        cli, store, ["task", verb[0], str(tid), *verb[1:], "--as", who], 5, "forbidden", "as"
    )
    assert "only its owner may" in err["message"] and err["owner"] == "bob"


@pytest.mark.parametrize("end", [["complete", "ok"], ["fail", "--reason", "broke"]])
@pytest.mark.parametrize(
    "verb",
    [
        ["update", "--progress", "50"],
        ["complete", "again"],
        ["fail", "--reason", "x"],
        ["accept", "--eta", "5m"],
    ],
)
def test_a_finished_task_takes_no_more_changes(cli, store, started, end, verb):
    cli.ok("task", end[0], str(started), *end[1:], "--as", "bob")
    _refused(
        cli,
        store,
        ["task", verb[0], str(started), *verb[1:], "--as", "bob"],
        5,
        "invalid_state",
        "task",
    )


@pytest.mark.parametrize("verb", [["update", "--progress", "10"], ["complete", "done"]])
def test_work_on_a_task_not_yet_accepted_is_refused(cli, store, verb):
    tid = _create(cli)
    err = _refused(
        cli,
        store,
        ["task", verb[0], str(tid), *verb[1:], "--as", "bob"],
        5,
        "invalid_state",
        "task",
    )
    assert "accept it first" in err["message"]


@pytest.mark.parametrize("progress", ["101", "-1", "1000"])
def test_progress_outside_0_to_100_is_refused(cli, store, started, progress):
    err = _refused(
        cli,
        store,
        ["task", "update", str(started), "--progress", progress, "--as", "bob"],
        3,
        "validation_failed",
        "progress",
    )
    assert progress in err["message"]


def test_an_update_with_nothing_in_it_is_refused(cli, store, started):
    _refused(
        cli,
        store,
        ["task", "update", str(started), "--as", "bob"],
        3,
        "validation_failed",
        "progress",
    )


@pytest.mark.parametrize(
    "verb",
    [
        ["accept", "--eta", "5m"],
        ["update", "--progress", "5"],
        ["complete"],
        ["fail", "--reason", "x"],
        ["show"],
    ],
)
def test_an_unknown_task_is_not_found(cli, store, verb):
    err = _refused(
        cli,
        store,
        ["task", verb[0], "999", *verb[1:], "--as", "bob"]
        if verb[0] != "show"
        else ["task", "show", "999"],
        4,
        "not_found",
        "task",
    )
    assert "task 999" in err["message"]


@pytest.mark.parametrize("eta", ["soon", "0s", "-5m", "2020-01-01T00:00:00Z", ""])
def test_a_bad_eta_is_refused(cli, store, eta):
    tid = _create(cli)
    err = _refused(
        cli,
        store,
        ["task", "accept", str(tid), "--eta", eta, "--as", "bob"],
        3,
        "validation_failed",
        "eta",
    )
    assert "eta" in err["message"]


def test_eta_required_refuses_an_accept_without_one(cli, store):
    tid = _create(cli, "build", "--eta-required")
    err = _refused(
        cli, store, ["task", "accept", str(tid), "--as", "bob"], 3, "validation_failed", "eta"
    )
    assert "requires an ETA" in err["message"]
    cli.ok("task", "accept", str(tid), "--eta", "1h", "--as", "bob")


@pytest.mark.parametrize(
    "args, field",
    [
        (["--to", "bob", "x", "--capability", "bad capability!"], "capability"),
        (["--to", "bob", "x", "--capability", ".hidden"], "capability"),
        (["--to", "alice", "x"], "to"),  # to oneself
        (["--to", "bad agent", "x"], "to"),
        (["--to", "bob", ""], "content"),
    ],
)
def test_bad_input_to_create_leaves_the_store_unchanged(cli, store, args, field):
    _refused(cli, store, ["task", "create", *args, "--as", "alice"], 3, "validation_failed", field)


@pytest.mark.parametrize(
    "args",
    [
        ["task", "create", "x", "--as", "alice"],  # no --to
        ["task", "fail", "1", "--as", "bob"],  # no --reason
        ["task", "update", "1", "--progress", "4.5", "--as", "bob"],
    ],
)
def test_missing_or_malformed_options_are_usage_errors(cli, store, args):
    _create(cli)
    _refused(cli, store, args, 2, "usage")


def test_an_unknown_state_filter_is_refused(cli, store):
    _refused(cli, store, ["task", "list", "--state", "done"], 3, "validation_failed", "state")


# ---------------------------------------------------------------- the engine's contract


def test_record_is_idempotent_by_event_id(store):
    """What federation relies on: the same peer event recorded twice changes the task once."""
    conn = opening.connect(store, create=False)
    try:
        with freeze_time(T0):
            task = tasks.create(conn, "alice", "bob", "do it", T0_MS)
        with write(conn):
            first = tasks.record(
                conn,
                task,
                "accepted",
                agent="bob",
                at=T0_MS + 1,
                eta_at=T0_MS + 60_000,
                event_id="ev-1",
                origin_node="node-b",
            )
        with write(conn):
            again = tasks.record(
                conn,
                tasks.load(conn, task.id),
                "accepted",
                agent="bob",
                at=T0_MS + 1,
                eta_at=T0_MS + 60_000,
                event_id="ev-1",
                origin_node="node-b",
            )
        shown = tasks.load(conn, task.id, history=True)
    finally:
        conn.close()
    assert (first, again) == (True, False)
    assert [(e.event, e.event_id, e.origin_node) for e in shown.history][1:] == [
        ("accepted", "ev-1", "node-b")
    ]
    assert (shown.state, shown.eta_at) == ("accepted", T0_MS + 60_000)


def test_an_incident_is_reachable_and_keeps_a_finished_task_finished(store):
    conn = opening.connect(store, create=False)
    try:
        a = tasks.create(conn, "alice", "bob", "one", T0_MS)
        b = tasks.create(conn, "alice", "bob", "two", T0_MS)
        with write(conn):
            tasks.record(
                conn,
                a,
                "incident",
                agent=None,
                at=T0_MS + 5,
                detail={"failure_class": "eta_breach"},
            )
            tasks.record(conn, b, "failed", agent="bob", at=T0_MS + 5, note="no")
            tasks.record(conn, tasks.load(conn, b.id), "incident", agent=None, at=T0_MS + 6)
        a2, b2 = tasks.load(conn, a.id, history=True), tasks.load(conn, b.id)
    finally:
        conn.close()
    assert a2.state == "incident" and a2.history[-1].detail == {"failure_class": "eta_breach"}
    assert b2.state == "failed"
