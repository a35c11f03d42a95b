"""The envelope check every event read from a peer passes before it touches the store: each
field the readers use, typed and bounded; the first fault named."""

from __future__ import annotations

from typing import Any

import pytest

from acomm_cli.engine import envelope
from acomm_cli.errors import EventRejected

pytestmark = pytest.mark.unit


def message(**changes: Any) -> dict[str, Any]:
    env = {
        "seq": 3,
        "eventId": "01a21cd3-ce7e-7ecb-810d-2be824aa2206",
        "sourceNodeId": "na",
        "sourceAgentId": "alice",
        "toAgentId": "bob",
        "toNodeId": "nb",
        "corrId": None,
        "kind": "message",
        "createdAt": "2030-01-01T00:00:00.000Z",
        "payload": {"type": "text", "content": "", "topic": None, "priority": 2, "metadata": {}},
        "trace": {"attempt": 1, "routeDecision": "owner", "policyVersion": 1},
    }
    env.update(changes)
    return env


def refused(env: Any) -> str:
    with pytest.raises(EventRejected) as caught:
        envelope.check(env)
    assert caught.value.code == "federation_rejected"
    return caught.value.reason


def test_a_message_as_nodes_emit_it_passes():
    assert envelope.check(message()) == message()
    ack = message(kind="ack", toAgentId=None, payload={"ackOf": "e1", "status": "accepted"})
    assert envelope.check(ack) is ack
    task = message(kind="task_incident", sourceAgentId=None, payload={"taskId": "t1"})
    assert envelope.check(task) is task


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (message(seq=True), "seq: True is not a positive integer"),
        (message(seq=0), "seq: 0 is not a positive integer"),
        (message(seq=2**63), "is not a positive integer"),
        (message(eventId=""), "eventId: '' is not a string of 1-128"),
        (message(eventId="e" * 129), "eventId:"),
        (message(kind="signal"), "kind: 'signal' is not a known event kind"),
        (message(sourceAgentId="acomm;rm"), "sourceAgentId: 'acomm;rm' is not a valid agent id"),
        (message(toAgentId=7), "toAgentId: 7 is not a valid agent id"),
        (message(trace=[1]), "trace: [1] is not an object"),
        (message(trace={"attempt": "2"}), "trace.attempt: '2' is not a positive integer"),
        (message(payload={"metadata": "x"}), "payload.metadata: 'x' is not an object"),
        (message(payload={"priority": 1.5}), "payload.priority: 1.5"),
        (message(kind="ack", payload={"status": "accepted"}), "payload.ackOf: None"),
        (message(kind="ack", payload={"ackOf": "e", "status": "done"}), "payload.status"),
        (message(kind="reply", payload={}), "payload.replyTo: None"),
        (message(kind="task_accept", payload={"taskId": 5}), "payload.taskId: 5"),
        ("text", "the envelope is not an object (str)"),
    ],
)
def test_each_fault_is_named(env, says):
    assert says in refused(env)


def test_size_and_depth_are_bounded_without_recursion():
    deep: Any = []
    for _ in range(100_000):  # far past Python's own recursion limit
        deep = [deep]
    assert "nests deeper than 32" in refused(message(payload={"metadata": {"x": deep}}))
    wide = {"metadata": {str(i): i for i in range(envelope.MAX_ITEMS)}}
    assert "more than" in refused(message(payload=wide))
    big = {"content": "x" * (envelope.MAX_TEXT + 1)}
    assert "text is over" in refused(message(payload=big))


def test_what_a_refusal_records_of_the_event():
    assert envelope.seq_of(message(seq="7")) is None and envelope.seq_of(message()) == 3
    assert envelope.said(message(kind=["x"]), "kind") is None
    assert envelope.said(message(eventId="e" * 1000), "eventId") == "e" * envelope.MAX_SHORT
    assert envelope.said([1], "eventId") is None
