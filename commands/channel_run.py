"""What the `acomm channel` subcommands do, without typer: `commands/channel.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, identity
from acomm_cli.output import render, render_channels

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from acomm_cli.engine import channel_admin, channels
else:
    channel_admin = lazy.module("acomm_cli.engine.channel_admin")
    channels = lazy.module("acomm_cli.engine.channels")


def _duration(value: str | None, name: str) -> int | None:
    return clock.parse_duration(value, name) if value is not None else None


def _settings(
    *,
    max_message_size: str | None,
    ack_timeout: str | None,
    max_retries: int | None,
    retry_backoff: str | None,
    retry_jitter: float | None,
    echo: bool | None,
    priority_ordering: bool | None,
    max_pending: int | None,
    dedupe_window: str | None,
    retention_count: int | None,
    retention_age: str | None,
    lease: str | None,
    message_ttl: str | None,
    retry_failed: bool | None,
    ack_clock: str | None,
    ack_notify: str | None,
) -> dict[str, Any]:
    """The options as ChannelConfig fields (None: not given)."""
    return {
        "max_message_size": clock.parse_size(max_message_size, "max_message_size")
        if max_message_size is not None
        else None,
        "ack_timeout_ms": _duration(ack_timeout, "ack_timeout"),
        "max_retries": max_retries,
        "retry_backoff_ms": _duration(retry_backoff, "retry_backoff"),
        "retry_jitter": retry_jitter,
        "echo": echo,
        "priority_ordering": priority_ordering,
        "max_pending": max_pending,
        "dedupe_window_ms": _duration(dedupe_window, "dedupe_window"),
        "retention_count": retention_count,
        "retention_age_ms": _duration(retention_age, "retention_age"),
        "lease_ms": _duration(lease, "lease"),
        "message_ttl_ms": _duration(message_ttl, "message_ttl"),
        "retry_failed": retry_failed,
        "ack_clock": ack_clock,
        "ack_notify": ack_notify,
    }


def create(
    inv: Invocation,
    name: str,
    type_: str = "group",
    as_: str | None = None,
    delivery: str | None = None,
    max_message_size: str | None = None,
    ack_timeout: str | None = None,
    max_retries: int | None = None,
    retry_backoff: str | None = None,
    retry_jitter: float | None = None,
    echo: bool | None = None,
    priority_ordering: bool | None = None,
    max_pending: int | None = None,
    dedupe_window: str | None = None,
    retention_count: int | None = None,
    retention_age: str | None = None,
    lease: str | None = None,
    message_ttl: str | None = None,
    retry_failed: bool | None = None,
    ack_clock: str | None = None,
    ack_notify: str | None = None,
    if_not_exists: bool = False,
) -> None:
    owner = identity(as_)
    cfg = channels.channel_config(
        delivery=delivery,
        **_settings(
            max_message_size=max_message_size,
            ack_timeout=ack_timeout,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            retry_jitter=retry_jitter,
            echo=echo,
            priority_ordering=priority_ordering,
            max_pending=max_pending,
            dedupe_window=dedupe_window,
            retention_count=retention_count,
            retention_age=retention_age,
            lease=lease,
            message_ttl=message_ttl,
            retry_failed=retry_failed,
            ack_clock=ack_clock,
            ack_notify=ack_notify,
        ),
    )
    with inv.store(write=True, create=True) as conn:
        ch = channels.create_channel(
            conn, name, type_, owner, cfg, clock.now_ms(), if_not_exists=if_not_exists
        )
    render_channels.channel(inv.output(), ch, id_only=True)


def join(
    inv: Invocation, name: str, agent: str, role: str = "member", as_: str | None = None
) -> None:
    by = identity(as_)
    with inv.store(write=True) as conn:
        r = channels.join_channel(conn, name, agent, role, clock.now_ms(), by=by)
    render.change(
        inv.output(),
        render_channels.channel_doc(r.channel),
        r.changed,
        f"{agent} is already in channel {name} (as {r.channel.role_of(agent)})",
    )


def leave(inv: Invocation, name: str, agent: str, as_: str | None = None) -> None:
    by = identity(as_)
    with inv.store(write=True) as conn:
        r = channels.leave_channel(conn, name, agent, clock.now_ms(), by=by)
    render.change(
        inv.output(),
        render_channels.channel_doc(r.channel),
        r.changed,
        f"{agent} is not in channel {name}; nothing to leave",
    )


def list_(inv: Invocation) -> None:
    with inv.store(write=False) as conn:
        cs = channels.list_channels(conn)
    render_channels.channels(inv.output(), cs)


def show(inv: Invocation, name: str) -> None:
    with inv.store(write=False) as conn:
        ch = channels.get_channel(conn, name)
        indexed = channel_admin.indexed_meta(conn, ch.id)
    render_channels.channel(inv.output(), ch, indexed_meta=indexed)


def _state_command(action: str) -> Callable[..., None]:
    """The body of `channel pause|resume|drain|close`: one change of state each."""

    def command(inv: Invocation, name: str, as_: str | None = None) -> None:
        by = identity(as_)
        with inv.store(write=True) as conn:
            r = channels.change_channel_state(conn, name, action, by=by)
        ch = r.channel
        render.change(
            inv.output(),
            render_channels.channel_doc(ch),
            r.changed,
            f"channel {ch.name} is already {ch.state.value}",
            f"{ch.name}\t{ch.state.value}",
        )

    # the fast path finds a body by its module and name
    command.__name__ = command.__qualname__ = action
    return command


pause = _state_command("pause")
resume = _state_command("resume")
drain = _state_command("drain")
close = _state_command("close")


def admin(
    inv: Invocation, name: str, agent: str, revoke: bool = False, as_: str | None = None
) -> None:
    by = identity(as_)
    with inv.store(write=True) as conn:
        r = channel_admin.set_admin(conn, name, agent, by=by, admin=not revoke)
    render.change(
        inv.output(),
        render_channels.channel_doc(r.channel),
        r.changed,
        f"{agent} is {'not' if revoke else 'already'} an admin of channel {name}",
        f"{name}\t{agent}\t{'member' if revoke else 'admin'}",
    )


def update(
    inv: Invocation,
    name: str,
    as_: str | None = None,
    max_message_size: str | None = None,
    ack_timeout: str | None = None,
    max_retries: int | None = None,
    retry_backoff: str | None = None,
    retry_jitter: float | None = None,
    echo: bool | None = None,
    priority_ordering: bool | None = None,
    max_pending: int | None = None,
    dedupe_window: str | None = None,
    retention_count: int | None = None,
    retention_age: str | None = None,
    lease: str | None = None,
    message_ttl: str | None = None,
    retry_failed: bool | None = None,
    ack_clock: str | None = None,
    ack_notify: str | None = None,
    index_meta: list[str] | None = None,
    drop_index_meta: list[str] | None = None,
) -> None:
    by = identity(as_)
    settings = _settings(
        max_message_size=max_message_size,
        ack_timeout=ack_timeout,
        max_retries=max_retries,
        retry_backoff=retry_backoff,
        retry_jitter=retry_jitter,
        echo=echo,
        priority_ordering=priority_ordering,
        max_pending=max_pending,
        dedupe_window=dedupe_window,
        retention_count=retention_count,
        retention_age=retention_age,
        lease=lease,
        message_ttl=message_ttl,
        retry_failed=retry_failed,
        ack_clock=ack_clock,
        ack_notify=ack_notify,
    )
    with inv.store(write=True) as conn:
        u = channel_admin.update_channel(
            conn,
            name,
            clock.now_ms(),
            by=by,
            index_meta=tuple(index_meta or ()),
            drop_index_meta=tuple(drop_index_meta or ()),
            **settings,
        )
    render_channels.update(inv.output(), u)


def delete(inv: Invocation, name: str, force: bool = False, as_: str | None = None) -> None:
    by = identity(as_)
    with inv.store(write=True) as conn:
        d = channel_admin.delete_channel(conn, name, clock.now_ms(), by=by, force=force)
    render_channels.deletion(inv.output(), d)
