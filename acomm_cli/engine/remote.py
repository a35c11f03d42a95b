"""Federation's rules inside the engine: routing a direct message to
an agent owned by another node, the envelope of an outbox event, and the acks and replies a
local agent's turn owes a message that came from another node.

Imported only on a node's paths: by `sending` when a direct message names an agent that has
no direct channel here and the store turns out to be a node, by `sending.persist` and
`acking.record_ack` for a message on a `_fed:` channel (which only a node has). A plain
store never loads it. Messages exchanged with another node live on `_fed:<local>:<remote>`
channels: the local agent's copy of a sent message (no local delivery), and the messages that
came in (delivered to the local agent)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from acomm_cli import clock
from acomm_cli.engine.outbox import POLICY_VERSION as POLICY_VERSION
from acomm_cli.engine.outbox import claim_speaker as claim_speaker
from acomm_cli.engine.outbox import emit as emit
from acomm_cli.engine.outbox import envelope as envelope
from acomm_cli.engine.outbox import room_value as room_value
from acomm_cli.engine.outbox import uuid7 as uuid7
from acomm_cli.model import (
    Channel,
    ChannelConfig,
    ChannelType,
    Event,
    MessageType,
    RichParts,
    Role,
)
from acomm_cli.store import channels, sending
from acomm_cli.store import federation as sql

TYPE_CHECKING = False  # lite.records' dataclass: a node's send and pull skip dataclasses
if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from acomm_cli.lite.records import dataclass

FED_PREFIX = "_fed:"


@dataclass(frozen=True)
class Route:
    decision: str  # local, owner, fallback; or no_owner / owner_offline (unroutable)
    to_node: str | None
    owner: str | None = None
    fallbacks: tuple[str, ...] = ()


# ---------------------------------------------------------------- the room copy


def last_seen(conn: sqlite3.Connection, node: str) -> int | None:
    seen = room_value(conn, "nodes", node).get("lastSeenAt")
    if not isinstance(seen, str):
        return None
    try:
        return int(datetime.fromisoformat(seen).timestamp() * 1000)
    except ValueError:
        return None


def online(
    conn: sqlite3.Connection, self_node: str, node: str, now: int, offline_after_ms: int
) -> bool:
    """This node is always online to itself; another while its lastSeenAt is recent."""
    if node == self_node:
        return True
    seen = last_seen(conn, node)
    return seen is not None and now - seen <= offline_after_ms


def route(
    conn: sqlite3.Connection, self_node: str, agent: str, now: int, offline_after_ms: int
) -> Route:
    """Agent-first routing: the agent's owner node from the room, when it is online; else
    the first online fallback node the room lists for the agent (this node: deliver here);
    an agent no node owns is local if it takes part in a channel here, else `no_owner`;
    an owner offline with no fallback online is `owner_offline`."""
    owner = room_value(conn, "agents", agent).get("ownerNodeId")
    fallbacks = tuple(
        n
        for n in room_value(conn, "routing", agent).get("fallbackOwners", [])
        if isinstance(n, str)
    )
    if not isinstance(owner, str):
        if sql.local_participant(conn, agent):
            return Route("local", None)
        return Route("no_owner", None)
    if owner == self_node:
        return Route("local", None, owner, fallbacks)
    if online(conn, self_node, owner, now, offline_after_ms):
        return Route("owner", owner, owner, fallbacks)
    for node in fallbacks:
        if online(conn, self_node, node, now, offline_after_ms):
            decision = "local" if node == self_node else "fallback"
            return Route(decision, None if node == self_node else node, owner, fallbacks)
    return Route("owner_offline", owner, owner, fallbacks)


def fed_channel(
    conn: sqlite3.Connection, known: dict[str, Channel], local: str, remote: str, now: int
) -> str:
    """The `_fed:<local>:<remote>` channel of a local agent and a remote one, created on
    first use; `known` is the caller's channel cache (a sending Router's), kept up to date."""
    name = f"{FED_PREFIX}{local}:{remote}"
    if name in known:
        return name
    ch = channels.channel_by_name(conn, name)
    if ch is None:
        cid = channels.insert_channel(
            conn, name, ChannelType.DIRECT.value, local, ChannelConfig(), now
        )
        channels.insert_participant(conn, cid, local, Role.OWNER.value, now)
        channels.insert_participant(conn, cid, remote, Role.MEMBER.value, now)
        ch = channels.channel_by_id(conn, cid)
    known[name] = ch  # type: ignore[assignment]
    return name


def message_payload(
    row: Sequence[Any], rich: RichParts | None = None, event: Event | None = None
) -> dict[str, Any]:
    """A planned message's row (channel_id, sender, type, content, topic, priority, corr,
    dedupe, metadata, ...) as a `message` event's payload; a markdown format, a subject, the
    notification event and a reference to each file (never its bytes) travel with it."""
    import json

    payload = {
        "type": row[2],
        "content": row[3],
        "topic": row[4],
        "priority": row[5],
        "metadata": json.loads(row[8]) if row[8] else {},
    }
    if rich is not None and rich.format not in (None, "text"):
        payload["format"] = rich.format
    if rich is not None and rich.subject is not None:
        payload["subject"] = rich.subject
    if rich is not None and rich.attachments:  # fetched from this node's gateway on demand
        from acomm_cli.engine import remoteblobs

        payload["attachments"] = remoteblobs.refs(rich)
    if event is not None:  # the fields as a send gives them: the other node completes them
        from acomm_cli.engine import events

        payload["event"] = events.given(event)
    return payload


# ---------------------------------------------------------------- a local agent's turn


def _inbound(conn: sqlite3.Connection, message_id: int) -> tuple[str, str] | None:
    return sql.inbound_of_message(conn, message_id)


def processed(
    conn: sqlite3.Connection, message_id: int, agent: str, outcome: str, now: int
) -> bool:
    """A local agent finished its turn on a message from another node (its `ack completed |
    failed`, or its dispatch receipt): `ack processed` in our outbox. False when the message
    did not come from another node."""
    found = _inbound(conn, message_id)
    self_node = sql.node_id(conn)
    if found is None or self_node is None:
        return False
    event_id, source = found
    emit(
        conn,
        self_node,
        "ack",
        to_node=source,
        now=now,
        source_agent=agent,
        to_agent=None,
        corr=None,
        payload={"ackOf": event_id, "status": "processed", "outcome": outcome},
        decision=None,
    )
    return True


def turn_ended(
    conn: sqlite3.Connection, message_id: int, agent: str, outcome: str, now: int
) -> None:
    """A dispatch receipt ended the agent's turn on a message from another node: `ack
    processed`, unless the turn already sent it (an ack, a response)."""
    found = _inbound(conn, message_id)
    if found is not None and not sql.answers_of(conn, found[0], found[1]):
        processed(conn, message_id, agent, outcome, now)


def answered(
    conn: sqlite3.Connection,
    row: Sequence[Any],
    correlation_id: str | None,
    response_id: int,
    now: int,
) -> None:
    """A local agent answered (a response; `row` is its planned message row) on a `_fed:`
    channel: a `reply` event for the query that came from another node, and `ack
    processed` for it."""
    if row[2] != MessageType.RESPONSE.value or correlation_id is None:
        return
    found = sending.first_of_type(conn, correlation_id, MessageType.QUERY.value)
    if found is None:
        return
    origin = _inbound(conn, found[0])
    self_node = sql.node_id(conn)
    if origin is None or self_node is None:
        return
    query_event, source = origin
    reply_id = emit(
        conn,
        self_node,
        "reply",
        to_node=source,
        now=now,
        source_agent=row[1],
        to_agent=found[2],
        corr=correlation_id,
        payload={"replyTo": query_event, "content": row[3]},
        decision=None,
        trace_id=row[12] if len(row) > 12 else None,
    )
    sql.set_message_global_id(conn, response_id, reply_id, self_node)
    emit(
        conn,
        self_node,
        "ack",
        to_node=source,
        now=now,
        source_agent=row[1],
        to_agent=None,
        corr=correlation_id,
        payload={"ackOf": query_event, "status": "processed", "outcome": "completed"},
        decision=None,
    )


# ---------------------------------------------------------------- what `show` says


def view(conn: sqlite3.Connection, message_id: int, global_id: str) -> dict[str, Any]:
    """The federation view of a federated message: on the sender's node, its
    event's state (`emitted`, `accepted`, `processed`, `replied`, `dead_letter`, `incident`);
    on the receiving node, the inbound event (accepted when it was pulled; processed or
    replied once the local agent's turn appended that to our outbox)."""
    inbound = sql.inbound_row_of_message(conn, message_id)
    if inbound is not None:
        event_id, source, attempt, received_at = inbound
        answers = dict(reversed(sql.answers_of(conn, event_id, source)))  # kind -> first created_at
        state = "replied" if "reply" in answers else "processed" if answers else "accepted"
        done = answers.get("reply", answers.get("ack"))
        dead = sql.dead_letter_of_message(conn, message_id) if state == "accepted" else None
        return {
            "direction": "inbound",
            "event_id": event_id,
            "state": "dead_letter" if dead is not None else state,  # told to the origin
            "attempt": attempt,
            "origin_node": source,
            "to_node": sql.node_id(conn),
            "accepted_at": clock.iso(received_at),
            "processed_at": clock.iso(done),
            **_dead(conn, message_id, "dead_letter" if dead is not None else state),
        }
    row = sql.sent_of_message(conn, message_id)
    if row is not None:
        _, _, to_node, to_agent, decision, state, attempt = row[:7]
        return {
            "direction": "outbound",
            "event_id": global_id,
            "state": state,
            "attempt": attempt,
            "to_node": to_node or None,
            "to_agent": to_agent,
            "route_decision": decision,
            "accepted_at": clock.iso(row[9]),
            "processed_at": clock.iso(row[10]),
            "incident_at": clock.iso(row[11]),
            **_dead(conn, message_id, state),
        }
    env = sql.outbox_event(conn, global_id) or {}  # a reply we emitted: no sender's state
    return {
        "direction": "outbound",
        "event_id": global_id,
        "state": "emitted",
        "attempt": (env.get("trace") or {}).get("attempt"),
        "to_node": env.get("toNodeId"),
        "to_agent": env.get("toAgentId"),
        "route_decision": None,
        "accepted_at": None,
        "processed_at": None,
        "incident_at": None,
    }


def _dead(conn: sqlite3.Connection, message_id: int, state: str) -> dict[str, Any]:
    """Why a sent message is `dead_letter`: its dead letter here, which names the other node
    when the message died there."""
    found = sql.dead_letter_of_message(conn, message_id) if state == "dead_letter" else None
    if found is None:
        return {}
    return {"dead_letter_reason": found[0], "dead_letter_detail": found[1]}
