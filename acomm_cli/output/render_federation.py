"""What `invite list`, `peers` and `fed status` print: a node's invites, the other nodes,
how their last pull went and the events refused from them; and the note for a peer a pass
skipped."""

from __future__ import annotations

from collections.abc import Sequence

from acomm_cli.output import columns as cols
from acomm_cli.output.columns import column_names
from acomm_cli.output.render import Output, _dump, _pairs, _table, listing, note

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any


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
    """`fed status`: the JSON document; else the peers (a listing: --csv, --tsv and --jsonl
    give its rows alone), and for people the count and the latest refused events around it."""
    if out.json:
        _dump(doc)
        return
    rejected = doc["rejected"]
    people = out.table is None
    if people:
        _pairs(out, [("node", doc["node_id"]), ("events refused", rejected["count"])])
    names = column_names(cols.FED_STATUS)
    listing(
        out,
        "peers",
        cols.FED_STATUS,
        [tuple(p[n] for n in names) for p in doc["peers"]],
        doc["peers"],
    )
    if people and rejected["latest"]:
        cols_ = ("rejected_at", "node", "seq", "event_id", "kind", "reason")
        _table(
            out,
            "latest refused",
            list(cols_),
            [tuple(r[n] for n in cols_) for r in rejected["latest"]],
        )


def unreachable_note(node: str, why: str) -> None:
    """A peer skipped by this pass (down, refusing, or past federation.peer_deadline)."""
    note(f"note: peer_unreachable: skipped node {node} for this pass: {why}", level="WARNING")
