"""The ack clock (`--ack-clock sent|read`: when a tracked delivery's ack deadline starts) and
the ack notices (`--ack-notify all|failures|none`: which acks become a message to the
sender), per channel, through the command line; time moved by freezegun."""

from __future__ import annotations

import pytest
from conftest import assert_invariants, query, snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"


def _d(cli, mid: int, agent: str = "w") -> dict:
    doc = cli.ok("show", mid, "--json").json()
    return next(d for d in doc["deliveries"] if d["recipient"] == agent)


def _send(cli, body: str = "job", channel: str = "work") -> int:
    return int(cli.ok("send", channel, body, "--as", "boss").stdout)


def _tick(cli) -> dict:
    return cli.ok("tick", "--json").json()


@pytest.fixture
def polled(make_channel):
    """boss hands work to w, who polls rarely: at-least-once, ack timeout 30 s, 1 retry,
    back-off 1 s, the deadline starting at the read."""
    return make_channel(
        "work",
        "boss",
        "w",
        delivery="at-least-once",
        ack_timeout="30s",
        max_retries=1,
        retry_backoff="1s",
        ack_clock="read",
    )


# ---------------------------------------------------------------- the clock


def test_with_ack_clock_read_an_unread_message_is_never_retried(cli, polled):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        assert _d(cli, mid)["next_timer_at"] is None  # no deadline before the read
        clock.tick(600)  # ten minutes: twenty ack timeouts
        out = _tick(cli)
        assert (out["redelivered"], out["dead_lettered"]) == (0, 0)
        d = _d(cli, mid)
        assert (d["state"], d["retry_count"]) == ("unread", 0)
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [mid]
    assert_invariants(polled)


def test_the_first_read_starts_the_deadline_and_a_missed_ack_retries_then_dead_letters(cli, polled):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        clock.tick(600)
        [m] = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        # the receive prints the delivery as its read leaves it: the deadline set
        assert m["delivery"]["next_timer_at"] == "2026-01-01T00:10:30.000Z"
        assert _d(cli, mid)["next_timer_at"] == "2026-01-01T00:10:30.000Z"
        clock.tick(29)
        _tick(cli)
        assert _d(cli, mid)["state"] == "read"
        clock.tick(1)  # the ack timeout since the read: retried after the 1 s back-off
        _tick(cli)
        assert (_d(cli, mid)["state"], _d(cli, mid)["retry_count"]) == ("waiting", 1)
        clock.tick(1)
        assert _tick(cli)["redelivered"] == 1
        # the redelivery waits for its own read, under the same clock
        d = _d(cli, mid)
        assert (d["state"], d["next_timer_at"]) == ("unread", None)
        clock.tick(3600)
        assert _tick(cli)["dead_lettered"] == 0
        cli.ok("receive", "--as", "w")
        clock.tick(30)  # no ack again, and no retry left
        assert _tick(cli)["dead_lettered"] == 1
        [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["reason"]) == (mid, "max_retries_exceeded")
    assert_invariants(polled)


def test_an_ack_in_time_after_a_late_read_is_no_retry(cli, polled):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        clock.tick(600)
        cli.ok("receive", "--as", "w")
        clock.tick(20)
        cli.ok("ack", mid, "--as", "w")
        clock.tick(3600)
        _tick(cli)
        d = _d(cli, mid)
        assert (d["state"], d["ack_status"], d["retry_count"]) == ("acked", "completed", 0)


def test_with_ack_clock_sent_the_deadline_runs_from_delivery(cli, make_channel):
    make_channel(
        "work", "boss", "w", delivery="at-least-once", ack_timeout="30s", retry_backoff="1s"
    )
    assert cli.ok("channel", "show", "work", "--json").json()["config"]["ack_clock"] == "sent"
    with freeze_time(T0) as clock:
        mid = _send(cli)
        assert _d(cli, mid)["next_timer_at"] == "2026-01-01T00:00:30.000Z"
        clock.tick(31)
        _tick(cli)
        assert (_d(cli, mid)["state"], _d(cli, mid)["retry_count"]) == ("unread", 1)


