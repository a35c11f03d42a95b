"""What a member node may do: the checks an event read from a peer's outbox passes before
anything of it is applied. A peer speaks only for itself. The event's origin is the node whose
outbox it was read from (a signed read or a NATS subject says which); the agent it sends as
is one that node owns in the room, or is a listed fallback for, or one no node owned until
that node spoke as it first; never an agent of this node or of a third node and never
`acomm`; an ack, a reply or a task's progress comes only from the node the original event
was sent to; a message or a task passes its local recipient's contact rule
(engine/contacts.py). Each check returns why it refuses (None: allowed);
federation's pull turns a refusal into EventRejected. Imported only on a node. Stdlib and
store only."""

from __future__ import annotations

import sqlite3
from typing import Any

from acomm_cli.engine import contacts, remote
from acomm_cli.engine.envelope import TASK_KINDS as _TASK_KINDS
from acomm_cli.model import SYSTEM_AGENT
from acomm_cli.store import federation as fsql

# the kinds whose sourceAgentId speaks to someone here: a message or a reply lands in an
# inbox as that agent, a task is created by it or changed by it
_SPEAKS_AS = frozenset({"message", "task_create", "reply", *_TASK_KINDS})
# the kinds that reach a local agent as a direct message: its contact rule applies
_ADDRESSED = frozenset({"message", "task_create"})


def refusal(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    env: dict[str, Any],
    now: int,
    allowed: set[tuple[str, str]] | None = None,
    admitted: set[tuple[str, str]] | None = None,
) -> str | None:
    """Why `source` may not have sent `env` to this node (`me`), or None. Only events
    addressed to this node are checked (others are recorded and left alone). An allowed
    event may claim its unowned sender for `source` in our room copy (see sender_refusal):
    the caller undoes that with the rest if it refuses the event later. `allowed`: the
    (node, agent) senders the caller's transaction found allowed already, kept up to date
    (a sender once allowed stays so while only messages are applied: the room changes
    only by claims, and a claim never takes an owned agent). `admitted`: likewise the
    (sender, local recipient) pairs whose contact rule was found to admit them (messages
    change no rule, contact or team)."""
    origin = env.get("sourceNodeId")
    if origin is not None and origin != source:
        return f"sourceNodeId {origin!r} is not the node whose outbox it came from ({source!r})"
    kind = env.get("kind")
    if kind in _SPEAKS_AS:
        agent = env.get("sourceAgentId")
        if allowed is None or (source, agent) not in allowed:
            why = sender_refusal(conn, me, source, agent, now)
            if why is not None:
                return why
            if allowed is not None and isinstance(agent, str):
                allowed.add((source, agent))
    if kind in _ADDRESSED:  # the recipient's contact rule: this node enforces its own
        sender, local = env.get("sourceAgentId"), env.get("toAgentId")
        if admitted is None or (sender, local) not in admitted:
            if (
                admitted is not None
                and isinstance(sender, str)
                and isinstance(local, str)
                and contacts.refusal(conn, sender, local) is None
            ):
                admitted.add((sender, local))  # the rule itself admits it, not an answer
            else:
                why = contacts.inbound_refusal(conn, env)
                if why is not None:
                    return why
    payload = env.get("payload")
    payload = payload if isinstance(payload, dict) else {}
    if kind == "ack":
        return answer_refusal(conn, source, payload.get("ackOf"), "an ack")
    if kind == "reply":
        why = answer_refusal(conn, source, payload.get("replyTo"), "a reply")
        return why or replier_refusal(conn, payload.get("replyTo"), env.get("sourceAgentId"))
    if kind in _TASK_KINDS:
        return task_refusal(conn, source, payload.get("taskId"), str(kind))
    return None


def sender_refusal(
    conn: sqlite3.Connection, me: str, source: str, agent: Any, now: int
) -> str | None:
    """The agent a peer sends as: never `acomm`; owned by the peer in the room (or the peer
    is one of its listed fallback nodes). An agent no node owns is never one of this node's
    agents (a participant of a channel here); otherwise the first node to speak as it owns
    it from then on: the claim is written into our room copy (the sending node has queued
    the same claim for the room), so no other node can speak as it after."""
    if agent is None:
        return None
    agent = str(agent)
    if agent == SYSTEM_AGENT:
        return f"node {source!r} may not send as {SYSTEM_AGENT!r}"
    owner = remote.room_value(conn, "agents", agent).get("ownerNodeId")
    if owner is None:
        if fsql.local_participant(conn, agent):
            return f"{agent!r} is an agent of this node, not of node {source!r}"
        remote.claim_speaker(conn, source, agent, now, queue=False)
        return None
    if owner == source:
        return None
    fallbacks = remote.room_value(conn, "routing", agent).get("fallbackOwners") or []
    if isinstance(fallbacks, list) and source in fallbacks:
        return None
    whose = "this node" if owner == me else f"node {owner!r}"
    return f"{agent!r} is owned by {whose}, not by node {source!r}"


def answer_refusal(conn: sqlite3.Connection, source: str, event_id: Any, what: str) -> str | None:
    """An ack or a reply answers an event this node sent: only the node it was sent to may
    answer it. An answer to an event we never sent changes nothing and passes."""
    row = fsql.sent(conn, str(event_id))
    if row is None or row[2] == source:
        return None
    to = f"node {row[2]!r}" if row[2] else "no node"
    return f"{what} for event {event_id} (sent to {to}) came from node {source!r}"


def replier_refusal(conn: sqlite3.Connection, event_id: Any, agent: Any) -> str | None:
    """A reply comes from the agent the query was sent to: only it takes part in the
    asker's channel (the response lands there as from it)."""
    row = fsql.sent(conn, str(event_id))
    if row is None or row[3] is None or agent == row[3]:
        return None
    return f"a reply to a query sent to {row[3]!r} came as {agent!r}"


def task_refusal(conn: sqlite3.Connection, source: str, task_id: Any, kind: str) -> str | None:
    """A task's progress (accept, update, complete, fail, incident) changes our copy only
    when the task was created here and delegated to the sending node."""
    from acomm_cli.engine.taskdata import by_global_id  # (a task's event only)

    task = by_global_id(conn, str(task_id), None)  # only a task created here takes them
    if task is None or task.peer_node == source:
        return None
    return (
        f"{kind} for task {task_id}: the task is delegated to node {task.peer_node!r},"
        f" not to node {source!r}"
    )
