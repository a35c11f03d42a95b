"""What the inspection and upkeep commands print: stats, doctor, compact, flush, config show."""

from __future__ import annotations

import sys

from acomm_cli.clock import iso
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _kv_line, _pairs, _table, listing, note

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from acomm_cli.cli.config_report import ConfigEntry, ConfigReport
    from acomm_cli.engine.operations import CompactResult, FlushResult, Health, Stats


def stats_doc(s: Stats) -> dict[str, Any]:
    return {
        "agents": [
            {
                "agent": a.agent,
                "total": a.total,
                "unread": a.unread,
                "awaiting_ack": a.awaiting_ack,
                "oldest_unread_age_sec": a.oldest_unread_age_sec,
                "dead_letters": a.dead_letters,
                "in_progress": a.in_progress,
                "lease_expired": a.lease_expired,
                "last_seen_at": iso(a.last_seen_at),
            }
            for a in s.agents
        ],
        "channels": [
            {
                "channel": c.channel,
                "pending": c.pending,
                "queued": c.queued,
                "dead_letters": c.dead_letters,
                "in_progress": c.in_progress,
                "lease_expired": c.lease_expired,
                **({} if c.unclaimed is None else {"unclaimed": c.unclaimed}),
            }
            for c in s.channels
        ],
        "store": {
            "path": s.store.path,
            "bytes": s.store.bytes,
            "wal_bytes": s.store.wal_bytes,
            "messages": s.store.messages,
        },
        # the mailbox bridge: agents with inbox files still pending, and its own backlog
        "queues": [
            {
                "agent": q.agent,
                "pending_files": q.pending_files,
                "oldest_file_age_sec": q.oldest_file_age_sec,
            }
            for q in s.queues
        ],
        "bridge": {"mirror_backlog": s.mirror_backlog, "bad_files": s.bad_files},
        # tasks by state (either side, with --as) and review incidents (store-wide)
        "tasks": s.tasks,
        "incidents": s.incidents,
        # events read from peers and refused (`fed status` lists them)
        "federation": s.federation,
        # totals of things that leave no row: spans the trace collector did not take
        "counters": s.counters,
        # worker pools (`subscribe --group`): messages waiting for a member, and claimed
        "pools": [
            {"channel": p.channel, "group": p.group, "waiting": p.waiting, "claimed": p.claimed}
            for p in s.pools
        ],
    }


