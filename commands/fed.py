"""`acomm fed pull`: read peers' outboxes and deliver what they hold for this node;
`acomm fed status`: how each peer's last pull went, and the events refused from peers;
`acomm fed migrate --to`: move this node's outbox onto NATS JetStream."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import fed_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="Federation: exchange with the other nodes.\n\nExample: acomm fed pull --json",
    no_args_is_help=True,
    add_completion=False,
)


@app.command()
@runs(fed_run.pull)
def pull(
    inv: Invocation,
    peer: Annotated[
        str | None,
        typer.Option(metavar="NODE", help="Only this peer (an unreachable one is then exit 7)."),
    ] = None,
    max_pages: Annotated[
        int,
        typer.Option(click_type=params.COUNT, help="Pages read per peer at most (at least 1)."),
    ] = 10,
    wait: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="Long-poll an http peer that has nothing new, up to this long (at most 30s). "
            + params.DURATION_HELP,
        ),
    ] = "0s",
) -> None:
    """Read the peers' outboxes after this node's cursors and deliver.

    One transaction per page: cursor, inbound record, delivery, `ack accepted`. A peer
    that is down, refuses, or has not answered in full within federation.peer_deadline
    (default 30s, plus --wait) is skipped for this pass with a note on stderr; the
    others are pulled, the counts printed, and the command then exits 7
    (peer_unreachable, naming the peer and the reason). Each event
    is checked first: a malformed one (or one the peer may not send) is refused alone,
    recorded (`fed status`) and passed; the pull goes on.
    Prints {read, delivered, duplicates, acks, replies, dead_lettered, tasks, rejected,
    unreachable}.

    Example: acomm fed pull --peer node-b --json
    """


@app.command()
@listing(columns.FED_STATUS)
@runs(fed_run.status)
def status(
    inv: Invocation,
    latest: Annotated[
        int,
        typer.Option(click_type=params.COUNT, help="Refused events listed at most (0 to 1000)."),
    ] = 5,
) -> None:
    """How each peer's last pull went, and the events refused from peers.

    A peer's state is `ok`, `peer_unreachable` (its last pull failed: down, refusing, or
    past federation.peer_deadline; the reason in `error`) or `never_pulled`. An event read
    from a peer that is malformed, or that the peer may not send, is refused: recorded with
    its reason, passed by the cursor, never stopping the pull.
    Prints {node_id, peers: [{node, url, state, online, cursor, head, lag, pulled_at,
    error, rejected}], rejected: {count, latest: [{node, seq, event_id, kind, reason,
    rejected_at}]}}.

    Example: acomm fed status --json
    """


@app.command()
@runs(fed_run.migrate)
def migrate(
    inv: Invocation,
    to: Annotated[
        str, typer.Option(metavar="URL", help="The NATS server: nats://HOST:PORT (or tls://...).")
    ],
    nats_creds: Annotated[
        str | None,
        typer.Option(
            "--nats-creds",
            metavar="FILE",
            help="A NATS credentials file ($ACOMM_NATS_CREDS wins when set).",
        ),
    ] = None,
) -> None:
    """Move this node's outbox onto NATS JetStream, losing no event.

    Publishes the whole outbox into the stream ACOMM_<node> in order (stream seq =
    outbox seq, so every peer's cursor carries over) and records the switch. Restart
    `gateway serve` afterwards: the room then advertises the NATS url and peers read
    there. NATS unreachable: exit 7, nothing changed.
    Prints {node_id, from, to, stream, subject, published, cursor_map}.

    Example: acomm fed migrate --to nats://nats.internal:4222 --json
    """


@app.callback()
def fed_group() -> None:
    """Federation: exchange with the other nodes."""
