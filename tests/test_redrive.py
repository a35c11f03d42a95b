"""Redrive: `deadletter replay --all` with filters, a dry run and a count, in one
transaction; time moved by freezegun."""

from __future__ import annotations

import pytest
from conftest import assert_invariants, query, snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"


@pytest.fixture
def dead(cli, store):
    """Dead letters of every kind, at known times: on `work` (planner -> executor, one try,
    1 s to ack) commands die `max_retries_exceeded` 1 s after they are sent; on `ops` too;
    a query on `work` with a 500 ms timeout dies `expired` (before its ack deadline at 1 s:
    a late tick applies them in due-time order). Returns {name: message id}."""
    for ch in ("work", "ops"):
        cli.ok(
            "channel",
            "create",
            ch,
            "--as",
            "planner",
            "--delivery",
            "at-least-once",
            "--ack-timeout",
            "1s",
            "--max-retries",
            "0",
        )
        cli.ok("channel", "join", ch, "executor", "--as", "planner")
    ids = {}
    with freeze_time(T0) as clock:
        ids["work1"] = _command(cli, "work")  # dies at 00:00:01
        ids["ops1"] = _command(cli, "ops")  # dies at 00:00:01
        ids["query"] = cli.ok(
            "query", "work", "status?", "--as", "planner", "--timeout", "500ms", "--json"
        ).json()["id"]  # expires at 00:00:00.5
        clock.tick(10)
        cli.ok("tick")
        clock.tick(3600)  # an hour later
        ids["work2"] = _command(cli, "work")  # dies at 01:00:11
        clock.tick(10)
        cli.ok("tick")
    return ids


def _command(cli, channel: str) -> int:
    return int(cli.ok("send", channel, "deploy", "--type", "command", "--as", "planner").stdout)


def _dead(cli) -> list[int]:
    return [d["message_id"] for d in cli.ok("deadletter", "list", "--json").json()["dead_letters"]]


def _state(store, mid: int) -> tuple[str, int]:
    return query(
        store,
        "SELECT state, retry_count FROM deliveries WHERE message_id = ? AND recipient = 'executor'",
        mid,
    )[0]


def test_a_dry_run_counts_and_changes_nothing(cli, store, dead):
    before = snapshot(store)
    doc = cli.ok("deadletter", "replay", "--all", "--channel", "work", "--dry-run", "--json").json()
    assert doc == {
        "would_replay": 3,
        "ids": sorted([dead["work1"], dead["query"], dead["work2"]]),
        "deliveries": [
            {"message_id": m, "recipient": "executor"}
            # in the order they died (the query at +0.5 s)
            for m in (dead["query"], dead["work1"], dead["work2"])
        ],
        "skipped": [],
    }
    assert cli.ok("deadletter", "replay", "--all", "--dry-run").stdout == "4\n"
    assert snapshot(store) == before


def test_redrive_by_reason_channel_and_time(cli, store, dead):
    """Each filter narrows; the filters together must all hold; what was replayed is
    unread again with a fresh budget and leaves the dead-letter list; the rest stay."""
    with freeze_time("2026-01-01 02:00:00"):
        doc = cli.ok("deadletter", "replay", "--all", "--reason", "expired", "--json").json()
        assert (doc["replayed"], doc["ids"]) == (1, [dead["query"]])
        assert _state(store, dead["query"]) == ("unread", 0)
        # dead-lettered in the last hour and on `work`: only work2 (ops1 and work1 are older)
        doc = cli.ok(
            "deadletter", "replay", "--all", "--since", "-1h", "--channel", "work", "--json"
        ).json()
        assert (doc["replayed"], doc["ids"]) == (1, [dead["work2"]])
        assert sorted(_dead(cli)) == sorted([dead["work1"], dead["ops1"]])
        # the expired query came back with a fresh lifetime (500 ms from the replay)
        # an ISO time works as well
        out = cli.ok(
            "deadletter",
            "replay",
            "--all",
            "--since",
            "2026-01-01T00:00:00Z",
            "--reason",
            "max_retries_exceeded",
            "--channel",
            "ops",
        )
        assert out.stdout == "1\n"
        assert _dead(cli) == [dead["work1"]]
        got = [m["id"] for m in cli.ok("receive", "--as", "executor", "--json").json()["messages"]]
        assert sorted(got) == sorted([dead["query"], dead["work2"], dead["ops1"]])
    assert_invariants(store, set(dead.values()))


def test_redrive_everything_then_nothing_left_is_a_count_of_zero(cli, store, dead):
    with freeze_time("2026-01-01 02:00:00") as clock:
        doc = cli.ok("deadletter", "replay", "--all", "--json").json()
        assert doc["replayed"] == 4 and doc["ids"] == sorted(dead.values())
        assert doc["skipped"] == [] and _dead(cli) == []
        for mid in dead.values():
            assert _state(store, mid) == ("unread", 0)
        # nothing matched: exit 0, a count of 0
        assert cli.ok("deadletter", "replay", "--all").stdout == "0\n"
        assert cli.ok("deadletter", "replay", "--all", "--json").json() == {
            "replayed": 0,
            "ids": [],
            "deliveries": [],
            "skipped": [],
        }
        # a fresh budget: ack-tracked again, they die again one ack timeout later
        clock.tick(1)
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 4
    assert_invariants(store, set(dead.values()))


def test_a_dead_letter_that_cannot_come_back_is_skipped_and_the_rest_replayed(cli, store, dead):
    """One stale row (its channel closed) must not hold up a redrive: it stays dead, the
    JSON and a note on stderr say why, and the others are replayed."""
    cli.ok("channel", "close", "ops", "--as", "planner")
    r = cli.ok("deadletter", "replay", "--all", "--json")
    doc = r.json()
    assert doc["replayed"] == 3 and dead["ops1"] not in doc["ids"]
    [skip] = doc["skipped"]
    assert (skip["message_id"], skip["recipient"], skip["channel"], skip["code"]) == (
        dead["ops1"],
        "executor",
        "ops",
        "invalid_state",
    )
    assert _dead(cli) == [dead["ops1"]]
    r = cli.ok("deadletter", "replay", "--all")
    assert r.stdout == "0\n"
    assert f"skipped message {dead['ops1']} to executor: invalid_state" in r.stderr


@pytest.mark.parametrize(
    ("args", "status", "code", "field"),
    [
        (("--reason", "tired"), 3, "validation_failed", "reason"),
        (("--since", "yesterday"), 3, "validation_failed", "since"),
        (("--channel", "no such"), 3, "validation_failed", "channel"),
        (("--recipient", "-x"), 3, "validation_failed", "recipient"),
        (("--channel", "nowhere"), 4, "not_found", "channel"),
    ],
)
def test_bad_filters_name_the_field_and_change_nothing(cli, store, dead, args, status, code, field):
    before = snapshot(store)
    r = cli("deadletter", "replay", "--all", *args, "--json")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (status, code, field)
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ((), "message"),  # neither an id nor --all
        (("1", "--all"), "message"),  # both
        (("1", "--reason", "expired"), "reason"),  # a filter without --all
        (("1", "--dry-run"), "dry_run"),
    ],
)
def test_usage_errors(cli, store, dead, args, field):
    before = snapshot(store)
    r = cli("deadletter", "replay", *args, "--json")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (2, "usage", field)
    assert snapshot(store) == before


def test_one_message_replay_still_works(cli, store, dead):
    doc = cli.ok("deadletter", "replay", str(dead["work1"]), "--json").json()
    assert [d["message_id"] for d in doc["dead_letters"]] == [dead["work1"]]
    assert _state(store, dead["work1"]) == ("unread", 0)
