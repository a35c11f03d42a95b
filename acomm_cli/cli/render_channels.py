"""What `channel update` and `channel delete` print (issue 19). Kept beside render.py, whose
helpers it uses, as render_caps.py is."""

from __future__ import annotations

import sys
from typing import Any

from acomm_cli.cli.render import Output, _dump, channel_doc, note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from acomm_cli.engine.channel_admin import Deletion, Update

# Said by every update that changed something, in its output (the issue asks for it): what
# is in flight keeps what it was given when it was sent or delivered.
APPLIES = ("the new settings apply to messages sent and deliveries made from now on; "
           "deliveries already in flight keep the deadlines and expiry they have")


def update(out: Output, u: Update) -> None:
    """`channel update`: the channel with `changed`, each change as {from, to}, and the note
    saying what it applies to; for people, one line per change, then the note."""
    changes = {k: {"from": a, "to": b} for k, (a, b) in u.changes.items()}
    if out.json:
        doc: dict[str, Any] = {**channel_doc(u.channel), "changed": bool(u.changes),
                               "changes": changes, "in_flight": u.in_flight,
                               "released": u.released}
        if u.changes:
            doc["applies_to"] = APPLIES
        _dump(doc)
        return
    if not u.changes:
        note(f"note: channel {u.channel.name} already has these settings; nothing changed")
        return
    for k, (a, b) in u.changes.items():
        sys.stdout.write(f"{u.channel.name}\t{k}\t{a}\t{b}\n")
    note(f"note: {APPLIES} ({u.in_flight} in flight on {u.channel.name})")
    if u.released:
        note(f"note: {u.released} queued deliveries released (max_pending has room)")


def deletion(out: Output, d: Deletion) -> None:
    """`channel delete`: what was deleted, where its history stays, what died."""
    doc = {"id": d.channel.id, "name": d.channel.name, "deleted": True, "kept_as": d.kept_as,
           "dead_lettered": d.dead_lettered}
    if out.json:
        _dump(doc)
        return
    sys.stdout.write(f"{d.channel.name}\tdeleted\t{d.kept_as}\t{d.dead_lettered}\n")
    if d.dead_lettered:
        note(f"note: {d.dead_lettered} deliveries dead-lettered (reason channel_deleted): "
             f"acomm deadletter list --reason channel_deleted")
