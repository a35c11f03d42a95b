"""What `channel` and `subscribe` print: a channel, the listings, `update` and `delete`.

A channel's JSON document is here too: `mcp` and the gateway hand it out as the command does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.clock import iso
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, listing, note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from acomm_cli.engine.channel_admin import Deletion, Update
    from acomm_cli.model import Channel


def channel_doc(c: Channel) -> dict[str, Any]:
    cfg = c.config
    return {
        "id": c.id,
        "name": c.name,
        "type": c.type.value,
        "owner": c.owner,
        "state": c.state.value,
        "created_at": iso(c.created_at),
        "config": {
            "delivery": cfg.delivery.value,
            "max_message_size": cfg.max_message_size,
            "ack_timeout_ms": cfg.ack_timeout_ms,
            "max_retries": cfg.max_retries,
            "retry_backoff_ms": cfg.retry_backoff_ms,
            "retry_jitter": cfg.retry_jitter,
            "echo": cfg.echo,
            "priority_ordering": cfg.priority_ordering,
            "max_pending": cfg.max_pending,
            "dedupe_window_ms": cfg.dedupe_window_ms,
            "retention_count": cfg.retention_count,
            "retention_age_ms": cfg.retention_age_ms,
            # the lease a received/in_progress ack holds (the ack timeout unless
            # set), the default time to live (0: none), whether a failed ack is retried
            "lease_ms": cfg.effective_lease_ms,
            "message_ttl_ms": cfg.message_ttl_ms,
            "retry_failed": cfg.retry_failed,
            # when the ack timeout starts (sent | read), which acks message the sender
            "ack_clock": cfg.ack_clock.value,
            "ack_notify": cfg.ack_notify.value,
        },
        "participants": [
            {"agent": p.agent, "role": p.role.value, "admin": p.admin} for p in c.participants
        ],
    }


def channel(
    out: Output, c: Channel, *, id_only: bool = False, indexed_meta: list[str] | None = None
) -> None:
    """One channel; `indexed_meta` (`channel show`): its metadata keys with an index."""
    if out.json:
        doc = channel_doc(c)
        if indexed_meta is not None:
            doc["indexed_meta"] = indexed_meta
        _dump(doc)
    elif id_only:
        sys.stdout.write(f"{c.id}\n")
    else:
        cfg = channel_doc(c)["config"]
        _pairs(
            out,
            [
                ("id", c.id),
                ("name", c.name),
                ("type", c.type.value),
                ("owner", c.owner),
                ("state", c.state.value),
                *cfg.items(),
                (
                    "participants",
                    ", ".join(
                        f"{p.agent} ({p.role.value}{', admin' if p.admin else ''})"
                        for p in c.participants
                    ),
                ),
                *(
                    [("indexed_meta", ", ".join(indexed_meta) or "-")]
                    if indexed_meta is not None
                    else []
                ),
            ],
        )


def channels(out: Output, cs: Sequence[Channel]) -> None:
    if out.json:
        _dump({"channels": [channel_doc(c) for c in cs]})
        return
    listing(
        out,
        "channels",
        cols.CHANNELS,
        [
            (
                c.id,
                c.name,
                c.type.value,
                c.state.value,
                c.owner,
                c.config.delivery.value,
                len(c.participants),
            )
            for c in cs
        ],
        (channel_doc(c) for c in cs),
    )


def subscriptions(
    out: Output, channel_name: str, subs: Sequence[tuple[str, str, str | None]]
) -> None:
    """(agent, pattern, worker pool or None) of a channel; `group` only where one is set."""

    def doc(a: str, p: str, g: str | None) -> dict[str, str]:
        return {"agent": a, "pattern": p, **({} if g is None else {"group": g})}

    if out.json:
        _dump({"channel": channel_name, "subscriptions": [doc(a, p, g) for a, p, g in subs]})
        return
    listing(
        out,
        f"subscriptions on {channel_name}",
        cols.SUBSCRIPTIONS,
        [(a, p, g or "") for a, p, g in subs],
        ({"channel": channel_name, **doc(a, p, g)} for a, p, g in subs),
    )


# Said by every update that changed something, in its output (the issue asks for it): what
# is in flight keeps what it was given when it was sent or delivered.
APPLIES = (
    "the new settings apply to messages sent and deliveries made from now on; "
    "deliveries already in flight keep the deadlines and expiry they have"
)


def _setting(value: Any) -> str:
    """A setting as a person reads it: a list as its items, comma-separated (- when empty)."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value) or "-"
    return str(value)


def update(out: Output, u: Update) -> None:
    """`channel update`: the channel with `changed`, each change as {from, to}, and the note
    saying what it applies to; for people, one line per change, then the note."""
    changes = {k: {"from": a, "to": b} for k, (a, b) in u.changes.items()}
    if out.json:
        doc: dict[str, Any] = {
            **channel_doc(u.channel),
            "changed": bool(u.changes),
            "changes": changes,
            "in_flight": u.in_flight,
            "released": u.released,
        }
        if set(u.changes) - {"indexed_meta"}:
            doc["applies_to"] = APPLIES
        _dump(doc)
        return
    if not u.changes:
        note(f"note: channel {u.channel.name} already has these settings; nothing changed")
        return
    for k, (a, b) in u.changes.items():
        sys.stdout.write(f"{u.channel.name}\t{k}\t{_setting(a)}\t{_setting(b)}\n")
    if set(u.changes) - {"indexed_meta"}:  # an index changes no promise
        note(f"note: {APPLIES} ({u.in_flight} in flight on {u.channel.name})")
    if u.released:
        note(f"note: {u.released} queued deliveries released (max_pending has room)")


def deletion(out: Output, d: Deletion) -> None:
    """`channel delete`: what was deleted, where its history stays, what died."""
    doc = {
        "id": d.channel.id,
        "name": d.channel.name,
        "deleted": True,
        "kept_as": d.kept_as,
        "dead_lettered": d.dead_lettered,
    }
    if out.json:
        _dump(doc)
        return
    sys.stdout.write(f"{d.channel.name}\tdeleted\t{d.kept_as}\t{d.dead_lettered}\n")
    if d.dead_lettered:
        note(
            f"note: {d.dead_lettered} deliveries dead-lettered (reason channel_deleted): "
            f"acomm deadletter list --reason channel_deleted"
        )
