"""`acomm task create|accept|update|complete|fail|list|show`: delegated work."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import task_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Tasks: work one agent delegates to another, with an ETA and progress."
    '\n\nExample: acomm task create --to builder "run the tests" --as lead',
    no_args_is_help=True,
    add_completion=False,
)

TaskId = Annotated[
    str, typer.Argument(metavar="ID", help="The task id (its message's id here), or its global id.")
]


@app.command()
@runs(task_run.create)
def create(
    inv: Invocation,
    body: Annotated[
        str | None, typer.Argument(help="What to do; '-' or omitted: stdin.", show_default=False)
    ] = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            click_type=params.AGENT,
            help="The agent that owns the task (with --capability: its owner, or omitted).",
        ),
    ] = None,
    capability: Annotated[
        str | None,
        typer.Option(
            help="A published capability: the task goes to its owner, with its default ETA."
        ),
    ] = None,
    eta_required: Annotated[
        bool, typer.Option("--eta-required", help="The owner must accept with an ETA (--eta).")
    ] = False,
    as_: AsAgent = None,
) -> None:
    """Delegate a task to an agent; prints its id.

    The task travels as a command message on your direct channel with --to AGENT, or
    with the owner of --capability ID (unknown or unpublished: exit 5).

    Example: acomm task create --to builder "run the tests" --eta-required --as lead
    """


@app.command()
@runs(task_run.accept)
def accept(
    inv: Invocation,
    task_id: TaskId,
    eta: Annotated[
        str | None,
        typer.Option(
            click_type=params.ETA,
            help="When it will be done: a duration from now or a time. "
            + params.DURATION_HELP
            + " "
            + params.TIME_HELP,
        ),
    ] = None,
    plan: Annotated[str | None, typer.Option(help="How, in a sentence, for the creator.")] = None,
    as_: AsAgent = None,
) -> None:
    """Take a task on (its owner only), with an ETA.

    Acknowledges the task's message in_progress, the ETA in the acknowledgement.

    Example: acomm task accept 7 --eta 10m --plan "unit tests first" --as builder
    """


@app.command()
@runs(task_run.update)
def update(
    inv: Invocation,
    task_id: TaskId,
    progress: Annotated[
        int | None, typer.Option(click_type=params.COUNT, help="Percent done, 0-100.")
    ] = None,
    note: Annotated[str | None, typer.Option(help="What happened, for the creator.")] = None,
    as_: AsAgent = None,
) -> None:
    """Report progress on an accepted task (its owner only).

    Example: acomm task update 7 --progress 40 --note "half the suites pass" --as builder
    """


@app.command()
@runs(task_run.complete)
def complete(
    inv: Invocation,
    task_id: TaskId,
    body: Annotated[
        str | None,
        typer.Argument(
            help="The result, sent to the creator as a response; '-': stdin.", show_default=False
        ),
    ] = None,
    as_: AsAgent = None,
) -> None:
    """Finish a task (its owner only): the result goes to the creator as a response.

    Example: acomm task complete 7 "all 412 tests pass" --as builder
    """


@app.command()
@runs(task_run.fail)
def fail(
    inv: Invocation,
    task_id: TaskId,
    reason: Annotated[str | None, typer.Option(help="Why, for the creator (required).")] = None,
    as_: AsAgent = None,
) -> None:
    """Give a task up, or decline it (its owner only); acknowledges it failed.

    Example: acomm task fail 7 --reason "the build machine is down" --as builder
    """


@app.command("list")
@listing(columns.TASKS)
@runs(task_run.list_)
def list_(
    inv: Invocation,
    as_: Annotated[
        str | None,
        typer.Option(
            "--as",
            click_type=params.AGENT,
            help="Only tasks this agent created or owns (not read from ACOMM_AGENT).",
        ),
    ] = None,
    state: Annotated[
        str | None, typer.Option(click_type=params.TASK_STATE, help="Only tasks in this state.")
    ] = None,
    limit: Annotated[
        int, typer.Option(click_type=params.COUNT, help="At most this many tasks.")
    ] = 100,
    offset: Annotated[int, typer.Option(click_type=params.COUNT, help="Skip this many first.")] = 0,
) -> None:
    """Tasks, newest first.

    Prints {tasks: [...], total_count, has_more} with --json.

    Example: acomm task list --as builder --state accepted --json
    """


@app.command()
@runs(task_run.show)
def show(inv: Invocation, task_id: TaskId) -> None:
    """One task and its history.

    Prints {id, capability, from, to, state, eta_at, progress, history: [{at, event, by,
    progress, note, eta_at, ...}], ...} with --json.

    Example: acomm task show 7 --json
    """


@app.callback()
def task_group() -> None:
    """Tasks: work one agent delegates to another, with an ETA and progress."""