def test_a_message_ttl_still_expires_an_unread_message_under_the_read_clock(cli, make_channel):
    store = make_channel(
        "work", "boss", "w", delivery="at-least-once", ack_clock="read", message_ttl="5m"
    )
    with freeze_time(T0) as clock:
        mid = _send(cli)
        clock.tick(301)
        assert _tick(cli)["dead_lettered"] == 1
        [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["reason"]) == (mid, "expired")
    assert_invariants(store)


def test_a_requeued_delivery_waits_for_its_next_read_under_the_read_clock(cli, polled):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("receive", "--as", "w")
        cli.ok("nack", mid, "--requeue", "--as", "w")
        d = _d(cli, mid)
        assert (d["state"], d["retry_count"], d["next_timer_at"]) == ("unread", 1, None)
        clock.tick(3600)
        assert _tick(cli)["dead_lettered"] == 0
        assert _d(cli, mid)["state"] == "unread"


def test_a_scheduled_message_and_a_replayed_dead_letter_wait_for_the_read(cli, polled):
    with freeze_time(T0) as clock:
        later = int(cli.ok("send", "work", "later", "--as", "boss", "--delay", "1m").stdout)
        mid = _send(cli)
        cli.ok("nack", mid, "--as", "w")  # dead-lettered `nacked`
        clock.tick(61)
        _tick(cli)
        cli.ok("deadletter", "replay", mid)
        for m in (later, mid):
            d = _d(cli, m)
            assert (d["state"], d["next_timer_at"]) == ("unread", None), m
        clock.tick(3600)
        assert _tick(cli)["dead_lettered"] == 0
    assert_invariants(polled)


def test_stats_projects_what_the_tick_then_does_with_the_read_clock(cli, polled):
    with freeze_time(T0) as clock:
        _send(cli)
        cli.ok("receive", "--as", "w")
        _send(cli, "second")
        clock.tick(600)
        before = _numbers(cli.ok("stats", "--json").json())
        _tick(cli)
        assert before == _numbers(cli.ok("stats", "--json").json())


def _numbers(doc: dict) -> dict:
    """A stats document without what a tick changes on disk (sizes)."""
    store = {k: v for k, v in doc.pop("store").items() if k not in ("bytes", "wal_bytes", "path")}
    return {**doc, "store": store}


def test_doctor_accepts_unread_deliveries_without_a_deadline_under_the_read_clock(cli, polled):
    _send(cli)
    assert cli("doctor", "--json").exit_code == 0


# ---------------------------------------------------------------- changing it


def test_channel_update_changes_the_clock_for_new_deliveries_only(cli, make_channel):
    make_channel(
        "work", "boss", "w", delivery="at-least-once", ack_timeout="30s", retry_backoff="1s"
    )
    with freeze_time(T0) as clock:
        before = _send(cli, "before")
        out = cli.ok("channel", "update", "work", "--ack-clock", "read", "--as", "boss").stdout
        assert "work\tack_clock\tsent\tread" in out
        after = _send(cli, "after")
        clock.tick(31)
        _tick(cli)
        # in flight: the deadline it was given at delivery still runs
        assert _d(cli, before)["retry_count"] == 1
        assert (_d(cli, after)["retry_count"], _d(cli, after)["next_timer_at"]) == (0, None)
        # back to `sent`: an unread delivery without a deadline gets one from the switch
        cli.ok("channel", "update", "work", "--ack-clock", "sent", "--as", "boss")
        assert _d(cli, after)["next_timer_at"] == "2026-01-01T00:01:01.000Z"
        clock.tick(30)
        _tick(cli)
        assert _d(cli, after)["retry_count"] == 1


# ---------------------------------------------------------------- the notices


def _acks_to_boss(cli) -> list[str]:
    got = cli.ok("receive", "--as", "boss", "--type", "acknowledgment", "--json").json()
    return [m["metadata"]["status"] for m in got["messages"]]


