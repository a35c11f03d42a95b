"""What `acomm cursor` prints: cursors, one or many, a seek's move, a deletion."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli import clock
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, listing

TYPE_CHECKING = False
if TYPE_CHECKING:  # a type only: `acomm cursor --help` does not load the engine
    from typing import Any

    from acomm_cli.engine.cursors import Cursor


def doc(c: Cursor) -> dict[str, Any]:
    return {
        "name": c.name,
        "channel": c.channel,
        "position": c.position,
        "head": c.head,
        "pending": c.pending,
        "filter": c.filter,
        "behind_compaction": c.lost_through is not None and c.lost_through > c.position,
        "compacted_through": c.lost_through,
        "created_by": c.created_by,
        "created_at": clock.iso(c.created_at),
        "updated_at": clock.iso(c.updated_at),
    }


def _filter_text(spec: dict[str, Any]) -> str:
    parts: list[str] = []
    for key, value in spec.items():
        values = value if isinstance(value, list) else [value]
        parts.extend(f"--{key.replace('_', '-')} {v}" for v in values)
    return " ".join(parts) or "(everything)"


def one(out: Output, c: Cursor) -> None:
    d = doc(c)
    if out.json:
        _dump(d)
        return
    _pairs(
        out,
        [
            ("cursor", c.name),
            ("channel", c.channel),
            ("position", c.position),
            ("head", c.head),
            ("pending", c.pending),
            ("filter", _filter_text(c.filter)),
            ("behind compaction", "yes" if d["behind_compaction"] else "no"),
            ("created", f"{d['created_at']}" + (f" by {c.created_by}" if c.created_by else "")),
            ("updated", d["updated_at"]),
        ],
    )


def many(out: Output, found: Sequence[Cursor]) -> None:
    docs = [doc(c) for c in found]
    if out.json:
        _dump({"cursors": docs})
        return
    listing(
        out,
        "cursors",
        cols.CURSORS,
        [
            (
                d["name"],
                d["channel"],
                d["position"],
                d["head"],
                d["pending"],
                "yes" if d["behind_compaction"] else "no",
                d["updated_at"],
            )
            for d in docs
        ],
        docs,
    )


def moved(out: Output, before: Cursor, after: Cursor) -> None:
    if out.json:
        _dump({**doc(after), "moved_from": before.position})
        return
    sys.stdout.write(f"{after.name}\t{before.position}\t{after.position}\n")


def deleted(out: Output, c: Cursor) -> None:
    if out.json:
        _dump({**doc(c), "deleted": True})
        return
    sys.stdout.write(f"{c.name}\tdeleted\n")
