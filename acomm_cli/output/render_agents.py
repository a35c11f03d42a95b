"""What the agent directory's commands print: `agent register/update/retire/show` (one
entry) and `agent list` (docs/OUTPUT.md)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.clock import iso
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, _table, listing

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from acomm_cli.engine.directory import Agent


def agent_doc(a: Agent) -> dict[str, Any]:
    """One entry as JSON; `agent show` adds channels, unread and node."""
    doc: dict[str, Any] = {
        "name": a.name,
        "kind": a.kind,
        "display_name": a.display_name,
        "description": a.description,
        "team": a.team,
        "accept": a.accept,
        "admin": a.admin,
        "state": "retired" if a.retired_at is not None else "active",
        "registered_at": iso(a.registered_at),
        "updated_at": iso(a.updated_at),
        "last_seen_at": iso(a.last_seen_at),
        "retired_at": iso(a.retired_at),
    }
    if a.channels is not None:
        doc["channels"] = [
            {"channel": name, "type": type_, "role": role} for name, type_, role in a.channels
        ]
        doc["unread"] = a.unread
        doc["node"] = a.node
    return doc


def agent(out: Output, a: Agent, changed: bool | None = None) -> None:
    """One entry: JSON, or `key: value` lines (its channels as a table under them).
    `changed` (register, retire): in JSON only."""
    doc = agent_doc(a)
    if changed is not None:
        doc["changed"] = changed
    if out.json:
        _dump(doc)
        return
    doc.pop("changed", None)
    channels = doc.pop("channels", None)
    _pairs(out, [(k, v) for k, v in doc.items() if v is not None])
    if channels:
        sys.stdout.write("channels:\n")
        _table(
            out,
            None,
            ["channel", "type", "role"],
            [(c["channel"], c["type"], c["role"]) for c in channels],
        )


def registered(out: Output, done: Sequence[tuple[Agent, bool]]) -> None:
    """`agent register`: each name on a line; JSON: the entry with `changed`, or
    {agents: [...]} for several."""
    if out.json:
        docs = [{**agent_doc(a), "changed": changed} for a, changed in done]
        _dump(docs[0] if len(docs) == 1 else {"agents": docs})
        return
    for a, _ in done:
        sys.stdout.write(f"{a.name}\n")


def agents_doc(items: Sequence[Agent]) -> dict[str, Any]:
    return {"agents": [agent_doc(a) for a in items]}


def agents(out: Output, items: Sequence[Agent]) -> None:
    """`agent list`."""
    if out.json:
        _dump(agents_doc(items))
        return
    listing(
        out,
        "agents",
        cols.AGENTS,
        [
            (
                a.name,
                a.kind,
                a.display_name,
                a.team,
                iso(a.last_seen_at),
                "retired" if a.retired_at is not None else "active",
            )
            for a in items
        ],
        (agent_doc(a) for a in items),
    )
