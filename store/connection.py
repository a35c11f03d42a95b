"""Opening a store: refusal of foreign, corrupt or newer files, pragmas, migrations, writes."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from acomm_cli.errors import CommError, StoreLocked, StoreUnavailable
from acomm_cli.store.migrations import MIGRATIONS

SQLITE_HEADER = b"SQLite format 3\x00"
SYNCHRONOUS = {"immediate": "FULL", "batch": "NORMAL", "manual": "NORMAL"}
PAGES_PER_COMMIT = 8  # WAL frames of one small send, measured (each a page + 24-byte header)


class StoreConnection(sqlite3.Connection):
    """A connection that remembers its file: the capacity check stats it on every send, and
    asking SQLite (`PRAGMA database_list`) each time cost a statement."""

    path: str = ""


def _check_header(path: Path) -> None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        raise StoreUnavailable(f"cannot read store {path}: {exc.strerror}",
                               path=str(path)) from None
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        raise StoreUnavailable(
            f"{path} is not an acomm store (not a SQLite database); refusing to touch it",
            path=str(path),
        )


def _create_file(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return  # another process created it first; opening it is enough
    os.close(fd)


@contextmanager
def write(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One command, one transaction: BEGIN IMMEDIATE, then commit or roll back.

    Inside a transaction already, it is a savepoint of that transaction, so a caller can
    commit its own rows with a pipeline operation's (the mailbox bridge records a response
    file as ingested in the transaction of its message)."""
    if conn.in_transaction:
        with savepoint(conn, "nested_write"):
            yield conn
        return
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise _unavailable(exc) from None
    try:
        yield conn
    except BaseException:
        conn.rollback()
        raise
    try:
        conn.commit()
    except sqlite3.OperationalError as exc:
        conn.rollback()
        raise _unavailable(exc) from None


@contextmanager
def savepoint(conn: sqlite3.Connection, name: str) -> Iterator[None]:
    """A nested transaction: on an exception only its own work is undone, then re-raised."""
    conn.execute(f"SAVEPOINT {name}")
    try:
        yield
    except BaseException:
        conn.execute(f"ROLLBACK TO {name}")
        conn.execute(f"RELEASE {name}")
        raise
    conn.execute(f"RELEASE {name}")


def _unavailable(exc: sqlite3.Error) -> CommError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreLocked(
            f"store is locked by another process past the busy timeout ({text})")
    return StoreUnavailable(f"store is unusable: {text}")


def open_store(
    path: str | os.PathLike[str],
    *,
    create: bool = False,
    busy_timeout_ms: int = 5000,
    flush: str = "batch",
    now_ms: int = 0,
) -> sqlite3.Connection:
    """Open (or create) a store and bring its schema up to date.

    A file that is not SQLite, is corrupt, belongs to something else, or was written by a newer
    acomm is refused with StoreUnavailable (exit 7) and left exactly as it was.
    """
    p = Path(path)
    exists = p.exists()
    if exists and p.stat().st_size > 0:
        _check_header(p)
    elif exists:
        raise StoreUnavailable(f"{p} is an empty file, not an acomm store; refusing to touch it",
                               path=str(p))
    elif create:
        _create_file(p)
    else:
        raise StoreUnavailable(f"no store at {p} (create one with `acomm init`)", path=str(p))
    try:
        conn = sqlite3.connect(p, isolation_level=None, timeout=busy_timeout_ms / 1000,
                               check_same_thread=False, factory=StoreConnection)
        conn.path = str(p.absolute())
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"cannot open store {p}: {exc}", path=str(p)) from None
    try:
        _prepare(conn, p, busy_timeout_ms, flush, now_ms)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise StoreUnavailable(f"store {p} is corrupt or unreadable: {exc}", path=str(p)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _prepare(conn: sqlite3.Connection, p: Path, busy_ms: int, flush: str, now_ms: int) -> None:
    conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    _register_functions(conn)
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise StoreUnavailable(
            f"store {p} has schema version {version}, newer than this acomm understands "
            f"({len(MIGRATIONS)}); upgrade acomm to use it",
            path=str(p), schema_version=version,
        )
    if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise StoreUnavailable(f"{p} is a SQLite database but not an acomm store; refusing to "
                               "touch it", path=str(p))
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS.get(flush, 'NORMAL')}")
    if flush != "batch":
        conn.execute("PRAGMA wal_autocheckpoint = 0" if flush == "manual" else
                     "PRAGMA wal_autocheckpoint = 1000")
    else:
        # `batch` reads the WAL's size as its count of commits since the last checkpoint
        # (maybe_checkpoint): so when a writer starts the WAL over, it cuts the file back
        # instead of reusing it at its old size.
        conn.execute("PRAGMA journal_size_limit = 0")
    if version < len(MIGRATIONS):
        _migrate(conn, now_ms)


def _migrate(conn: sqlite3.Connection, now_ms: int) -> None:
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    with write(conn):
        version = conn.execute("PRAGMA user_version").fetchone()[0]  # re-read under the lock
        if version == 0:
            conn.execute("CREATE TABLE IF NOT EXISTS _acomm_migrations "
                         "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
        for fn in MIGRATIONS[version:]:
            fn(conn, now_ms)
            conn.execute("INSERT INTO _acomm_migrations VALUES (?, ?)", (fn.__name__, now_ms))
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")


def _regexp(pattern: str, value: str | None) -> bool:
    return value is not None and _compiled(pattern).search(value) is not None


def _compiled(pattern: str):  # noqa: ANN202 - a tiny cache of compiled patterns
    import re

    cached = _PATTERNS.get(pattern)
    if cached is None:
        cached = _PATTERNS[pattern] = re.compile(pattern)
    return cached


_PATTERNS: dict = {}


def _register_functions(conn: sqlite3.Connection) -> None:
    from acomm_cli.topics import matches

    conn.create_function("topic_match", 2, lambda p, t: matches(t, p), deterministic=True)
    conn.create_function("regexp", 2, _regexp, deterministic=True)


def maybe_checkpoint(conn: sqlite3.Connection, batch_messages: int, batch_interval_ms: int,
                     now_ms: int) -> bool:
    """`store.flush: batch`: checkpoint the WAL after about `batch_messages` commits or once
    `batch_interval_ms` has passed since the last checkpoint.

    Every command is its own process, so commits are not counted in memory: the WAL's size
    stands in for them (a one-recipient send writes 8 pages: the message and its three
    indexes, sqlite_sequence, the delivery and its two indexes), and the database
    file's modification time marks the last checkpoint. Costs two stat() calls per command."""
    path = getattr(conn, "path", None) or conn.execute("PRAGMA database_list").fetchone()[2]
    try:
        wal = os.stat(path + "-wal").st_size
        db = os.stat(path)
    except OSError:
        return False
    if wal == 0:
        return False
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    if (wal < PAGES_PER_COMMIT * (page + 24) * batch_messages
            and now_ms - db.st_mtime * 1000 < batch_interval_ms):
        return False
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    return True
