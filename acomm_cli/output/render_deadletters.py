"""What `deadletter` prints: the list, `replay --all`, and `show`'s whole record.

`deadletter show` gives the whole record, as one JSON document or a block of lines
per dead letter, with the attempts m012's trigger keeps.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.clock import iso
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, listing, note
from acomm_cli.output.render_messages import message_doc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from acomm_cli.engine.deadletters import Attempt, DeadLetter, Redrive


def dead_letter_doc(d: DeadLetter) -> dict[str, Any]:
    return {
        "message_id": d.message_id,
        "recipient": d.recipient,
        "channel": d.channel,
        "reason": d.reason,
        "retry_count": d.retry_count,
        "last_error": d.last_error,
        "dead_lettered_at": iso(d.dead_lettered_at),
        "content": d.content,
    }


def dead_letters(out: Output, items: Sequence[DeadLetter], total: int) -> None:
    if out.json:
        _dump({"dead_letters": [dead_letter_doc(d) for d in items], "total_count": total})
        return
    listing(
        out,
        "dead letters",
        cols.DEAD_LETTERS,
        [
            (
                d.message_id,
                d.recipient,
                d.channel,
                d.reason,
                d.retry_count,
                iso(d.dead_lettered_at),
                d.content,
            )
            for d in items
        ],
        (dead_letter_doc(d) for d in items),
    )


def redrive(out: Output, result: Redrive) -> None:
    """`deadletter replay --all`: the count on stdout (JSON: `replayed`, or `would_replay`
    for a dry run, with the message ids); each dead letter left dead is a note on stderr."""
    count = "would_replay" if result.dry_run else "replayed"
    skipped = [
        {
            "message_id": s.message_id,
            "recipient": s.recipient,
            "channel": s.channel,
            "code": s.code,
            "message": s.message,
        }
        for s in result.skipped
    ]
    if out.json:
        _dump(
            {
                count: len(result.replayed),
                "ids": result.ids,
                "deliveries": [{"message_id": m, "recipient": r} for m, r in result.replayed],
                "skipped": skipped,
            }
        )
        return
    for s in result.skipped:
        note(f"skipped message {s.message_id} to {s.recipient}: {s.code}: {s.message}")
    sys.stdout.write(f"{len(result.replayed)}\n")


# the message's own fields a dead letter shows beside its own (`deadletter list` has fewer)
_MESSAGE_KEYS = (
    "channel_id",
    "sender",
    "type",
    "topic",
    "priority",
    "correlation_id",
    "dedupe_key",
    "metadata",
    "created_at",
    "deliver_at",
    "content",
)


def attempt_doc(a: Attempt) -> dict[str, Any]:
    return {
        "attempt": a.attempt,
        "recipient": a.recipient,
        "delivered_at": iso(a.delivered_at),
        "read_at": iso(a.read_at),
        "ack_status": a.ack_status,
    }


def dead_letter_record_doc(r: DeadLetter) -> dict[str, Any]:
    """`deadletter list`'s fields for one dead letter, then the message's, then attempts."""
    assert r.message is not None, "deadletter show reads the message with the dead letter"
    msg = message_doc(r.message)
    doc: dict[str, Any] = {
        "message_id": r.message.id,
        "recipient": r.recipient,
        "channel": r.channel,
        "reason": r.reason,
        "retry_count": r.retry_count,
        "last_error": r.last_error,
        "dead_lettered_at": iso(r.dead_lettered_at),
    }
    doc.update((k, msg[k]) for k in _MESSAGE_KEYS)
    doc["attempts"] = [attempt_doc(a) for a in r.attempts]
    return doc


def dead_letter_records(out: Output, records: Sequence[DeadLetter]) -> None:
    """JSON: `{dead_letters: [...], total_count}` as `deadletter list`, each with more
    fields. Otherwise one `key: value` block per dead letter, a blank line between."""
    docs = [dead_letter_record_doc(r) for r in records]
    if out.json:
        _dump({"dead_letters": docs, "total_count": len(docs)})
        return
    for i, doc in enumerate(docs):
        if i:
            sys.stdout.write("\n")
        pairs = [(k, v) for k, v in doc.items() if k not in ("attempts", "metadata")]
        pairs.insert(
            pairs.index(("content", doc["content"])),
            ("metadata", ", ".join(f"{k}={v}" for k, v in doc["metadata"].items())),
        )
        pairs.insert(
            pairs.index(("retry_count", doc["retry_count"])) + 1, ("attempts", len(doc["attempts"]))
        )
        _pairs(out, pairs)
        for a in doc["attempts"]:
            who = "" if a["recipient"] == doc["recipient"] else f" to {a['recipient']}"
            read = f", read {a['read_at']}" if a["read_at"] else ", not read"
            ack = f", ack {a['ack_status']}" if a["ack_status"] else ""
            sys.stdout.write(
                f"  attempt {a['attempt']}{who}: delivered {a['delivered_at'] or '-'}{read}{ack}\n"
            )
