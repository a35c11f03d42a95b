"""The mailbox bridge (spec 003): mirror unread deliveries as JSON files, append to Claude
Code team inboxes, and ingest agents' response files.

The store stays the source of truth. `sync` reconciles the files with it, idempotently:
mirrors are written after the store committed (a failed write or removal never undoes a
command; it is recorded and retried), a mirror exists exactly while its delivery is unread, a
deleted inbox file or a team entry set `read: true` marks the delivery read, and a response
file becomes a message through the normal pipeline, recorded as ingested in the same
transaction, and is deleted only once that message is committed (never sent twice).

Paths: an agent id becomes a path component only after `model.agent_id` validated it; every
directory under a bridge root must be a real directory (lstat), and files are opened with
O_NOFOLLOW, so no symbolic link leads a write (or a read) out of the configured directories.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from acomm_cli import model
from acomm_cli.clock import iso
from acomm_cli.engine import channels, sending
from acomm_cli.errors import CommError, NotFound, UnsafePath, UsageError, ValidationFailed
from acomm_cli.model import SendRequest
from acomm_cli.store import bridge as q
from acomm_cli.store import queries, write

INBOX, TEAM = "inbox", "team"
RETRY_MAX_MS = 60_000  # a failed mirror is retried after 1 s, 2 s, 4 s ... at most a minute


@dataclass(frozen=True)
class BridgeConfig:
    inbox_dir: Path | None = None
    outbox_dir: Path | None = None
    teams_dir: Path | None = None
    read_ttl_ms: int = 24 * 3600 * 1000

    @property
    def configured(self) -> bool:
        return any((self.inbox_dir, self.outbox_dir, self.teams_dir))


@dataclass
class SyncResult:
    written: int = 0  # mirror files written or team entries appended
    failed: int = 0  # mirror writes that failed this time (recorded, retried later)
    removed: int = 0  # mirrors taken away because their delivery is no longer unread
    remove_failed: int = 0  # mirror removals that failed this time (kept, retried later)
    marked_read: int = 0  # deliveries the agent read through its files
    pruned: int = 0  # read team entries older than bridge.read_ttl
    ingested: int = 0  # response files turned into messages or acks
    # Response files newly reported (each once, until it changes): bad (stays until fixed),
    # deferred (refused for now, e.g. a paused channel: tried again by every sync), and
    # undeleted (committed, but deleting the file failed: only its deletion is retried).
    bad_files: list[tuple[str, str]] = field(default_factory=list)
    deferred_files: list[tuple[str, str]] = field(default_factory=list)
    undeleted_files: list[tuple[str, str]] = field(default_factory=list)

    def doc(self) -> dict[str, int]:
        return {"written": self.written, "failed": self.failed, "removed": self.removed,
                "remove_failed": self.remove_failed, "marked_read": self.marked_read,
                "pruned": self.pruned, "ingested": self.ingested,
                "bad_files": len(self.bad_files), "deferred_files": len(self.deferred_files),
                "undeleted_files": len(self.undeleted_files)}


def config(value: Callable[[str], Any], **flags: str | None) -> BridgeConfig:
    """The bridge settings: `value(key)` reads a setting (`Settings.value`, already parsed and
    checked); a flag given here wins."""
    def pick(name: str) -> Path | None:
        chosen = flags.get(name) or value(f"bridge.{name}")
        return Path(chosen).expanduser() if chosen else None

    return BridgeConfig(inbox_dir=pick("inbox_dir"), outbox_dir=pick("outbox_dir"),
                        teams_dir=pick("teams_dir"), read_ttl_ms=value("bridge.read_ttl"))


# ---------------------------------------------------------------- safe paths


def _real_dir(path: Path, create: bool) -> Path:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path} is not a directory (a symbolic link or a file)")
    return path


def _under(root: Path, parts: Iterable[str], *, create: bool) -> Path:
    """root/part/...: every part a plain name, every level a real directory (the root itself
    may be a link to one). A missing level without `create` raises FileNotFoundError."""
    if not os.path.isdir(root):
        if not create:
            if not os.path.lexists(root):
                raise FileNotFoundError(f"{root} does not exist")
            raise UnsafePath(f"{root} is not a directory")
        os.makedirs(root, mode=0o700, exist_ok=True)
    path = root
    for part in parts:
        if not part or part.startswith(".") or "/" in part or "\x00" in part:
            raise UnsafePath(f"{part!r} cannot be a path component")
        path = _real_dir(path / part, create)
    return path


def _write_atomic(directory: Path, name: str, data: bytes) -> None:
    final = directory / name
    tmp = directory / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # the data is on disk before the name points at it
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)  # and the rename itself survives a power loss


def _fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on a directory; the file is synced
        pass
    finally:
        os.close(fd)


def _read_nofollow(path: Path) -> bytes | None:
    """The file's bytes, None if it does not exist; a symbolic link raises OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise UnsafePath(f"{path} is not a regular file")
        return fh.read()


