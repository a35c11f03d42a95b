"""Traces: the id a message carries and everything it causes inherits (replies, acks, the
`_system` notices, dispatch runs and what they send, task messages, other nodes' copies),
and the tree `acomm trace ID` shows.

A send's trace id comes from `--trace-id` (or `$ACOMM_TRACE_ID`), else from `$TRACEPARENT`
in W3C Trace Context form, else from what it answers (its correlation), else a new random
one. A malformed `TRACEPARENT` is ignored with a note: the W3C rule is that a bad header
starts a new trace, never fails the request. Only a send that has a trace id, a
`TRACEPARENT` or a `trace` command imports this module."""

from __future__ import annotations

import os
import sqlite3

from acomm_cli.errors import NotFound, ValidationFailed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAX_LEN = 64
_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
_HEX = frozenset("0123456789abcdef")


def check(value: object, field: str = "trace_id") -> str:
    """A trace id as given: 1-64 characters of A-Z a-z 0-9 _ - (a W3C trace id, 32
    lowercase hex digits, is one of them)."""
    if not (isinstance(value, str) and 0 < len(value) <= MAX_LEN and _CHARS.issuperset(value)):
        raise ValidationFailed(
            f"{field}: {value!r} must be 1-{MAX_LEN} characters of A-Z a-z 0-9 _ -",
            field=field,
            value=value if isinstance(value, str) else repr(value),
        )
    return value


def new_id() -> str:
    """A fresh trace id: 32 random hex digits, a valid W3C trace id."""
    return os.urandom(16).hex()


def _hex(text: str, size: int) -> bool:
    return len(text) == size and _HEX.issuperset(text) and text != "0" * size


def from_traceparent(header: str) -> tuple[str | None, str | None]:
    """(trace id, None) from a W3C `traceparent` value, or (None, why it was ignored).
    Version 00 has exactly four fields; a later version may add fields after them; `ff`
    is never valid."""
    parts = header.strip().split("-")
    if len(parts) < 4:
        return None, "it is not version-traceid-parentid-flags"
    version, trace, parent, flags = parts[:4]
    if len(version) != 2 or not _HEX.issuperset(version) or version == "ff":
        return None, f"version {version[:8]!r} is not 2 lowercase hex digits (nor ff)"
    if version == "00" and len(parts) != 4:
        return None, "version 00 has exactly four fields"
    if not _hex(trace, 32):
        return None, "the trace id is not 32 lowercase hex digits (nor all zeros)"
    if not _hex(parent, 16):
        return None, "the parent id is not 16 lowercase hex digits (nor all zeros)"
    if len(flags) != 2 or not _HEX.issuperset(flags):
        return None, "the flags are not 2 lowercase hex digits"
    return trace, None


