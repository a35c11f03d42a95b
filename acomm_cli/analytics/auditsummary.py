"""The summary of `acomm audit` (what `--json` prints; docs/EXPORT.md lists its fields),
built from the result tables, and the exit status of its checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # annotations only: pyspark loads inside the functions that use it
    from pyspark.sql import DataFrame, SparkSession


class AuditTable(NamedTuple):
    """One table of the audit's summary, with its headings: on a terminal `title`, then a
    table under `headers` (also when it has no rows); piped, each row as a tab-separated line
    led by `kind`; in report.html, a headed table. A new table of the audit is one more."""

    kind: str
    title: str
    headers: list[str]
    rows: list[tuple[Any, ...]]


@dataclass
class AuditResult:
    summary: dict[str, Any]
    tables: dict[str, str]


def _rows(df: DataFrame, order: str | None = None) -> list[dict[str, Any]]:
    if order:
        df = df.orderBy(*order.split(","))
    return [r.asDict(recursive=True) for r in df.collect()]


def summarize(
    spark: SparkSession,
    frames: dict[str, DataFrame],
    loaded: list[tuple[str, dict[str, Any]]],
    out: str,
) -> dict[str, Any]:
    """The summary `acomm audit --json` prints (docs/EXPORT.md), from the result tables."""
    totals = (
        spark.sql("""
        SELECT (SELECT count(*) FROM messages) AS messages,
               (SELECT count(*) FROM deliveries) AS deliveries,
               (SELECT count(*) FROM dead_letters) AS dead_letters,
               (SELECT count(*) FROM channels) AS channels,
               (SELECT count(*) FROM receipts) AS receipts,
               (SELECT count(DISTINCT global_id) FROM messages) AS federated_messages,
               (SELECT count(*) FROM tasks) AS tasks,
               (SELECT count(*) FROM incidents) AS incidents,
               (SELECT count(*) FROM agent_kinds) AS agents
        """)
        .collect()[0]
        .asDict()
    )
    volume: dict[tuple[str, str], dict[str, Any]] = {}
    days: dict[tuple[str, str], set[Any]] = {}
    for r in _rows(frames["volume"]):
        key = (r["store_id"], r["channel"])
        v = volume.setdefault(
            key,
            {
                "store_id": r["store_id"],
                "channel": r["channel"],
                "messages": 0,
                "by_type": {},
                "by_priority": {},
            },
        )
        v["messages"] += r["messages"]
        v["by_type"][r["type"]] = v["by_type"].get(r["type"], 0) + r["messages"]
        v["by_priority"][r["priority"]] = v["by_priority"].get(r["priority"], 0) + r["messages"]
        days.setdefault(key, set()).add(r["date"])
    for key, v in volume.items():
        v["days"] = len(days[key])
    reliability = _rows(frames["reliability"], "store_id,channel")
    by_reason: dict[str, int] = {}
    for r in _rows(frames["dead_letters"]):
        by_reason[r["reason"]] = by_reason.get(r["reason"], 0) + r["dead_letters"]
    tracked = sum(r["tracked"] for r in reliability)
    retried = sum(r["retried"] for r in reliability)
    ages = [
        r["backlog_oldest_age_ms"] for r in reliability if r["backlog_oldest_age_ms"] is not None
    ]
    return {
        "exports": [
            {
                "path": base,
                "store_id": m["store"]["store_id"],
                "format": m["format"],
                "exported_at": m["exported_at"],
                "rows": m["rows"],
                "id_range": m["id_range"],
                "dataset_version": m.get("dataset_version", 1),
            }
            for base, m in loaded
        ],
        "out": out,
        "totals": totals,
        "volume": sorted(volume.values(), key=lambda v: (v["store_id"], v["channel"] or "")),
        "latency": {
            "channels": _rows(frames["latency_by_channel"], "store_id,channel"),
            "agents": _rows(frames["latency_by_agent"], "agent"),
        },
        "reliability": reliability,
        "retries": {
            "tracked": tracked,
            "retried": retried,
            "retries": sum(r["retries"] or 0 for r in reliability),
            "retry_rate": retried / tracked if tracked else 0.0,
        },
        "attempts": _attempts(frames["attempts"]),
        "dead_letters_by_reason": by_reason,
        "late_acks": sum(r["late_acks"] for r in reliability),
        "backlog": {
            "deliveries": sum(r["backlog"] for r in reliability),
            "oldest_age_ms": max(ages) if ages else None,
        },
        "receipts": _receipts(frames["receipts"]),
        "federation": {
            "nodes": sorted({m["store"].get("node_id") for _, m in loaded} - {None}),
            "latency": _rows(frames["federation_latency"], "from_node,to_node"),
        },
        "tasks": _tasks(frames["task_latency"]),
        "incidents": _incidents(frames["incidents"]),
        "kinds": _kinds(frames["traffic_kinds"], frames["traffic_by_kind"]),
        "events": {"by_type": _rows(frames["events_by_type"], "event_type")},
        "attachments": {
            "volume": _rows(frames["attachment_volume"], "store_id,channel,content_type"),
            "formats": _rows(frames["formats"], "store_id,format"),
        },
        "engagement": {"funnel": _rows(frames["engagement_funnel"], "store_id,channel,event_type")},
        "checks": {
            "exactly_once_violations": frames["exactly_once_violations"].count(),
            "unaccounted": frames["unaccounted"].count(),
            "federation_unmatched": frames["federation_unmatched"].count(),
        },
    }


def _attempts(df: DataFrame) -> dict[str, Any]:
    """Ack-tracked deliveries by attempts, in all and per channel (docs/EXPORT.md)."""
    rows = _rows(df, "store_id,channel")
    keys = (
        "deliveries",
        "attempts",
        "retried",
        "acked",
        "acked_attempts",
        "acked_after_retry",
        "dead",
        "dead_after_retry",
        "earlier_read",
        "leases_expired",
    )
    total = {k: sum(r[k] or 0 for r in rows) for k in keys}
    return {
        **total,
        "max_attempts": max((r["max_attempts"] or 0 for r in rows), default=0),
        "attempts_per_delivery": (
            total["attempts"] / total["deliveries"] if total["deliveries"] else None
        ),
        "attempts_per_acked": (
            total["acked_attempts"] / total["acked"] if total["acked"] else None
        ),
        "channels": rows,
    }


def _receipts(df: DataFrame) -> dict[str, Any]:
    """Dispatch runs by status, and per agent (across stores) by status with run times."""
    by_status: dict[str, int] = {}
    agents: dict[str, dict[str, Any]] = {}
    for r in _rows(df, "agent,status,store_id"):
        by_status[r["status"]] = by_status.get(r["status"], 0) + r["runs"]
        a = agents.setdefault(
            r["agent"], {"agent": r["agent"], "runs": 0, "by_status": {}, "retried_runs": 0}
        )
        a["runs"] += r["runs"]
        a["retried_runs"] += r["retried_runs"]
        a["by_status"][r["status"]] = a["by_status"].get(r["status"], 0) + r["runs"]
    return {
        "runs": sum(by_status.values()),
        "by_status": by_status,
        "agents": list(agents.values()),
    }


def _tasks(df: DataFrame) -> dict[str, Any]:
    """Tasks in all (each once) and per capability and type, with their latencies."""
    rows = _rows(df, "capability,task_type")
    keys = ("tasks", "open", "completed", "failed", "overdue")
    return {**{k: sum(r[k] for r in rows) for k in keys}, "by_capability": rows}


def _incidents(df: DataFrame) -> dict[str, Any]:
    """Review incidents in all, per failure class, and per class and capability."""
    rows = _rows(df, "failure_class,capability")
    by_class: dict[str, int] = {}
    for r in rows:
        by_class[r["failure_class"]] = by_class.get(r["failure_class"], 0) + r["incidents"]
    return {
        "incidents": sum(by_class.values()),
        "open": sum(r["open"] for r in rows),
        "resolved": sum(r["resolved"] for r in rows),
        "by_class": by_class,
        "by_capability": rows,
    }


def _kinds(totals: DataFrame, pairs: DataFrame) -> dict[str, Any]:
    """Per kind: registered names, messages sent, deliveries received; and the traffic
    between each sender kind and recipient kind."""
    return {
        "by_kind": {
            r["kind"]: {k: r[k] for k in ("agents", "sent", "received")}
            for r in _rows(totals, "kind")
        },
        "pairs": _rows(pairs, "sender_kind,recipient_kind"),
    }


def require_clean(result: AuditResult) -> None:
    """Exit 5 (`invalid_state`) naming the checks that are not 0."""
    failed = {k: v for k, v in result.summary["checks"].items() if v}
    if failed:
        from acomm_cli.errors import InvalidState

        raise InvalidState(
            "audit checks failed: "
            + ", ".join(f"{k}={v}" for k, v in failed.items())
            + f" (rows in {result.summary['out']})",
            field="audit",
            **failed,
        )


# the columns a latency table (per channel, per agent) shares after its key
LATENCY_HEADERS = (
    "read",
    "read p50",
    "read p95",
    "read p99",
    "acked",
    "ack p50",
    "ack p95",
    "ack p99",
)


def summary_tables(doc: dict[str, Any], *, tty: bool = True) -> list[AuditTable]:
    """The summary's tables, each with its column headings: what the terminal shows, the
    piped lines (`tty=False`: plain numbers) and report.html's tables."""

    def latency(row: dict[str, Any]) -> tuple[Any, ...]:
        """The read and ack counts and percentiles of a latency row, as LATENCY_HEADERS."""
        return tuple(
            row[k] if k in ("read", "acked") else ms(row[k])
            for k in ("read", "read_p50_ms", "read_p95_ms", "read_p99_ms")
            + ("acked", "ack_p50_ms", "ack_p95_ms", "ack_p99_ms")
        )

    def ms(v: float | None) -> Any:
        return "" if v is None else (f"{v:,.0f}" if tty else int(v))

    return [
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
            ["store", "channel", *LATENCY_HEADERS],
            [
                (
                    c["store_id"][:8],
                    c["channel"],
                    *latency(c),
                )
                for c in doc["latency"]["channels"]
            ],
        ),
        AuditTable(
            "latency_agent",
            "latency per agent (ms; read: created -> first read)",
            ["agent", *LATENCY_HEADERS],
            [
                (
                    a["agent"],
                    *latency(a),
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
            [
                "from",
                "to",
                "messages",
                "read",
                "latency p50",
                "latency p95",
                "latency p99",
                "clock offset",
                "skew bound",
            ],
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
                "duration p50",
                "duration p90",
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
