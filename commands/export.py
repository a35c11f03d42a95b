"""`acomm export`: partitioned datasets plus a manifest, the input of `acomm audit`."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import export_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(export_run.export)
def export(
    inv: Invocation,
    out: Annotated[
        str,
        typer.Argument(
            click_type=params.DIR,
            metavar="DIR",
            show_default=False,
            help="Output directory (a local path, or a URI such as s3://bucket/prefix or "
            "hdfs://... that pyarrow can write and Spark read).",
        ),
    ],
    since: Annotated[
        str | None,
        typer.Option(
            click_type=params.TIME,
            help="Only messages created at or after this. " + params.TIME_HELP,
            show_default=False,
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(
            click_type=params.TIME,
            help="Only messages created before this. " + params.TIME_HELP,
            show_default=False,
        ),
    ] = None,
    incremental: Annotated[
        bool,
        typer.Option(
            "--incremental",
            help="Continue after the last message exported to OUT (the "
            "watermark kept in the store).",
        ),
    ] = False,
    format_: Annotated[
        str, typer.Option("--format", click_type=params.EXPORT_FORMAT, help="parquet or jsonl.")
    ] = "parquet",
) -> None:
    """Export the history as Parquet (or JSON Lines) datasets, the input of `audit`.

    Messages, deliveries and their earlier attempts, dead letters, dispatch receipts,
    federation, tasks and their history, channels, review incidents and the agent directory
    (never a credential) go to datasets
    partitioned by UTC day (date=YYYY-MM-DD), plus OUT/manifest.json (store id, schema and
    dataset versions, row counts, id range, every file with its size and sha256).

    Deliveries, attempts, dead letters and tasks are exported with their message, as they
    stand at export time; channels, incidents and agents whole, every time. An export never writes a
    message id OUT already holds, so running it twice over the same range adds nothing,
    except a range still in flight (a delivery unread or unacknowledged, a task open),
    which the next export writes again. Columns: docs/EXPORT.md.

    Example (nightly, from cron): acomm export /data/acomm-export --incremental
    """
