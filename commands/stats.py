"""`acomm stats`: per-agent and per-channel counts, oldest unread age, store size."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import stats_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(add_completion=False)


@app.command()
@listing(columns.STATS)
@runs(stats_run.stats)
def stats(
    inv: Invocation,
    as_: Annotated[
        str | None,
        typer.Option(
            "--as",
            click_type=params.AGENT,
            help="Only this agent, and the channels it takes part in (not read from "
            "$ACOMM_AGENT: without --as every agent is shown).",
        ),
    ] = None,
) -> None:
    """Counts per agent and channel, tasks, incidents, and the store's size.

    Deliveries per agent (total, unread, awaiting ack, oldest unread age in seconds,
    dead letters, and when the agent last acted through acomm: last_seen_at) and per
    channel (pending, queued, dead letters), with the store's size.

    With the mailbox bridge, `queues` lists the agents with inbox files still pending (count
    and oldest file's age), and `bridge` the failed mirror writes and removals awaiting a retry
    (`mirror_backlog`) and the response files left in place (`bad_files`: bad, refused for
    now, or ingested but not deleted yet).

    `tasks` counts tasks by state (every state named; with --as, the tasks the agent created
    or owns) and `incidents` the capability review incidents, open and resolved (store-wide).

    Unread is what `receive` would return: unread deliveries on channels not closed, counted
    after the timers already due (retries, scheduled sends), as the next `receive` or `tick`
    would apply them (and tasks past their ETA as overdue, with their incidents). stats
    itself never changes the store.

    Example: acomm stats --json | jq '.agents[] | select(.unread > 0)'
    """
