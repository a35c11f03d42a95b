"""What messages print as: their documents, send's ids, the inbox, --follow, show, thread."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.clock import iso
from acomm_cli.errors import CommError
from acomm_cli.model import Attachment, Delivery, Message, QueryResult, SendResult
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, error, flush, listing, note

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import Any

    from acomm_cli.engine.engagement import Engagement


def delivery_doc(d: Delivery) -> dict[str, Any]:
    return {
        "recipient": d.recipient,
        "state": d.state.value,
        "retry_count": d.retry_count,
        "delivered_at": iso(d.delivered_at),
        "read_at": iso(d.read_at),
        "ack_status": d.ack_status,
        "acked_at": iso(d.acked_at),
        "next_timer_at": iso(d.next_timer_at),
        "first_read_at": iso(d.first_read_at),
    }


def attachment_doc(a: Attachment) -> dict[str, Any]:
    return {"name": a.name, "sha256": a.sha256, "size": a.size, "content_type": a.content_type}


def _event_doc(m: Message) -> dict[str, Any]:
    from acomm_cli.engine import events  # a message with an event only

    assert m.event is not None
    return events.doc(m.event)


def message_doc(m: Message) -> dict[str, Any]:
    doc = {
        "id": m.id,
        "channel": m.channel,
        "channel_id": m.channel_id,
        "sender": m.sender,
        "type": m.type.value,
        "content": m.content,
        "topic": m.topic,
        "priority": m.priority.name.lower(),
        "correlation_id": m.correlation_id,
        "dedupe_key": m.dedupe_key,
        "group_key": m.group_key,
        "metadata": m.metadata,
        "status": m.status,
        "created_at": iso(m.created_at),
        "deliver_at": iso(m.deliver_at),
        "global_id": m.global_id,
        "origin_node": m.origin_node,
        "trace_id": m.trace_id,
        "event": None if m.event is None else _event_doc(m),
    }
    r = m.rich  # format, subject, files, direction (engine/attachments.py)
    doc["format"] = r.format if r is not None and r.format else "text"
    doc["subject"] = r.subject if r is not None else None
    doc["attachments"] = [attachment_doc(a) for a in r.attachments] if r is not None else []
    doc["direction"] = r.direction if r is not None else None
    if m.search is not None:  # `messages --search`
        doc["search"] = {"rank": m.search.rank, "snippet": m.search.snippet}
    if m.federation is not None:
        doc["federation"] = m.federation
    if m.delivery is not None:
        doc["delivery"] = delivery_doc(m.delivery)
    else:
        doc["deliveries"] = [delivery_doc(d) for d in m.deliveries]
    return doc


def send_doc(r: SendResult) -> dict[str, Any]:
    doc = {
        "id": r.id,
        "channel": r.channel,
        "channel_id": r.channel_id,
        "recipients": list(r.recipients),
        "status": r.status,
        "created_at": iso(r.created_at),
        "correlation_id": r.correlation_id,
        "deduplicated": r.deduplicated,
        "suppressed": list(r.suppressed),
    }
    if r.trace_id is not None:
        doc["trace_id"] = r.trace_id
    if r.global_id is not None:  # routed to another node (federation)
        doc.update(global_id=r.global_id, to_node=r.to_node, route_decision=r.route_decision)
    return doc


def send_results(out: Output, results: Sequence[SendResult]) -> None:
    if out.json:
        _dump(
            send_doc(results[0])
            if len(results) == 1
            else {"results": [send_doc(r) for r in results]}
        )
        return
    for r in results:
        sys.stdout.write(f"{r.id}\n")


def batch_results(out: Output, results: Sequence[SendResult]) -> None:
    if out.json:
        _dump({"results": [send_doc(r) for r in results]})
        return
    sys.stdout.write("".join(f"{r.id}\n" for r in results))


def direct_results(out: Output, results: Sequence[SendResult | CommError]) -> None:
    if out.json:
        _dump(
            {
                "results": [
                    send_doc(r) if isinstance(r, SendResult) else {"error": r.to_dict()}
                    for r in results
                ]
            }
        )
        return
    for r in results:
        if isinstance(r, SendResult):
            sys.stdout.write(f"{r.id}\n")
        else:
            error(r, False)


def messages(out: Output, result: QueryResult, *, body: bool = False, jsonl: bool = False) -> None:
    if jsonl or out.table == "jsonl":
        for m in result.messages:
            _dump(message_doc(m))
    elif out.json:
        _dump(
            {
                "messages": [message_doc(m) for m in result.messages],
                "total_count": result.total_count,
                "has_more": result.has_more,
            }
            | (
                {}
                if result.total_is_lower_bound is None
                else {"total_is_lower_bound": result.total_is_lower_bound}
            )
        )
    elif body:
        for m in result.messages:
            sys.stdout.write(m.content + ("" if m.content.endswith("\n") else "\n"))
    else:
        listing(
            out,
            None,
            cols.MESSAGES,
            [
                (
                    m.id,
                    m.channel,
                    m.sender,
                    m.type.value,
                    m.priority.name.lower(),
                    m.topic,
                    iso(m.created_at),
                    m.delivery.state.value if m.delivery else m.status,
                    m.content,
                )
                for m in result.messages
            ],
        )
        if out.tty and result.has_more:
            of = f"{result.total_count}{'+' if result.total_is_lower_bound else ''}"
            note(f"showing {len(result.messages)} of {of}; use --offset/--limit")


def follow(out: Output, batch: QueryResult, *, body: bool = False, jsonl: bool = False) -> None:
    """One batch of a --follow stream, printed at once: JSON Lines when piped (or with
    --json / --jsonl), bodies with --body, else each message as a rich view."""
    if out.table in ("csv", "tsv") and not body:  # rows (the caller: the header once)
        messages(out, batch)
    elif body or jsonl or out.json or out.table or not out.tty:
        messages(out, batch, body=body, jsonl=not body)
    elif batch.messages:
        from acomm_cli.output import views as render_views

        console = out.console()
        for m in batch.messages:
            console.print(render_views.follow_item(m))
    flush()


# shown in the piped `key: value` lines of `show` only when set (a federated message's
# place, a message's trace): a message stored before them keeps the lines scripts read
_FEDERATION_KEYS = ("global_id", "origin_node", "federation", "trace_id")
# likewise shown only when a message has them (its files: after the deliveries)
_RICH_DEFAULTS = {"format": "text", "subject": None, "direction": None}
# piped `show` prints these only when set: a message without them prints as it always did
_OPTIONAL_KEYS = (*_FEDERATION_KEYS, "event", "group_key")


def engagement_doc(e: Engagement) -> dict[str, Any]:
    return {
        "recipient": e.recipient,
        "state": e.state,
        "routed_at": iso(e.routed_at),
        "notified_at": iso(e.notified_at),
        "notified_by": e.notified_by,
        "engaged_at": iso(e.engaged_at),
        "engaged_by": e.engaged_by,
    }


def message(out: Output, m: Message, engagement: Sequence[Engagement] = ()) -> None:
    """One message: its JSON document (with each recipient's engagement when given); a rich
    panel on a terminal; `key: value` lines, the deliveries and the content when piped
    (scripts read those: unchanged)."""
    if out.json:
        doc = message_doc(m)
        if engagement:
            doc["engagement"] = [engagement_doc(e) for e in engagement]
        _dump(doc)
        return
    if out.tty:
        from acomm_cli.output import views as render_views

        out.console().print(render_views.message_panel(m, engagement))
        return
    import json  # not at the top: `acomm send` prints no JSON unless asked

    doc = message_doc(m)
    _pairs(
        out,
        [
            (k, json.dumps(v) if isinstance(v, dict) else v)
            for k, v in doc.items()
            if k not in ("deliveries", "content", "attachments")
            and (v is not None or k not in _OPTIONAL_KEYS)
            and (k not in _RICH_DEFAULTS or v != _RICH_DEFAULTS[k])
        ],
    )
    sys.stdout.write("deliveries:\n")
    for d in m.deliveries:
        extra = f" ack={d.ack_status}" if d.ack_status else ""
        sys.stdout.write(f"  {d.recipient}\t{d.state.value}\tretries={d.retry_count}{extra}\n")
    if doc["attachments"]:
        sys.stdout.write("attachments:\n")
        for a in doc["attachments"]:
            sys.stdout.write(f"  {a['name']}\t{a['size']}\t{a['content_type']}\t{a['sha256']}\n")
    sys.stdout.write("content:\n" + m.content + ("" if m.content.endswith("\n") else "\n"))


def thread(out: Output, correlation_id: str, msgs: Sequence[Message]) -> None:
    if out.json:
        _dump({"correlation_id": correlation_id, "messages": [message_doc(m) for m in msgs]})
        return
    if out.tty and out.table is None:  # a panel per message, with every delivery's state
        from acomm_cli.output import views as render_views

        out.console().print(render_views.thread_panels(correlation_id, msgs))
        return
    listing(
        out,
        f"thread {correlation_id}",
        cols.THREAD,
        [(m.id, m.sender, m.type.value, iso(m.created_at), m.content) for m in msgs],
        (message_doc(m) for m in msgs),
    )
