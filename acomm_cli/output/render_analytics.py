"""What `acomm export` and `acomm audit` print: split from render.py (which kept growing past
the 800-line split point), on its helpers."""

from __future__ import annotations

import sys

from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, _table, listing, note

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from acomm_cli.analytics.audit import AuditResult
    from acomm_cli.analytics.auditsummary import AuditTable
    from acomm_cli.analytics.export import ExportResult


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

    t, sp = doc["totals"], doc["spark"]
    from acomm_cli.analytics.auditsummary import summary_tables  # here: not for --help

    blocks: list[AuditTable] = summary_tables(doc, tty=tty)
    if not tty:  # each line led by its kind; `total` and `spark` lines name their number
        lines: list[tuple[Any, ...]] = [("total", k, v) for k, v in t.items()]
        lines += [("spark", k, sp[k]) for k in ("master", "version", "startup_s", "work_s")]
        lines.append(("tables", doc["out"]))
        lines.append(("report", doc["report"]))
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
            ("report", doc["report"]),
            (
                "spark",
                f"{sp['master']} (Spark {sp['version']}), start-up "
                f"{sp['startup_s']:.1f} s, work {sp['work_s']:.1f} s",
            ),
        ],
    )
    for b in blocks:  # on a terminal every table has its headings, empty or not
        _table(out, b.title, b.headers, b.rows)


def audit_report(out: Output, s: AuditResult) -> None:
    """`audit --html`: the path of report.html alone (`xdg-open "$(acomm audit ... --html)"`),
    or with --json the summary as usual (it names the report too)."""
    if out.json:
        _dump(s.summary)
        return
    sys.stdout.write(s.summary["report"] + "\n")
