"""What `acomm schedule` and `acomm cancel` print."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli import clock
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _pairs, listing, note

TYPE_CHECKING = False
if TYPE_CHECKING:  # types only: `acomm schedule --help` does not load the engine
    from typing import Any

    from acomm_cli.engine.schedules import Cancelled, Schedule


def _when(s: Schedule) -> str:
    if s.cron is not None:
        return f"cron {s.cron}"
    assert s.every_ms is not None
    return f"every {clock.format_duration(s.every_ms)}"


def doc(s: Schedule) -> dict[str, Any]:
    return {
        "id": s.id,
        "channel": s.channel,
        "sender": s.sender,
        "content": s.content,
        "every_ms": s.every_ms,
        "cron": s.cron,
        "topic": s.request.get("topic"),
        "priority": s.request.get("priority"),
        "metadata": s.request.get("metadata") or {},
        "state": s.state,
        "next_at": clock.iso(s.next_at),
        "until": clock.iso(s.until_at),
        "max_runs": s.max_runs,
        "runs": s.runs,
        "catch_up": s.catch_up,
        "last_run_at": clock.iso(s.last_run_at),
        "last_message_id": s.last_message_id,
        "last_error": s.last_error,
        "created_at": clock.iso(s.created_at),
    }


def one(out: Output, s: Schedule) -> None:
    if out.json:
        _dump(doc(s))
        return
    _pairs(
        out,
        [
            ("schedule", s.id),
            ("channel", s.channel),
            ("as", s.sender),
            ("sends", s.content),
            ("when", _when(s)),
            ("state", s.state),
            ("next", clock.iso(s.next_at) or "-"),
            ("until", clock.iso(s.until_at) or "-"),
            ("runs", f"{s.runs}" + (f" of {s.max_runs}" if s.max_runs else "")),
            ("catch up", s.catch_up),
            ("last error", s.last_error or "-"),
        ],
    )


def many(out: Output, found: Sequence[Schedule]) -> None:
    docs = [doc(s) for s in found]
    if out.json:
        _dump({"schedules": docs})
        return
    listing(
        out,
        "schedules",
        cols.SCHEDULES,
        [
            (s.id, s.channel, s.sender, _when(s), s.state, clock.iso(s.next_at), s.runs)
            for s in found
        ],
        docs,
    )


def changed(out: Output, s: Schedule, did: bool) -> None:
    if out.json:
        _dump({**doc(s), "changed": did})
        return
    if not did:
        note(f"note: schedule {s.id} is already {s.state}")
    sys.stdout.write(f"{s.id}\t{s.state}\n")


def deleted(out: Output, s: Schedule) -> None:
    if out.json:
        _dump({**doc(s), "deleted": True})
        return
    sys.stdout.write(f"{s.id}\tdeleted\n")


def cancelled(out: Output, c: Cancelled) -> None:
    if out.json:
        _dump(
            {
                "id": c.message_id,
                "channel": c.channel,
                "cancelled": True,
                "dead_lettered": c.dead_lettered,
            }
        )
        return
    sys.stdout.write(f"{c.message_id}\tcancelled\t{c.dead_lettered}\n")
