"""Mirrors: each unread delivery as an inbox file and, for agent@team, a team inbox entry
(docs/spec/mailbox-pipeline.txt, FR-3.3 and FR-3.4); taking them away once the delivery is no
longer unread; and what agents read through their files (a deleted inbox file, a team entry set
`read: true`).

Mirrors are written after the store committed: a failed write or removal never undoes a
command; it is recorded in `bridge_mirrors` and retried with a back-off."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

from acomm_cli import model
from acomm_cli.bridge import teams
from acomm_cli.bridge.paths import under, write_atomic
from acomm_cli.bridge.settings import BridgeConfig, SyncResult
from acomm_cli.clock import iso
from acomm_cli.engine import attachments, channels, remoteblobs
from acomm_cli.errors import AttachmentCorrupt, UnsafePath, ValidationFailed
from acomm_cli.model import Attachment
from acomm_cli.store import acks, write
from acomm_cli.store import bridge as q
from acomm_cli.store import engagement as notices

INBOX, TEAM = "inbox", "team"
HOW = {INBOX: "bridge", TEAM: "team_inbox"}  # a mirror's kind as a kept notice says it
FILES_SUFFIX = ".files"  # {inbox_dir}/{agent}/{message_id}.files/NAME: a message's files
RETRY_MAX_MS = 60_000  # a failed mirror is retried after 1 s, 2 s, 4 s ... at most a minute


def inbox_doc(row: tuple[Any, ...]) -> dict[str, Any]:
    """The fields of an inbox file (docs/spec/mailbox-pipeline.txt, FR-3.3), plus channel,
    topic, correlation_id and priority."""
    mid, recipient, channel, sender, mtype, content, topic, prio, corr, meta, created = row[:11]
    return {
        "type": "message",
        "from": sender,
        "content": content,
        "message_type": mtype,
        "metadata": json.loads(meta) if meta else {},
        "id": mid,
        "session_id": recipient,
        "timestamp": iso(created),
        "channel": channel,
        "topic": topic,
        "correlation_id": corr,
        "priority": model.Priority(prio).name.lower(),
        "event": event_doc(row),
    }


def _mirror_files(
    conn: sqlite3.Connection, inbox: Path, mid: int, files: list[Attachment]
) -> list[dict[str, Any]]:
    """A message's files as {inbox}/{mid}.files/NAME (0600, in a 0700 directory), each
    checked against its hash; their entries for the inbox file."""
    d = under(inbox, [f"{mid}{FILES_SUFFIX}"], create=True)
    out = []
    for a in files:
        data = remoteblobs.local_data(conn, a)
        if data is not None:
            write_atomic(d, a.name, data)
        out.append(
            {
                "name": a.name,
                "sha256": a.sha256,
                "size": a.size,
                "content_type": a.content_type,
                # a file another node holds, not fetched yet: `acomm attachment get` fetches it
                "path": None if data is None else str(d / a.name),
            }
        )
    return out


def _remove_files(inbox: Path, mid: int) -> None:
    """Take a message's mirrored files away with its inbox file (a real directory only: a
    symbolic link in its place is left alone)."""
    d = inbox / f"{mid}{FILES_SUFFIX}"
    try:
        st = os.lstat(d)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    for entry in os.scandir(d):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(entry.path)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(d)


def event_doc(row: tuple[Any, ...]) -> dict[str, Any] | None:
    """The message's `event` document (as in `receive --json`), None when it carries none."""
    if len(row) <= 14 or row[14] is None:
        return None
    from acomm_cli.engine import events

    return events.doc(model.Event(*row[14:27]))


def _failure(
    prev_attempts: int | None, exc: BaseException, now: int, state: str = "failed", doing: str = ""
) -> tuple[Any, ...]:
    attempts = (prev_attempts or 0) + 1
    delay = min(RETRY_MAX_MS, 1000 * 2 ** min(attempts - 1, 16))
    return (state, attempts, f"{doing}{type(exc).__name__}: {exc}"[:500], now + delay)


