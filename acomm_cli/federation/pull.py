"""`acomm fed pull`: read peers' outboxes after our cursor and, in ONE transaction per page,
advance the cursor, record the inbound events (unique on the source node and eventId: a
re-read is a duplicate, never a second delivery), deliver messages into local deliveries,
append `ack accepted` for each, and apply acks, replies and dead letters to the sender's state.

Each event is checked (engine/envelope.py) and applied; one that is malformed, or that a
rule refuses (EventRejected), is rolled back alone, recorded in fed_rejected and passed by
the cursor; the page's other events and the other peers go on. A page is first applied in
one savepoint; when one of its events is refused it is undone and applied again with a
savepoint per event (a page of good events pays for none).

A page's run of messages shares what it read once (a _Page: the channel cache, the senders
found allowed, the speaker claims written) and, applied whole, stages its plain messages'
inbound records, messages and deliveries to insert them together, one statement each, with
their `ack accepted` events; anything else, or a refused event, writes what is staged and
drops those facts first, so every check still sees what the events before it wrote."""

from __future__ import annotations

import sqlite3
from contextlib import nullcontext
from typing import Any

from acomm_cli.engine import envelope, outbox, peertrust, remote
from acomm_cli.engine.sending import Router, persist, plan_message, staged_rows
from acomm_cli.errors import CommError, EventRejected, InsecurePeer, PeerUnreachable
from acomm_cli.federation import identity, profile, room
from acomm_cli.federation.transport import Transport, Unreachable
from acomm_cli.model import MessageType, RichParts, SendRequest
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import enter_agents, leave_agents, savepoint, write
from acomm_cli.store.sending import insert_deliveries, last_message_id

PAGE_SIZE = 1000  # events a transaction commits (a gateway serves up to 1,000 a read)
# the task events a peer sends (taskfed, and the task engine it loads, only when one comes)
TASK_EVENTS = envelope.TASK_KINDS

TYPE_CHECKING = False  # the records of lite.records: a pull does not load dataclasses
if TYPE_CHECKING:
    from dataclasses import dataclass, field, replace
else:
    from acomm_cli.lite.records import dataclass, field, replace


@dataclass
class _Page:
    """What consecutive `message` events of one page's transaction reuse; `reset` whenever
    anything else is applied or an event is rolled back (the facts may no longer hold).

    A page applied whole (`batch`) also stages its run of plain messages: their inbound
    records, messages (ids taken in order after the store's last) and deliveries wait to be
    inserted together, one statement each, by `flush`, which runs before anything else
    reads or writes them (any other event, any other message, the page's end). A duplicate
    is found in `seen`: the page's ids the store held before it (one read) and those it
    recorded since."""

    conn: sqlite3.Connection
    router: Router
    me: str = ""  # this node
    senders: set[tuple[str, str]] = field(default_factory=set)  # (node, agent) allowed
    admitted: set[tuple[str, str]] = field(default_factory=set)  # (sender, local) by rule
    claimed: set[str] = field(default_factory=set)  # local agents whose claim is written
    # the `ack accepted` events owed: (to node, local agent, corrId, the event's id)
    acks: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    batch: bool = False
    seen: set[str] = field(default_factory=set)
    inbound: list[list[Any]] = field(default_factory=list)  # fed_inbound rows
    messages: list[tuple[Any, ...]] = field(default_factory=list)
    deliveries: list[tuple[Any, ...]] = field(default_factory=list)
    next_id: int | None = None  # the id of the next staged message

    def reset(self) -> None:
        self.router = Router(self.conn)
        self.senders.clear()
        self.admitted.clear()
        self.claimed.clear()

    def flush_rows(self) -> None:
        """Insert the staged inbound records, messages and deliveries."""
        if self.messages:
            sql.insert_inbound_messages(self.conn, self.messages)
            insert_deliveries(self.conn, self.deliveries)
            self.messages.clear()
            self.deliveries.clear()
        if self.inbound:
            sql.insert_inbound(self.conn, self.inbound)
            self.inbound.clear()
        self.next_id = None

    def flush(self, now: int) -> None:
        """Write what is staged, then append the waiting `ack accepted` events to the
        outbox, in their order."""
        self.flush_rows()
        if self.acks:
            sql.append_outbox_texts(self.conn, outbox.accepted_acks(self.me, self.acks, now), now)
            self.acks.clear()


