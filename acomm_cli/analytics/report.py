"""The audit as a picture: `report.html`, written beside the result tables by every audit.

One self-contained page that opens offline: the summary's tables with their headings (the
ones the terminal shows, `auditsummary.summary_tables`) and charts drawn to static SVG at audit
time by matplotlib (no script, no font or file fetched): volume over time, latency
percentiles per channel, retries and dead letters by reason, the federation funnel (routed,
accepted, engaged) with the local engagement funnel, latency per node pair, and task
lateness against the ETA. A chart with nothing to show says so in words.

matplotlib (the `spark` extra) is imported inside `render` only."""

from __future__ import annotations

import html
import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acomm_cli.analytics.auditsummary import summary_tables

if TYPE_CHECKING:  # annotations only: pyspark and matplotlib load inside the functions
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from pyspark.sql import SparkSession

NAME = "report.html"
TOP_CHANNELS = 8  # the volume chart's channels by name; the rest summed as "other"

# what the charts read beyond the summary, as Spark SQL over the audit's views
EXTRA: dict[str, str] = {
    # messages per UTC day and channel (the summary keeps per channel only)
    "volume_by_day": """
        SELECT CAST(to_date(created_at) AS STRING) AS date, channel, count(*) AS messages
        FROM messages GROUP BY to_date(created_at), channel""",
    # the three phases of a message to another node: routed (emitted to its owner's node),
    # notified (the receiver's `accepted` ack came back), engaged (`processed` or replied)
    "federation_funnel": """
        SELECT from_node, to_node, count(*) AS routed,
               count_if(accepted_ms IS NOT NULL
                        OR state IN ('accepted', 'processed', 'replied', 'incident'))
                   AS notified,
               count_if(state IN ('processed', 'replied')) AS engaged,
               count_if(state = 'dead_letter') AS dead
        FROM fed_sent WHERE kind = 'message' GROUP BY from_node, to_node""",
}


def collect(spark: SparkSession) -> dict[str, list[dict[str, Any]]]:
    """The extra rows the charts read (EXTRA), from the views the audit made."""
    return {
        name: [r.asDict(recursive=True) for r in spark.sql(query).collect()]
        for name, query in EXTRA.items()
    }


# ---------------------------------------------------------------- the page


_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em;
       padding: 0 1em; color: #1d2330; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccd; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: 13px; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { border: 1px solid #d5d8e0; padding: .25em .6em; text-align: left; }
