"""The per-message paths a long-running process calls (send, receive, ack): what their
shortcuts must not change."""

from __future__ import annotations

import sqlite3

import pytest

from acomm_cli.engine import channels, sending, timers
from acomm_cli.errors import NoRecipient
from acomm_cli.model import ChannelConfig, MessageFilter, SendRequest
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
