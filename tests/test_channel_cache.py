"""`sending.send` keeps the channels it read on its connection, valid while the
channels token (m011, counted up by triggers on every change to channels, participants
and subscriptions) is the one read in the send's own transaction. A change made anywhere else --
another connection, another process, a rolled-back transaction on the same connection --
must be honoured by the very next send."""

from __future__ import annotations

import pytest
from conftest import run

from acomm_cli.engine import channels, opening, sending
from acomm_cli.errors import InvalidState, NotParticipant
from acomm_cli.model import SendRequest
from acomm_cli.store import write

pytestmark = pytest.mark.unit

NOW = 1_700_000_000_000


def _send(conn, channel="team", sender="alice", **kw):
    return sending.send(conn, SendRequest(sender=sender, content="hi", channel=channel, **kw), NOW)


@pytest.fixture
def pair(store):
    """Two connections on one store: `a` sends, `b` changes the channel."""
    a = opening.connect(store, create=False)
    b = opening.connect(store, create=False)
    channels.create_channel(b, "team", "group", "alice", channels.channel_config(), NOW)
    channels.join_channel(b, "team", "bob", "member", NOW, by="alice")
    yield a, b
    a.close()
    b.close()


def test_a_membership_change_on_another_connection_is_honoured_by_the_next_send(pair):
    a, b = pair
    assert _send(a).recipients == ("bob",)  # `a` has cached team now
    channels.join_channel(b, "team", "carol", "member", NOW, by="alice")
    assert _send(a).recipients == ("bob", "carol")
    channels.leave_channel(b, "team", "bob", NOW, by="bob")
    assert _send(a).recipients == ("carol",)
    channels.leave_channel(b, "team", "carol", NOW, by="carol")
    channels.join_channel(b, "team", "dave", "observer", NOW, by="alice")
    with pytest.raises(NotParticipant):  # dave joined, as an observer: he may not send
        _send(a, sender="bob")


def test_a_state_change_on_another_connection_is_honoured_by_the_next_send(pair):
    a, b = pair
    _send(a)
    channels.change_channel_state(b, "team", "pause", by="alice")
    with pytest.raises(InvalidState):
        _send(a)
    channels.change_channel_state(b, "team", "resume", by="alice")
    assert _send(a).recipients == ("bob",)


def test_a_subscription_on_another_connection_routes_the_next_pubsub_send(pair):
    a, b = pair
    channels.create_channel(b, "events", "pubsub", "alice", channels.channel_config(), NOW)
    channels.join_channel(b, "events", "bob", "member", NOW, by="alice")
    assert _send(a, "events", topic="build.done").recipients == ()
    channels.subscribe(b, "events", "build.*", "bob", NOW)
    assert _send(a, "events", topic="build.done").recipients == ("bob",)
    channels.unsubscribe(b, "events", "build.*", "bob")
    assert _send(a, "events", topic="build.done").recipients == ()


@pytest.mark.process
def test_a_change_made_by_another_process_is_honoured_by_the_next_send(pair, store):
    a, _ = pair
    _send(a)
    r = run("channel", "join", "team", "carol", "--as", "alice")
    assert r.returncode == 0, r.stderr
    assert _send(a).recipients == ("bob", "carol")


def test_a_rolled_back_change_on_the_same_connection_is_not_remembered(pair):
    """The send inside a transaction that joined carol sees carol; that transaction rolls
    back, then another connection commits a different change (erin joins), which brings the
    token to the value the rolled-back transaction had: the next send must see erin, not
    carol."""
    a, b = pair
    _send(a)
    with pytest.raises(RuntimeError), write(a):
        channels.join_channel(a, "team", "carol", "member", NOW, by="alice")
        assert _send(a).recipients == ("bob", "carol")
        raise RuntimeError("roll it all back")
    channels.join_channel(b, "team", "erin", "member", NOW, by="alice")
    assert _send(a).recipients == ("bob", "erin")
    assert _send(a).recipients == ("bob", "erin")
