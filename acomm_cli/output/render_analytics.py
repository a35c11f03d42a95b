"""What `acomm export` and `acomm audit` print: split from render.py (which kept growing past
the 800-line split point), on its helpers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple

from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, _table, listing, note

if TYPE_CHECKING:
    from acomm_cli.analytics.audit import AuditResult
    from acomm_cli.analytics.export import ExportResult


class AuditTable(NamedTuple):
    """One table of the audit's summary. On a terminal: `title`, then a table under
    `headers` (every table has its headings, also when it has no rows); piped: each row
    as a tab-separated line led by `kind`. A new table of the audit is one more of these."""

    kind: str
    title: str
    headers: list[str]
    rows: list[tuple[Any, ...]]


def export_result(out: Output, r: ExportResult) -> None:
    for text in r.notes:
        note(text)
    doc = {
        "out": r.out,
        "format": r.format,
        "datasets": r.datasets,
        "id_range": list(r.id_range) if r.id_range else None,
        "refreshed": [list(x) for x in r.refreshed],
        "files": [
            {"path": f["path"], "rows": f["rows"], "bytes": f["bytes"], "sha256": f["sha256"]}
            for f in r.files
        ],
        "incremental": r.incremental,
        "manifest": f"{r.out}/manifest.json",
    }
    if out.json:
        _dump(doc)
        return
    span = f"messages {r.id_range[0]}..{r.id_range[1]}" if r.id_range else "no new messages"
    if r.refreshed:
        span += f" (and {len(r.refreshed)} range(s) still in flight rewritten)"
    rows = ", ".join(f"{k}={v}" for k, v in r.datasets.items())
    sys.stdout.write(f"{r.out}\t{span}\t{rows}\t{len(r.files)} files\n")


# the fields that say what a row of the summary is about (`subject`, joined with "/")
_SUBJECT = (
    "store_id",
    "channel",
    "agent",
    "from_node",
    "to_node",
    "capability",
    "task_type",
    "failure_class",
    "sender_kind",
    "recipient_kind",
    "event_type",
    "content_type",
    "format",
)


def _audit_rows(doc: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The summary as long rows (kind, subject, metric, value) for --csv, --tsv and --jsonl:
    one shape for every table of the audit, so that a script filters instead of parsing."""
    rows: list[tuple[Any, ...]] = [("total", "", k, v) for k, v in doc["totals"].items()]
    rows += [
        ("spark", doc["spark"]["master"], k, v) for k, v in doc["spark"].items() if k != "master"
    ]
    sections = [
        ("volume", doc["volume"]),
        ("latency_channel", doc["latency"]["channels"]),
        ("latency_agent", doc["latency"]["agents"]),
        ("reliability", doc["reliability"]),
        ("attempts", doc["attempts"]["channels"]),
        ("receipts", doc["receipts"]["agents"]),
        ("federation", doc["federation"]["latency"]),
        ("tasks", doc["tasks"]["by_capability"]),
        ("incidents", doc["incidents"]["by_capability"]),
        ("kinds", doc["kinds"]["pairs"]),
        ("events", doc["events"]["by_type"]),
        ("engagement", doc["engagement"]["funnel"]),
        ("attachments", doc["attachments"]["volume"]),
        ("formats", doc["attachments"]["formats"]),
    ]
    for kind, items in sections:
        for item in items:
            subject = "/".join(str(item[k]) for k in _SUBJECT if item.get(k) not in (None, ""))
            for k, v in item.items():
                if k in _SUBJECT:
                    continue
                if isinstance(v, dict):
                    rows += [(kind, subject, f"{k}.{n}", x) for n, x in sorted(v.items())]
                else:
                    rows.append((kind, subject, k, v))
    rows += [
        ("dead_letters", reason, "dead_letters", n)
        for reason, n in sorted(doc["dead_letters_by_reason"].items())
    ]
    rows += [
        ("kind", kind, k, v)
        for kind, numbers in sorted(doc["kinds"]["by_kind"].items())
        for k, v in numbers.items()
    ]
    rows += [("check", k, "count", v) for k, v in doc["checks"].items()]
    return rows


