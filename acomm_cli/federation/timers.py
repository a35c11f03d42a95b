"""Federation's timers, applied by `tick` on a node: a bounded pull, retries
of events not yet accepted (the same eventId, attempt + 1, after ack_timeout plus an
exponential back-off with jitter), a dead letter after max_attempts (reason
`federation_max_attempts`), and one SLA incident per event accepted but neither processed
nor answered in time. Due times follow from scheduled times, never from when the tick ran,
and the jitter is derived from the event id: a late tick writes the same history."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import deadletters, remote
from acomm_cli.federation import identity
from acomm_cli.federation import pull as fed_pull
from acomm_cli.store import channels, reads, sending
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write
from acomm_cli.topics import SubscriptionIndex

SLA_TOPIC = "_system.federation.sla"
MAX_REASON = "federation_max_attempts"


@dataclass(frozen=True)
class FedConfig:
    ack_timeout_ms: int = 30_000
    max_attempts: int = 5
    retry_backoff_ms: int = 1000
    retry_jitter: float = 0.1
    sla_ms: int = 600_000
    pull_pages: int = 10
    peer_deadline_ms: int = 30_000  # a slow or silent peer is skipped for the pass after it
    profile: str | None = None  # `federation.profile` as configured (the store's binds too)
    ca_file: str | None = None  # `federation.ca_file`: CAs trusted for https:// peers

    @classmethod
    def from_settings(cls, value: Any) -> FedConfig:
        return cls(
            value("federation.ack_timeout"),
            value("federation.max_attempts"),
            value("federation.retry_backoff"),
            value("federation.retry_jitter"),
            value("federation.sla"),
            value("federation.pull_pages"),
            value("federation.peer_deadline"),
            value("federation.profile"),
            value("federation.ca_file"),
        )


def retry_delay(cfg: FedConfig, event_id: str, attempt: int) -> int:
    """How long after attempt `attempt` was due the next one is: ack_timeout + backoff *
    2^(attempt-1), times 1 + jitter * a fraction fixed by (event id, attempt)."""
    digest = hashlib.sha256(f"{event_id}:{attempt}".encode()).digest()
    fraction = int.from_bytes(digest[:4], "big") / 2**32
    base = cfg.ack_timeout_ms + cfg.retry_backoff_ms * 2 ** (attempt - 1)
    return int(base * (1 + cfg.retry_jitter * fraction))


def tick(
    conn: sqlite3.Connection,
    now: int,
    cfg: FedConfig,
    on_unreachable: Callable[[str, str], None] = lambda _node, _why: None,
) -> dict[str, int]:
    """One pass on a node: {fed_pulled, fed_rejected, fed_retried, fed_dead_lettered,
    fed_incidents}. An unreachable peer (down, refusing, or past `peer_deadline`) is skipped
    for the pass and told to `on_unreachable(node, why)`, never fatal here; nor is a
    malformed event (refused alone, `fed_rejected`)."""
    from acomm_cli.federation import http_transport

    http_transport.use_ca_file(cfg.ca_file)
    pulled = fed_pull.pull(
        conn,
        now,
        max_pages=cfg.pull_pages,
        sla_ms=cfg.sla_ms,
        deadline_s=cfg.peer_deadline_ms / 1000,
        profile_name=cfg.profile,
    )
    for node in pulled.unreachable:
        on_unreachable(node, pulled.why.get(node, "unreachable"))
    retried = dead = incidents = 0
    with write(conn):
        me = identity.require(conn).node_id
        for row in sql.due_sent(conn, now):
            event_id, message_id, _, to_agent, _, state, attempt, due = row[:8]
            if state == "emitted":
                if attempt >= cfg.max_attempts:
                    _give_up(conn, me, row, now)
                    dead += 1
                else:
                    _retry(
                        conn, event_id, attempt + 1, due + retry_delay(cfg, event_id, attempt), due
                    )
                    retried += 1
            elif state == "accepted":
                _incident(conn, row, due)
                incidents += 1
            else:
                sql.update_sent(conn, event_id, next_timer_at=None)
            del message_id, to_agent
    return {
        "fed_pulled": pulled.read,
        "fed_rejected": pulled.rejected,
        "fed_retried": retried,
        "fed_dead_lettered": dead,
        "fed_incidents": incidents,
    }


def _retry(conn: sqlite3.Connection, event_id: str, attempt: int, next_due: int, at: int) -> None:
    env = sql.outbox_event(conn, event_id)
    assert env is not None
    env.pop("seq", None)
    env["trace"] = dict(env.get("trace") or {}, attempt=attempt)
    sql.append_outbox(conn, event_id, attempt, str(env["kind"]), env.get("toNodeId"), env, at)
    sql.update_sent(conn, event_id, attempt=attempt, next_timer_at=next_due)


def _give_up(conn: sqlite3.Connection, me: str, row: tuple[Any, ...], now: int) -> None:
    """max_attempts without `accepted`: a local dead letter and a `dead_letter` event."""
    event_id, message_id, to_node, to_agent, _, _, attempt, due = row[:8]
    msg = reads.message_by_id(conn, message_id) if message_id is not None else None
    why = f"not accepted by node {to_node} after {attempt} attempts"
    if msg is not None and to_agent is not None:
        sending.insert_deliveries(
            conn, [(msg.id, to_agent, msg.channel_id, "unread", 0, 0, msg.created_at, None)]
        )
        deadletters.dead_letter(
            conn, [(msg.id, to_agent, msg.channel_id, attempt - 1)], MAX_REASON, why, due
        )
    remote.emit(
        conn,
        me,
        "dead_letter",
        to_node=to_node,
        now=due,
        source_agent=msg.sender if msg else None,
        to_agent=to_agent,
        corr=msg.correlation_id if msg else None,
        payload={"eventId": event_id, "reason": MAX_REASON, "detail": why},
        decision=None,
    )
    sql.update_sent(conn, event_id, state="dead_letter", next_timer_at=None)
    del now


def _incident(conn: sqlite3.Connection, row: tuple[Any, ...], due: int) -> None:
    """Accepted but no `processed` or `reply` within the SLA: one notification on `_system`
    topic `_system.federation.sla`, once per event."""
    event_id, message_id, to_node, to_agent = row[:4]
    ch = channels.channel_by_name(conn, model.SYSTEM_CHANNEL)
    assert ch is not None
    body = json.dumps(
        {
            "event_id": event_id,
            "message_id": message_id,
            "to_node": to_node,
            "to_agent": to_agent,
            "accepted_at": clock.iso(row[9]),
            "reason": "federation_sla",
        },
        separators=(",", ":"),
    )
    mid = sending.insert_message(
        conn,
        (
            None,
            ch.id,
            model.SYSTEM_AGENT,
            "notification",
            body,
            SLA_TOPIC,
            1,
            None,
            None,
            None,
            due,
            None,
            None,
        ),
    )
    if message_id is not None:  # the notice joins the late message's trace
        from acomm_cli.store import traces

        traces.inherit(conn, mid, message_id)
    agents = SubscriptionIndex(channels.subscriptions(conn, ch.id)).route(SLA_TOPIC)
    sending.insert_deliveries(
        conn, [(mid, a, ch.id, "unread", 0, 0, due, None) for a in sorted(agents)]
    )
    sql.update_sent(conn, event_id, state="incident", incident_at=due, next_timer_at=None)
