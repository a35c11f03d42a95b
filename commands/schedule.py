"""`acomm schedule create|list|show|pause|resume|delete`: recurring sends, each occurrence a
normal message sent by `tick` (or by a reader of the channel) at its time."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import schedule_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Recurring sends: every DURATION or on a cron expression (UTC)."
    "\n\nEach occurrence is a normal message, sent by `acomm tick` (or by a reader of the "
    "channel) when it falls due."
    "\n\nExample: acomm schedule create ops heartbeat --every 5m --as monitor",
    no_args_is_help=True,
    add_completion=False,
)

ScheduleId = Annotated[int, typer.Argument(metavar="ID", help="The schedule's id.")]


@app.command()
@runs(schedule_run.create)
def create(
    inv: Invocation,
    channel: Annotated[
        str,
        typer.Argument(metavar="CHANNEL", click_type=params.CHANNEL, help="Where it sends."),
    ],
    body: Annotated[str, typer.Argument(metavar="BODY", help="The message each occurrence sends.")],
    every: Annotated[
        str | None,
        typer.Option(click_type=params.DURATION, help="Send every DURATION, e.g. 15m or 1h."),
    ] = None,
    cron: Annotated[
        str | None,
        typer.Option(
            metavar="EXPR", help="Send when this cron expression matches (five fields, UTC)."
        ),
    ] = None,
    start: Annotated[
        str | None,
        typer.Option(
            click_type=params.TIME,
            help="The first occurrence (default: one --every from now, or the cron's next).",
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(click_type=params.TIME, help="No occurrence after this time."),
    ] = None,
    max_runs: Annotated[
        int | None, typer.Option(click_type=params.COUNT, help="Stop after N occurrences.")
    ] = None,
    catch_up: Annotated[
        str,
        typer.Option(
            metavar="all|last",
            help="After a late tick: send every missed occurrence once (all), or the latest.",
        ),
    ] = "all",
    topic: Annotated[str | None, typer.Option(help="The topic (pub/sub channels).")] = None,
    priority: Annotated[
        str | None, typer.Option(click_type=params.PRIORITY, help="The messages' priority.")
    ] = None,
    meta: Annotated[
        list[str] | None,
        typer.Option("--meta", metavar="KEY=VALUE", help="k=v metadata (repeatable)."),
    ] = None,
    as_: params.AsAgent = None,
) -> None:
    """Create a schedule that sends BODY to CHANNEL as the acting agent.

    One of --every or --cron. A schedule whose first occurrence comes after --until is
    refused (exit 3). Each message carries metadata `schedule` (the id) and `occurrence`
    (its time), and a dedupe key per occurrence: none is ever sent twice.

    Prints the schedule as `schedule show` does.

    Example: acomm schedule create ops "daily report" --cron '0 9 * * MON-FRI' --as reporter
    """


@app.command("list")
@listing(columns.SCHEDULES)
@runs(schedule_run.list_)
def list_(inv: Invocation, channel: params.ChannelOpt = None) -> None:
    """Every schedule, with its next occurrence and how many it has sent.

    Example: acomm schedule list --channel ops
    """


@app.command()
@runs(schedule_run.show)
def show(inv: Invocation, schedule_id: ScheduleId) -> None:
    """One schedule: what it sends, when next, and its last error.

    Example: acomm schedule show 3
    """


def _state_command(verb: str, doc: str) -> None:
    def command(inv: Invocation, schedule_id: ScheduleId, as_: params.AsAgent = None) -> None:
        pass

    command.__doc__ = doc
    app.command(verb)(runs(getattr(schedule_run, verb))(command))


_state_command(
    "pause",
    "Pause a schedule (its sender only): no occurrence is sent until it resumes."
    "\n\nPrints `id<TAB>state`."
    "\n\nExample: acomm schedule pause 3 --as reporter",
)
_state_command(
    "resume",
    "Resume a paused schedule from its next occurrence after now."
    "\n\nWhat fell due while it was paused is not sent. Prints `id<TAB>state`."
    "\n\nExample: acomm schedule resume 3 --as reporter",
)


@app.command()
@runs(schedule_run.delete)
def delete(inv: Invocation, schedule_id: ScheduleId, as_: params.AsAgent = None) -> None:
    """Delete a schedule (its sender only); the messages it sent stay.

    Prints `id<TAB>deleted`.

    Example: acomm schedule delete 3 --as reporter
    """
