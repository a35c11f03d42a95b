"""What `acomm deadletter ...` (alias `dead-letters`) do, without typer: `commands/deadletter.py`
declares them (options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them
directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation
from acomm_cli.errors import UsageError
from acomm_cli.output import render, render_deadletters

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import deadletters
else:
    deadletters = lazy.module("acomm_cli.engine.deadletters")


def list_(
    inv: Invocation,
    channel: str | None,
    recipient: str | None,
    reason: str | None,
    limit: int,
    offset: int,
) -> None:
    with inv.store(write=False) as conn:
        items, total = deadletters.list_dead_letters(
            conn, channel=channel, recipient=recipient, reason=reason, limit=limit, offset=offset
        )
    render_deadletters.dead_letters(inv.output(), items, total)


def show(
    inv: Invocation,
    message_id: int,
    recipient: str | None,
) -> None:
    with inv.store(write=False) as conn:
        records = deadletters.records(conn, message_id, recipient)
    render_deadletters.dead_letter_records(inv.output(), records)


def replay(
    inv: Invocation,
    message_id: int | None,
    recipient: str | None,
    all_: bool,
    channel: str | None,
    reason: str | None,
    since: str | None,
    dry_run: bool,
) -> None:
    if all_ and message_id is not None:
        raise UsageError(
            "message: give a message id or --all, not both", field="message", value=message_id
        )
    if not all_:
        if message_id is None:
            raise UsageError(
                "message: give a message id, or --all to replay every dead "
                "letter the filters match",
                field="message",
            )
        for name, given in (
            ("channel", channel),
            ("reason", reason),
            ("since", since),
            ("dry_run", dry_run or None),
        ):
            if given is not None:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{name}: {flag} goes with --all", field=name)
        with inv.store(write=True) as conn:
            items = deadletters.replay(conn, message_id, recipient, clock.now_ms())
        render_deadletters.dead_letters(inv.output(), items, len(items))
        return
    now = clock.now_ms()
    lo = clock.parse_time(since, "since", now) if since is not None else None
    with inv.store(write=True) as conn:
        result = deadletters.redrive(
            conn,
            channel=channel,
            recipient=recipient,
            reason=reason,
            since=lo,
            now=now,
            dry_run=dry_run,
        )
    render_deadletters.redrive(inv.output(), result)


def discard(
    inv: Invocation,
    message_id: int,
    recipient: str | None,
) -> None:
    with inv.store(write=True) as conn:
        n = deadletters.discard(conn, message_id, recipient)
    render.ok(inv.output(), {"discarded": n}, str(n))


def purge(
    inv: Invocation,
    older_than: str,
) -> None:
    with inv.store(write=True) as conn:
        n = deadletters.purge(conn, clock.parse_duration(older_than, "older_than"), clock.now_ms())
    render.ok(inv.output(), {"purged": n}, str(n))