def _split_team(agent: str) -> tuple[str, str]:
    name, _, team = agent.partition("@")
    return name, team


# ---------------------------------------------------------------- documents


def inbox_doc(row: tuple[Any, ...]) -> dict[str, Any]:
    """The fields of spec 003 FR-3.3, plus channel, topic, correlation_id and priority."""
    mid, recipient, channel, sender, mtype, content, topic, prio, corr, meta, created = row[:11]
    return {
        "type": "message", "from": sender, "content": content, "message_type": mtype,
        "metadata": json.loads(meta) if meta else {}, "id": mid, "session_id": recipient,
        "timestamp": iso(created), "channel": channel, "topic": topic,
        "correlation_id": corr, "priority": model.Priority(prio).name.lower(),
    }


def team_entry(row: tuple[Any, ...]) -> dict[str, Any]:
    """A Claude Code native team inbox entry (spec 003 FR-3.4)."""
    return {"from": row[3], "text": row[5], "timestamp": iso(row[10]), "read": False,
            "messageId": str(row[0])}


# ---------------------------------------------------------------- sync


def sync(conn: sqlite3.Connection, cfg: BridgeConfig, now: int, *,
         after_message_id: int | None = None, full: bool = True) -> SyncResult:
    """Reconcile the bridge directories with the store.

    `full=False` (after a writing command): mirror the messages above `after_message_id` and
    take away mirrors of deliveries no longer unread. `full=True` (tick, `bridge sync`): also
    ingest response files, notice what agents read through their files, prune old team
    entries and retry failed mirrors.

    Either way the deliveries the triggers queued as made unread by an update (a queue
    released, a redelivery, a replay) are mirrored, and failed removals that are due are
    retried, so right after any command a file exists exactly while its delivery is unread."""
    result = SyncResult()
    if not cfg.configured:
        return result
    _ensure_triggers(conn)
    if full and cfg.outbox_dir is not None:
        _ingest(conn, cfg.outbox_dir, now, result)
    if full:
        _agent_reads(conn, cfg, now, result)
    _remove(conn, cfg, now, result, full)
    _mirror(conn, cfg, now, result, None if full else after_message_id)
    return result


def watermark(conn: sqlite3.Connection) -> int:
    """The highest message id so far: a writing command mirrors the messages above it."""
    return queries.last_message_id(conn)


def prepare(conn: sqlite3.Connection) -> int:
    """Before a writing command, with the bridge configured: make sure the triggers exist
    (so whatever the command makes unread or read is queued for the after-write sync), and
    return the watermark."""
    _ensure_triggers(conn)
    return watermark(conn)


def _ensure_triggers(conn: sqlite3.Connection) -> None:
    # Created on first use, not by the migration: stores without a bridge never pay for
    # them (see store/bridge.py). Checking costs one read of the schema table.
    if not q.has_triggers(conn):
        with write(conn):
            q.create_triggers(conn)


def _failure(prev_attempts: int | None, exc: BaseException, now: int,
             state: str = "failed", doing: str = "") -> tuple[Any, ...]:
    attempts = (prev_attempts or 0) + 1
    delay = min(RETRY_MAX_MS, 1000 * 2 ** min(attempts - 1, 16))
    return (state, attempts, f"{doing}{type(exc).__name__}: {exc}"[:500], now + delay)


