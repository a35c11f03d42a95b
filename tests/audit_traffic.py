"""Known traffic over two days, built through the command line under freezegun: shared by the
tests of `export` and `audit`, which check the exact numbers below."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

DAY1 = datetime(2026, 1, 1, 10, 0, 0)
DAY2 = datetime(2026, 1, 2, 10, 0, 0)
EXPORT_DAY1 = DAY1 + timedelta(hours=1)  # the first export: after day 1
NOW = DAY2 + timedelta(hours=1)  # the export after day 2
BACKLOG_AGE_MS = 3_600_000 - 10_000  # work/m5, created at DAY2+10s, exported at NOW


@dataclass
class Traffic:
    chat: list[int] = field(default_factory=list)  # alice -> bob, carol; bob reads at +5 s
    acked: int = 0  # work: read at +10 s, acked at +20 s
    dead: int = 0  # work: never read; retried once, dead-lettered (max_retries_exceeded)
    once: int = 0  # once (exactly-once): read and acked
    late: int = 0  # work, day 2: acked 100 s after delivery (ack timeout 60 s): a late ack
    backlog: int = 0  # work, day 2: unread, unacknowledged at export time


def _send(cli, env, channel: str, body: str, who: str, *extra: str) -> int:
    return int(cli("send", channel, body, "--as", who, *extra, strict=True, env=env).stdout)


def day1(cli, clock, env=None) -> Traffic:
    """Channels and day-1 traffic; leaves the clock at EXPORT_DAY1."""

    def ok(*args):
        return cli(*args, strict=True, env=env)

    t = Traffic()
    clock.move_to(DAY1)
    ok("channel", "create", "chat", "--as", "alice")
    ok("channel", "join", "chat", "--as", "alice", "bob")
    ok("channel", "join", "chat", "--as", "alice", "carol")
    ok(
        "channel",
        "create",
        "work",
        "--as",
        "planner",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "60s",
        "--max-retries",
        "1",
        "--retry-backoff",
        "1s",
    )
    ok("channel", "join", "work", "--as", "planner", "executor")
    ok("channel", "create", "once", "--as", "planner", "--delivery", "exactly-once")
    ok("channel", "join", "once", "--as", "planner", "executor")

    # two of them carry an event (the audit counts them by type)
    events = (
        ("--event-type", "mention.created", "--target", "bob", "--thread", "t1"),
        ("--event-type", "like.created", "--target", "alice", "--thread", "t1"),
        (),
    )
    t.chat = [_send(cli, env, "chat", f"hello {i}", "alice", *events[i]) for i in range(3)]
    t.acked = _send(cli, env, "work", "deploy", "planner", "--type", "command")
    t.dead = _send(cli, env, "work", "nobody reads this", "planner", "--priority", "high")
    t.once = _send(cli, env, "once", "exactly", "planner", "--type", "command")
    clock.move_to(DAY1 + timedelta(seconds=5))
    ok("receive", "chat", "--as", "bob")
    clock.move_to(DAY1 + timedelta(seconds=10))
    ok("receive", "work", "--as", "executor", "--grep", "deploy")
    ok("receive", "once", "--as", "executor")
    clock.move_to(DAY1 + timedelta(seconds=20))
    ok("ack", t.acked, "--as", "executor")
    ok("ack", t.once, "--as", "executor")
    clock.move_to(DAY1 + timedelta(seconds=200))
    assert cli("tick", "--json", strict=True, env=env).json()["dead_lettered"] == 1
    clock.move_to(EXPORT_DAY1)
    return t


def day2(cli, clock, t: Traffic, env=None) -> Traffic:
    """Day-2 traffic; leaves the clock at NOW."""
    clock.move_to(DAY2)
    t.late = _send(cli, env, "work", "slow one", "planner")
    clock.move_to(DAY2 + timedelta(seconds=10))
    t.backlog = _send(cli, env, "work", "still waiting", "planner")
    clock.move_to(DAY2 + timedelta(seconds=100))
    cli("ack", t.late, "--as", "executor", strict=True, env=env)  # no tick ran meanwhile
    clock.move_to(NOW)
    return t
