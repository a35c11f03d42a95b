"""`acomm query`, `acomm respond`, `acomm thread`: request and response."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import query_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, listing, runs
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)


@app.command()
@runs(query_run.query)
def query(
    inv: Invocation,
    channel: Annotated[
        str | None,
        typer.Argument(
            click_type=params.CHANNEL,
            help="Channel name (none with --to).",
            show_default=False,
        ),
    ] = None,
    body: Annotated[
        str | None, typer.Argument(help="The question; '-' or omitted: stdin.", show_default=False)
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            click_type=params.AGENT,
            help="Ask one agent, on your direct channel with it (an agent another node owns"
            " too); then give only the body.",
        ),
    ] = None,
    as_: AsAgent = None,
    timeout: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Recipients that have not read it by then get it dead-lettered (expired). "
            + params.DURATION_HELP,
        ),
    ] = None,
    wait_for: Annotated[
        str | None,
        typer.Option(
            "--wait",
            click_type=params.DURATION,
            help="Wait this long for the first response and print it (exit 124 if none; "
            "exit 5 at once when every delivery of the question is dead-lettered, here or on "
            "the recipient's node). " + params.DURATION_HELP,
        ),
    ] = None,
    priority: Annotated[
        str,
        typer.Option(
            "--priority",
            "-p",
            click_type=params.PRIORITY,
            help="low, normal, high, urgent, critical or 0-4.",
        ),
    ] = "normal",
    topic: Annotated[str | None, typer.Option(help="Topic (needed on pubsub channels).")] = None,
    meta: Annotated[
        list[str] | None,
        typer.Option(
            "--meta",
            metavar="KEY[=VALUE]",
            help="With --wait: wait for an answer whose metadata has KEY=VALUE, KEY!=VALUE"
            " (or no KEY), KEY (present) or !KEY (absent); repeatable, all must hold. Other"
            " answers stay unread.",
        ),
    ] = None,
) -> None:
    """Ask a question; prints its correlation id (or, with --wait, the first answer).

    Example: answer=$(acomm query team "pool size?" --as lead --wait 30s)

    Example (one agent, maybe on another node): acomm query --to bob "size?" --as lead --wait 30s

    Example (only a final answer): acomm query team "deploy?" --as lead --wait 5m --meta final
    """


@app.command()
@runs(query_run.respond)
def respond(
    inv: Invocation,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="The query's id.")],
    body: Annotated[
        str | None, typer.Argument(help="The answer; '-' or omitted: stdin.", show_default=False)
    ] = None,
    as_: AsAgent = None,
    priority: Annotated[
        str,
        typer.Option(
            "--priority",
            "-p",
            click_type=params.PRIORITY,
            help="low, normal, high, urgent, critical or 0-4.",
        ),
    ] = "normal",
) -> None:
    """Answer a query, to its asker; counts as your ack; prints the id.

    Example: acomm respond "$corr" "20 connections" --as researcher
    """


@app.command()
@listing(columns.THREAD)
@runs(query_run.thread)
def thread(
    inv: Invocation,
    correlation_id: Annotated[str, typer.Argument(metavar="CORR", help="Correlation id.")],
) -> None:
    """A query (or command) and everything correlated with it, in order.

    Example: acomm thread "$corr" --json
    """