def _to_write(conn: sqlite3.Connection, kind: str, now: int, team_only: bool,
              after: int | None, queued: list[tuple[int, str]]) -> list[tuple[Any, ...]]:
    """Full (`after` None): every unread delivery lacking a mirror. Otherwise those of the
    messages above the watermark plus those the trigger queued as made unread."""
    if after is None:
        return q.to_write(conn, kind, now, team_only=team_only)
    rows = q.to_write(conn, kind, now, team_only=team_only, min_message_id=after)
    if queued:
        seen = {(r[0], r[1]) for r in rows}
        rows += [r for r in q.to_write(conn, kind, now, team_only=team_only, made_unread=True)
                 if (r[0], r[1]) not in seen]
        rows.sort(key=lambda r: (r[0], r[1]))
    return rows


def _mirror(conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult,
            after: int | None) -> None:
    # Taken before the queries: only rows seen here are drained, so a delivery another
    # process queues meanwhile stays queued for its own after-write sync.
    queued = q.made_unread(conn)
    records: list[tuple[Any, ...]] = []
    if cfg.inbox_dir is not None:
        for row in _to_write(conn, INBOX, now, False, after, queued):
            mid, recipient = row[0], row[1]
            try:
                model.agent_id(recipient)
                d = _under(cfg.inbox_dir, [recipient], create=True)
                _write_atomic(d, f"{mid}.json",
                              json.dumps(inbox_doc(row), ensure_ascii=False).encode())
            except (OSError, UnsafePath, ValidationFailed) as exc:
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
                _team_update(cfg.teams_dir, recipient, now, cfg.read_ttl_ms,
                             add=[team_entry(r) for r in rows])
            except (OSError, UnsafePath, ValidationFailed, ValueError) as exc:
                records += [(r[0], recipient, TEAM, *_failure(r[13], exc, now), now)
                            for r in rows]
                result.failed += len(rows)
            else:
                records += [(r[0], recipient, TEAM, "written", 0, None, None, now) for r in rows]
                result.written += len(rows)
    if records or queued:
        with write(conn):
            q.record(conn, records)
            q.add_team_recipients(conn, {r[1] for r in records if r[2] == TEAM})
            q.drain_unread(conn, queued)


def _remove(conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult,
            full: bool) -> None:
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
        elif (kind == INBOX and cfg.inbox_dir is None) or (
                kind == TEAM and cfg.teams_dir is None):
            done.append((mid, recipient, kind))  # that directory is no longer configured
        elif kind == TEAM:
            team_reads.setdefault(recipient, []).append((mid, attempts))
        elif cfg.inbox_dir is not None:
            try:
                model.agent_id(recipient)
                d = _under(cfg.inbox_dir, [recipient], create=False)
                os.unlink(d / f"{mid}.json")
            except FileNotFoundError:
                pass  # the file or its directory is gone already: nothing to take away
            except (OSError, UnsafePath, ValidationFailed) as exc:
                kept.append((mid, recipient, kind,
                             *_failure(attempts, exc, now, "stale", "removing: "), now))
                continue
            done.append((mid, recipient, kind))
    teams_dir = cfg.teams_dir  # not None whenever team_reads has rows (see above)
    for recipient, items in team_reads.items():
        try:
            if teams_dir is not None:
                _team_update(teams_dir, recipient, now, cfg.read_ttl_ms,
                             read={str(mid) for mid, _ in items})
        except FileNotFoundError:
            pass  # no native inbox any more: no entry to set read
        except (OSError, UnsafePath, ValidationFailed, ValueError) as exc:
            kept += [(mid, recipient, TEAM,
                      *_failure(attempts, exc, now, "stale", "setting read: "), now)
                     for mid, attempts in items]
            continue
        done += [(mid, recipient, TEAM) for mid, _ in items]
    result.removed += len(done)
    result.remove_failed += len(kept)
    with write(conn):
        q.forget(conn, done + dropped)
        q.record(conn, kept)