@dataclass
class PullResult:
    read: int = 0
    delivered: int = 0
    duplicates: int = 0
    acks: int = 0
    replies: int = 0
    dead_lettered: int = 0
    tasks: int = 0
    rejected: int = 0  # events refused (recorded in fed_rejected, passed by the cursor)
    published: int = 0  # this node's own outbox rows put on NATS JetStream
    unreachable: list[str] = field(default_factory=list)
    why: dict[str, str] = field(default_factory=dict)  # unreachable peer -> the reason noted
    refused: dict[str, CommError] = field(default_factory=dict)  # by this node's own rules

    def doc(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "delivered": self.delivered,
            "duplicates": self.duplicates,
            "acks": self.acks,
            "replies": self.replies,
            "dead_lettered": self.dead_lettered,
            "tasks": self.tasks,
            "rejected": self.rejected,
            **({"published": self.published} if self.published else {}),
            "unreachable": self.unreachable,
        }

    def failure(self) -> CommError | None:
        """What `fed pull` exits with once it has pulled the others: a peer refused by
        this node's rules (an InsecurePeer) before one that could not be reached
        (peer_unreachable, exit 7), each naming the peer and the reason."""
        # ("nats": this node's own NATS server missed a publish; the rows wait, not fatal)
        peers = [n for n in self.unreachable if n != "nats"]
        if not peers:
            return None
        refused = [n for n in peers if n in self.refused]
        if refused:
            return self.refused[refused[0]]
        said = "; ".join(f"{n}: {self.why.get(n, 'unreachable')}" for n in peers)
        what = f"peer {peers[0]}" if len(peers) == 1 else f"{len(peers)} peers"
        return PeerUnreachable(
            f"{what} could not be pulled ({said}); the others were",
            field="peer",
            value=peers[0],
            peers=peers,
        )


def transport_for(
    conn: sqlite3.Connection,
    nodes: list[str],
    me: identity.Node,
    wait_s: float = 0.0,
    nats_link: Any = None,
    deadline_s: float = 30.0,
) -> Transport:
    """Each peer by its url: `store:PATH` StoreTransport, `http(s)://` HttpTransport,
    `nats://` NatsTransport (on this node's own NATS link when it has one); an http or NATS
    peer's exchange in a pass ends after `deadline_s` (plus `wait_s`) whatever it sends."""
    from acomm_cli.federation.http_transport import for_urls

    urls = {n: room.url_of(conn, n) for n in nodes}
    nats_url = next((u for u in urls.values() if u.startswith(("nats://", "tls://"))), None)
    if nats_url is None:
        return for_urls(urls, me, wait_s, deadline_s=deadline_s)
    from acomm_cli.federation import nats_transport as nt

    link = nats_link or nt.link_for(conn, nats_url)
    return for_urls(
        urls,
        me,
        wait_s,
        nats=nt.NatsTransport(link, me.node_id, wait_s, deadline_s),
        own_link=nats_link is None,
        deadline_s=deadline_s,
    )


def publish_own(
    conn: sqlite3.Connection, me: str, result: PullResult, nats_link: Any = None
) -> None:
    """On a node whose outbox travels on NATS: publish what is not yet in its stream. A NATS
    server that is down is noted (`unreachable` lists "nats"), never fatal: the rows wait."""
    cfg = sql.nats_config(conn) if sql.has_nats(conn) else None
    if cfg is None or int(cfg[2]) >= sql.outbox_head(conn):
        return  # nothing new since the last publish (a stale mark is fixed by the next one)
    from acomm_cli.federation import nats_transport as nt

    link = nats_link or nt.link_for(conn)
    try:
        result.published += nt.publish(conn, link, me)
    except Unreachable:
        if "nats" not in result.unreachable:
            result.unreachable.append("nats")
    finally:
        if nats_link is None:
            link.close()


