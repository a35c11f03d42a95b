"""The per-message paths a long-running process calls (send, receive, ack): what their
shortcuts must not change."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from conftest import snapshot

from acomm_cli.engine import acking, channels, sending, timers
from acomm_cli.errors import NoRecipient, NotFound, NotParticipant, ValidationFailed
from acomm_cli.model import ChannelConfig, DeliveryMode, MessageFilter, SendRequest
from acomm_cli.store.timers import EXPIRED_WALK

pytestmark = pytest.mark.unit

T0 = 1_790_000_000_000


def _team(conn: sqlite3.Connection) -> None:
    channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), T0)
    for agent in ("bob", "carol"):
        channels.join_channel(conn, "team", agent, "member", T0, by="alice")


def test_an_expired_message_is_not_handed_out_behind_many_expired_ones(
    conn: sqlite3.Connection,
) -> None:
    """A receive looks for expired messages among the few the store keeps; with more kept
    than it probes one by one, it still finds the reader's, past all the others."""
    _team(conn)
    for i in range(EXPIRED_WALK + 6):  # expired, read already by bob
        sending.send(
            conn, SendRequest(sender="alice", content=f"old {i}", channel="team", ttl_ms=1_000), T0
        )
    assert (
        len(timers.receive_due(conn, "bob", MessageFilter(limit=500), T0).messages)
        == EXPIRED_WALK + 6
    )
    late = sending.send(
        conn, SendRequest(sender="alice", content="late", channel="team", ttl_ms=2_000), T0
    )
    got = timers.receive_due(conn, "bob", MessageFilter(limit=10), T0 + 5_000)
    assert [m.id for m in got.messages] == []
    state = conn.execute(
        "SELECT state FROM deliveries WHERE message_id = ? AND recipient = 'bob'", (late.id,)
    ).fetchone()[0]
    assert state == "dead"


def _seen(conn: sqlite3.Connection, agent: str) -> int | None:
    return conn.execute("SELECT last_seen_at FROM agents WHERE name = ?", (agent,)).fetchone()[0]


def test_presence_is_recorded_to_the_second_on_one_connection(conn: sqlite3.Connection) -> None:
    _team(conn)
    req = SendRequest(sender="alice", content="hi", channel="team")
    sending.send(conn, req, T0)
    assert _seen(conn, "alice") == T0
    sending.send(conn, req, T0 + 999)  # within the second: left as it was
    assert _seen(conn, "alice") == T0
    sending.send(conn, req, T0 + 1_000)
    assert _seen(conn, "alice") == T0 + 1_000


def test_a_refused_send_leaves_no_presence_behind(conn: sqlite3.Connection) -> None:
    """A send refused after it recorded its sender rolls back; the next one records it."""
    _team(conn)
    channels.create_channel(conn, "solo", "group", "alice", ChannelConfig(), T0)
    with pytest.raises(NoRecipient):
        sending.send(conn, SendRequest(sender="alice", content="hi", channel="solo"), T0)
    assert _seen(conn, "alice") is None
    sending.send(conn, SendRequest(sender="alice", content="hi", channel="team"), T0 + 10)
    assert _seen(conn, "alice") == T0 + 10


def test_an_ack_of_an_unknown_or_foreign_message_is_refused_and_changes_nothing(
    conn: sqlite3.Connection, store: Path
) -> None:
    """An ack reads the message and its delivery in its first statement: a message that
    does not exist, or one the acker was never handed, is still refused naming the field,
    with the store as it was."""
    channels.create_channel(conn, "pair", "group", "alice", ChannelConfig(), T0)
    channels.join_channel(conn, "pair", "bob", "member", T0, by="alice")
    sent = sending.send(conn, SendRequest(sender="alice", content="hi", channel="pair"), T0)
    before = snapshot(store)
    with pytest.raises(NotFound) as missing:
        acking.ack(conn, sent.id + 1000, "bob", "completed", None, T0 + 1)
    assert missing.value.field == "message"
    with pytest.raises(NotParticipant) as foreign:
        acking.ack(conn, sent.id, "carol", "completed", None, T0 + 1)
    assert foreign.value.field == "agent"
    assert snapshot(store) == before
    got = acking.ack(conn, sent.id, "bob", "completed", None, T0 + 2)
    assert got.changed and got.ack_message_id is not None


def test_a_reader_name_is_refused_before_anything_runs(
    conn: sqlite3.Connection, store: Path
) -> None:
    """A reader's name is checked once per process; a name that is no agent's ('*', a work
    queue's own row) is refused every time, before its timers could be applied."""
    channels.create_channel(conn, "jobs", "queue", "alice", ChannelConfig(), T0)
    channels.join_channel(conn, "jobs", "bob", "member", T0, by="alice")
    # the queue's row ('*') waits for its delivery time: a timer a receive as '*' would apply
    sending.send(conn, SendRequest(sender="alice", content="job", channel="jobs", delay_ms=1), T0)
    timers.receive_due(conn, "bob", MessageFilter(limit=1), T0)  # bob: checked and kept
    before = snapshot(store)
    for name in ("*", "bob@", ".bob"):
        with pytest.raises(ValidationFailed) as refused:
            timers.receive_due(conn, name, MessageFilter(limit=1), T0 + 1_000)
        assert refused.value.field == "recipient"
    assert snapshot(store) == before
    got = timers.receive_due(conn, "bob", MessageFilter(limit=1), T0 + 1_000)
    assert [m.content for m in got.messages] == ["job"]


def test_total_count_counts_the_unread_past_the_page(conn: sqlite3.Connection) -> None:
    _team(conn)
    for i in range(3):
        sending.send(conn, SendRequest(sender="alice", content=f"m{i}", channel="team"), T0)
    got = timers.receive_due(conn, "bob", MessageFilter(limit=1), T0)
    assert [m.content for m in got.messages] == ["m0"]
    assert got.total_count == 3 and got.has_more
    got = timers.receive_due(conn, "bob", MessageFilter(limit=5), T0)
    assert [m.content for m in got.messages] == ["m1", "m2"]
    assert got.total_count == 2 and not got.has_more


def test_a_receive_applies_what_fell_due_and_hands_it_out_once(conn: sqlite3.Connection) -> None:
    """Nothing due: the due checks ride in the read's first statement. Something due (here
    a missed ack's redelivery): that read rolls back having written nothing, the timer is
    applied, and the reader's output gets the redelivered message once."""
    cfg = ChannelConfig(delivery=DeliveryMode.AT_LEAST_ONCE, ack_timeout_ms=1_000)
    channels.create_channel(conn, "jobs", "direct", "alice", cfg, T0)
    channels.join_channel(conn, "jobs", "bob", "member", T0, by="alice")
    sent = sending.send(conn, SendRequest(sender="alice", content="job", channel="jobs"), T0)
    first = timers.receive_due(conn, "bob", MessageFilter(limit=1), T0)
    assert [m.id for m in first.messages] == [sent.id]
    assert timers.receive_due(conn, "bob", MessageFilter(limit=1), T0 + 500).messages == []
    handed: list[list[int]] = []
    again = timers.receive_due(
        conn,
        "bob",
        MessageFilter(limit=1),
        T0 + 1_000 + cfg.retry_backoff_ms,  # the deadline, then the back-off
        emit=lambda r: handed.append([m.id for m in r.messages]),
    )
    assert handed == [[sent.id]]
    assert again.messages[0].delivery is not None
    assert again.messages[0].delivery.retry_count == 1