def audit_summary(out: Output, s: AuditResult) -> None:
    """The audit's findings: rich tables on a terminal; piped, one tab-separated line per row,
    each led by its kind (`total`, `volume`, `latency_channel`, `latency_agent`,
    `reliability`, `attempts`, `dead_letters`, `receipts`, `federation`, `tasks`,
    `incidents`, `kinds`, `events`, `engagement`, `attachments`, `formats`, `check`) so that
    awk can pick them apart; or, with --json, the summary as one JSON document."""
    doc = s.summary
    if out.json:
        _dump(doc)
        return
    fallback = sum(c.get("read_fallback") or 0 for c in doc["latency"]["channels"])
    if fallback:
        note(
            f"note: {fallback} read latencies are to the latest read, not the first: their "
            "export has no first_read_at (made before acomm kept it; export to a new "
            "directory for first reads)"
        )
    if out.table is not None:
        listing(out, None, cols.AUDIT, _audit_rows(doc))
        return
    tty = out.tty

    def ms(v: float | None) -> Any:
        return "" if v is None else (f"{v:,.0f}" if tty else int(v))

    t, sp = doc["totals"], doc["spark"]
    blocks: list[AuditTable] = [
        AuditTable(
            "volume",
            "volume per channel (messages by type)",
            ["store", "channel", "days", "messages", "by type"],
            [
                (
                    v["store_id"][:8],
                    v["channel"],
                    v["days"],
                    v["messages"],
                    " ".join(f"{k}={n}" for k, n in sorted(v["by_type"].items())),
                )
                for v in doc["volume"]
            ],
        ),
        AuditTable(
            "latency_channel",
            "latency per channel (ms; read: created -> first read)",
            [
                "store",
                "channel",
                "read",
                "read p50",
                "p95",
                "p99",
                "acked",
                "ack p50",
                "p95",
                "p99",
            ],
            [
                (
                    c["store_id"][:8],
                    c["channel"],
                    c["read"],
                    ms(c["read_p50_ms"]),
                    ms(c["read_p95_ms"]),
                    ms(c["read_p99_ms"]),
                    c["acked"],
                    ms(c["ack_p50_ms"]),
                    ms(c["ack_p95_ms"]),
                    ms(c["ack_p99_ms"]),
                )
                for c in doc["latency"]["channels"]
            ],
        ),
        AuditTable(
            "latency_agent",
            "latency per agent (ms; read: created -> first read)",
            ["agent", "read", "read p50", "p95", "p99", "acked", "ack p50", "p95", "p99"],
            [
                (
                    a["agent"],
                    a["read"],
                    ms(a["read_p50_ms"]),
                    ms(a["read_p95_ms"]),
                    ms(a["read_p99_ms"]),
                    a["acked"],
                    ms(a["ack_p50_ms"]),
                    ms(a["ack_p95_ms"]),
                    ms(a["ack_p99_ms"]),
                )
                for a in doc["latency"]["agents"]
            ],
        ),
        AuditTable(
            "reliability",
            "ack-tracked channels: retries, late acks, unacknowledged backlog",
            [
                "store",
                "channel",
                "tracked",
                "retried",
                "retries",
                "retry rate",
                "late acks",
                "backlog",
                "oldest (s)",
            ],
            [
                (
                    r["store_id"][:8],
                    r["channel"],
                    r["tracked"],
                    r["retried"],
                    r["retries"],
                    f"{r['retry_rate']:.1%}" if tty else f"{r['retry_rate']:.4f}",
                    r["late_acks"],
                    r["backlog"],
                    ""
                    if r["backlog_oldest_age_ms"] is None
                    else round(r["backlog_oldest_age_ms"] / 1000),
                )
                for r in doc["reliability"]
            ],
        ),
        AuditTable(
            "attempts",
            "ack-tracked deliveries by attempts (earlier ones: delivery_attempts)",
            [
                "store",
                "channel",
                "deliveries",
                "attempts",
                "retried",
                "max",
                "acked after retry",
                "dead after retry",
                "earlier read",
                "leases expired",
            ],
            [
                (
                    r["store_id"][:8],
                    r["channel"],
                    r["deliveries"],
                    r["attempts"],
                    r["retried"],
                    r["max_attempts"],
                    r["acked_after_retry"],
                    r["dead_after_retry"],
                    r["earlier_read"],
                    r["leases_expired"],
                )
                for r in doc["attempts"]["channels"]
            ],
        ),
        AuditTable(
            "dead_letters",
            "dead letters by reason",
            ["reason", "dead letters"],
            sorted(doc["dead_letters_by_reason"].items()),
        ),
        AuditTable(
            "receipts",
            "dispatch runs per agent",
            ["agent", "runs", "by status"],
            [
                (
                    a["agent"],
                    a["runs"],
                    " ".join(f"{k}={n}" for k, n in sorted(a["by_status"].items())),
                )
                for a in doc["receipts"]["agents"]
            ],
        ),
        AuditTable(
            "federation",
            "federated messages per node pair (ms; two clocks)",
            ["from", "to", "messages", "read", "p50", "p95", "p99", "clock offset", "skew bound"],
            [
                (
                    f["from_node"],
                    f["to_node"],
                    f["messages"],
                    f["read"],
                    ms(f["latency_p50_ms"]),
                    ms(f["latency_p95_ms"]),
                    ms(f["latency_p99_ms"]),
                    ""
                    if f["clock_offset_min_ms"] is None
                    else f"{f['clock_offset_min_ms']}..{f['clock_offset_max_ms']}",
                    ms(f["skew_bound_ms"]),
                )
                for f in doc["federation"]["latency"]
            ],
        ),
        AuditTable(
            "tasks",
            "tasks per capability (ms; lateness: finished - ETA)",
            [
                "capability",
                "type",
                "tasks",
                "open",
                "completed",
                "failed",
                "overdue",
                "p50",
                "p90",
                "late p50",
                "late p90",
            ],
            [
                (
                    r["capability"] or "",
                    r["task_type"],
                    r["tasks"],
                    r["open"],
                    r["completed"],
                    r["failed"],
                    r["overdue"],
                    ms(r["duration_p50_ms"]),
                    ms(r["duration_p90_ms"]),
                    ms(r["lateness_p50_ms"]),
                    ms(r["lateness_p90_ms"]),
                )
                for r in doc["tasks"]["by_capability"]
            ],
        ),
        AuditTable(
            "incidents",
            "review incidents by failure class",
            ["class", "capability", "incidents", "open", "resolved", "resolve p50"],
            [
                (
                    r["failure_class"],
                    r["capability"],
                    r["incidents"],
                    r["open"],
                    r["resolved"],
                    ms(r["resolve_p50_ms"]),
                )
                for r in doc["incidents"]["by_capability"]
            ],
        ),
        AuditTable(
            "kinds",
            "traffic by kind (sender -> recipient; unknown: a name in no directory)",
            ["from kind", "to kind", "messages", "deliveries", "read", "acked"],
            [
                (
                    r["sender_kind"],
                    r["recipient_kind"],
                    r["messages"],
                    r["deliveries"],
                    r["read"],
                    r["acked"],
                )
                for r in doc["kinds"]["pairs"]
            ],
        ),
        AuditTable(
            "events",
            "events by type (the notification event messages carried)",
            ["event type", "events", "targeted", "to agents", "to humans", "self", "threads"],
            [
                (
                    r["event_type"],
                    r["events"],
                    r["targeted"],
                    r["to_agents"],
                    r["to_humans"],
                    r["self_actions"],
                    r["threads"],
                )
                for r in doc["events"]["by_type"]
            ],
        ),
        AuditTable(
            "engagement",
            "engagement funnel (notified: a notice or a dispatch run; engaged: read or acked)",
            ["store", "channel", "event type", "routed", "notified", "engaged"],
            [
                (
                    r["store_id"],
                    r["channel"],
                    r["event_type"],
                    r["routed"],
                    r["notified"],
                    r["engaged"],
                )
                for r in doc["engagement"]["funnel"]
            ],
        ),
        AuditTable(
            "attachments",
            "files sent per channel and content type (blobs: distinct contents)",
            ["store", "channel", "content type", "files", "bytes", "messages", "blobs"],
            [
                (
                    r["store_id"][:8],
                    r["channel"],
                    r["content_type"],
                    r["files"],
                    r["bytes"],
                    r["messages"],
                    r["blobs"],
                )
                for r in doc["attachments"]["volume"]
            ],
        ),
        AuditTable(
            "formats",
            "messages per format",
            ["store", "format", "messages", "with subject", "with files"],
            [
                (r["store_id"][:8], r["format"], r["messages"], r["with_subject"], r["with_files"])
                for r in doc["attachments"]["formats"]
            ],
        ),
        AuditTable(
            "check",
            "checks (must be 0)",
            ["check", "count", "result"],
            [(k, v, "ok" if v == 0 else "FAILED") for k, v in doc["checks"].items()],
        ),
    ]
    if not tty:  # each line led by its kind; `total` and `spark` lines name their number
        lines: list[tuple[Any, ...]] = [("total", k, v) for k, v in t.items()]
        lines += [("spark", k, sp[k]) for k in ("master", "version", "startup_s", "work_s")]
        lines.append(("tables", doc["out"]))
        lines += [(b.kind, *row) for b in blocks for row in b.rows]
        _table(out, None, (), lines)
        return
    _pairs(
        out,
        [
            ("exports", ", ".join(f"{e['path']} ({e['store_id']})" for e in doc["exports"])),
            ("messages", f"{t['messages']:,}"),
            ("deliveries", f"{t['deliveries']:,}"),
            ("dead letters", f"{t['dead_letters']:,}"),
            ("channels", t["channels"]),
            ("tables", doc["out"]),
            (
                "spark",
                f"{sp['master']} (Spark {sp['version']}), start-up "
                f"{sp['startup_s']:.1f} s, work {sp['work_s']:.1f} s",
            ),
        ],
    )
    for b in blocks:  # on a terminal every table has its headings, empty or not
        _table(out, b.title, b.headers, b.rows)
