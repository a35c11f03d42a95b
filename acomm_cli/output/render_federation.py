"""What `invite list` and `peers` print: a node's invites and the other nodes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from acomm_cli.output import columns as cols
from acomm_cli.output.columns import column_names
from acomm_cli.output.render import Output, _dump, listing


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
