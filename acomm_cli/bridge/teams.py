"""Claude Code's native team inboxes (docs/spec/mailbox-pipeline.txt, FR-3.4):
{teams_dir}/{team}/inboxes/{name}.json, a JSON array acomm appends to, sets entries read in, and
prunes."""

from __future__ import annotations

import json
import os
import stat
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from acomm_cli import model
from acomm_cli.bridge.paths import (
    MAX_TEAM_INBOX_BYTES,
    parse_json,
    read_regular,
    split_team,
    under,
    write_atomic,
)
from acomm_cli.clock import iso
from acomm_cli.errors import ValidationFailed

# Writers hold the inboxes directory's lock for milliseconds; one held longer (a stray
# process of whoever owns the directory) fails this write, which is recorded and retried.
LOCK_WAIT_S = 5.0


def team_entry(row: tuple[Any, ...]) -> dict[str, Any]:
    """A Claude Code native team inbox entry (with the message's `event`, when it has one)."""
    entry: dict[str, Any] = {
        "from": row[3],
        "text": row[5],
        "timestamp": iso(row[10]),
        "read": False,
        "messageId": str(row[0]),
    }
    from acomm_cli.bridge.mirror import event_doc  # mirror imports this module

    ev = event_doc(row)
    if ev is not None:  # the preview lets an agent triage without reading the whole text
        entry["event"] = ev
    return entry


def update(
    teams_dir: Path,
    recipient: str,
    now: int,
    ttl_ms: int,
    *,
    add: list[dict[str, Any]] | None = None,
    read: set[str] | None = None,
    prune: bool = False,
) -> tuple[set[str], int]:
    """Under the lock of the inboxes directory: append `add` (or make an existing entry of the
    same messageId unread again), set `read: true` on entries of `read`, prune read entries
    past the TTL.
    Returns (messageIds the file shows read, entries pruned). Every other entry and field
    stays as it was; a file that is not a JSON array is never overwritten (ValueError)."""
    model.agent_id(recipient)
    name, team = split_team(recipient)
    d = under(teams_dir, [team, "inboxes"], create=add is not None)
    # The lock is the directory's own (flock on its descriptor): no lock file is left beside
    # the inboxes. Not the inbox file, which the atomic rename below replaces by a new inode.
    lock = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        _take(lock, d)
        _drop_legacy_lock(d / f"{name}.lock")
        path = d / f"{name}.json"
        try:
            raw = read_regular(path, MAX_TEAM_INBOX_BYTES)
            entries: Any = [] if raw is None or not raw.strip() else parse_json(raw)
        except ValidationFailed as exc:  # UnsafePath included: the same class, with the path
            raise type(exc)(f"{path}: {exc.message}") from None
        if not isinstance(entries, list):
            raise ValidationFailed(f"{path} is not a JSON array")
        changed = False  # an existing entry changed: the array is written out again
        appended: list[dict[str, Any]] = []
        index = {e.get("messageId"): e for e in entries if type(e) is dict}
        for entry in add or ():
            existing = index.get(entry["messageId"])
            if existing is None:
                appended.append(entry)
                index[entry["messageId"]] = entry
            elif existing.get("read") is not False:
                existing["read"] = False
                changed = True
        for mid in read or ():
            e = index.get(mid)
            if e is not None and e.get("read") is not True:
                e["read"] = True
                changed = True
        seen_read = (
            {k for k, e in index.items() if type(k) is str and e.get("read") is True}
            if prune
            else set()
        )
        pruned = 0
        if prune:
            kept = [e for e in entries if not _expired(e, now, ttl_ms)]
            pruned = len(entries) - len(kept)
            if pruned:
                entries, changed = kept, True
        if changed:
            write_atomic(
                d, f"{name}.json", json.dumps(entries + appended, ensure_ascii=False).encode()
            )
        elif appended:  # only appends: the existing bytes stay exactly as they were
            body = raw.rstrip() if raw is not None and raw.strip() else b"[]"
            extra = ", ".join(json.dumps(e, ensure_ascii=False) for e in appended).encode()
            write_atomic(
                d, f"{name}.json", body[:-1].rstrip() + (b", " if entries else b"") + extra + b"]"
            )
        return seen_read, pruned
    finally:
        os.close(lock)


def inbox_path(teams_dir: Path, recipient: str) -> Path:
    """Where agent@team's native inbox is (for reports; `update` checks every level)."""
    name, team = split_team(recipient)
    return teams_dir / team / "inboxes" / f"{name}.json"


def _take(lock: int, directory: Path) -> None:
    """The directory's lock, waiting LOCK_WAIT_S at most (TimeoutError past it)."""
    import fcntl

    end = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= end:
                raise TimeoutError(f"{directory} stayed locked for {LOCK_WAIT_S:g} s") from None
            time.sleep(0.01)


def _drop_legacy_lock(path: Path) -> None:
    """Older versions locked `{name}.lock`, an empty file they left behind: remove
    it (only an empty regular file: anything else is not one of ours)."""
    try:
        st = os.lstat(path)
        if stat.S_ISREG(st.st_mode) and st.st_size == 0:
            os.unlink(path)
    except OSError:
        pass  # absent (the usual case), or not ours to remove


def _expired(entry: Any, now: int, ttl_ms: int) -> bool:
    """Read, and older than the TTL (`bridge.read_ttl`); unread entries never expire."""
    if not isinstance(entry, dict) or entry.get("read") is not True:
        return False
    try:
        ts = datetime.fromisoformat(str(entry.get("timestamp")))
    except ValueError:
        return False
    if ts.tzinfo is None:
        return False
    return now - int(ts.timestamp() * 1000) > ttl_ms