def _quiet(row: tuple[Any, ...]) -> bool:
    """Whether the message's event writes no notification to this recipient (the default
    trigger rules' `write notification`: a self-action, or an event type whose line says
    no): then no mirror tells the recipient of it. The delivery stays unread in the store,
    for `receive` and for dispatch's own rules."""
    if len(row) <= 14 or row[14] is None:
        return False
    from acomm_cli.engine import eventrules

    facts = eventrules.Facts(row[14], row[15], row[17], row[18], row[19])
    return eventrules.decide(facts, row[1]).quiet


def _to_write(
    conn: sqlite3.Connection,
    kind: str,
    now: int,
    team_only: bool,
    after: int | None,
    queued: list[tuple[int, str]],
) -> list[tuple[Any, ...]]:
    """Full (`after` None): every unread delivery lacking a mirror. Otherwise those of the
    messages above the watermark plus those the trigger queued as made unread. Never one
    whose event writes no notification to its recipient (`_quiet`)."""
    if after is None:
        return [r for r in q.to_write(conn, kind, now, team_only=team_only) if not _quiet(r)]
    rows = q.to_write(conn, kind, now, team_only=team_only, min_message_id=after)
    if queued:
        seen = {(r[0], r[1]) for r in rows}
        rows += [
            r
            for r in q.to_write(conn, kind, now, team_only=team_only, made_unread=True)
            if (r[0], r[1]) not in seen
        ]
        rows.sort(key=lambda r: (r[0], r[1]))
    return [r for r in rows if not _quiet(r)]


def mirror(
    conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult, after: int | None
) -> None:
    # Taken before the queries: only rows seen here are drained, so a delivery another
    # process queues meanwhile stays queued for its own after-write sync.
    queued = q.made_unread(conn)
    records: list[tuple[Any, ...]] = []
    if cfg.inbox_dir is not None:
        rows = _to_write(conn, INBOX, now, False, after, queued)
        files = attachments.files_of(conn, sorted({r[0] for r in rows})) if rows else {}
        for row in rows:
            mid, recipient = row[0], row[1]
            try:
                model.agent_id(recipient)
                d = under(cfg.inbox_dir, [recipient], create=True)
                doc = inbox_doc(row)
                if mid in files:  # the files first: the inbox file then names them
                    doc["attachments"] = _mirror_files(conn, d, mid, files[mid])
                write_atomic(d, f"{mid}.json", json.dumps(doc, ensure_ascii=False).encode())
            except (OSError, UnsafePath, ValidationFailed, AttachmentCorrupt) as exc:
                records.append((mid, recipient, INBOX, *_failure(row[13], exc, now), now))
                result.failed += 1
            else:
                records.append((mid, recipient, INBOX, "written", 0, None, None, now))
                result.written += 1
    if cfg.teams_dir is not None:
        by_file: dict[str, list[tuple[Any, ...]]] = {}
        for row in _to_write(conn, TEAM, now, True, after, queued):
            by_file.setdefault(row[1], []).append(row)
        for recipient, rows in by_file.items():
            try:
                teams.update(
                    cfg.teams_dir,
                    recipient,
                    now,
                    cfg.read_ttl_ms,
                    add=[teams.team_entry(r) for r in rows],
                )
            except (OSError, UnsafePath, ValidationFailed, ValueError) as exc:
                records += [(r[0], recipient, TEAM, *_failure(r[13], exc, now), now) for r in rows]
                result.failed += len(rows)
                if isinstance(exc, ValidationFailed) and any(not r[13] for r in rows):
                    # the file itself is wrong: said once per delivery it holds up
                    path = str(teams.inbox_path(cfg.teams_dir, recipient))
                    result.bad_team_files.append((path, exc.message.removeprefix(path + ": ")))
            else:
                records += [(r[0], recipient, TEAM, "written", 0, None, None, now) for r in rows]
                result.written += len(rows)
    if records or queued:
        with write(conn):
            q.record(conn, records)
            # the first notice of each recipient outlives the mirror (a read takes it away)
            notices.notify(
                conn, [(r[0], r[1], now, HOW[r[2]]) for r in records if r[3] == "written"]
            )
            q.add_team_recipients(conn, {r[1] for r in records if r[2] == TEAM})
            q.drain_unread(conn, queued)


