"""Response files (docs/spec/mailbox-pipeline.txt, FR-3.9): {outbox_dir}/{agent}/*.json, each
through the pipeline as its agent (`responses.apply`), recorded as ingested in the same
transaction as its message, and deleted only once that message is committed: a file is never
sent twice. A file that cannot become a message stays in place and is reported (bad: until it
changes; refused for now: tried again by every sync)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from acomm_cli import model
from acomm_cli.bridge import responses
from acomm_cli.bridge.paths import MAX_RESPONSE_BYTES, kind, parse_json, read_regular, under
from acomm_cli.bridge.settings import BridgeConfig, SyncResult
from acomm_cli.errors import CommError, NotFound, UnsafePath, UsageError, ValidationFailed
from acomm_cli.store import bridge as q
from acomm_cli.store import write

# The file itself is wrong: it stays until it changes. Every other refusal depends on the
# store's state (a paused channel, an agent not yet a participant, a full store, a lock held
# too long, an ack before the delivery ...) and is tried again by every sync.
_PERMANENT = (UnsafePath, ValidationFailed, NotFound, UsageError)


def ingest(conn: sqlite3.Connection, cfg: BridgeConfig, now: int, result: SyncResult) -> None:
    outbox = cfg.outbox_dir
    if outbox is None:
        return
    try:
        root = under(outbox, [], create=False)
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
            files = sorted(
                (
                    e
                    for e in os.scandir(agent_dir.path)
                    if e.name.endswith(".json") and not e.name.startswith(".")
                ),
                key=lambda e: e.name,
            )
        except (OSError, ValidationFailed):
            continue
        for entry in files:
            if _ingest_file(
                conn, agent_dir.name, Path(entry.path), now, result, cfg.default_channel
            ):
                done.append(entry.path)
    if done:  # deleted: their rows can go (kept until now, a crash re-deletes, never re-sends)
        with write(conn):
            q.forget_ingested(conn, done)
            q.forget_bad(conn, [p for p in done if p in known_bad])


def _ingest_file(
    conn: sqlite3.Connection,
    agent: str,
    path: Path,
    now: int,
    result: SyncResult,
    default_channel: str | None,
) -> bool:
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
            raise UnsafePath(f"{kind(st.st_mode)}, not a regular file")
        raw = read_regular(path, MAX_RESPONSE_BYTES)  # never blocks, even if swapped since
        if raw is None:
            return False
        doc = parse_json(raw)
        with write(conn):  # the message and the record that this file made it, together
            mid = responses.apply(conn, agent, doc, now, default_channel)
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
            exc.message if isinstance(exc, CommError) else f"{type(exc).__name__}: {exc}"
        )
        fresh = bad is None or not bad[2] or bad[:2] != key
        if fresh or (bad is not None and bad[3] != reason):  # keep the latest reason
            with write(conn):
                q.record_bad(conn, where, *key, reason, now, retry=True)
        if fresh:
            result.deferred_files.append((where, reason))
        return False
    result.ingested += 1
    return _delete(conn, path, st, mid, False, result)


def _delete(
    conn: sqlite3.Connection,
    path: Path,
    st: os.stat_result,
    mid: int | None,
    reported: bool,
    result: SyncResult,
) -> bool:
    """Delete a file whose message is committed. A file replaced meanwhile (another inode,
    size or time) is not ours to delete: the next sync takes it as a new one. A failed
    deletion is recorded, reported once, and retried by every sync; the file is never sent
    again."""
    try:
        now_st = os.lstat(path)
        if (now_st.st_ino, now_st.st_mtime_ns, now_st.st_size) != (
            st.st_ino,
            st.st_mtime_ns,
            st.st_size,
        ):
            return False
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if not reported:
            made = f"message {mid}" if mid is not None else "no new message"
            reason = (
                f"ingested ({made}) but not deleted, retried by every sync: "
                f"{type(exc).__name__}: {exc}"
            )
            with write(conn):
                q.ingested_not_deleted(conn, str(path), reason)
            result.undeleted_files.append((str(path), reason))
        return False
    return True
