"""The audit as a picture: report.html, drawn from a summary (unit: every chart and table,
escaping, empty charts said in words) and written by a real audit on Spark beside its
tables (`acomm audit --html` prints its path)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pytest
from audit_traffic import DAY1, day1, day2
from freezegun import freeze_time

from acomm_cli.analytics import audit, report
from acomm_cli.analytics.auditsummary import summary_tables

# matplotlib may start `fc-list` (its font cache, built on a first run): a program
pytestmark = pytest.mark.process


def _summary() -> dict[str, Any]:
    """A summary with a row in every table, two nodes and tasks: every chart has data."""
    lat = {f"{k}_p{q}_ms": v * q for k, v in (("read", 10), ("ack", 20)) for q in (50, 95, 99)}
    return {
        "exports": [{"path": "/x/export", "store_id": "s1" * 8}],
        "out": "/x/export.audit",
        "totals": {"messages": 12, "deliveries": 30, "dead_letters": 2},
        "spark": {"master": "local[2]", "version": "4.0.0", "work_s": 3.2, "startup_s": 1.0},
        "volume": [
            {
                "store_id": "s1" * 8,
                "channel": "<script>alert(1)</script>",
                "days": 2,
                "messages": 12,
                "by_type": {"text": 12},
            }
        ],
        "latency": {
            "channels": [{"store_id": "s1" * 8, "channel": "work", "read": 5, "acked": 4, **lat}],
            "agents": [{"agent": "bob", "read": 5, "acked": 4, **lat}],
        },
        "reliability": [
            {
                "store_id": "s1" * 8,
                "channel": "work",
                "tracked": 6,
                "retried": 2,
                "retries": 3,
                "retry_rate": 1 / 3,
                "late_acks": 1,
                "backlog": 1,
                "backlog_oldest_age_ms": 5000,
            }
        ],
        "attempts": {
            "channels": [
                {
                    "store_id": "s1" * 8,
                    "channel": "work",
                    "deliveries": 6,
                    "attempts": 9,
                    "retried": 2,
                    "max_attempts": 3,
                    "acked_after_retry": 1,
                    "dead_after_retry": 1,
                    "earlier_read": 1,
                    "leases_expired": 0,
                }
            ]
        },
        "dead_letters_by_reason": {"max_retries_exceeded": 1, "expired": 1},
        "receipts": {"agents": [{"agent": "carl", "runs": 2, "by_status": {"accepted": 2}}]},
        "federation": {
            "nodes": ["na", "nb"],
            "latency": [
                {
                    "from_node": "na",
                    "to_node": "nb",
                    "messages": 3,
                    "read": 3,
                    "latency_p50_ms": 40,
                    "latency_p95_ms": 90,
                    "latency_p99_ms": 99,
                    "clock_offset_min_ms": -5,
                    "clock_offset_max_ms": 7,
                    "skew_bound_ms": 12,
                }
            ],
        },
        "tasks": {
            "by_capability": [
                {
                    "capability": "review",
                    "task_type": "pr",
                    "tasks": 3,
                    "open": 0,
                    "completed": 2,
                    "failed": 1,
                    "overdue": 1,
                    "duration_p50_ms": 1000,
                    "duration_p90_ms": 4000,
                    "lateness_p50_ms": -500,
                    "lateness_p90_ms": 2000,
                }
            ]
        },
        "incidents": {
            "by_capability": [
                {
                    "failure_class": "overdue",
                    "capability": "review",
                    "incidents": 1,
                    "open": 1,
                    "resolved": 0,
                    "resolve_p50_ms": None,
                }
            ]
        },
        "kinds": {
            "pairs": [
                {
                    "sender_kind": "agent",
                    "recipient_kind": "human",
                    "messages": 2,
                    "deliveries": 2,
                    "read": 1,
                    "acked": 0,
                }
            ]
        },
        "events": {
            "by_type": [
                {
                    "event_type": "mention.created",
                    "events": 1,
                    "targeted": 1,
                    "to_agents": 1,
                    "to_humans": 0,
                    "self_actions": 0,
                    "threads": 1,
                }
            ]
        },
        "engagement": {
            "funnel": [
                {
                    "store_id": "s1" * 8,
                    "channel": "work",
                    "event_type": None,
                    "routed": 6,
                    "notified": 2,
                    "engaged": 5,
                }
            ]
        },
        "attachments": {
            "volume": [
                {
                    "store_id": "s1" * 8,
                    "channel": "work",
                    "content_type": "text/plain",
                    "files": 1,
                    "bytes": 10,
                    "messages": 1,
                    "blobs": 1,
                }
            ],
            "formats": [
                {
                    "store_id": "s1" * 8,
                    "format": "markdown",
                    "messages": 1,
                    "with_subject": 1,
                    "with_files": 1,
                }
            ],
        },
        "checks": {"exactly_once_violations": 0, "unaccounted": 0, "federation_unmatched": 0},
    }


EXTRA = {
    "volume_by_day": [
        {"date": "2026-01-01", "channel": "work", "messages": 7},
        {"date": "2026-01-02", "channel": "<script>alert(1)</script>", "messages": 5},
    ],
    "federation_funnel": [
        {"from_node": "na", "to_node": "nb", "routed": 3, "notified": 3, "engaged": 2, "dead": 0}
    ],
}


def _figures(page: str) -> dict[str, str]:
    """Each chart's heading -> what its figure holds."""
    return dict(re.findall(r'<figure class="chart"><h3>(.*?)</h3>(.*?)</figure>', page, re.S))


