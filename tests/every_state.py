"""A store holding a delivery in every state, built through the command line under freezegun:
shared by the tests of `stats`, `compact` and `doctor`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

T0 = datetime(2026, 1, 1, 0, 0, 0)


@dataclass
class Ids:
    acked: int  # work (at-least-once): received and acked
    read_untracked: int  # chat (at-most-once): read by bob
    read_tracked: int  # work: read by executor, not acked
    unread: int  # chat: bob has not read it
    unread_tracked: int  # work: executor has not read it
    waiting: int  # chat, --delay 1d
    held_unread: int  # held (max_pending 1): delivered
    queued: int  # held: queued behind held_unread
    dead_discarded: int  # doom: dead at T0+1m, its dead letter discarded
    dead_old_letter: int  # doom: dead at T0+1m, letter kept
    dead_new_letter: int  # doom: dead at T0+1h+1m, letter kept
    published: int  # news (pubsub), nobody subscribed: no delivery at all
    deduped: int  # chat with a dedupe key, read by bob (terminal, but inside its window)
    once: int  # once (exactly-once), acked; leaves an exactly_once record
    closed_unread: int  # shut (closed later): unread by bob
    recent_acked: int  # work: acked, but only 1 minute before NOW
    all_before: int  # the highest id when the store was built


# when the store is complete, and what the tests call "now"
NOW = T0 + timedelta(hours=2, minutes=10)


def at(clock, when: datetime) -> None:
    clock.move_to(when)


def send(cli, channel: str, body: str, who: str, *extra: str) -> int:
    return int(cli.ok("send", channel, body, "--as", who, *extra).stdout)


def build(cli, clock) -> Ids:
    """Build the store; `clock` is a freezegun FrozenDateTimeFactory. Leaves the clock at NOW."""
    at(clock, T0)
    # ack timeouts of a day: no retry fires while the store is built (receive applies the
    # receiver's due timers); `doom` dead-letters at its first deadline.
    cli.ok(
        "channel",
        "create",
        "work",
        "--as",
        "planner",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "1d",
    )
    cli.ok("channel", "join", "work", "--as", "planner", "executor")
    cli.ok(
        "channel",
        "create",
        "doom",
        "--as",
        "planner",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "1m",
        "--max-retries",
        "0",
    )
    cli.ok("channel", "join", "doom", "--as", "planner", "executor")
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "--as", "alice", "bob")
    cli.ok(
        "channel",
        "create",
        "held",
        "--as",
        "planner",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "1d",
        "--max-pending",
        "1",
    )
    cli.ok("channel", "join", "held", "--as", "planner", "executor")
    cli.ok("channel", "create", "news", "--type", "pubsub", "--as", "alice")
    cli.ok("channel", "create", "once", "--as", "planner", "--delivery", "exactly-once")
    cli.ok("channel", "join", "once", "--as", "planner", "executor")
    cli.ok("channel", "create", "shut", "--as", "alice")
    cli.ok("channel", "join", "shut", "--as", "alice", "bob")

    dead_discarded = send(cli, "doom", "doomed 1", "planner")
    dead_old_letter = send(cli, "doom", "doomed 2", "planner")
    at(clock, T0 + timedelta(seconds=200))
    assert cli.ok("tick", "--json").json()["dead_lettered"] == 2
    cli.ok("deadletter", "discard", dead_discarded)

    at(clock, T0 + timedelta(hours=1))
    dead_new_letter = send(cli, "doom", "doomed 3", "planner")
    at(clock, T0 + timedelta(hours=1, seconds=200))
    assert cli.ok("tick", "--json").json()["dead_lettered"] == 1

    at(clock, T0 + timedelta(hours=2))
    acked = send(cli, "work", "done", "planner")
    read_tracked = send(cli, "work", "seen, not acked", "planner")
    cli.ok("receive", "--as", "executor")  # reads both
    cli.ok("ack", acked, "--as", "executor")
    unread_tracked = send(cli, "work", "not seen", "planner")

    read_untracked = send(cli, "chat", "seen", "alice")
    deduped = send(cli, "chat", "once only", "alice", "--dedupe-key", "k1")
    cli.ok("receive", "--as", "bob")
    unread = send(cli, "chat", "not seen", "alice")
    waiting = send(cli, "chat", "tomorrow", "alice", "--delay", "1d")

    held_unread = send(cli, "held", "first", "planner")
    queued = send(cli, "held", "second", "planner")

    published = int(
        cli.ok("publish", "news", "build.done", "nobody listens", "--as", "alice").stdout
    )
    once = send(cli, "once", "exactly", "planner", "--type", "command", "--correlation-id", "c-1")
    cli.ok("receive", "--as", "executor", "once")
    cli.ok("ack", once, "--as", "executor")

    closed_unread = send(cli, "shut", "never read", "alice")
    cli.ok("channel", "close", "shut", "--as", "alice")

    at(clock, NOW - timedelta(minutes=1))
    recent_acked = send(cli, "work", "just done", "planner")
    cli.ok("receive", "--as", "executor", "work", "--grep", "just done")
    cli.ok("ack", recent_acked, "--as", "executor")
    at(clock, NOW)
    all_before = max(
        int(m["id"]) for m in cli.ok("messages", "--json", "--limit", "1000").json()["messages"]
    )
    return Ids(
        acked,
        read_untracked,
        read_tracked,
        unread,
        unread_tracked,
        waiting,
        held_unread,
        queued,
        dead_discarded,
        dead_old_letter,
        dead_new_letter,
        published,
        deduped,
        once,
        closed_unread,
        recent_acked,
        all_before,
    )
