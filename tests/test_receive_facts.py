"""A long-lived connection remembers facts about the channels (store/facts.py: whether any
channel is closed or starts ack deadlines at the read, which queues and pools an agent
serves) under the channels token, and what it read of the directory (the retired names, a
name's retirement, a contact rule) under the agents token (m030). A change made on another
connection must be honoured by the very next send or receive."""

from __future__ import annotations

import pytest

from acomm_cli.engine import channels, contacts, directory, inbox, opening, sending
from acomm_cli.engine.channel_admin import update_channel
from acomm_cli.errors import Forbidden
from acomm_cli.model import MessageFilter, SendRequest
from acomm_cli.store import write

pytestmark = pytest.mark.unit

NOW = 1_700_000_000_000


@pytest.fixture
def pair(store):
    """Two connections on one store: `a` receives, `b` changes the channels."""
    a = opening.connect(store, create=False)
    b = opening.connect(store, create=False)
    cfg = channels.channel_config(delivery="at-least-once", ack_timeout_ms=60_000)
    channels.create_channel(b, "team", "group", "alice", cfg, NOW)
    channels.join_channel(b, "team", "bob", "member", NOW, by="alice")
    yield a, b
    a.close()
    b.close()


def _send(conn, channel="team", body="hi", sender="alice"):
    return sending.send(conn, SendRequest(sender=sender, content=body, channel=channel), NOW)


def _receive(conn, limit=10):
    return inbox.receive(conn, "bob", MessageFilter(limit=limit), NOW).messages


def test_a_queue_joined_on_another_connection_is_claimed_by_the_next_receive(pair):
    a, b = pair
    assert _receive(a) == []  # `a` knows bob serves no queue now
    channels.create_channel(b, "jobs", "queue", "alice", channels.channel_config(), NOW)
    channels.join_channel(b, "jobs", "bob", "member", NOW, by="alice")
    _send(b, "jobs", "job 1")
    assert [m.content for m in _receive(a)] == ["job 1"]


def test_the_read_clock_set_on_another_connection_starts_the_deadline_at_the_next_read(pair):
    a, b = pair
    _send(b, body="before")
    assert [m.delivery.next_timer_at for m in _receive(a)] != [None]  # from the send
    update_channel(b, "team", NOW, by="alice", ack_clock="read")
    _send(b, body="after")  # handed out without a deadline: it starts at the read
    (got,) = _receive(a)
    assert got.delivery.next_timer_at == NOW + 60_000
    (stored,) = b.execute(
        "SELECT next_timer_at FROM deliveries WHERE message_id = ? AND recipient = 'bob'",
        (got.id,),
    ).fetchall()
    assert stored == (NOW + 60_000,)


def test_a_channel_closed_on_another_connection_hides_its_messages_from_the_total(pair):
    a, b = pair
    channels.create_channel(b, "side", "group", "alice", channels.channel_config(), NOW)
    channels.join_channel(b, "side", "bob", "member", NOW, by="alice")
    for i in range(3):
        _send(b, body=f"team {i}")
        _send(b, "side", f"side {i}")
    page = inbox.receive(a, "bob", MessageFilter(limit=1), NOW, peek=True)
    assert page.total_count == 6  # `a` knows no channel is closed now
    channels.change_channel_state(b, "side", "close", by="alice")
    page = inbox.receive(a, "bob", MessageFilter(limit=1), NOW, peek=True)
    assert page.total_count == 3


def test_facts_read_in_a_rolled_back_transaction_are_not_kept(pair):
    a, b = pair
    _receive(a)
    with pytest.raises(RuntimeError), write(a):
        channels.create_channel(a, "jobs", "queue", "alice", channels.channel_config(), NOW)
        channels.join_channel(a, "jobs", "bob", "member", NOW, by="alice")
        _receive(a)  # inside the transaction: reads what it sees, caches nothing
        raise RuntimeError("undo")
    assert _receive(a) == []
    assert a.execute("SELECT count(*) FROM channels WHERE name = 'jobs'").fetchone() == (0,)


# ---------------------------------------------------------------- the directory (m030)


def test_an_agent_retired_on_another_connection_gets_nothing_from_the_next_send(pair):
    a, b = pair
    channels.join_channel(b, "team", "carol", "member", NOW, by="alice")
    assert _send(a).recipients == ("bob", "carol")  # `a` has read the retired names
    directory.retire(b, "carol", NOW)
    assert _send(a).recipients == ("bob",)


def test_a_contact_rule_changed_on_another_connection_holds_for_the_next_direct_send(pair):
    a, b = pair
    req = SendRequest(sender="alice", content="hi")
    (first,) = sending.send_direct(a, req, ["bob"], NOW)
    assert first.recipients == ("bob",)
    dm = first.channel
    assert _send(a, dm).recipients == ("bob",)  # `a` has read bob's rule
    directory.update(b, "bob", NOW, accept="nobody")
    with pytest.raises(Forbidden):
        _send(a, dm)
    directory.update(b, "bob", NOW, accept="contacts")
    with pytest.raises(Forbidden):
        _send(a, dm)
    contacts.change(b, "bob", "add", "alice", NOW)
    assert _send(a, dm).recipients == ("bob",)


def test_a_retirement_rolled_back_on_the_same_connection_is_not_remembered(pair):
    a, _ = pair
    channels.join_channel(a, "team", "carol", "member", NOW, by="alice")
    assert _send(a).recipients == ("bob", "carol")
    with pytest.raises(RuntimeError), write(a):
        directory.retire(a, "carol", NOW)
        assert _send(a).recipients == ("bob",)  # inside it: carol is retired
        raise RuntimeError("undo")
    assert _send(a).recipients == ("bob", "carol")
