"""What `ack`, `nack` and `extend` print: their records, the lease's end, a requeue or a death."""

from __future__ import annotations

import sys

from acomm_cli.clock import iso
from acomm_cli.output.render import Output, _dump, note

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import Any


def ack_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """An ack's JSON: its record with the lease's end as a time."""
    until = doc.get("lease_until")
    return {**doc, "lease_until": iso(until) if until is not None else None}


def ack(out: Output, doc: dict[str, Any]) -> None:
    until = doc.get("lease_until")
    if out.json:
        _dump(ack_doc(doc))
    elif doc.get("requeued"):
        note(
            f"message {doc['message_id']} failed; the channel retries failures, so it is "
            f"given back to {doc['agent']}"
        )
    elif not doc["changed"]:
        note(
            f"message {doc['message_id']} already {doc['status']} by {doc['agent']}"
            + (f"; lease renewed until {iso(until)}" if until is not None else "; nothing changed")
        )


def acks(out: Output, docs: list[dict[str, Any]]) -> None:
    """`ack` of several ids: a JSON list in their order; in text, a note per no-op."""
    if out.json:
        _dump(docs)
        return
    for doc in docs:
        ack(out, doc)


def extend(out: Output, doc: dict[str, Any]) -> None:
    """`extend`: the lease's new end (bare on stdout without --json)."""
    if out.json:
        _dump({**doc, "lease_until": iso(doc["lease_until"])})
    else:
        sys.stdout.write(f"{iso(doc['lease_until'])}\n")


def nack_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A nack's JSON: its record with the redelivery as a time."""
    at = doc.get("redeliver_at")
    return {**doc, "redeliver_at": iso(at) if at is not None else None}


def nack(out: Output, doc: dict[str, Any]) -> None:
    """`nack`: requeued (and when) or dead-lettered; one word and a time on stdout."""
    at = doc.get("redeliver_at")
    if out.json:
        _dump(nack_doc(doc))
    elif doc["outcome"] == "requeued":
        sys.stdout.write(f"requeued {iso(at)}\n")
    else:
        sys.stdout.write(f"dead_lettered {doc['reason']}\n")
