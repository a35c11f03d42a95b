"""The summary of `acomm audit` (what `--json` prints; docs/EXPORT.md lists its fields),
built from the result tables, and the exit status of its checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: pyspark loads inside the functions that use it
    from pyspark.sql import DataFrame, SparkSession


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