def stats(out: Output, s: Stats) -> None:
    """Tables on a terminal; piped, one tab-separated line per agent, channel, the store, each
    agent with inbox files pending and the bridge's backlog, each led by its kind (`agent`,
    `channel`, `store`, `queue`, `bridge`) so that awk can pick them apart."""
    doc = stats_doc(s)
    if out.json:
        _dump(doc)
        return
    agents = [tuple(a.values()) for a in doc["agents"]]
    channels = [tuple(c.values()) for c in doc["channels"]]
    st = doc["store"]
    queues = [(q.agent, q.pending_files, q.oldest_file_age_sec) for q in s.queues]
    bridge = s.mirror_backlog or s.bad_files
    work = [(k, n) for k, n in s.tasks.items() if n]  # lines only for a store with tasks
    incidents = any(s.incidents.values())
    refused = s.federation["rejected"]
    if out.table is not None:  # one row per agent, channel, inbox queue, task state
        blank = (None,) * 5
        listing(
            out,
            None,
            cols.STATS,
            [("agent", *a[:-1], *blank, a[-1]) for a in agents]
            + [
                (
                    "channel",
                    c[0],
                    None,
                    None,
                    None,
                    None,
                    c[3],
                    c[4],
                    c[5],
                    c[1],
                    c[2],
                    c[6] if len(c) > 6 else None,
                    None,
                    None,
                    None,
                )
                for c in channels
            ]
            + [("queue", q[0], *(None,) * 10, q[1], q[2], None) for q in queues]
            + [("task", k, n, *(None,) * 12) for k, n in work]
            + [
                (
                    "pool",
                    f"{p.channel}/{p.group}",
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    p.claimed,
                    None,
                    p.waiting,
                    None,
                    None,
                    None,
                )
                for p in s.pools
            ]
            + _fact_rows(doc, [k for k, n in s.tasks.items() if not n]),
        )
        return
    if not out.tty:
        _table(
            out,
            None,
            (),
            [("agent", *a) for a in agents]
            + [("channel", *c) for c in channels]
            + [("store", st["path"], st["bytes"], st["wal_bytes"], st["messages"])]
            + [("queue", *q) for q in queues]
            + ([("bridge", s.mirror_backlog, s.bad_files)] if bridge else [])
            + [("task", k, n) for k, n in work]
            + ([("incidents", s.incidents["open"], s.incidents["resolved"])] if incidents else [])
            + ([("federation", refused)] if refused else [])
            + [("counters", k, n) for k, n in s.counters.items()]
            + [("pool", p.channel, p.group, p.waiting, p.claimed) for p in s.pools],
        )
        return
    _table(
        out,
        "agents",
        [
            "agent",
            "total",
            "unread",
            "awaiting ack",
            "oldest unread (s)",
            "dead letters",
            "in progress",
            "leases run out",
            "last seen",
        ],
        [(*a[:-1], a[-1] or "never") for a in agents],
    )
    queue = any(c.unclaimed is not None for c in s.channels)  # a work queue: one more column
    _table(
        out,
        "channels",
        ["channel", "pending", "queued", "dead letters", "in progress", "leases run out"]
        + (["unclaimed"] if queue else []),
        [c + ("",) * (queue and len(c) == 6) for c in channels],
    )
    _pairs(
        out,
        [
            ("store", st["path"]),
            ("bytes", f"{st['bytes']:,}"),
            ("wal bytes", f"{st['wal_bytes']:,}"),
            ("messages", f"{st['messages']:,}"),
        ],
    )
    if s.pools:
        _table(
            out,
            "worker pools",
            ["channel", "group", "waiting", "claimed"],
            [(p.channel, p.group, p.waiting, p.claimed) for p in s.pools],
        )
    if queues:
        _table(out, "inbox files", ["agent", "pending files", "oldest file (s)"], queues)
    if bridge:
        _pairs(
            out,
            [("mirror backlog", s.mirror_backlog), ("response files left in place", s.bad_files)],
        )
    if work or incidents:
        _pairs(
            out,
            [
                ("tasks", ", ".join(f"{k} {n}" for k, n in work) or "none"),
                ("open incidents", s.incidents["open"]),
            ],
        )
    if refused:
        _pairs(out, [("events refused from peers", refused)])
    if s.counters:
        _pairs(out, list(s.counters.items()))


# The `--json` sections that are one object of facts; each names the `kind` of its rows.
_FACTS = ("store", "bridge", "incidents", "federation", "counters")


def _fact_rows(doc: dict[str, Any], idle_tasks: list[str]) -> list[tuple[Any, ...]]:
    """The rows --csv/--tsv/--jsonl gained after the table rows: every fact of the
    document's single-object sections as `kind, name, total` (the store's size, the bridge's
    backlog, the incidents, the events refused from peers; the path is the store row
    `path`'s total), and the task states at 0, which the rows above leave out (they print
    only states with tasks, as they always did). Rows are only added: the earlier ones are
    as they were."""
    rows: list[tuple[Any, ...]] = [("task", k, 0, *(None,) * 12) for k in idle_tasks]
    for section in _FACTS:
        rows += [(section, name, value, *(None,) * 12) for name, value in doc[section].items()]
    return rows


def search_rebuilt(out: Output, indexed: int) -> None:
    """`doctor --rebuild-search`: said on stderr, so stdout stays doctor's own report."""
    note(f"rebuilt the search index: {indexed} messages")


