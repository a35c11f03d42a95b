"""What `capability` and `incident` print: JSON documents, or lines for people.
Kept beside render.py, whose helpers it uses, so that neither grows past a screenful of
subjects."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, _table, change, listing, note

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any


def _skill(s: dict[str, Any]) -> str:
    return f"{s['ref']}@{s['version']}"


def capability(out: Output, doc: dict[str, Any]) -> None:
    """`capability publish|unpublish|show`: the contract, then the installs and the
    distribution tasks when there are any."""
    if out.json:
        _dump(doc)
        return
    if doc.get("changed") is False:
        note(f"note: capability {doc['id']} is already {doc['state']} as given")
    _pairs(
        out,
        [
            ("id", doc["id"]),
            ("owner", doc["owner"]),
            ("state", doc["state"]),
            ("delegation_skill", _skill(doc["delegation_skill"])),
            ("executor_skill", _skill(doc["executor_skill"])),
            ("eta_ms", doc["eta_ms"]),
            ("schema_sha256", doc["schema_sha256"]),
            ("published_at", doc["published_at"]),
        ]
        + ([("node", doc["node"])] if doc.get("node") else [])
        + ([("routing_misses", doc["routing_misses"])] if "routing_misses" in doc else []),
    )
    if doc.get("installs"):
        sys.stdout.write("installs:\n")
        _table(
            out,
            None,
            ["agent", "task", "requested", "status", "version", "at"],
            [
                (
                    i["agent"],
                    i["task_id"],
                    i["requested_version"],
                    i["status"] or i["task_state"],
                    i["version"],
                    i["at"],
                )
                for i in doc["installs"]
            ],
        )
    if doc.get("distribution"):
        sys.stdout.write("distribution:\n")
        _table(
            out, None, ["agent", "task"], [(d["agent"], d["task_id"]) for d in doc["distribution"]]
        )
    for s in doc.get("skipped") or ():
        note(f"note: no distribution task for {s['agent']}: {s['reason']}")


def capabilities(out: Output, docs: Sequence[dict[str, Any]]) -> None:
    if out.json:
        _dump({"capabilities": list(docs)})
        return
    listing(
        out,
        "capabilities",
        cols.CAPABILITIES,
        [
            (
                d["id"],
                d["owner"],
                d["state"],
                _skill(d["delegation_skill"]),
                _skill(d["executor_skill"]),
                d["eta_ms"],
                d["node"],
            )
            for d in docs
        ],
        docs,
    )


def skills(out: Output, doc: dict[str, Any]) -> None:
    text = ", ".join(_skill(s) for s in doc["skills"]) or "(none)"
    change(out, doc, doc.pop("changed"), "nothing to change", f"{doc['agent']}: {text}")


def incident(out: Output, doc: dict[str, Any]) -> None:
    if out.json:
        _dump(doc)
        return
    _pairs(
        out,
        [
            (k, ", ".join(map(str, v)) if isinstance(v, list) and k != "samples" else v)
            for k, v in doc.items()
            if v is not None and k != "samples"
        ],
    )
    for s in doc.get("samples") or ():
        sys.stdout.write("sample: " + " ".join(f"{k}={v}" for k, v in s.items()) + "\n")


def incidents(out: Output, docs: Sequence[dict[str, Any]]) -> None:
    if out.json:
        _dump({"incidents": list(docs)})
        return
    listing(
        out,
        "incidents",
        cols.INCIDENTS,
        [
            (
                d["id"],
                d["capability_id"],
                d["failure_class"],
                d["state"],
                d["task_id"],
                d["created_at"],
            )
            for d in docs
        ],
        docs,
    )