def remove(
    conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult, full: bool
) -> None:
    """Mirrors of deliveries no longer unread: the inbox file goes, the team entry is set
    read, and the mirror's row is forgotten (a redelivery writes it again). A removal that
    fails keeps its row `stale`, with the error, and is retried after a back-off."""
    rows = q.to_remove(conn, now, full=full)
    if not rows:
        return
    done: list[tuple[int, str, str]] = []
    dropped: list[tuple[int, str, str]] = []
    kept: list[tuple[Any, ...]] = []
    team_reads: dict[str, list[tuple[int, int]]] = {}
    for mid, recipient, kind, state, attempts in rows:
        if state == "failed":
            dropped.append((mid, recipient, kind))  # never written: nothing to take away
        elif (kind == INBOX and cfg.inbox_dir is None) or (kind == TEAM and cfg.teams_dir is None):
            done.append((mid, recipient, kind))  # that directory is no longer configured
        elif kind == TEAM:
            team_reads.setdefault(recipient, []).append((mid, attempts))
        elif cfg.inbox_dir is not None:
            try:
                model.agent_id(recipient)
                d = under(cfg.inbox_dir, [recipient], create=False)
                _remove_files(d, mid)
                os.unlink(d / f"{mid}.json")
            except FileNotFoundError:
                pass  # the file or its directory is gone already: nothing to take away
            except (OSError, UnsafePath, ValidationFailed) as exc:
                kept.append(
                    (
                        mid,
                        recipient,
                        kind,
                        *_failure(attempts, exc, now, "stale", "removing: "),
                        now,
                    )
                )
                continue
            done.append((mid, recipient, kind))
    teams_dir = cfg.teams_dir  # not None whenever team_reads has rows (see above)
    for recipient, items in team_reads.items():
        try:
            if teams_dir is not None:
                teams.update(
                    teams_dir, recipient, now, cfg.read_ttl_ms, read={str(mid) for mid, _ in items}
                )
        except FileNotFoundError:
            pass  # no native inbox any more: no entry to set read
        except (OSError, UnsafePath, ValidationFailed, ValueError) as exc:
            kept += [
                (
                    mid,
                    recipient,
                    TEAM,
                    *_failure(attempts, exc, now, "stale", "setting read: "),
                    now,
                )
                for mid, attempts in items
            ]
            continue
        done += [(mid, recipient, TEAM) for mid, _ in items]
    result.removed += len(done)
    result.remove_failed += len(kept)
    with write(conn):
        q.forget(conn, done + dropped)
        q.record(conn, kept)


def agent_reads(conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult) -> None:
    """What agents read through their files: a deleted inbox file, a team entry `read: true`."""
    read: dict[str, list[int]] = {}
    if cfg.inbox_dir is not None:
        dirs: dict[str, Path | None] = {}
        lost: list[tuple[int, str, str]] = []
        for mid, recipient in q.written(conn, INBOX):
            if recipient not in dirs:
                try:
                    model.agent_id(recipient)
                    dirs[recipient] = under(cfg.inbox_dir, [recipient], create=False)
                except (OSError, UnsafePath, ValidationFailed):
                    dirs[recipient] = None  # the directory is gone or unsafe: do not guess
            d = dirs[recipient]
            if d is None:
                lost.append((mid, recipient, INBOX))  # forget it: rewritten below
            elif not os.path.lexists(d / f"{mid}.json"):
                read.setdefault(recipient, []).append(mid)
        if lost:
            with write(conn):
                q.forget(conn, lost)
    if cfg.teams_dir is not None:
        by_agent: dict[str, list[int]] = {r: [] for r in q.team_recipients(conn)}
        for mid, recipient in q.written(conn, TEAM):
            by_agent.setdefault(recipient, []).append(mid)
        for recipient, mids in by_agent.items():
            try:
                seen, pruned = teams.update(
                    cfg.teams_dir, recipient, now, cfg.read_ttl_ms, prune=True
                )
            except (OSError, UnsafePath, ValidationFailed, ValueError):
                continue
            result.pruned += pruned
            read.setdefault(recipient, []).extend(m for m in mids if str(m) in seen)
    if read:
        with write(conn):
            for agent, mids in read.items():
                result.marked_read += acks.mark_read(conn, agent, sorted(set(mids)), now)
            channels.release(conn, now)