def pull(
    conn: sqlite3.Connection,
    now: int,
    *,
    peer: str | None = None,
    max_pages: int = 10,
    sla_ms: int = 600_000,
    transport: Transport | None = None,
    page_size: int = PAGE_SIZE,
    wait_s: float = 0.0,
    nats_link: Any = None,
    deadline_s: float = 30.0,
    profile_name: str | None = None,
    beat: bool = True,
) -> PullResult:
    """Pull every peer (or one: then an unreachable peer is exit 7), at most `max_pages`
    pages each; an http or NATS peer with nothing new is long-polled up to `wait_s`. A peer
    whose exchange outlasts `deadline_s` (+ `wait_s`) is skipped for this pass, unreachable.
    On the production profile (the store's, or `profile_name`) a plain-HTTP peer is refused
    (InsecurePeer) and skipped the same way.
    On a NATS node, first publish its own outbox (`nats_link`: a long-running caller's link)."""
    me = identity.require(conn)
    if beat:  # (not from a gateway's own pull: its mirror heartbeats into the room)
        with write(conn):
            room.heartbeat(conn, me, now)
    nodes = [peer] if peer is not None else room.peer_ids(conn, me.node_id)
    if peer is not None:
        identity.node_id(peer, "peer")
        room.url_of(conn, peer)  # exit 4 for a node not in the room copy
    result = PullResult()
    own_link = None  # one NATS connection for the whole pull (connected on first use)
    if nats_link is None and sql.has_nats(conn):
        from acomm_cli.federation import nats_transport as nt

        nats_link = own_link = nt.link_for(conn)
    try:
        _pull_all(
            conn,
            me,
            nodes,
            peer,
            transport,
            nats_link,
            now,
            max_pages,
            page_size,
            sla_ms,
            wait_s,
            result,
            deadline_s,
            profile.production(conn, profile_name),
        )
    finally:
        if own_link is not None:
            own_link.close()
    return result


def _pull_all(
    conn: sqlite3.Connection,
    me: identity.Node,
    nodes: list[str],
    peer: str | None,
    transport: Transport | None,
    nats_link: Any,
    now: int,
    max_pages: int,
    page_size: int,
    sla_ms: int,
    wait_s: float,
    result: PullResult,
    deadline_s: float = 30.0,
    tls_only: bool = False,
) -> None:
    publish_own(conn, me.node_id, result, nats_link)
    if tls_only:  # the production profile: a plain-HTTP peer is refused, never read
        nodes = [n for n in nodes if not _insecure(conn, n, peer, now, result)]
    tr = transport or transport_for(conn, nodes, me, wait_s, nats_link, deadline_s)
    begin = getattr(tr, "begin_peer", None)  # starts the peer's overall deadline
    try:
        for node in nodes:
            try:
                if begin is not None:
                    begin(node)
                _pull_peer(conn, me.node_id, node, tr, now, max_pages, page_size, sla_ms, result)
            except Unreachable as exc:
                with write(conn):
                    sql.cursor_error(conn, node, str(exc), now)
                if peer is not None:
                    raise PeerUnreachable(str(exc), field="peer", value=node) from None
                result.unreachable.append(node)
                result.why[node] = str(exc)
    finally:
        if transport is None and hasattr(tr, "close"):
            tr.close()
    publish_own(conn, me.node_id, result, nats_link)  # the acks this pull appended