def _team_update(teams_dir: Path, recipient: str, now: int, ttl_ms: int, *,
                 add: list[dict[str, Any]] | None = None, read: set[str] | None = None,
                 prune: bool = False) -> tuple[set[str], int]:
    """Under `{name}.lock`: append `add` (or make an existing entry of the same messageId
    unread again), set `read: true` on entries of `read`, prune read entries past the TTL.
    Returns (messageIds the file shows read, entries pruned). Every other entry and field
    stays as it was; a file that is not a JSON array is never overwritten (ValueError)."""
    import fcntl

    model.agent_id(recipient)
    name, team = _split_team(recipient)
    d = _under(teams_dir, [team, "inboxes"], create=add is not None)
    lock = os.open(d / f"{name}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        raw = _read_nofollow(d / f"{name}.json")
        entries: Any = [] if raw is None or not raw.strip() else json.loads(raw)
        if not isinstance(entries, list):
            raise ValueError(f"{d / (name + '.json')} is not a JSON array")
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
        seen_read = ({k for k, e in index.items() if type(k) is str and e.get("read") is True}
                     if prune else set())
        pruned = 0
        if prune:
            kept = [e for e in entries if not _expired(e, now, ttl_ms)]
            pruned = len(entries) - len(kept)
            if pruned:
                entries, changed = kept, True
        if changed:
            _write_atomic(d, f"{name}.json",
                          json.dumps(entries + appended, ensure_ascii=False).encode())
        elif appended:  # only appends: the existing bytes stay exactly as they were
            body = raw.rstrip() if raw is not None and raw.strip() else b"[]"
            extra = ", ".join(json.dumps(e, ensure_ascii=False) for e in appended).encode()
            _write_atomic(d, f"{name}.json",
                          body[:-1].rstrip() + (b", " if entries else b"") + extra + b"]")
        return seen_read, pruned
    finally:
        os.close(lock)


def _expired(entry: Any, now: int, ttl_ms: int) -> bool:
    """Read, and older than the TTL (spec 003 FR-3.8); unread entries never expire."""
    if not isinstance(entry, dict) or entry.get("read") is not True:
        return False
    try:
        ts = datetime.fromisoformat(str(entry.get("timestamp")))
    except ValueError:
        return False
    if ts.tzinfo is None:
        return False
    return now - int(ts.timestamp() * 1000) > ttl_ms


def _agent_reads(conn: sqlite3.Connection, cfg: BridgeConfig, now: int,
                 result: SyncResult) -> None:
    """What agents read through their files: a deleted inbox file, a team entry `read: true`."""
    read: dict[str, list[int]] = {}
    if cfg.inbox_dir is not None:
        dirs: dict[str, Path | None] = {}
        lost: list[tuple[int, str, str]] = []
        for mid, recipient in q.written(conn, INBOX):
            if recipient not in dirs:
                try:
                    model.agent_id(recipient)
                    dirs[recipient] = _under(cfg.inbox_dir, [recipient], create=False)
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
                seen, pruned = _team_update(cfg.teams_dir, recipient, now, cfg.read_ttl_ms,
                                            prune=True)
            except (OSError, UnsafePath, ValidationFailed, ValueError):
                continue
            result.pruned += pruned
            read.setdefault(recipient, []).extend(m for m in mids if str(m) in seen)
    if read:
        with write(conn):
            for agent, mids in read.items():
                result.marked_read += queries.mark_read(conn, agent, sorted(set(mids)), now)
            channels.release(conn, now)


# ---------------------------------------------------------------- response files

_RESPONSE_KEYS = {"content", "to", "channel", "reply_to", "correlation_id", "type", "topic",
                  "priority", "metadata"}
_ACK_KEYS = {"ack", "status", "note"}


# The file itself is wrong: it stays until it changes. Every other refusal depends on the
# store's state (a paused channel, an agent not yet a participant, a full store, a lock held
# too long, an ack before the delivery ...) and is tried again by every sync.
_PERMANENT = (UnsafePath, ValidationFailed, NotFound, UsageError)


def _ingest(conn: sqlite3.Connection, outbox: Path, now: int, result: SyncResult) -> None:
    try:
        root = _under(outbox, [], create=False)
        agents = sorted(os.scandir(root), key=lambda e: e.name)
    except (OSError, UnsafePath):
        return
    # Rows of files gone since go first: a new file of the same name is then never taken for
    # one already ingested or reported.
    known_bad = set(q.bad_paths(conn))
    known_done = set(q.ingested_paths(conn))
    gone = [p for p in known_bad | known_done if not os.path.lexists(p)]
    if gone:
        with write(conn):
            q.forget_bad(conn, gone)
            q.forget_ingested(conn, gone)
    done: list[str] = []
    for agent_dir in agents:
        if agent_dir.name.startswith(".") or not agent_dir.is_dir(follow_symlinks=False):
            continue
        try:
            model.agent_id(agent_dir.name)
            files = sorted((e for e in os.scandir(agent_dir.path)
                            if e.name.endswith(".json") and not e.name.startswith(".")),
                           key=lambda e: e.name)
        except (OSError, ValidationFailed):
            continue
        for entry in files:
            if _ingest_file(conn, agent_dir.name, Path(entry.path), now, result):
                done.append(entry.path)
    if done:  # deleted: their rows can go (kept until now, a crash re-deletes, never re-sends)
        with write(conn):
            q.forget_ingested(conn, done)
            q.forget_bad(conn, [p for p in done if p in known_bad])


def _ingest_file(conn: sqlite3.Connection, agent: str, path: Path, now: int,
                 result: SyncResult) -> bool:
    """One response file; True once it is deleted because its message is committed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    key = (st.st_mtime_ns, st.st_size)
    where = str(path)
    seen = q.ingested(conn, where)
    if seen is not None and seen[:2] == key:  # committed before (a crash, a failed deletion)
        return _delete(conn, path, st, seen[2], seen[3] is not None, result)
    bad = q.bad_file(conn, where)
    if bad is not None and not bad[2] and bad[:2] == key:
        return False  # bad, reported already, unchanged since
    try:
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath("not a regular file (a symbolic link?)")
        raw = _read_nofollow(path)
        if raw is None:
            return False
        try:
            doc = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValidationFailed(f"not valid JSON ({exc})") from None
        with write(conn):  # the message and the record that this file made it, together
            mid = apply_response(conn, agent, doc, now)
            q.record_ingested(conn, where, *key, mid, now)
            if bad is not None:  # reported before (refused for now, or an older version)
                q.forget_bad(conn, [where])
    except _PERMANENT as exc:
        reason = exc.message if isinstance(exc, CommError) else str(exc)
        with write(conn):
            q.record_bad(conn, where, *key, reason, now, retry=False)
        result.bad_files.append((where, reason))
        return False
    except (CommError, OSError) as exc:
        reason = "retried by every sync: " + (
            exc.message if isinstance(exc, CommError) else f"{type(exc).__name__}: {exc}")
        fresh = bad is None or not bad[2] or bad[:2] != key
        if fresh or (bad is not None and bad[3] != reason):  # keep the latest reason
            with write(conn):
                q.record_bad(conn, where, *key, reason, now, retry=True)
        if fresh:
            result.deferred_files.append((where, reason))
        return False
    result.ingested += 1
    return _delete(conn, path, st, mid, False, result)


def _delete(conn: sqlite3.Connection, path: Path, st: os.stat_result, mid: int | None,
            reported: bool, result: SyncResult) -> bool:
    """Delete a file whose message is committed. A file replaced meanwhile (another inode,
    size or time) is not ours to delete: the next sync takes it as a new one. A failed
    deletion is recorded, reported once, and retried by every sync; the file is never sent
    again."""
    try:
        now_st = os.lstat(path)
        if (now_st.st_ino, now_st.st_mtime_ns, now_st.st_size) != (
                st.st_ino, st.st_mtime_ns, st.st_size):
            return False
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if not reported:
            made = f"message {mid}" if mid is not None else "no new message"
            reason = (f"ingested ({made}) but not deleted, retried by every sync: "
                      f"{type(exc).__name__}: {exc}")
            with write(conn):
                q.ingested_not_deleted(conn, str(path), reason)
            result.undeleted_files.append((str(path), reason))
        return False
    return True


def apply_response(conn: sqlite3.Connection, agent: str, doc: Any, now: int) -> int | None:
    """One response file's object, from `agent`, through the pipeline; the new message id
    (None for an ack that changed nothing). Called inside the caller's transaction: the
    pipeline's own transactions nest in it as savepoints."""
    from acomm_cli.engine import delivery

    if not isinstance(doc, dict):
        raise ValidationFailed("a response file must hold a JSON object")
    if "ack" in doc:
        unknown = sorted(set(doc) - _ACK_KEYS)
        if unknown:
            raise ValidationFailed(f"unknown field {unknown[0]!r}", field=unknown[0])
        mid = model.whole_number(doc["ack"])  # an int, or ASCII digits
        if mid is None:
            raise ValidationFailed("ack: must be a message id", field="ack")
        note = doc.get("note")
        if note is not None and not isinstance(note, str):
            raise ValidationFailed("note: must be a string", field="note")
        return delivery.ack(conn, mid, agent, str(doc.get("status", "completed")), note,
                            now).ack_message_id
    unknown = sorted(set(doc) - _RESPONSE_KEYS)
    if unknown:
        raise ValidationFailed(f"unknown field {unknown[0]!r}", field=unknown[0])
    for key in ("content", "to", "channel", "correlation_id", "type", "topic"):
        if key in doc and not isinstance(doc[key], str):
            raise ValidationFailed(f"{key}: must be a string", field=key)
    targets = [k for k in ("to", "channel", "reply_to") if k in doc]
    if len(targets) > 1:
        raise ValidationFailed("give only one of 'to', 'channel' and 'reply_to'",
                               field=targets[1])
    if not targets and "correlation_id" not in doc:
        raise ValidationFailed("name a target: 'to', 'channel', 'reply_to' or "
                               "'correlation_id'", field="to")
    content = doc.get("content", "")
    prio = doc.get("priority", "normal")
    req = SendRequest(sender=agent, content=content, type=doc.get("type", "text"),
                      priority=prio, topic=doc.get("topic"),
                      correlation_id=doc.get("correlation_id"), metadata=doc.get("metadata"))
    if "to" in doc:
        res = sending.send_direct(conn, req, [doc["to"]], now)[0]
        if isinstance(res, CommError):
            raise res
        return res.id
    if "channel" in doc:
        return sending.send(conn, SendRequest(**{**req.__dict__, "channel": doc["channel"]}),
                             now).id
    if "reply_to" not in doc:
        return delivery.respond(conn, doc["correlation_id"], content, agent, now, prio).id
    return _reply(conn, req, doc["reply_to"], now)


def _reply(conn: sqlite3.Connection, req: SendRequest, reply_to: Any, now: int) -> int:
    reply_to = model.whole_number(reply_to)  # an int, or ASCII digits
    if reply_to is None:
        raise ValidationFailed("reply_to: must be a message id", field="reply_to")
    original = queries.message_by_id(conn, reply_to)
    if original is None:
        raise NotFound(f"message {reply_to} does not exist", field="reply_to", value=reply_to)
    if original.type == model.MessageType.QUERY and original.correlation_id:
        from acomm_cli.engine import delivery

        return delivery.respond(conn, original.correlation_id, req.content, req.sender, now,
                                req.priority).id
    meta = {**(req.metadata or {}), "reply_to": str(reply_to)}
    with write(conn):
        router = sending.Router(conn)
        plan = sending.plan_message(router, SendRequest(**{
            **req.__dict__, "channel": original.channel, "metadata": meta, "dedupe_key": None,
            "correlation_id": req.correlation_id or original.correlation_id,
        }), now, only_to=original.sender)
        return sending.persist(router, plan, now).id

