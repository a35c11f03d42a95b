"""What `acomm trace` prints: the trace's tree, one hop a line, or its JSON document."""

from __future__ import annotations

import sys

from acomm_cli.clock import iso
from acomm_cli.output.render import Output, _dump

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

# the hop fields the document shows, in this order (times as ISO 8601)
_KEYS = (
    "key",
    "parent",
    "depth",
    "kind",
    "id",
    "type",
    "channel",
    "node",
    "agent",
    "recipients",
    "state",
    "at",
    "finished_at",
    "since_root_ms",
    "since_parent_ms",
    "correlation_id",
    "global_id",
    "message_id",
    "task_id",
    "attempt",
)
_TIMES = ("at", "finished_at")


def hop_doc(hop: dict[str, Any]) -> dict[str, Any]:
    return {k: (iso(hop[k]) if k in _TIMES else hop[k]) for k in _KEYS if k in hop}


def trace_doc(tree: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace_id": tree["trace_id"],
        "started_at": iso(tree["started_at"]),
        "duration_ms": tree["duration_ms"],
        "hops": [hop_doc(h) for h in tree["hops"]],
    }


def _label(hop: dict[str, Any]) -> str:
    """A message hop by its type (query, response, ...); a notice, run or task event by
    its kind."""
    kind = hop["kind"]
    if kind in ("notice", "dispatch_run", "task_event"):
        return str(kind)
    return str(hop.get("type") or kind)


def _ms(ms: int) -> str:
    return f"{ms}ms" if abs(ms) < 10_000 else f"{ms / 1000:.1f}s"


def trace(out: Output, tree: dict[str, Any]) -> None:
    """The tree: the trace id, then each hop indented under its parent with its kind, id,
    agent, node, state and latencies (+from the root, and from its parent)."""
    if out.json:
        _dump(trace_doc(tree))
        return
    hops = tree["hops"]
    write = sys.stdout.write
    write(
        f"trace {tree['trace_id']}: {len(hops)} hop{'s' if len(hops) != 1 else ''}, "
        f"{_ms(tree['duration_ms'])} end to end, from {iso(tree['started_at'])}\n"
    )
    for h in hops:
        who = h["agent"] or "-"
        if h.get("recipients"):
            who += " -> " + ",".join(h["recipients"])
        where = f" on {h['channel']}" if h.get("channel") else ""
        node = f" @{h['node']}" if h.get("node") else ""
        write(
            f"{'  ' * h['depth']}{_label(h)} {h['id']}{where}{node}: {who} [{h['state']}]"
            f" +{_ms(h['since_root_ms'])}"
            + (f" (+{_ms(h['since_parent_ms'])} after its parent)" if h["parent"] else "")
            + "\n"
        )
