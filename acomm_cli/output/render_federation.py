"""What `invite list`, `peers` and `fed status` print: a node's invites, the other nodes and
how their last pull went; and the note for a peer a pass skipped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acomm_cli.output import columns as cols
from acomm_cli.output.columns import column_names
from acomm_cli.output.render import Output, _dump, listing, note


def invites(out: Output, docs: Sequence[dict[str, Any]]) -> None:
    """`invite list`: invites without their tokens."""
    if out.json:
        _dump({"invites": list(docs)})
        return
    listing(
        out,
        "invites",
        cols.INVITES,
        [
            (d["invite_id"], d["state"], d["expected_node"], d["expires_at"], d["used_by"])
            for d in docs
        ],
        docs,
    )


def peers(out: Output, doc: dict[str, Any]) -> None:
    """`peers`: the other nodes (the JSON document as it was; a table otherwise)."""
    if out.json:
        _dump(doc)
        return
    listing(
        out,
        "peers",
        cols.PEERS,
        [tuple(p.get(name) for name in column_names(cols.PEERS)) for p in doc["peers"]],
        doc["peers"],
    )


def fed_status(out: Output, doc: dict[str, Any]) -> None:
    """`fed status`: each peer's last pull (the JSON document as it is; a table otherwise)."""
    if out.json:
        _dump(doc)
        return
    listing(
        out,
        "peers",
        cols.FED_STATUS,
        [tuple(p.get(name) for name in column_names(cols.FED_STATUS)) for p in doc["peers"]],
        doc["peers"],
    )


def unreachable_note(node: str, why: str) -> None:
    """A peer skipped by this pass (down, refusing, or past federation.peer_deadline)."""
    note(f"note: peer_unreachable: skipped node {node!r} for this pass: {why}")
