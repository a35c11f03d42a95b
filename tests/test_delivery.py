"""Acknowledgements, timers, retries and dead letters, time moved by freezegun."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import assert_invariants, snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"


def _delivery(cli, mid: int, agent: str) -> dict:
    doc = cli.ok("show", mid, "--json").json()
    return next(d for d in doc["deliveries"] if d["recipient"] == agent)


@pytest.fixture
def work(cli, store):
    """An at-least-once channel with default timers: planner -> executor."""
    cli.ok("channel", "create", "work", "--as", "planner", "--delivery", "at-least-once")
    cli.ok("channel", "join", "work", "--as", "planner", "executor")
    return store


def _send_command(cli) -> int:
    return int(cli.ok("send", "work", "deploy", "--type", "command", "--as", "planner").stdout)


def test_default_schedule_redelivers_at_31_63_97_and_dead_letters_at_127(cli, work):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        history = []
        for second in range(1, 131):
            clock.move_to("2026-01-01 00:00:00")
            clock.tick(second)
            out = cli.ok("tick", "--json").json()
            if out["redelivered"] or out["dead_lettered"]:
                history.append((second, out["redelivered"], out["dead_lettered"]))
        assert history == [(31, 1, 0), (63, 1, 0), (97, 1, 0), (127, 0, 1)]
        d = _delivery(cli, mid, "executor")
        assert d["state"] == "dead" and d["retry_count"] == 3
        dl = cli.ok("deadletter", "list", "--json").json()
        assert dl["total_count"] == 1
        entry = dl["dead_letters"][0]
        assert entry["reason"] == "max_retries_exceeded"
        assert entry["retry_count"] == 3
        assert entry["dead_lettered_at"] == "2026-01-01T00:02:07.000Z"
    assert_invariants(work, {mid})


def test_one_late_tick_gives_the_same_final_state(cli, work, tmp_path):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(500)
        out = cli.ok("tick", "--json").json()
        assert out["retried"] == 3 and out["redelivered"] == 3 and out["dead_lettered"] == 1
        d = _delivery(cli, mid, "executor")
        assert (d["state"], d["retry_count"]) == ("dead", 3)
        assert d["delivered_at"] == "2026-01-01T00:01:37.000Z"  # the third redelivery
        dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"][0]
        assert dl["dead_lettered_at"] == "2026-01-01T00:02:07.000Z"
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 0  # nothing twice


@pytest.mark.parametrize("ack_at", [5, 31, 45, 100])
@pytest.mark.parametrize("status", ["completed", "failed"])
def test_a_final_ack_at_any_point_stops_the_timer(cli, work, ack_at, status):
    """completed and failed end the delivery; received and in_progress only hold it for a
    lease (tests/test_leases.py)."""
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(ack_at)
        cli.ok("tick")
        cli.ok("ack", mid, "--as", "executor", "--status", status)
        clock.tick(1000)
        out = cli.ok("tick", "--json").json()
        assert out["redelivered"] == 0 and out["dead_lettered"] == 0
        d = _delivery(cli, mid, "executor")
        assert d["state"] == "acked" and d["ack_status"] == status
        assert d["next_timer_at"] is None
    assert_invariants(work, {mid})


def test_ack_is_forward_only_and_repeating_is_a_no_op(cli, work):
    mid = _send_command(cli)
    cli.ok("ack", mid, "--as", "executor", "--status", "in_progress")
    again = cli("ack", mid, "--as", "executor", "--status", "in_progress", "--json")
    assert again.exit_code == 0 and again.json()["changed"] is False
    back = cli("ack", mid, "--as", "executor", "--status", "received", "--json")
    assert back.exit_code == 5 and back.error["code"] == "invalid_state"
    assert back.error["field"] == "status"
    cli.ok("ack", mid, "--as", "executor", "--status", "completed", "--note", "done")
    assert _delivery(cli, mid, "executor")["ack_status"] == "completed"


def test_ack_routes_an_acknowledgment_to_the_original_sender_only(cli, work):
    cli.ok("channel", "join", "work", "--as", "planner", "watcher")
    mid = _send_command(cli)
    cli.ok("receive", "--as", "watcher")  # watcher reads the command; it must not get the ack
    cli.ok("ack", mid, "--as", "executor", "--note", "Deployed. Health check passing.")
    got = cli.ok("receive", "--as", "planner", "--json").json()["messages"]
    assert [(m["type"], m["content"]) for m in got] == [
        ("acknowledgment", "Deployed. Health check passing.")
    ]
    corr = cli.ok("show", mid, "--json").json()["correlation_id"]
    assert got[0]["correlation_id"] == corr
    assert cli.ok("receive", "--as", "watcher", "--json").json()["messages"] == []


def test_ack_errors(cli, work):
    mid = _send_command(cli)
    cli.ok("channel", "join", "work", "--as", "planner", "outsider")
    before = sqlite3.connect(work).execute("SELECT count(*) FROM messages").fetchone()
    r = cli("ack", 999, "--as", "executor", "--json")
    assert r.exit_code == 4 and r.error["code"] == "not_found"
    r = cli("ack", mid, "--as", "nobody", "--json")
    assert r.exit_code == 5 and r.error["code"] == "not_participant"
    r = cli("ack", mid, "--as", "executor", "--status", "done", "--json")
    assert r.exit_code == 3 and r.error["field"] == "status"
    after = sqlite3.connect(work).execute("SELECT count(*) FROM messages").fetchone()
    assert before == after


def test_group_recipients_have_their_own_timers(cli, store):
    cli.ok("channel", "create", "crew", "--as", "lead", "--delivery", "at-least-once")
    cli.ok("channel", "join", "crew", "--as", "lead", "a")
    cli.ok("channel", "join", "crew", "--as", "lead", "b")
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "crew", "status?", "--type", "command", "--as", "lead").stdout)
        clock.tick(10)
        cli.ok("ack", mid, "--as", "a")
        clock.tick(200)
        cli.ok("tick")
        assert _delivery(cli, mid, "a")["state"] == "acked"
        assert _delivery(cli, mid, "b")["state"] == "dead"
        assert cli.ok("show", mid, "--json").json()["status"] == "dead_letter"
    assert_invariants(store, {mid})


def test_receive_applies_its_own_due_timers_without_a_tick(cli, work):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        assert [
            m["id"] for m in cli.ok("receive", "--as", "executor", "--json").json()["messages"]
        ] == [mid]
        clock.tick(31)  # no tick: receive itself redelivers the unacknowledged command
        again = cli.ok("receive", "--as", "executor", "--json").json()["messages"]
        assert [m["id"] for m in again] == [mid]
        assert again[0]["delivery"]["retry_count"] == 1


def test_dead_letter_notification_reaches_system_subscribers(cli, work):
    cli.ok("subscribe", "_system", "_system.message.#", "--as", "ops")
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(127)
        cli.ok("tick")
    got = cli.ok("receive", "--as", "ops", "--json").json()["messages"]
    assert len(got) == 1 and got[0]["topic"] == "_system.message.deadletter"
    import json

    assert json.loads(got[0]["content"]) == {
        "message_id": mid,
        "recipient": "executor",
        "channel": "work",
        "reason": "max_retries_exceeded",
        "retry_count": 3,
    }


def test_replay_keeps_the_id_and_gives_a_fresh_budget(cli, work):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(127)
        cli.ok("tick")
        out = cli.ok("deadletter", "replay", mid, "--json").json()
        assert [d["message_id"] for d in out["dead_letters"]] == [mid]
        d = _delivery(cli, mid, "executor")
        assert (d["state"], d["retry_count"]) == ("unread", 0)
        assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 0
        got = cli.ok("receive", "--as", "executor", "--json").json()["messages"]
        assert [m["id"] for m in got] == [mid]
        clock.tick(126)  # a whole new budget: still alive just before the second death
        cli.ok("tick")
        assert _delivery(cli, mid, "executor")["state"] != "dead"
        clock.tick(1)
        cli.ok("tick")
        assert _delivery(cli, mid, "executor")["state"] == "dead"
    assert_invariants(work, {mid})


def test_discard_and_purge(cli, work):
    with freeze_time(T0) as clock:
        first = _send_command(cli)
        clock.tick(127)
        cli.ok("tick")
        clock.tick(86400)
        second = _send_command(cli)
        clock.tick(127)
        cli.ok("tick")
        assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 2
        assert cli.ok("deadletter", "purge", "--older-than", "1d").stdout.strip() == "1"
        left = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [d["message_id"] for d in left] == [second]
        assert cli.ok("dead-letters", "discard", second).stdout.strip() == "1"
        assert cli("deadletter", "discard", second).exit_code == 4
        assert cli("deadletter", "show", first).exit_code == 4
    assert_invariants(work, {first, second})


def test_exactly_once_never_hands_a_read_message_out_twice_across_restarts(cli, store):
    cli.ok("channel", "create", "once", "--as", "p", "--delivery", "exactly-once")
    cli.ok("channel", "join", "once", "--as", "p", "w")
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "once", "charge card", "--type", "command", "--as", "p").stdout)
        assert len(cli.ok("receive", "--as", "w", "--json").json()["messages"]) == 1
        for _ in range(3):  # every CLI call is a new connection: state lives in the store
            clock.tick(40)
            cli.ok("tick")
            assert cli.ok("receive", "--as", "w", "--json").json()["messages"] == []
        d = _delivery(cli, mid, "w")
        assert d["state"] == "read" and d["retry_count"] == 3
        # nothing was handed out again: delivered_at is still the first delivery, before the
        # read (an audit counts a delivery after the read as an exactly-once violation)
        assert d["delivered_at"] == "2026-01-01T00:00:00.000Z" <= d["read_at"]
        clock.tick(40)
        cli.ok("tick")
        assert _delivery(cli, mid, "w")["state"] == "dead"
    assert_invariants(store, {mid})


def test_exactly_once_suppresses_a_resent_correlation_id(cli, store):
    cli.ok(
        "channel",
        "create",
        "once",
        "--as",
        "p",
        "--delivery",
        "exactly-once",
        "--ack-timeout",
        "10s",
    )
    cli.ok("channel", "join", "once", "--as", "p", "w")
    with freeze_time(T0) as clock:
        a = cli.ok("send", "once", "x", "--correlation-id", "job-1", "--as", "p", "--json").json()
        b = cli.ok("send", "once", "x", "--correlation-id", "job-1", "--as", "p", "--json").json()
        assert a["recipients"] == ["w"] and b["recipients"] == []
        assert b["id"] != a["id"]  # recorded, not delivered
        clock.tick(21)  # past 2 x ack_timeout the set entry has expired
        assert cli.ok("tick", "--json").json()["dedupe_expired"] == 1
        c = cli.ok("send", "once", "x", "--correlation-id", "job-1", "--as", "p", "--json").json()
        assert c["recipients"] == ["w"]


def test_dedupe_key_returns_the_first_id_inside_the_window(cli, store):
    cli.ok("channel", "create", "jobs", "--as", "p", "--dedupe-window", "1h")
    cli.ok("channel", "join", "jobs", "--as", "p", "w")
    with freeze_time(T0) as clock:
        first = cli.ok("send", "jobs", "build", "--dedupe-key", "k1", "--as", "p", "--json").json()
        again = cli.ok("send", "jobs", "build", "--dedupe-key", "k1", "--as", "p", "--json").json()
        assert again["id"] == first["id"] and again["deduplicated"] is True
        assert first["deduplicated"] is False
        assert cli.ok("messages", "--channel", "jobs", "--json").json()["total_count"] == 1
        clock.tick(3601)
        later = cli.ok("send", "jobs", "build", "--dedupe-key", "k1", "--as", "p", "--json").json()
        assert later["id"] != first["id"] and later["deduplicated"] is False


def test_scheduled_sends_wait_until_due(cli, store):
    cli.ok("channel", "create", "later", "--as", "p")
    cli.ok("channel", "join", "later", "--as", "p", "w")
    with freeze_time(T0) as clock:
        delayed = int(cli.ok("send", "later", "soon", "--delay", "30s", "--as", "p").stdout)
        at = int(
            cli.ok(
                "send", "later", "at noon", "--deliver-at", "2026-01-01T12:00:00Z", "--as", "p"
            ).stdout
        )
        assert cli.ok("receive", "--as", "w", "--json").json()["messages"] == []
        assert _delivery(cli, delayed, "w")["state"] == "waiting"
        clock.tick(30)
        assert cli.ok("tick", "--json").json()["scheduled_delivered"] == 1
        assert [m["id"] for m in cli.ok("receive", "--as", "w", "--json").json()["messages"]] == [
            delayed
        ]
        clock.move_to("2026-01-01 12:00:00")
        # no tick: receive delivers its own due scheduled message
        assert [m["id"] for m in cli.ok("receive", "--as", "w", "--json").json()["messages"]] == [
            at
        ]


def test_query_timeout_expires_unread_deliveries(cli, store):
    cli.ok("channel", "create", "q", "--as", "asker")
    cli.ok("channel", "join", "q", "--as", "asker", "slow")
    cli.ok("channel", "join", "q", "--as", "asker", "fast")
    with freeze_time(T0) as clock:
        corr = cli.ok("query", "q", "anyone?", "--as", "asker", "--timeout", "1m").stdout.strip()
        cli.ok("receive", "--as", "fast")
        clock.tick(61)
        assert cli.ok("tick", "--json").json()["expired"] == 1
        dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [(d["recipient"], d["reason"]) for d in dl] == [("slow", "expired")]
    thread = cli.ok("thread", corr, "--json").json()
    assert thread["messages"][0]["content"] == "anyone?"


def test_two_ticks_never_process_a_timer_twice(cli, work):
    with freeze_time(T0) as clock:
        _send_command(cli)
        clock.tick(500)
        first = cli.ok("tick", "--json").json()
        second = cli.ok("tick", "--json").json()
    assert first["dead_lettered"] == 1 and second["dead_lettered"] == 0
    assert sqlite3.connect(work).execute("SELECT count(*) FROM dead_letters").fetchone()[0] == 1


# ---------------------------------------------------------------- answers sent with plain `send`


@pytest.fixture
def team(make_channel):
    """An at-least-once group: lead asks, dev and ops receive."""
    return make_channel("team", "lead", "dev", "ops", delivery="at-least-once")


def test_a_response_sent_with_send_goes_to_the_asker_and_acknowledges(cli, team):
    with freeze_time(T0) as clock:
        q = cli.ok("query", "team", "status?", "--as", "lead", "--json").json()
        r = cli.ok(
            "send",
            "team",
            "all green",
            "--type",
            "response",
            "--correlation-id",
            q["correlation_id"],
            "--as",
            "dev",
            "--json",
        ).json()
        assert r["recipients"] == ["lead"]  # not every member: the asker only
        d = _delivery(cli, q["id"], "dev")
        assert (d["state"], d["ack_status"]) == ("acked", "completed")
        clock.tick(1000)
        cli.ok("tick")
        assert _delivery(cli, q["id"], "dev")["state"] == "acked"
        assert _delivery(cli, q["id"], "ops")["state"] == "dead"  # ops never answered
        dead = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [(x["message_id"], x["recipient"]) for x in dead] == [(q["id"], "ops")]
    assert_invariants(team, {q["id"], r["id"]})


def test_an_acknowledgment_sent_with_send_stops_the_timer_forward_only(cli, team):
    with freeze_time(T0) as clock:
        c = cli.ok("send", "team", "deploy", "--type", "command", "--as", "lead", "--json").json()
        cli.ok("ack", c["id"], "--as", "ops", "--status", "in_progress")
        for agent in ("dev", "ops"):
            a = cli.ok(
                "send",
                "team",
                "got it",
                "--type",
                "ack",
                "--correlation-id",
                c["correlation_id"],
                "--as",
                agent,
                "--json",
            ).json()
            assert a["recipients"] == ["lead"]
        assert _delivery(cli, c["id"], "dev")["ack_status"] == "received"
        assert _delivery(cli, c["id"], "ops")["ack_status"] == "in_progress"  # not backwards
        # both hold their delivery for a lease (the ack timeout): acked by then, nothing more
        cli.ok("ack", c["id"], "--as", "dev", "--status", "completed")
        cli.ok("ack", c["id"], "--as", "ops", "--status", "completed")
        clock.tick(1000)
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 0


def test_a_response_on_another_channel_is_refused_and_changes_nothing(cli, team):
    cli.ok("channel", "create", "other", "--as", "dev")
    q = cli.ok("query", "team", "status?", "--as", "lead", "--json").json()
    before = snapshot(team)
    r = cli(
        "send",
        "other",
        "green",
        "--type",
        "response",
        "--correlation-id",
        q["correlation_id"],
        "--as",
        "dev",
        "--json",
    )
    assert r.exit_code == 3 and r.error["field"] == "channel"
    assert "'other'" in r.error["message"]
    assert snapshot(team) == before


def test_a_batch_answer_to_a_query_in_the_same_batch_acknowledges_it(cli, team):
    lines = [
        {
            "channel": "team",
            "from": "lead",
            "content": "q",
            "type": "query",
            "correlation_id": "q-1",
        },
        {
            "channel": "team",
            "from": "dev",
            "content": "a",
            "type": "response",
            "correlation_id": "q-1",
        },
    ]
    ids = cli.ok(
        "send", "--batch", "-", input="\n".join(json.dumps(x) for x in lines)
    ).stdout.split()
    assert _delivery(cli, int(ids[0]), "dev")["state"] == "acked"
    assert cli.ok("show", ids[1], "--json").json()["deliveries"][0]["recipient"] == "lead"


# ---------------------------------------------------------------- timer corner cases


def test_an_ack_while_waiting_for_redelivery_stops_the_timer(cli, work):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(31.5)  # deadline 1 at 30 s, redelivered at 31 s; deadline 2 at 61 s
        cli.ok("tick")
        clock.move_to("2026-01-01 00:01:02")  # 62 s: retry 2 waits for its back-off (63 s)
        cli.ok("tick")
        assert _delivery(cli, mid, "executor")["state"] == "waiting"
        cli.ok("ack", mid, "--as", "executor")
        clock.tick(1000)
        assert cli.ok("tick", "--json").json()["redelivered"] == 0
        d = _delivery(cli, mid, "executor")
        assert (d["state"], d["retry_count"], d["next_timer_at"]) == ("acked", 2, None)


def test_retry_jitter_stays_within_its_fraction(cli, store):
    cli.ok(
        "channel",
        "create",
        "j",
        "--as",
        "p",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--retry-backoff",
        "10s",
        "--retry-jitter",
        "0.5",
        "--max-retries",
        "1",
    )
    cli.ok("channel", "join", "j", "--as", "p", "w")
    with freeze_time(T0) as clock:
        ids = [int(cli.ok("send", "j", f"m{i}", "--as", "p").stdout) for i in range(40)]
        clock.tick(10)  # every deadline 1 is due: redelivery in [10 s, 15 s) from it
        cli.ok("tick")
        waits = [_delivery(cli, i, "w")["next_timer_at"] for i in ids]
    offsets = {int(w[17:19]) * 1000 + int(w[20:23]) - 20_000 for w in waits}  # ms past 20 s
    assert all(0 <= o < 5000 for o in offsets), offsets
    assert len(offsets) > 1  # jitter actually varies


def test_exactly_once_suppression_holds_until_twice_the_ack_timeout(cli, store):
    cli.ok(
        "channel",
        "create",
        "once",
        "--as",
        "p",
        "--delivery",
        "exactly-once",
        "--ack-timeout",
        "10s",
    )
    cli.ok("channel", "join", "once", "--as", "p", "w")
    with freeze_time(T0) as clock:
        cli.ok("send", "once", "x", "--correlation-id", "job-1", "--as", "p")
        clock.tick(19.999)
        cli.ok("tick")
        again = cli.ok(
            "send", "once", "x", "--correlation-id", "job-1", "--as", "p", "--json"
        ).json()
        assert again["recipients"] == []


def test_replay_revalidates_channel_and_recipient(cli, work):
    with freeze_time(T0) as clock:
        mid = _send_command(cli)
        clock.tick(500)
        cli.ok("tick")
        cli.ok("channel", "leave", "work", "--as", "planner", "executor")
        before = snapshot(work)
        r = cli("deadletter", "replay", mid, "--json")
        assert r.exit_code == 5 and r.error["code"] == "not_participant"
        assert snapshot(work) == before
        cli.ok("channel", "join", "work", "--as", "planner", "executor")
        cli.ok("channel", "close", "work", "--as", "planner")
        before = snapshot(work)
        r = cli("deadletter", "replay", mid, "--json")
        assert r.exit_code == 5 and r.error["code"] == "invalid_state"
        assert snapshot(work) == before