@pytest.mark.parametrize(
    ("notify", "told"),
    [
        (None, ["completed", "failed"]),  # the default: all
        ("all", ["completed", "failed"]),
        ("failures", ["failed"]),
        ("none", []),
    ],
)
def test_ack_notify_decides_which_acks_reach_the_sender(cli, make_channel, notify, told):
    flags = {} if notify is None else {"ack_notify": notify}
    make_channel("work", "boss", "w", delivery="at-least-once", **flags)
    done, bad = _send(cli, "one"), _send(cli, "two")
    cli.ok("receive", "--as", "w")
    cli.ok("ack", done, "--as", "w")
    r = cli.ok("ack", bad, "--as", "w", "--status", "failed", "--json").json()
    assert (r["ack_message_id"] is not None) == ("failed" in told)
    assert _acks_to_boss(cli) == told
    # the ack is recorded on the delivery either way
    assert (_d(cli, done)["ack_status"], _d(cli, bad)["ack_status"]) == ("completed", "failed")
    assert cli.ok("channel", "show", "work", "--json").json()["config"]["ack_notify"] == (
        notify or "all"
    )


def test_receive_ack_follows_ack_notify(cli, make_channel):
    store = make_channel("work", "boss", "w", delivery="at-least-once", ack_notify="none")
    mid = _send(cli)
    cli.ok("receive", "--as", "w", "--ack", "completed")
    assert _acks_to_boss(cli) == []
    assert _d(cli, mid)["ack_status"] == "completed"
    n = query(store, "SELECT count(*) FROM messages WHERE type = 'acknowledgment'")[0][0]
    assert n == 0
    cli.ok("channel", "update", "work", "--ack-notify", "failures", "--as", "boss")
    mid = _send(cli)
    cli.ok("receive", "--as", "w", "--ack", "failed")
    assert _acks_to_boss(cli) == ["failed"]


# ---------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["channel", "create", "other", "--ack-clock", "later"], "ack_clock"),
        (["channel", "create", "other", "--ack-notify", "some"], "ack_notify"),
        (["channel", "update", "work", "--ack-clock", "SENT"], "ack_clock"),
        (["channel", "update", "work", "--ack-notify", ""], "ack_notify"),
    ],
)
def test_a_bad_value_exits_3_naming_the_field_and_changes_nothing(cli, make_channel, args, field):
    store = make_channel("work", "boss", "w")
    before = snapshot(store)
    r = cli(*args, "--as", "boss", "--json")
    assert r.exit_code == 3, r.stderr
    assert r.error["field"] == field
    assert snapshot(store) == before


def test_on_a_work_queue_the_claim_is_the_read_that_starts_the_deadline(cli, make_channel):
    store = make_channel(
        "jobs",
        "boss",
        "w",
        type="queue",
        delivery="at-least-once",
        ack_timeout="30s",
        retry_backoff="1s",
        ack_clock="read",
    )
    with freeze_time(T0) as clock:
        mid = _send(cli, channel="jobs")
        clock.tick(600)
        _tick(cli)
        cli.ok("receive", "--as", "w")  # the claim, ten minutes later
        assert _d(cli, mid)["next_timer_at"] == "2026-01-01T00:10:30.000Z"
        clock.tick(31)
        _tick(cli)  # not acked in time: back to the queue
        assert _d(cli, mid, "*")["retry_count"] == 1
    assert_invariants(store)


def test_an_exactly_once_read_clock_channel_starts_the_deadline_at_the_read(cli, make_channel):
    store = make_channel(
        "once", "boss", "w", delivery="exactly-once", ack_timeout="30s", ack_clock="read"
    )
    with freeze_time(T0) as clock:
        mid = _send(cli, channel="once")
        clock.tick(600)
        _tick(cli)
        assert (_d(cli, mid)["state"], _d(cli, mid)["retry_count"]) == ("unread", 0)
        cli.ok("receive", "--as", "w")
        clock.tick(31)
        _tick(cli)  # read, never handed out again: only its ack timer restarts
        d = _d(cli, mid)
        assert (d["state"], d["retry_count"]) == ("read", 1)
    assert_invariants(store)