th { background: #eef0f5; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0 2em; } figcaption { color: #555; font-size: 13px; }
figure svg { max-width: 100%; height: auto; }
p.empty { color: #777; font-style: italic; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dt { font-weight: 600; } dd { margin: 0; }
"""


def render(summary: dict[str, Any], extra: dict[str, list[dict[str, Any]]]) -> str:
    """The page, from the audit's summary and `collect`'s rows."""
    e = html.escape
    t, sp = summary["totals"], summary["spark"]
    facts = [
        ("exports", ", ".join(f"{x['path']} ({x['store_id']})" for x in summary["exports"])),
        ("messages", f"{t['messages']:,}"),
        ("deliveries", f"{t['deliveries']:,}"),
        ("dead letters", f"{t['dead_letters']:,}"),
        ("tables", summary["out"]),
        ("spark", f"{sp['master']} (Spark {sp['version']}), work {sp['work_s']:.1f} s"),
    ]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>acomm audit</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>acomm audit</h1>",
        "<dl>" + "".join(f"<dt>{e(k)}</dt><dd>{e(str(v))}</dd>" for k, v in facts) + "</dl>",
        "<h2>Charts</h2>",
    ]
    for title, caption, empty, draw in _charts(summary, extra):
        parts.append(f'<figure class="chart"><h3>{e(title)}</h3>')
        svg = _draw(draw)
        parts.append(svg if svg is not None else f'<p class="empty">{e(empty)}</p>')
        parts.append(f"<figcaption>{e(caption)}</figcaption></figure>")
    parts.append("<h2>Tables</h2>")
    for table in summary_tables(summary, tty=True):
        parts.append(f'<table id="{e(table.kind)}"><caption>{e(table.title)}</caption>')
        parts.append("<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in table.headers))
        parts.append("</tr></thead><tbody>")
        for row in table.rows:
            cells = "".join(
                f'<td class="n">{e(str(v))}</td>'
                if isinstance(v, int | float) and not isinstance(v, bool)
                else f"<td>{e('' if v is None else str(v))}</td>"
                for v in row
            )
            parts.append(f"<tr>{cells}</tr>")
        if not table.rows:
            parts.append(f'<tr><td colspan="{len(table.headers)}">(none)</td></tr>')
        parts.append("</tbody></table>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write(out: str, page: str, spark: SparkSession | None = None) -> str:
    """`page` as `out`/report.html: a local directory directly, a URI (hdfs://, s3a://...)
    through Spark's Hadoop filesystem layer, as the tables were written. Returns its path."""
    path = f"{out}/{NAME}"
    if "://" not in out or out.startswith("file://"):
        from pathlib import Path

        local = Path(out[len("file://") :] if out.startswith("file://") else out)
        local.mkdir(parents=True, exist_ok=True)
        (local / NAME).write_text(page, encoding="utf-8")
        return path
    assert spark is not None
    jvm: Any = spark.sparkContext._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    fs = target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.create(target, True)
    try:
        stream.write(bytearray(page.encode("utf-8")))
    finally:
        stream.close()
    return path


# ---------------------------------------------------------------- the charts

Draw = Callable[["Figure"], bool]  # draws on a figure; False: nothing to draw


def _draw(draw: Draw) -> str | None:
    """One chart as an inline <svg> element (None when it has nothing to show)."""
    import logging

    # its first run builds a font cache and says so: the audit's stderr stays Spark-quiet
    logging.getLogger("matplotlib").setLevel(logging.ERROR)
    import matplotlib
    from matplotlib.figure import Figure

    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: smaller, searchable
    matplotlib.rcParams["svg.hashsalt"] = "acomm"  # the same ids on every run
    fig = Figure(figsize=(9, 3.6), layout="constrained")
    if not draw(fig):
        return None
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.index("<svg") :]  # the element alone, inline


def _bars(ax: Axes, labels: list[str], series: dict[str, list[float]], unit: str) -> None:
    """Grouped horizontal bars: one group per label, one bar per series."""
    n = max(1, len(series))
    height = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        ys = [y + (i - (n - 1) / 2) * height for y in range(len(labels))]
        ax.barh(ys, values, height=height, label=name)
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel(unit)
    if len(series) > 1:
        ax.legend(fontsize="small")
    ax.grid(axis="x", alpha=0.3)


def _num(v: Any) -> float:
    return 0.0 if v is None else float(v)


def _charts(
    s: dict[str, Any], extra: dict[str, list[dict[str, Any]]]
) -> list[tuple[str, str, str, Draw]]:
    """(title, caption, the words for an empty chart, how to draw it) per chart."""

    def volume(fig: Figure) -> bool:
        rows = extra.get("volume_by_day") or []
        if not rows:
            return False
        by_channel: dict[str, int] = {}
        for r in rows:
            by_channel[r["channel"]] = by_channel.get(r["channel"], 0) + r["messages"]
        top = sorted(by_channel, key=lambda c: (-by_channel[c], c))[:TOP_CHANNELS]
        days = sorted({r["date"] for r in rows})
        stacks: dict[str, list[float]] = {c: [0.0] * len(days) for c in [*top, "other"]}
        for r in rows:
            key = r["channel"] if r["channel"] in top else "other"
            stacks[key][days.index(r["date"])] += r["messages"]
        ax = fig.subplots()
        bottom = [0.0] * len(days)
        for channel, values in stacks.items():
            if any(values):
                ax.bar(days, values, bottom=bottom, label=channel)
                bottom = [a + b for a, b in zip(bottom, values, strict=True)]
        ax.set_ylabel("messages")
        if ax.get_legend_handles_labels()[1]:  # days with no message at all draw no bar
            ax.legend(fontsize="small", ncols=2)
        ax.grid(axis="y", alpha=0.3)
        return True

    def latency(fig: Figure) -> bool:
        rows = [c for c in s["latency"]["channels"] if c["read"] or c["acked"]]
        if not rows:
            return False
        labels = [c["channel"] for c in rows]
        read_ax, ack_ax = fig.subplots(1, 2, sharey=True)
        _bars(
            read_ax,
            labels,
            {f"p{q}": [_num(c[f"read_p{q}_ms"]) for c in rows] for q in (50, 95, 99)},
            "ms, created -> first read",
        )
        _bars(
            ack_ax,
            labels,
            {f"p{q}": [_num(c[f"ack_p{q}_ms"]) for c in rows] for q in (50, 95, 99)},
            "ms, delivered -> acked",
        )
        return True

    def failures(fig: Figure) -> bool:
        retried = [r for r in s["reliability"] if r["retries"]]
        reasons = s["dead_letters_by_reason"]
        if not retried and not reasons:
            return False
        left, right = fig.subplots(1, 2)
        if retried:
            _bars(
                left,
                [r["channel"] for r in retried],
                {
                    "deliveries retried": [r["retried"] for r in retried],
                    "retries": [r["retries"] for r in retried],
                },
                "count",
            )
            left.set_title("retries per channel", fontsize="medium")
        else:
            left.set_axis_off()
            left.text(0.5, 0.5, "no retries", ha="center", va="center")
        if reasons:
            names = sorted(reasons, key=lambda k: (-reasons[k], k))
            _bars(right, names, {"dead letters": [reasons[k] for k in names]}, "dead letters")
            right.set_title("dead letters by reason", fontsize="medium")
        else:
            right.set_axis_off()
            right.text(0.5, 0.5, "no dead letters", ha="center", va="center")
        return True

    def funnel(fig: Figure) -> bool:
        fed = extra.get("federation_funnel") or []
        local: dict[str, list[int]] = {}
        for r in s["engagement"]["funnel"]:
            f = local.setdefault(r["event_type"] or "none", [0, 0, 0])
            for i, k in enumerate(("routed", "notified", "engaged")):
                f[i] += r[k] or 0
        if not fed and not local:
            return False
        axes = fig.subplots(1, 2) if fed and local else [fig.subplots()]
        if fed:
            _bars(
                axes[0],
                [f"{r['from_node']} -> {r['to_node']}" for r in fed],
                {
                    "routed": [r["routed"] for r in fed],
                    "notified (accepted)": [r["notified"] for r in fed],
                    "engaged (processed)": [r["engaged"] for r in fed],
                    "dead": [r["dead"] for r in fed],
                },
                "messages",
            )
            axes[0].set_title("federation: per node pair", fontsize="medium")
        if local:
            names = sorted(local)
            _bars(
                axes[-1],
                names,
                {
                    "routed": [local[n][0] for n in names],
                    "notified": [local[n][1] for n in names],
                    "engaged": [local[n][2] for n in names],
                },
                "deliveries",
            )
            axes[-1].set_title("engagement: per event type", fontsize="medium")
        return True

    def nodes(fig: Figure) -> bool:
        rows = s["federation"]["latency"]
        if not rows:
            return False
        _bars(
            fig.subplots(),
            [f"{r['from_node']} -> {r['to_node']}" for r in rows],
            {f"p{q}": [_num(r[f"latency_p{q}_ms"]) for r in rows] for q in (50, 95, 99)},
            "ms, sent -> first read on the other node (two clocks)",
        )
        return True

    def lateness(fig: Figure) -> bool:
        rows = [
            r
            for r in s["tasks"]["by_capability"]
            if r["lateness_p50_ms"] is not None or r["lateness_p90_ms"] is not None
        ]
        if not rows:
            return False
        ax = fig.subplots()
        _bars(
            ax,
            [f"{r['capability'] or '-'} / {r['task_type']}" for r in rows],
            {
                "p50": [_num(r["lateness_p50_ms"]) for r in rows],
                "p90": [_num(r["lateness_p90_ms"]) for r in rows],
            },
            "ms after the ETA (below 0: early)",
        )
        ax.axvline(0, color="black", linewidth=0.8)
        return True

    return [
        (
            "Volume over time",
            "Messages per UTC day, stacked by channel (the busiest channels by name, the rest "
            "as other).",
            "No messages.",
            volume,
        ),
        (
            "Latency percentiles per channel",
            "p50, p95 and p99 of created -> first read and delivered -> acknowledged, in ms.",
            "No deliveries read or acknowledged.",
            latency,
        ),
        (
            "Retries and dead letters",
            "Ack-tracked deliveries retried and the retries they took, per channel; dead "
            "letters by reason.",
            "No retries and no dead letters.",
            failures,
        ),
        (
            "The funnel: routed, notified, engaged",
            "A message to another node: routed (emitted), notified (the receiver's accepted "
            "ack), engaged (processed or replied); and every delivery: routed, notified (a "
            "dispatch run), engaged (read or acknowledged).",
            "No messages routed.",
            funnel,
        ),
        (
            "Latency per node pair",
            "Sent on one node -> first read on the other, p50/p95/p99 in ms, across two clocks "
            "(the skew bound is in the table).",
            "No federated messages.",
            nodes,
        ),
        (
            "Task lateness against the ETA",
            "Finished minus ETA per capability and task type, p50 and p90 in ms (below 0: early).",
            "No finished tasks with an ETA.",
            lateness,
        ),
    ]