def _insecure(
    conn: sqlite3.Connection, node: str, peer: str | None, now: int, result: PullResult
) -> bool:
    """A peer whose url is plain HTTP, on the production profile: refused (raised when it is
    the one peer asked for), recorded as its last pull's error and counted unreachable."""
    url = room.url_of(conn, node)
    if not profile.insecure(url):
        return False
    try:
        profile.require_tls(url, f"peer {node} at", "peer")
    except InsecurePeer as exc:
        with write(conn):
            sql.cursor_error(conn, node, exc.message, now)
        if peer is not None:
            raise
        result.unreachable.append(node)
        result.why[node] = exc.message
        result.refused[node] = exc
    return True


def _pull_peer(
    conn: sqlite3.Connection,
    me: str,
    node: str,
    tr: Transport,
    now: int,
    max_pages: int,
    page_size: int,
    sla_ms: int,
    result: PullResult,
) -> None:
    end = getattr(tr, "end_peer", None)  # (an http peer's client lives for the pass)
    try:
        for n in range(max(max_pages, 1)):
            position = sql.cursor(conn, node)[0]
            page = tr.read(node, position, page_size)
            # the recipients' contact rules from the connection's directory cache, under the
            # agents token read first thing in a transaction of our own (a committed value)
            shared, failed = not conn.in_transaction, True
            try:
                with write(conn):
                    if shared:
                        enter_agents(conn, sql.agents_token(conn))
                    if n == 0 and page.room:
                        room.merge_peer_entries(conn, me, node, page.room, now)
                    last = _apply_page(conn, me, node, page.events, position, now, sla_ms, result)
                    sql.set_cursor(conn, node, last, page.head, now)
                failed = False
            finally:
                if shared:
                    leave_agents(conn, failed)
            committed = getattr(tr, "committed", None)
            if committed is not None:  # after the commit: JetStream's ack follows SQLite's
                committed(node, last)
            if not page.events or last >= page.head:
                return
    finally:
        if end is not None:
            end(node)


class _Redo(Exception):
    """An event of a page applied whole was refused: apply it again, each event alone."""


def _apply_page(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    events: list[Any],
    position: int,
    now: int,
    sla_ms: int,
    result: PullResult,
) -> int:
    """A page's events after `position`; returns the cursor past them. First in one
    savepoint for the page: a page of good events pays for no savepoint per event. When
    one is refused the page is undone and applied again, each event in a savepoint of its
    own, so the refused one is undone alone and recorded."""
    counts = replace(result)
    try:
        with savepoint(conn, "inbound_page"):
            return _apply_events(conn, me, source, events, position, now, sla_ms, result, False)
    except _Redo:
        _restore(result, counts)  # the counts of the undone attempt, undone too
    return _apply_events(conn, me, source, events, position, now, sla_ms, result, True)


def _restore(result: PullResult, counts: PullResult) -> None:
    vars(result).update(vars(counts))


def _apply_events(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    events: list[Any],
    position: int,
    now: int,
    sla_ms: int,
    result: PullResult,
    alone: bool,
) -> int:
    last = position
    facts = _Page(conn, Router(conn), me, batch=not alone)
    if facts.batch:
        ids = [e.get("eventId") for e in events if isinstance(e, dict)]
        facts.seen = sql.inbound_known(conn, source, [i for i in ids if isinstance(i, str)])
    for env in events:
        last = _take(conn, me, source, env, last, now, sla_ms, result, facts, alone)
    try:
        facts.flush(now)
    except sqlite3.IntegrityError:
        if alone:
            raise
        raise _Redo from None  # a staged row met a record here: each event alone says which
    return last