def _assert_headed_tables(page: str, summary: dict[str, Any]) -> None:
    for table in summary_tables(summary):
        m = re.search(rf'<table id="{table.kind}">(.*?)</table>', page, re.S)
        assert m, table.kind
        heads = re.findall(r"<th>(.*?)</th>", m.group(1))
        assert heads == [h.replace(">", "&gt;") for h in table.headers], table.kind


def test_every_chart_is_drawn_as_inline_svg_and_every_table_has_its_headings():
    summary = _summary()
    page = report.render(summary, EXTRA)
    figures = _figures(page)
    assert list(figures) == [
        "Volume over time",
        "Latency percentiles per channel",
        "Retries and dead letters",
        "The funnel: routed, notified, engaged",
        "Latency per node pair",
        "Task lateness against the ETA",
    ]
    for title, body in figures.items():
        assert body.lstrip().startswith("<svg"), title
        assert "<figcaption>" in body
    # the charts' text is text: the numbers' labels can be found in the page
    assert "max_retries_exceeded" in figures["Retries and dead letters"]
    assert "na -&gt; nb" in figures["Latency per node pair"]
    assert "review / pr" in figures["Task lateness against the ETA"]
    _assert_headed_tables(page, summary)
    # a channel named like markup stays text, in the tables and in the charts
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # it opens offline: nothing fetched, nothing run
    assert not re.search(r'(src|href)="(https?:)?//', page) and "<script" not in page
    # the same summary draws the same page (stable ids: diffs show real changes)
    assert report.render(summary, EXTRA) == page


def test_charts_with_nothing_to_show_say_so():
    summary = _summary()
    summary["federation"]["latency"] = []
    summary["tasks"]["by_capability"] = []
    summary["reliability"][0]["retries"] = 0
    summary["dead_letters_by_reason"] = {}
    page = report.render(summary, {**EXTRA, "federation_funnel": []})
    figures = _figures(page)
    assert '<p class="empty">No federated messages.</p>' in figures["Latency per node pair"]
    assert "No finished tasks with an ETA." in figures["Task lateness against the ETA"]
    assert "No retries and no dead letters." in figures["Retries and dead letters"]
    # the funnel keeps the local engagement funnel alone
    assert figures["The funnel: routed, notified, engaged"].lstrip().startswith("<svg")


def test_a_report_is_written_into_a_directory_it_makes(tmp_path):
    path = report.write(str(tmp_path / "new" / "audit"), "<html></html>")
    assert path == str(tmp_path / "new" / "audit" / "report.html")
    assert Path(path).read_text() == "<html></html>"


# ---------------------------------------------------------------- a real audit


@pytest.fixture
def exported(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        day2(cli, clock, day1(cli, clock))
        cli.ok("export", out)
    return out


@pytest.mark.spark
def test_every_audit_writes_report_html_beside_its_tables(spark, exported, tmp_path, cli):
    out = tmp_path / "audit"
    result = audit.run([str(exported)], out=str(out), spark=spark)
    s = result.summary
    assert s["report"] == str(out / "report.html")
    page = (out / "report.html").read_text()
    figures = _figures(page)
    # the traffic: two days on chat, work and once; retries and a dead letter on work
    for title in (
        "Volume over time",
        "Latency percentiles per channel",
        "Retries and dead letters",
        "The funnel: routed, notified, engaged",
    ):
        assert figures[title].lstrip().startswith("<svg"), title
    assert "max_retries_exceeded" in figures["Retries and dead letters"]
    assert "No federated messages." in figures["Latency per node pair"]
    _assert_headed_tables(page, s)
    assert (out / "volume").is_dir()  # beside the tables
    # `acomm audit --html` prints the report's path (the session above is reused)
    again = cli.ok("audit", str(exported), "--out", str(tmp_path / "again"), "--html")
    assert again.stdout == f"{tmp_path / 'again' / 'report.html'}\n"
    assert (tmp_path / "again" / "report.html").is_file()
