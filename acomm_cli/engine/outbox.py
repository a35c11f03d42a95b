"""A node's outbox: the envelope of an event and its append (`emit`), the event ids
(UUIDv7), the claim an agent's first words across nodes make in the room copy, and the
`dead_letter` a dead letter here owes the node a message came from. Kept apart from
`remote` (which re-exports it) so that the dead-letter path, which every store runs, reaches
the outbox without loading the rest of federation. Stdlib, clock and the store only."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from acomm_cli import clock
from acomm_cli.store import federation as sql

POLICY_VERSION = 1
MAX_DETAIL = 1024  # a dead letter's detail (its last error) is cut to this


_VARIANT = {c: "89ab"[int(c, 16) & 3] for c in "0123456789abcdef"}  # 0b10, then 2 bits
_LAST_MS: tuple[int, str] = (-1, "")


def uuid7(now_ms: int) -> str:
    """A UUIDv7: 48 bits of milliseconds, the version 7, then 74 random bits around the
    variant 0b10 (RFC 9562). Built as text from the random bytes' hex: no integer
    arithmetic, and the millisecond's hex kept for the next id of the same millisecond."""
    global _LAST_MS
    if _LAST_MS[0] != now_ms:
        _LAST_MS = (now_ms, f"{now_ms & 0xFFFFFFFFFFFF:012x}")
    ms, r = _LAST_MS[1], os.urandom(10).hex()
    return f"{ms[:8]}-{ms[8:]}-7{r[:3]}-{_VARIANT[r[3]]}{r[4:7]}-{r[7:19]}"


def room_value(conn: sqlite3.Connection, map_: str, key: str) -> dict[str, Any]:
    import json

    raw = sql.room_get(conn, map_, key)
    if raw is None:
        return {}
    value = json.loads(raw)
    return value if isinstance(value, dict) else {}


def claim_speaker(
    conn: sqlite3.Connection, node: str, agent: str | None, now: int, *, queue: bool
) -> None:
    """An agent no node owns becomes `node`'s once it speaks across nodes from there: the
    first node to speak as it owns it, so no other node can later speak as it. The sending
    node writes the claim (queued for the room) in the transaction that appends the event; a
    receiving node writes the same claim into its copy when the event arrives, so the rule
    holds whichever of the room update and the event gets there first."""
    if agent is None or agent in ("acomm", "*"):  # the system sender, the queue: no one's
        return
    if room_value(conn, "agents", agent).get("ownerNodeId") is None:
        import json

        value = json.dumps({"ownerNodeId": node}, separators=(",", ":"))
        sql.room_put(conn, "agents", agent, value, now, queue=queue)


_LAST_STAMP: tuple[int, str] = (-1, "")


def _created_at(now: int) -> str:
    """clock.iso(now), kept for the last `now`: a pull stamps a page's acks with one time."""
    global _LAST_STAMP
    if _LAST_STAMP[0] != now:
        _LAST_STAMP = (now, clock.iso_ms(now))
    return _LAST_STAMP[1]


def envelope(
    event_id: str,
    self_node: str,
    kind: str,
    *,
    source_agent: str | None,
    to_agent: str | None,
    to_node: str | None,
    corr: str | None,
    payload: Any,
    attempt: int,
    decision: str | None,
    now: int,
    trace_id: str | None = None,
) -> dict[str, Any]:
    trace: dict[str, Any] = {
        "attempt": attempt,
        "routeDecision": decision,
        "policyVersion": POLICY_VERSION,
    }
    if trace_id is not None:  # the message's trace: the other node's copy keeps it
        trace["traceId"] = trace_id
    return {
        "eventId": event_id,
        "sourceNodeId": self_node,
        "sourceAgentId": source_agent,
        "toAgentId": to_agent,
        "toNodeId": to_node,
        "corrId": corr,
        "kind": kind,
        "createdAt": _created_at(now),
        "payload": payload,
        "trace": trace,
    }


def accepted_acks(
    self_node: str, rows: Sequence[tuple[str, str, str | None, str]], now: int
) -> list[tuple[str, str, str, str]]:
    """The `ack accepted` events a pull owes the events it took, `rows` (to node, the
    local recipient, corrId, the event's id), as store.federation.append_outbox_texts
    takes them: each the JSON text append_outbox_many writes for envelope(...) of the
    event, written from a template (a page's acks differ only in these strings)."""
    from json.encoder import encode_basestring_ascii as q  # json.dumps's, in C

    stamp, me = q(_created_at(now)), q(self_node)
    out = []
    for to_node, agent, corr, ack_of in rows:
        event_id = uuid7(now)
        out.append(
            (
                event_id,
                "ack",
                to_node,
                f'{{"eventId":{q(event_id)},"sourceNodeId":{me},"sourceAgentId":{q(agent)},'
                f'"toAgentId":null,"toNodeId":{q(to_node)},'
                f'"corrId":{"null" if corr is None else q(corr)},"kind":"ack",'
                f'"createdAt":{stamp},"payload":{{"ackOf":{q(ack_of)},"status":"accepted"}},'
                f'"trace":{{"attempt":1,"routeDecision":null,"policyVersion":{POLICY_VERSION}}}',
            )
        )
    return out


def emit(
    conn: sqlite3.Connection,
    self_node: str,
    kind: str,
    *,
    to_node: str | None,
    now: int,
    event_id: str | None = None,
    attempt: int = 1,
    **fields: Any,
) -> str:
    """Append one event to this node's outbox; returns its eventId."""
    event_id = event_id or uuid7(now)
    claim_speaker(conn, self_node, fields.get("source_agent"), now, queue=True)
    env = envelope(event_id, self_node, kind, to_node=to_node, attempt=attempt, now=now, **fields)
    sql.append_outbox(conn, event_id, attempt, kind, to_node, env, now)
    return event_id


def dead_lettered(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Deliveries of messages from another node died here (retries spent, a nack without
    requeue, an expiry, ...): a `dead_letter` event to each message's source node, naming the
    event that died, so its sender's state ends there. `rows`: (event_id, source_node,
    recipient, sender, correlation_id, reason, last_error, at). A requeue is not told: the
    sender's states have no place between `accepted` and the end."""
    self_node = sql.node_id(conn)
    if self_node is None:
        return
    for event_id, source, recipient, sender, corr, reason, last_error, at in rows:
        emit(
            conn,
            self_node,
            "dead_letter",
            to_node=source,
            now=at,
            source_agent=recipient,
            to_agent=sender,
            corr=corr,
            payload={
                "eventId": event_id,
                "reason": reason,
                "detail": (last_error or reason)[:MAX_DETAIL],
            },
            decision=None,
        )