def _take(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    env: Any,
    last: int,
    now: int,
    sla_ms: int,
    result: PullResult,
    facts: _Page | None = None,
    alone: bool = True,
) -> int:
    """Check and apply one event in a savepoint of its own (`alone`; else _Redo when it is
    refused); returns the cursor past it. A refused event is undone alone and recorded.
    One without a usable seq (or one at or before the cursor) moves the cursor by one, so
    a re-read never meets it again."""
    result.read += 1
    seq = envelope.seq_of(env)
    after = seq if seq is not None and seq > last else last + 1
    facts = facts or _Page(conn, Router(conn), me)
    if not isinstance(env, dict) or env.get("kind") != "message":
        try:
            facts.flush(now)  # what follows sees the rows and acks before it, in order
        except sqlite3.IntegrityError:
            if alone:
                raise
            raise _Redo from None
        facts.reset()
    waiting = len(facts.acks)
    counts = replace(result) if alone else result  # (a refused event counts as refused only)
    try:
        with savepoint(conn, "inbound_event") if alone else nullcontext():
            envelope.check(env, now)
            if seq is None or seq <= last:
                raise EventRejected(f"seq: {seq} does not follow the cursor ({last})")
            _apply(conn, me, source, env, now, sla_ms, result, facts)
    except (EventRejected, sqlite3.IntegrityError) as exc:
        if not alone:
            raise _Redo from None
        del facts.acks[waiting:]  # its ack was undone with it
        facts.reset()
        _restore(result, counts)
        why = (
            exc.reason
            if isinstance(exc, EventRejected)
            else f"conflicts with a record here ({exc})"  # never fatal
        )
        _rejected(conn, source, env, seq, why, now, result)
    return after


def _rejected(
    conn: sqlite3.Connection,
    source: str,
    env: Any,
    seq: int | None,
    reason: str,
    now: int,
    result: PullResult,
) -> None:
    said = envelope.said
    sql.record_rejected(conn, source, seq, said(env, "eventId"), said(env, "kind"), reason, now)
    result.rejected += 1


def _apply(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    env: dict[str, Any],
    now: int,
    sla_ms: int,
    result: PullResult,
    facts: _Page,
) -> None:
    """One checked event (envelope.check): its effect here. Raise EventRejected to refuse
    it (the caller undoes what it did and records why)."""
    event_id, kind = str(env["eventId"]), str(env["kind"])
    attempt = int((env.get("trace") or {}).get("attempt") or 1)
    if facts.batch and kind == "message":  # staged: inserted with the page's others
        if event_id in facts.seen:
            result.duplicates += 1
            return
        facts.inbound.append([event_id, source, int(env["seq"]), kind, attempt, None, now])
    elif not sql.record_inbound(conn, event_id, source, int(env["seq"]), kind, attempt, now):
        result.duplicates += 1
        return
    facts.seen.add(event_id)
    if env.get("toNodeId") not in (None, me):
        return  # addressed to another node: recorded, nothing to do here
    why = peertrust.refusal(conn, me, source, env, now, facts.senders, facts.admitted)
    if why is not None:
        raise EventRejected(why)  # the peer spoke for an agent or a node it is not
    if kind == "message":
        _deliver(conn, me, source, env, now, result, facts)
    elif kind == "task_create":  # the task's command message, then the owner's copy
        from acomm_cli.engine import taskfed

        got = _deliver(conn, me, source, env, now, result, facts)
        if got is not None and taskfed.created(conn, source, env, *got, now):
            result.tasks += 1
    elif kind in TASK_EVENTS:
        from acomm_cli.engine import taskfed

        if taskfed.applied(conn, me, source, env, now):
            result.tasks += 1
    elif kind == "ack":
        _ack(conn, env.get("payload") or {}, now, sla_ms)
        result.acks += 1
    elif kind == "reply":
        if _reply(conn, source, env, now):
            result.replies += 1
    elif kind == "dead_letter":
        _dead_lettered(conn, source, env, now)
        result.dead_lettered += 1


