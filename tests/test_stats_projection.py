"""`stats` on a store with overdue timers counts them as a tick would leave them, without
applying them: `stats --json` before a tick equals `stats --json` after it, for
every kind of timer (scheduled sends, ack deadlines, retries and redeliveries, exactly-once
restarts, expiry, dead letters and their `_system` notifications), and stats writes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-03-01 12:00:00"


def _build(cli, frozen) -> None:
    cli.ok(
        "channel",
        "create",
        "work",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--max-retries",
        "2",
        "--retry-backoff",
        "1s",
    )
    cli.ok(
        "channel",
        "create",
        "once",
        "--as",
        "alice",
        "--delivery",
        "exactly-once",
        "--ack-timeout",
        "5s",
        "--max-retries",
        "1",
        "--retry-backoff",
        "2s",
    )
    cli.ok("channel", "create", "plain", "--as", "alice")
    cli.ok(
        "channel",
        "create",
        "shut",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "3s",
        "--max-retries",
        "0",
    )
    for ch in ("work", "once", "plain", "shut"):
        cli.ok("channel", "join", ch, "bob", "--as", "alice")
    cli.ok("channel", "join", "work", "--as", "alice", "carol")
    cli.ok("subscribe", "_system", "_system.message.deadletter", "--as", "watcher")
    for i in range(6):
        cli.ok("send", "work", f"w{i}", "--as", "alice")
        frozen.tick(timedelta(seconds=3))
    cli.ok("receive", "work", "--as", "bob", "--limit", "2")  # read, still awaiting acks
    cli.ok("send", "once", "o1", "--as", "alice")
    cli.ok("send", "once", "o2", "--as", "alice")
    cli.ok("receive", "once", "--as", "bob", "--limit", "1")  # exactly-once, read
    cli.ok("send", "plain", "later", "--as", "alice", "--delay", "20s")
    cli.ok("send", "plain", "much later", "--as", "alice", "--delay", "1h")
    cli.ok("send", "plain", "now", "--as", "alice")
    cli.ok("query", "work", "anyone?", "--as", "alice", "--timeout", "15s")
    cli.ok("send", "shut", "s1", "--as", "alice")
    cli.ok("channel", "close", "shut", "--as", "alice")
    cli.ok("ack", "1", "--as", "carol")
    frozen.tick(timedelta(seconds=1))


def _numbers(doc: dict) -> dict:
    doc = dict(doc)
    store = dict(doc.pop("store"))
    for key in ("bytes", "wal_bytes", "path"):
        store.pop(key, None)
    return {**doc, "store": store}


@pytest.mark.parametrize("later", [0, 4, 8, 12, 25, 40, 90, 3600 * 5])
def test_stats_before_a_tick_equals_stats_after_it(cli, store, later):
    with freeze_time(T0) as frozen:
        _build(cli, frozen)
        frozen.tick(timedelta(seconds=later))
        before_rows = snapshot(store)
        before = cli.ok("stats", "--json").json()
        agent = cli.ok("stats", "--as", "bob", "--json").json()
        assert snapshot(store) == before_rows  # counted, not written
        cli.ok("tick")
        after = cli.ok("stats", "--json").json()
        assert _numbers(before) == _numbers(after)
        assert _numbers(agent) == _numbers(cli.ok("stats", "--as", "bob", "--json").json())


def test_a_store_no_tick_ran_on_for_hours_dead_letters_and_notifies(cli, store):
    """The case the benchmark times: deadlines long past, every retry spent."""
    with freeze_time(T0) as frozen:
        _build(cli, frozen)
        frozen.tick(timedelta(hours=5))
        before = cli.ok("stats", "--json").json()
        watcher = {a["agent"]: a for a in before["agents"]}["watcher"]
        assert watcher["unread"] > 0 and watcher["unread"] == sum(
            a["dead_letters"] for a in before["agents"]
        )
        cli.ok("tick")
        assert _numbers(before) == _numbers(cli.ok("stats", "--json").json())


def test_a_queue_held_by_max_pending_is_still_counted_exactly(cli, store):
    """Releasing queued deliveries depends on a channel's counts: stats applies the timers
    (rolled back) there, as before, and still agrees with the tick."""
    with freeze_time(T0) as frozen:
        cli.ok(
            "channel",
            "create",
            "narrow",
            "--as",
            "alice",
            "--delivery",
            "at-least-once",
            "--ack-timeout",
            "5s",
            "--max-retries",
            "0",
            "--max-pending",
            "1",
        )
        cli.ok("channel", "join", "narrow", "--as", "alice", "bob")
        for i in range(3):
            cli.ok("send", "narrow", f"n{i}", "--as", "alice")
        frozen.tick(timedelta(seconds=30))
        rows = snapshot(store)
        before = cli.ok("stats", "--json").json()
        assert snapshot(store) == rows
        cli.ok("tick")
        assert _numbers(before) == _numbers(cli.ok("stats", "--json").json())


def test_the_shared_path_agrees_with_following_each_delivery():
    """Deliveries that share a starting point walk one precomputed path (projection._path, _along);
    it lands where following each one step by step (projection._follow) does."""
    import random

    from acomm_cli.engine import projection

    rng = random.Random(17)
    paths: dict = {}
    for _ in range(3000):
        cfg = (
            rng.choice([1000, 30_000]),
            rng.randint(0, 4),
            rng.choice([0, 500, 2000]),
            0.0,
            rng.random() < 0.3,
        )
        state = rng.choice(["waiting", "unread", "read", "queued"])
        tracked = int(rng.random() < 0.7)
        rc = rng.randint(0, 4)
        read = rng.random() < 0.5
        timer = rng.randint(0, 10_000)
        delivered = None if state in ("waiting", "queued") else timer - 100
        now = timer + rng.choice([0, 1, 999, 1000, 1001, 5000, 40_000, 200_000, 10**8])
        want = projection._follow(
            state, tracked, rc, read, delivered, timer, cfg, None, now, random.Random()
        )
        key = (state, tracked, rc, read, cfg)
        if key not in paths:
            paths[key] = projection._path(state, tracked, rc, read, cfg)
        got = projection._along(paths[key], state, delivered, timer, now)
        assert got == want, (state, tracked, rc, read, cfg, timer, now)
