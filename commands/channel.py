"""`acomm channel ...`: create, join, leave, list, show, pause, resume, drain, close, and
admin, update, delete."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli import model
from acomm_cli.cli import params
from acomm_cli.cli.commands import channel_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Create and manage channels.\n\nExample: acomm channel create team "
    "--type group --as planner",
    no_args_is_help=True,
    add_completion=False,
)

NewName = Annotated[str, typer.Argument(help="Channel name.")]
Name = Annotated[str, typer.Argument(click_type=params.CHANNEL, help="Channel name.")]


# The settings `create` takes and (all but --delivery) `update` changes.
MaxMessageSize = Annotated[
    str | None,
    typer.Option(
        click_type=params.SIZE,
        help="e.g. 65536 or 1MiB; at most 998951424 bytes (SQLite's row limit).",
    ),
]
AckTimeout = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="How long a delivery waits for its ack before it is redelivered. "
        + params.DURATION_HELP,
    ),
]
MaxRetries = Annotated[
    int | None, typer.Option(click_type=params.COUNT, help="Redeliveries before a dead letter.")
]
RetryBackoff = Annotated[
    str | None,
    typer.Option(click_type=params.DURATION, help="Base back-off. " + params.DURATION_HELP),
]
RetryJitter = Annotated[
    float | None, typer.Option(click_type=params.FRACTION, help="A fraction, e.g. 0.1.")
]
Echo = Annotated[
    bool | None, typer.Option("--echo/--no-echo", help="Senders receive their own messages.")
]
PriorityOrdering = Annotated[
    bool | None,
    typer.Option("--priority-ordering/--no-priority-ordering", help="Receive by priority first."),
]
MaxPending = Annotated[int | None, typer.Option(click_type=params.COUNT, help="0 = unlimited.")]
DedupeWindow = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="How long a --dedupe-key is remembered. " + params.DURATION_HELP,
    ),
]
RetentionCount = Annotated[
    int | None,
    typer.Option(
        click_type=params.COUNT,
        help="`compact` keeps at most this many finished messages (0 = no limit).",
    ),
]
RetentionAge = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="`compact` removes finished messages older than this. " + params.DURATION_HELP,
    ),
]
Lease = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="How long a received or in_progress ack holds a delivery before it is "
        "redelivered (default: the ack timeout). " + params.DURATION_HELP,
    ),
]
MessageTtl = Annotated[
    str | None,
    typer.Option(
        click_type=params.DURATION,
        help="Messages not read within this are dead-lettered `expired` (send --ttl "
        "overrides). " + params.DURATION_HELP,
    ),
]
RetryFailed = Annotated[
    bool | None,
    typer.Option(
        "--retry-failed/--no-retry-failed",
        help="A `failed` ack gives the delivery back for a retry (up to --max-retries).",
    ),
]

AckClockOpt = Annotated[
    str | None,
    typer.Option(
        "--ack-clock",
        click_type=params.choice((c.value for c in model.AckClock), "CLOCK"),
        help="When the ack timeout starts: `sent` (at delivery, the default) or `read` (at "
        "the recipient's first read of each delivery: an unread message is never retried).",
    ),
]
AckNotifyOpt = Annotated[
    str | None,
    typer.Option(
        "--ack-notify",
        click_type=params.choice((n.value for n in model.AckNotify), "WHICH"),
        help="Which acks also become an acknowledgment message to the sender: `all` (the "
        "default), `failures` (only `failed`) or `none`; each ack is recorded on its "
        "delivery either way.",
    ),
]


@app.command()
@runs(channel_run.create)
def create(
    inv: Invocation,
    name: NewName,
    type_: Annotated[
        str,
        typer.Option(
            "--type",
            "-t",
            click_type=params.CHANNEL_TYPE,
            help="direct, group, broadcast, pubsub or queue (each message to one member: the "
            "first receive claims it).",
        ),
    ] = "group",
    as_: AsAgent = None,
    delivery: Annotated[
        str | None,
        typer.Option(
            click_type=params.DELIVERY_MODE, help="at-most-once, at-least-once or exactly-once."
        ),
    ] = None,
    max_message_size: MaxMessageSize = None,
    ack_timeout: AckTimeout = None,
    max_retries: MaxRetries = None,
    retry_backoff: RetryBackoff = None,
    retry_jitter: RetryJitter = None,
    echo: Echo = None,
    priority_ordering: PriorityOrdering = None,
    max_pending: MaxPending = None,
    dedupe_window: DedupeWindow = None,
    retention_count: RetentionCount = None,
    retention_age: RetentionAge = None,
    lease: Lease = None,
    message_ttl: MessageTtl = None,
    retry_failed: RetryFailed = None,
    ack_clock: AckClockOpt = None,
    ack_notify: AckNotifyOpt = None,
    if_not_exists: Annotated[
        bool, typer.Option("--if-not-exists", help="Succeed if it exists with the same type.")
    ] = False,
) -> None:
    """Create a channel owned by --as; prints its id.

    Example: acomm channel create builds --type pubsub --as ci
    """


@app.command()
@runs(channel_run.join)
def join(
    inv: Invocation,
    name: Name,
    agent: Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent joining.")],
    role: Annotated[
        str, typer.Option(click_type=params.ROLE, help="member or observer.")
    ] = "member",
    as_: AsAgent = None,
) -> None:
    """Add an agent to a channel (joining twice changes nothing).

    Only the channel's owner or an admin may add agents (itself included); others exit 5
    (forbidden).

    Example: acomm channel join team reviewer --role observer --as planner
    """


@app.command()
@runs(channel_run.leave)
def leave(
    inv: Invocation,
    name: Name,
    agent: Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent leaving.")],
    as_: AsAgent = None,
) -> None:
    """Remove an agent; what still waited for it is dead-lettered (recipient_left).

    Any agent may leave (--as itself); removing another takes the owner or an admin, and
    removing an admin the owner (others exit 5, forbidden). An agent that is not in the
    channel is out already: exit 0, "changed": false.

    Example: acomm channel leave team reviewer --as planner
    """


@app.command("list")
@listing(columns.CHANNELS)
@runs(channel_run.list_)
def list_(inv: Invocation) -> None:
    """List channels.

    Example: acomm channel list --json
    """


@app.command()
@runs(channel_run.show)
def show(inv: Invocation, name: Name) -> None:
    """Show a channel: type, state, owner, configuration, participants.

    Example: acomm channel show team
    """


def _state_command(action: str, doc: str) -> None:
    def command(inv: Invocation, name: Name, as_: AsAgent = None) -> None:
        pass

    command.__doc__ = doc
    app.command(action)(runs(getattr(channel_run, action))(command))


_BY_ADMIN = "\n\nBy the channel's owner or an admin (others exit 5, forbidden)."
_state_command(
    "pause",
    "Pause sends (recipients can still read)."
    + _BY_ADMIN
    + "\n\nExample: acomm channel pause team --as planner",
)
_state_command(
    "resume",
    "Make a paused or draining channel active again."
    + _BY_ADMIN
    + "\n\nExample: acomm channel resume team --as planner",
)
_state_command(
    "drain",
    "Stop new sends while recipients read what is left."
    + _BY_ADMIN
    + "\n\nExample: acomm channel drain team --as planner",
)
_state_command(
    "close",
    "Close for good: no sends or receives; history stays."
    + _BY_ADMIN
    + "\n\nExample: acomm channel close team --as planner",
)


@app.command()
@runs(channel_run.admin)
def admin(
    inv: Invocation,
    name: Name,
    agent: Annotated[
        str, typer.Argument(click_type=params.AGENT, help="A participant of the channel.")
    ],
    revoke: Annotated[bool, typer.Option("--revoke", help="Take the admin rights back.")] = False,
    as_: AsAgent = None,
) -> None:
    """Make a participant an admin, or no longer one (the owner only).

    An admin may pause, resume, drain and close the channel, change its settings, and add
    and remove members; only the owner makes admins and deletes the channel. Leaving the
    channel ends the grant; a repeat changes nothing.

    Example: acomm channel admin team reviewer --as planner
    """


@app.command()
@runs(channel_run.update)
def update(
    inv: Invocation,
    name: Name,
    as_: AsAgent = None,
    max_message_size: MaxMessageSize = None,
    ack_timeout: AckTimeout = None,
    max_retries: MaxRetries = None,
    retry_backoff: RetryBackoff = None,
    retry_jitter: RetryJitter = None,
    echo: Echo = None,
    priority_ordering: PriorityOrdering = None,
    max_pending: MaxPending = None,
    dedupe_window: DedupeWindow = None,
    retention_count: RetentionCount = None,
    retention_age: RetentionAge = None,
    lease: Lease = None,
    message_ttl: MessageTtl = None,
    retry_failed: RetryFailed = None,
    ack_clock: AckClockOpt = None,
    ack_notify: AckNotifyOpt = None,
    index_meta: Annotated[
        list[str] | None,
        typer.Option(
            "--index-meta",
            metavar="KEY",
            help="Build an index on this metadata key over the channel's messages, for "
            "`--meta KEY=VALUE` filters within the channel (repeatable).",
        ),
    ] = None,
    drop_index_meta: Annotated[
        list[str] | None,
        typer.Option("--drop-index-meta", metavar="KEY", help="Drop that index (repeatable)."),
    ] = None,
) -> None:
    """Change a channel's settings (its owner or an admin only).

    Anyone else exits 5 (forbidden). The new settings apply to messages sent and
    deliveries made from now on: deliveries in flight keep the deadlines and expiry they
    have (their later retries use the new retry settings). A larger --max-pending lets
    queued deliveries through at once. The delivery mode and the type are fixed: create
    another channel to change them. Prints each change as
    `channel<TAB>setting<TAB>from<TAB>to`.

    Example: acomm channel update team --ack-timeout 2m --max-pending 100 --as planner
    """


@app.command()
@runs(channel_run.delete)
def delete(
    inv: Invocation,
    name: Name,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Dead-letter what is still in flight (reason channel_deleted) and delete.",
        ),
    ] = False,
    as_: AsAgent = None,
) -> None:
    """Delete a channel (its owner only); its name is free again.

    Anyone else exits 5 (forbidden). With deliveries still in flight (queued, scheduled,
    unread, or read and owed an ack) it refuses (exit 5, invalid_state, with the count)
    unless --force, which dead-letters them (reason channel_deleted) in the same
    transaction. The history stays, closed, as channel `_deleted:ID:NAME` (messages
    --channel, deadletter list). Prints `name<TAB>deleted<TAB>kept_as<TAB>dead_lettered`.

    Example: acomm channel delete team --force --as planner
    """