def _deliver(
    conn: sqlite3.Connection,
    me: str,
    source: str,
    env: dict[str, Any],
    now: int,
    result: PullResult,
    facts: _Page,
) -> tuple[int, int] | None:
    """An inbound message: an ordinary local message on `_fed:<local>:<remote>` with
    global_id = eventId and origin_node = the source node, its files named as held by the
    source node; then `ack accepted` (appended with the page's others). Returns (message
    id, channel id) when it was stored; counted as delivered, or as a duplicate (an event id
    this channel holds already)."""
    payload = env.get("payload") or {}
    local, sender = str(env["toAgentId"]), str(env["sourceAgentId"])
    router = facts.router
    name = remote.fed_channel(router.conn, router.channels, local, sender, now)
    mtype = payload.get("type") or MessageType.TEXT.value
    try:
        plan = plan_message(
            router,
            SendRequest(
                sender=sender,
                content=payload.get("content") or "",
                channel=name,
                type=mtype,
                priority=payload.get("priority", "normal"),
                topic=payload.get("topic"),
                correlation_id=env.get("corrId"),
                metadata=payload.get("metadata") or None,
                rich=(
                    RichParts(format=payload.get("format"), subject=payload.get("subject"))
                    if "format" in payload or "subject" in payload
                    else None
                ),
                trace_id=(env.get("trace") or {}).get("traceId"),  # checked by envelope.check
                event=payload.get("event"),  # checked by envelope.check too
            ),
            now,
            only_to=local,
            internal=True,
        )
    except EventRejected:
        raise
    except CommError:
        plan = None
    stored = None
    if plan is not None and _same_event(conn, plan):
        plan = None  # taken as a duplicate: accepted, never a second message
        result.duplicates += 1
    else:
        result.delivered += 1
    if plan is not None and facts.batch and _plain(plan, env, payload):
        if facts.next_id is None:
            facts.next_id = last_message_id(conn) + 1
        mid = facts.next_id
        facts.next_id += 1
        facts.messages.append((mid, *plan.row, str(env["eventId"]), source))
        facts.deliveries.extend(staged_rows(router, plan, mid, now))
        facts.inbound[-1][5] = mid
        stored = (mid, plan.channel.id)
    elif plan is not None:
        facts.flush_rows()  # this event's inbound record among them, when staged
        res = persist(router, plan, now, federated=True)
        sql.set_message_global_id(conn, res.id, str(env["eventId"]), source)
        sql.set_inbound_message(conn, source, str(env["eventId"]), res.id)
        if payload.get("attachments"):  # references (checked by envelope.check): no bytes
            from acomm_cli.engine import remoteblobs

            remoteblobs.name_inbound(
                conn, res.id, remoteblobs.check_refs(payload["attachments"]), source
            )
        stored = (res.id, res.channel_id)
    if local not in facts.claimed:  # as remote.emit would, once per agent and page
        remote.claim_speaker(conn, me, local, now, queue=True)
        facts.claimed.add(local)
    facts.acks.append((source, local, env.get("corrId"), str(env["eventId"])))
    if env["kind"] != "message":  # before what the event appends next (a task's copy)
        facts.flush(now)
    return stored


def _plain(plan: Any, env: dict[str, Any], payload: dict[str, Any]) -> bool:
    """A message persist would write as its message row and deliveries only, so that it can
    be staged with the page's others (staged_rows): no pool, rich parts, answer or event."""
    return (
        env["kind"] == "message"
        and plan.event is None
        and plan.rich is None
        and plan.acks is None
        and not plan.pooled
        and plan.row[7] is None  # no dedupe key to remember
        and not payload.get("attachments")
    )


def _same_event(conn: sqlite3.Connection, plan: Any) -> bool:
    """A message whose event id this channel holds already (another envelope, from a node
    that lost track of it, or from the agent speaking through another node) is a duplicate,
    as a repeated `--event-id` or `--dedupe-key` is at a local send: the first one stands."""
    eid = None if plan.event is None else plan.event.event_id
    if eid is None:
        return False
    from acomm_cli.store import events as event_sql

    return event_sql.find_event_id(conn, plan.channel.id, eid) is not None


