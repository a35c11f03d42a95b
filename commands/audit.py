"""`acomm audit`: the audit pipeline over exports, on Spark (local or a cluster)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import audit_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.AUDIT)
@runs(audit_run.audit)
def audit(
    inv: Invocation,
    exports: Annotated[
        list[str],
        typer.Argument(
            click_type=params.DIR,
            help="Export directories (made by `acomm export`); several are audited together.",
            show_default=False,
        ),
    ],
    master: Annotated[
        str | None,
        typer.Option(
            help="Spark master: local[*] (default), local[2], spark://host:7077, yarn, ... "
            "(default: $ACOMM_SPARK_MASTER, then spark.master in config.yaml).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            click_type=params.DIR,
            help="Where the result tables go, as Parquet (default: beside the first export, "
            "named after the exports audited: ./export -> ./export.audit, ./a ./b -> "
            "./a+b.audit). On a cluster, storage every node can write.",
            show_default=False,
        ),
    ] = None,
    executor_wait: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="On a cluster, how long to wait for the first executor before giving up "
            "with what was asked for and what the workers offer. " + params.DURATION_HELP,
        ),
    ] = "60s",
    html: Annotated[
        bool,
        typer.Option(
            "--html",
            help="Print the path of report.html (the tables and charts as one page, written "
            "beside the tables by every audit) instead of the summary.",
        ),
    ] = False,
    conf: Annotated[
        list[str] | None,
        typer.Option(
            "--conf",
            metavar="KEY=VALUE",
            help="Extra Spark setting KEY=VALUE (repeatable), e.g. "
            "spark.ui.enabled=true or spark.executor.memory=4g.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Audit exports on Apache Spark: volume, latency, retries, dead letters, checks.

    Volume per channel and day by type and priority; created->first read and delivered->acked
    latency p50/p95/p99 per channel and per agent; retries; deliveries by attempts (handed out
    more than once, and how those ended); dead letters by reason; acks later than the
    channel's ack timeout; the unacknowledged backlog and its age at export time; exactly-once
    violations and messages not accounted for (both must be 0).

    Dispatch receipts by agent and status. Tasks by capability: completed, failed, overdue,
    and p50/p90 of their duration and of their lateness against the ETA; review incidents by
    failure class and capability, open and resolved. Traffic by the kinds of sender and
    recipient (agent, human, service; a name in no directory: unknown). Exports of several
    federated nodes are audited together: a message (a task) is counted once by its
    global_id; latency per node pair; a message on one side only is a failed check.

    Writes each table as Parquet under --out, and report.html beside them: the tables
    with their headings and charts drawn at audit time (volume over time, latency
    percentiles per channel, retries and dead letters by reason, the federation and
    engagement funnels, latency per node pair, task lateness), a page that opens offline.
    Prints a summary (--json: as JSON; --html: the report's path). Needs
    Java 17+; exit 8 (spark_unavailable) without it, when the master does not answer, or when
    no executor starts within --executor-wait. Exit 3 when an export is given twice or Spark
    cannot read a URI. Exit 5 (invalid_state) when a check that must be 0 is not; exit 8
    (spark_error) when a Spark job fails.

    Example: acomm audit /data/export-a /data/export-b --master spark://head:7077 --out /data/audit
    """