def from_environment(env: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The trace a command's environment names through `TRACEPARENT`: (trace id, None), or
    (None, a note to print) for a malformed one, or (None, None) without one."""
    header = env.get("TRACEPARENT")
    if not header:
        return None, None
    trace, why = from_traceparent(header)
    if trace is None:
        return None, f"note: TRACEPARENT ignored ({why}); the message starts a new trace"
    return trace, None


def traceparent(trace_id: str, span: int) -> str | None:
    """The W3C `traceparent` for a hop of the trace (`span`: a message id or a run's
    sequence, as 16 hex digits), or None when the trace id is not a W3C one (an id given
    with --trace-id in another form travels as ACOMM_TRACE_ID alone)."""
    if not _hex(trace_id, 32):
        return None
    return f"00-{trace_id}-{(span & 0xFFFFFFFFFFFFFFFF) or 1:016x}-01"


def run_env(trace_id: str | None, message_id: int) -> dict[str, str]:
    """What a dispatch run's command gets to join the trace of the message it runs on."""
    if trace_id is None:
        return {}
    env = {"ACOMM_TRACE_ID": trace_id}
    parent = traceparent(trace_id, message_id)
    if parent is not None:
        env["TRACEPARENT"] = parent
    return env


# ---------------------------------------------------------------- the tree


def tree(conn: sqlite3.Connection, trace_id: str) -> dict[str, Any]:
    """The trace as {trace_id, hops}: every message, dispatch run and task event of the
    trace in causal order (a parent before its children, siblings by time), each with its
    parent, depth and latencies from the root and from its parent. NotFound when no
    message carries the id."""
    from acomm_cli.store import traces as sql
    from acomm_cli.store.federation import node_id

    check(trace_id, "trace_id")
    this_node = node_id(conn)  # a hop with no origin node happened here
    messages = sql.messages(conn, trace_id)
    if not messages:
        raise NotFound(
            f"no message carries trace id {trace_id!r}", field="trace_id", value=trace_id
        )
    ids = [m["id"] for m in messages]
    hops: dict[str, dict[str, Any]] = {}
    order: list[str] = []

    def add(key: str, hop: dict[str, Any]) -> None:
        hops[key] = hop
        order.append(key)

    by_corr: dict[str, list[dict[str, Any]]] = {}
    for m in messages:
        if m["correlation_id"]:
            by_corr.setdefault(m["correlation_id"], []).append(m)
    for m in messages:
        add(f"m{m['id']}", _message_hop(m, this_node))
    for r in sql.runs(conn, ids):
        add(
            f"r{r['run_id']}",
            {
                "kind": "dispatch_run",
                "id": r["run_id"],
                "message_id": r["message_id"],
                "node": this_node,
                "agent": r["agent"],
                "state": r["status"],
                "at": r["started_at"],
                "finished_at": r["finished_at"],
                "attempt": r["attempt"],
                "parent": f"m{r['message_id']}",
            },
        )
    for e in sql.task_events(conn, [c for c in by_corr]):
        add(
            f"t{e['seq']}",
            {
                "kind": "task_event",
                "id": e["event_id"],
                "task_id": e["task_id"],
                "node": e["origin_node"] or this_node,
                "agent": e["agent"],
                "state": e["event"],
                "at": e["at"],
                "correlation_id": e["correlation_id"],
                "parent": None,
            },
        )
    _link(hops, messages, by_corr)
    return _ordered(trace_id, hops, order)


def _message_hop(m: dict[str, Any], this_node: str | None) -> dict[str, Any]:
    kind = {
        "response": "reply",
        "acknowledgment": "ack",
    }.get(m["type"], "message")
    if m["sender"] == "acomm" and (m["topic"] or "").startswith("_system"):
        kind = "notice"
    return {
        "kind": kind,
        "id": m["id"],
        "type": m["type"],
        "channel": m["channel"],
        "node": m["origin_node"] or this_node,
        "agent": m["sender"],
        "recipients": m["recipients"],
        "state": m["status"],
        "at": m["created_at"],
        "correlation_id": m["correlation_id"],
        "global_id": m["global_id"],
        "parent": None,
        "_about": m["about"],
    }


def _link(
    hops: dict[str, dict[str, Any]],
    messages: list[dict[str, Any]],
    by_corr: dict[str, list[dict[str, Any]]],
) -> None:
    """Each hop's parent, from what acomm knows of its cause: an ack or a notice names the
    message it is about, a reply its question (the correlation id), a run its message, a
    task event its task's first message; anything else was sent by an agent, in answer to
    the latest hop of the trace that reached it before (a delivery or a run of its own),
    else it is a root."""
    received: list[tuple[int, str, str]] = []  # (time, agent, hop key): what reached whom
    for key, hop in hops.items():
        if hop["kind"] == "dispatch_run":
            received.append((hop["at"], hop["agent"], key))
        elif hop["kind"] != "task_event":
            for r in hop["recipients"]:
                received.append((hop["at"], r, key))
    received.sort()
    for key, hop in hops.items():
        if hop["parent"] is not None:
            continue
        if hop["kind"] == "task_event":
            first = by_corr.get(hop["correlation_id"] or "")
            hop["parent"] = f"m{first[0]['id']}" if first else None
            continue
        about = hop.pop("_about", None)
        if about is not None and f"m{about}" in hops and f"m{about}" != key:
            hop["parent"] = f"m{about}"
            continue
        corr = hop["correlation_id"]
        if hop["kind"] in ("reply", "ack") and corr in by_corr:
            asked = by_corr[corr][0]
            if asked["id"] != hop["id"]:
                hop["parent"] = f"m{asked['id']}"
                continue
        best = None
        for at, agent, src in received:
            if at > hop["at"]:
                break
            if agent == hop["agent"] and src != key and _before(hops, src, key):
                best = src
        hop["parent"] = best
    for hop in hops.values():
        hop.pop("_about", None)


def _before(hops: dict[str, dict[str, Any]], a: str, b: str) -> bool:
    """Whether hop `a` came before hop `b` (time, then the order ids were given in)."""
    ha, hb = hops[a], hops[b]
    if ha["at"] != hb["at"]:
        return bool(ha["at"] < hb["at"])
    if ha["kind"] == "dispatch_run" or hb["kind"] == "dispatch_run":
        return hb["kind"] != "dispatch_run"
    return bool(ha["id"] < hb["id"])


def _ordered(trace_id: str, hops: dict[str, dict[str, Any]], order: list[str]) -> dict[str, Any]:
    children: dict[str | None, list[str]] = {}
    for key in order:
        parent = hops[key]["parent"]
        children.setdefault(parent if parent in hops else None, []).append(key)
    position = {k: i for i, k in enumerate(order)}
    for keys in children.values():
        keys.sort(key=lambda k: (hops[k]["at"], position[k]))
    roots = children.get(None, [])
    start = min(hops[k]["at"] for k in roots) if roots else 0
    out: list[dict[str, Any]] = []
    stack = [(k, 0) for k in reversed(roots)]
    seen: set[str] = set()
    while stack:  # depth first, without recursion (a long chain of replies)
        key, depth = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        hop = hops[key]
        parent = hop["parent"] if hop["parent"] in hops else None
        hop.update(
            key=key,
            parent=parent,
            depth=depth,
            since_root_ms=hop["at"] - start,
            since_parent_ms=hop["at"] - hops[parent]["at"] if parent else 0,
        )
        out.append(hop)
        stack.extend((k, depth + 1) for k in reversed(children.get(key, [])))
    last = max((h.get("finished_at") or h["at"]) for h in out)
    return {
        "trace_id": trace_id,
        "started_at": start,
        "duration_ms": last - start,
        "hops": out,
    }


# ---------------------------------------------------------------- hops a command made


def watch(conn: sqlite3.Connection) -> None:
    """Before a command: keep the hops this connection makes, so that `made` finds them (not
    another process's, made meanwhile)."""
    from acomm_cli.store import traces as sql

    sql.watch(conn)


def made(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """The hops this connection made since `watch` (messages, acks, replies, notices,
    dispatch runs), one tree per trace holding only those hops, each still naming its parent
    (which may be an older hop): what a command that committed them sends as spans."""
    from acomm_cli.store import traces as sql

    out = []
    for trace_id, keys in sql.made(conn).items():
        whole = tree(conn, trace_id)
        wanted = set(keys)
        hops = [h for h in whole["hops"] if h["key"] in wanted]
        if hops:
            out.append({**whole, "hops": hops})
    return out