def doctor(out: Output, h: Health) -> None:
    """The store's problems (exit 5 follows when there are any), and the mailbox bridge's
    notices, which are not store problems: they leave the store healthy."""
    findings = [{"check": f.check, "count": f.count, "detail": f.detail} for f in h.findings]
    notices = [{"check": f.check, "count": f.count, "detail": f.detail} for f in h.notices]
    if out.json:
        doc: dict[str, Any] = {
            "healthy": h.healthy,
            "schema_version": h.schema_version,
            "expected_schema_version": h.expected_schema_version,
            "integrity": h.integrity,
            "findings": findings,
        }
        if h.integrity_check:  # SQLite's own report of a damaged file, as it gave it
            doc["integrity_check"] = h.integrity_check
        if notices:  # only when there are any
            doc["notices"] = notices
        _dump(doc)
        return
    if out.table is not None:
        listing(
            out,
            None,
            cols.FINDINGS,
            [(f["check"], f["count"], f["detail"]) for f in findings + notices],
        )
        return
    if h.healthy:
        sys.stdout.write(
            f"healthy: integrity {h.integrity}, schema version {h.schema_version},"
            " every invariant holds\n"
        )
    else:
        _table(
            out,
            "problems",
            ["check", "count", "detail"],
            [(f["check"], f["count"], f["detail"]) for f in findings],
        )
    if notices:
        _table(
            out,
            "mailbox bridge (not store problems)",
            ["check", "count", "detail"],
            [(n["check"], n["count"], n["detail"]) for n in notices],
        )


def compact(out: Output, r: CompactResult) -> None:
    doc = {
        "removed_messages": r.removed_messages,
        "removed_deliveries": r.removed_deliveries,
        "removed_dead_letters": r.removed_dead_letters,
        "removed_exactly_once": r.removed_exactly_once,
        "removed_attachments": r.removed_attachments,
        "bytes_before": r.bytes_before,
        "bytes_after": r.bytes_after,
        "reclaimed_bytes": r.reclaimed_bytes,
        "free_bytes": r.free_bytes,
        "vacuumed": r.vacuumed,
        "dry_run": r.dry_run,
    }
    if out.json:
        _dump(doc)
        return
    _kv_line(doc)
    if r.dry_run:
        note("dry run: nothing was removed")
    elif not r.vacuumed and r.free_bytes and out.tty:
        note(
            f"{r.free_bytes:,} bytes are free inside the file for new messages; "
            "`acomm compact --vacuum` gives them back to the file system"
        )


def flush_result(out: Output, r: FlushResult) -> None:
    doc = {
        "busy": r.busy,
        "wal_frames": r.wal_frames,
        "checkpointed_frames": r.checkpointed_frames,
        "wal_bytes_before": r.wal_bytes_before,
        "wal_bytes_after": r.wal_bytes_after,
    }
    if out.json:
        _dump(doc)
    else:
        _kv_line(doc)
    if r.busy:
        note(
            "another process is reading the store: the WAL was not fully checkpointed; "
            "run `acomm flush` again later"
        )


def config_report(out: Output, r: ConfigReport) -> None:
    if out.json:
        _dump(
            {
                "settings": [
                    {"key": e.key, "value": e.value, "source": e.source} for e in r.settings
                ],
                "store": {"path": r.store.value, "source": r.store.source},
                "config_file": {"path": r.config_file.value, "source": r.config_file.source},
                "agents": r.agents_doc,
            }
        )
        return
    import json  # not at the top: `acomm send` prints no JSON unless asked

    listing(
        out,
        "configuration",
        cols.CONFIG,
        [
            (e.key, json.dumps(e.shown) if isinstance(e.shown, (dict, list)) else e.shown, e.source)
            for e in (r.store, r.config_file, *r.settings, *r.agents)
        ],
    )


def config_value(out: Output, e: ConfigEntry) -> None:
    """`config get`: the value alone for people and scripts (a duration in its unit form,
    nothing for a setting with none); JSON adds where it came from, milliseconds for a
    duration."""
    import json  # not at the top: `acomm send` prints no JSON unless asked

    from acomm_cli.output.render import ok

    shown = e.shown
    text = json.dumps(shown) if isinstance(shown, dict | list) else "" if shown is None else shown
    ok(out, {"key": e.key, "value": e.value, "source": e.source}, str(text))
