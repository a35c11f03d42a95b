"""What `task` and `token` print: JSON documents, or lines for people. Kept
beside render.py (whose helpers it uses), as render_caps.py is, so that render.py stays under
the split point and its other subjects merge cleanly."""

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
    from acomm_cli.engine.taskdata import Task, TaskEvent


def task_event_doc(e: TaskEvent) -> dict[str, Any]:
    return {
        "at": iso(e.at),
        "event": e.event,
        "by": e.agent,
        "progress": e.progress,
        "note": e.note,
        "eta_at": iso(e.eta_at),
        "event_id": e.event_id,
        "message_id": e.message_id,
        "origin_node": e.origin_node,
        **e.detail,
    }


def task_doc(t: Task) -> dict[str, Any]:
    """`task show --json`: {id, capability, from, to, state, eta_at, progress, history} and
    more fields (a contract: none renamed, more may come)."""
    doc: dict[str, Any] = {
        "id": t.id,
        "capability": t.capability,
        "from": t.creator,
        "to": t.owner,
        "state": t.state,
        "eta_at": iso(t.eta_at),
        "progress": t.progress,
        "task_type": t.task_type,
        "correlation_id": t.correlation_id,
        "eta_required": t.eta_required,
        "plan": t.plan,
        "note": t.note,
        "result_message_id": t.result_message_id,
        "created_at": iso(t.created_at),
        "accepted_at": iso(t.accepted_at),
        "updated_at": iso(t.updated_at),
        "finished_at": iso(t.finished_at),
        "global_id": t.global_id,
        "origin_node": t.origin_node,
        "peer_node": t.peer_node,
    }
    if t.history:
        doc["history"] = [task_event_doc(e) for e in t.history]
    return doc


def task_created(out: Output, t: Task) -> None:
    if out.json:
        _dump(task_doc(t))
    else:
        sys.stdout.write(f"{t.id}\n")


def task(out: Output, t: Task) -> None:
    """One task: `key: value` lines, then its history one event a line."""
    if out.json:
        _dump(task_doc(t))
        return
    doc = task_doc(t)
    history = doc.pop("history", [])
    _pairs(out, [(k, v) for k, v in doc.items() if v is not None])
    if history:
        sys.stdout.write("history:\n")
        _table(
            out,
            None,
            ["at", "event", "by", "progress", "eta", "note"],
            [
                (e["at"], e["event"], e["by"], e["progress"], e["eta_at"], e["note"])
                for e in history
            ],
        )


def tasks(out: Output, items: Sequence[Task], total: int, offset: int = 0) -> None:
    if out.json:
        _dump(
            {
                "tasks": [task_doc(t) for t in items],
                "total_count": total,
                "has_more": total > offset + len(items),
            }
        )
        return
    listing(
        out,
        "tasks",
        cols.TASKS,
        [
            (t.id, t.creator, t.owner, t.state, t.progress, iso(t.eta_at), t.capability)
            for t in items
        ],
        (task_doc(t) for t in items),
    )


def tokens(out: Output, docs: Sequence[dict[str, Any]]) -> None:
    """`token list`: session tokens without their secrets."""
    if out.json:
        _dump({"tokens": list(docs)})
        return
    listing(
        out,
        "session tokens",
        cols.TOKENS,
        [
            (d["token_id"], d["agent"], ",".join(d["scopes"]), d["state"], d["expires_at"])
            for d in docs
        ],
        docs,
    )