def _ack(conn: sqlite3.Connection, payload: dict[str, Any], now: int, sla_ms: int) -> None:
    row = sql.sent(conn, str(payload.get("ackOf")))
    if row is None:
        return
    event_id, state = row[0], row[5]
    if payload.get("status") == "accepted" and state == "emitted":
        sql.update_sent(
            conn, event_id, state="accepted", accepted_at=now, next_timer_at=now + sla_ms
        )
    elif payload.get("status") == "processed" and state in ("emitted", "accepted", "incident"):
        sql.update_sent(
            conn,
            event_id,
            state="processed",
            processed_at=now,
            accepted_at=row[9] or now,
            next_timer_at=None,
        )


def _reply(conn: sqlite3.Connection, source: str, env: dict[str, Any], now: int) -> bool:
    """A reply: a `response` message in the asker's inbox, with the query's correlation id."""
    payload = env.get("payload") or {}
    row = sql.sent(conn, str(payload.get("replyTo")))
    if row is None or row[1] is None:
        return False
    from acomm_cli.store import reads

    query = reads.message_by_id(conn, int(row[1]))
    if query is None:
        return False
    router = Router(conn)
    plan = plan_message(
        router,
        SendRequest(
            sender=str(env["sourceAgentId"]),
            content=payload.get("content") or "(empty reply)",
            channel=query.channel,
            type=MessageType.RESPONSE.value,
            correlation_id=query.correlation_id,
            trace_id=(env.get("trace") or {}).get("traceId") or query.trace_id,
        ),
        now,
        only_to=query.sender,
        internal=True,
    )
    res = persist(router, plan, now, federated=True)
    sql.set_message_global_id(conn, res.id, str(env["eventId"]), source)
    sql.set_inbound_message(conn, source, str(env["eventId"]), res.id)
    sql.update_sent(
        conn,
        row[0],
        state="replied",
        processed_at=now,
        accepted_at=row[9] or now,
        next_timer_at=None,
    )
    return True


def _dead_lettered(conn: sqlite3.Connection, source: str, env: dict[str, Any], now: int) -> None:
    """A peer dead-lettered a message this node sent it: the sender's state becomes
    `dead_letter` and the sender's copy a dead letter here (the peer's reason, a detail
    naming the peer), so the sender learns it as of a local one. Only the node the event was
    sent to may say so, as the agent it was sent to. A dead letter naming no event of ours (a
    peer giving up on its own event), or one that came after the end, changes nothing."""
    from acomm_cli import model
    from acomm_cli.engine import deadletters
    from acomm_cli.store import reads, sending

    payload = env.get("payload") or {}
    event_id = payload.get("eventId")
    row = None if event_id is None else sql.sent(conn, str(event_id))
    if row is None:
        return
    why = peertrust.answer_refusal(conn, source, event_id, "a dead letter")
    if why is not None:
        raise EventRejected(why)
    message_id, to_agent, state = row[1], row[3], row[5]
    agent = env.get("sourceAgentId")
    if to_agent is not None and agent != to_agent:
        raise EventRejected(f"a dead letter of a message to {to_agent!r} came as {agent!r}")
    reason = str(payload["reason"])
    if reason not in model.DEAD_LETTER_REASONS:
        raise EventRejected(f"payload.reason: {reason[:60]!r} is not a dead-letter reason")
    if state not in ("emitted", "accepted", "incident"):
        return  # processed, replied or dead already: the end stands
    detail = f"dead-lettered on node {source}: {payload.get('detail') or reason}"
    msg = reads.message_by_id(conn, int(message_id)) if message_id is not None else None
    if msg is not None and to_agent is not None:
        sending.insert_deliveries(
            conn, [(msg.id, to_agent, msg.channel_id, "unread", 0, 0, msg.created_at, None)]
        )
        deadletters.dead_letter(conn, [(msg.id, to_agent, msg.channel_id, 0)], reason, detail, now)
    sql.update_sent(
        conn, str(event_id), state="dead_letter", accepted_at=row[9] or now, next_timer_at=None
    )
