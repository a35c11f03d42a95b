"""Opening a store: refusal of foreign, corrupt or newer files, pragmas, migrations, writes."""

from __future__ import annotations

import _thread  # threading's Lock, without importing threading (not on a send's path)
import errno
import os
import sqlite3
import time

from acomm_cli.errors import CommError, DiskFull, StoreLocked, StoreReadOnly, StoreUnavailable
from acomm_cli.lite import paths
from acomm_cli.store.migrations import MIGRATIONS

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from acomm_cli.model import GrepPattern

SQLITE_HEADER = b"SQLite format 3\x00"
SYNCHRONOUS = {"immediate": "FULL", "batch": "NORMAL", "manual": "NORMAL"}
PAGES_PER_COMMIT = 8  # WAL frames of one small send, measured (each a page + 24-byte header)
NEARLY_FULL = 1024**2  # an I/O error with less free space than this is a full disk
CACHED_STATEMENTS = 512
# the slices in which a connection with a `between` (lock_waits_in_slices) waits for the lock
LOCK_SLICE_MS = 100


class StoreConnection(sqlite3.Connection):
    """A connection that remembers its file: the capacity check stats it on every send, and
    asking SQLite (`PRAGMA database_list`) each time cost a statement."""

    path: str = ""
    read_only: bool = False  # opened with mode=ro or immutable=1: writes are refused
    busy_ms: int = 5000  # how long a write waits for another process's lock
    # called between slices of that wait (lock_waits_in_slices); None: SQLite waits busy_ms
    between_lock_tries: Callable[[int], None] | None = None
    _live: bool = False
    # engine/sending.py's cache of the channels sends read, valid under one channels token
    # (m011): it lives as long as the connection, across transactions
    channel_cache: object = None
    # the configured `identity.directory` (open | strict; None: the store's own default),
    # set by whoever opened the connection; and the notes the engine leaves for the
    # command to print after it commits (engine/directory.py)
    directory: str | None = None
    notes: list[str] | None = None
    # set by an outbox append: a NATS node's command publishes after its commit
    outbox_appended: bool = False
    # engine/waiting.py's watch on the store's files (store/notify.py), made by the first
    # wait for another process's commit; False: none to be had, the wait polls
    watch: Any = None
    # store/facts.py's channel facts (closed channels, the read clock, who serves which
    # queue), valid under one channels token: like channel_cache, across transactions
    facts: Any = None
    # what the directory said (AgentCache), valid under one agents token (m030)
    agents_cache: AgentCache | None = None

    def close(self) -> None:
        if self.watch:
            self.watch.close()
            self.watch = None
        super().close()
        if self._live:
            self._live = False
            with _LIVE_LOCK:
                _LIVE[self.path] -= 1


AGENTS_TOKEN = "(SELECT token FROM agents_version WHERE id = 1)"
_CACHED_AGENTS = 4096  # names a cache keeps at most (a gateway serving many agents)


class AgentCache:
    """What a connection read of the directory (agents, contacts), kept between transactions
    while the agents token (m030: every change to agents but an agent's presence, and to
    contacts, adds one, in any process) is the one it was read under. It answers only while
    `live`: from `enter` (called first thing in a transaction its caller began, with the token
    read then, a committed value) to `leave`. A transaction that fails drops it, so what a
    rolled-back write showed is never kept; one that commits a change to the directory moves
    the token on. Only what was found is kept (a name not registered is read again)."""

    __slots__ = ("token", "live", "lookups", "rules", "retired", "seen")

    def __init__(self, token: int) -> None:
        self.token = token
        self.live = False
        self.lookups: dict[str, tuple[int | None]] = {}
        self.rules: dict[str, tuple[str, str | None]] = {}
        self.retired: frozenset[str] | None = None
        # agent -> the last_seen_at this connection wrote (store/presence.touch)
        self.seen: dict[str, int] = {}

    def keep(self, table: dict[str, Any], name: str, row: Any) -> None:
        if len(table) >= _CACHED_AGENTS:
            table.clear()
        table[name] = row


def enter_agents(conn: sqlite3.Connection, token: int) -> None:
    """Start answering from the connection's AgentCache under `token` (see AgentCache)."""
    if not isinstance(conn, StoreConnection):
        return
    cache = conn.agents_cache
    if cache is None or cache.token != token:
        cache = conn.agents_cache = AgentCache(token)
    cache.live = True


def leave_agents(conn: sqlite3.Connection, failed: bool) -> None:
    cache = getattr(conn, "agents_cache", None)
    if cache is not None:
        cache.live = False
        if failed:
            conn.agents_cache = None  # type: ignore[attr-defined]


def agents_cache(conn: sqlite3.Connection) -> AgentCache | None:
    """The connection's AgentCache while it answers, else None."""
    cache = getattr(conn, "agents_cache", None)
    return cache if cache is not None and cache.live else None


# Connections of this process open on each store (absolute path -> count). Closing ANY file
# descriptor of a file drops every POSIX lock the process holds on it, SQLite's included
# (sqlite.org/howtocorrupt.html, 2.2): the header check's open() and close() next to a live
# connection (a gateway opens one per request beside its own) dropped that connection's
# shared lock, and another process closing the store then checkpointed and deleted the WAL
# under it -- a corrupt store. A store with a live connection here was checked when that
# connection opened, so it is not opened again outside SQLite.
_LIVE: dict[str, int] = {}
_LIVE_LOCK = _thread.allocate_lock()


def _open_here(p: str) -> bool:
    with _LIVE_LOCK:
        return _LIVE.get(paths.absolute(p), 0) > 0


def _check_header(path: str) -> None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError as exc:
        raise StoreUnavailable(
            f"cannot read store {path}: {exc.strerror}", path=str(path)
        ) from None
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        raise StoreUnavailable(
            f"{path} is not an acomm store (not a SQLite database); refusing to touch it",
            path=str(path),
        )


def _create_file(path: str) -> None:
    parent = os.path.dirname(path)
    if parent:  # its parents with the default mode, itself 0700 (as Path.mkdir(parents=True))
        os.makedirs(parent, mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        return  # another process created it first; opening it is enough
    os.close(fd)


class _Write:
    """`write(conn)`: a class, not a @contextmanager generator: contextlib stays out of
    `acomm send` and each transaction costs one object."""

    __slots__ = ("conn", "nested")

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.nested: _Savepoint | None = None

    def __enter__(self) -> sqlite3.Connection:
        conn = self.conn
        if conn.in_transaction:
            self.nested = _Savepoint(conn, "nested_write")
            self.nested.__enter__()
            return conn
        between = getattr(conn, "between_lock_tries", None)
        try:
            if between is None:
                conn.execute("BEGIN IMMEDIATE")
            else:
                _begin_in_slices(conn, between)
        except sqlite3.OperationalError as exc:
            raise store_error(exc, getattr(conn, "path", None)) from None
        return conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if self.nested is not None:
            self.nested.__exit__(kind, exc, tb)
            return
        conn = self.conn
        if exc is None:
            try:
                conn.commit()
            except sqlite3.OperationalError as error:
                conn.rollback()
                raise store_error(error, getattr(conn, "path", None)) from None
            return
        conn.rollback()
        if isinstance(exc, sqlite3.OperationalError) and _code(exc) in _STORAGE_CODES:
            # the disk, not the command: say which
            raise store_error(exc, getattr(conn, "path", None)) from None


def _begin_in_slices(conn: sqlite3.Connection, between: Callable[[int], None]) -> None:
    """BEGIN IMMEDIATE, waiting for another process's lock LOCK_SLICE_MS at a time, up to
    the connection's busy timeout in all, calling `between(slices waited)` after each slice.
    SQLite's own wait is one C call: no signal handler of this process runs until it ends."""
    full = int(getattr(conn, "busy_ms", 5000))
    deadline = time.monotonic() + full / 1000
    slices = 0
    try:
        while True:
            left_ms = int((deadline - time.monotonic()) * 1000)
            conn.execute(f"PRAGMA busy_timeout = {max(0, min(LOCK_SLICE_MS, left_ms))}")
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if _code(exc) != "SQLITE_BUSY" or time.monotonic() >= deadline:
                    raise
            slices += 1
            between(slices)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {full}")


def lock_waits_in_slices(conn: sqlite3.Connection, between: Callable[[int], None] | None) -> None:
    """From now on `write(conn)` waits for another process's write lock in slices, calling
    `between(slices waited)` after each: it may raise to end the wait (a stop request), and
    nothing is written then. The busy timeout still bounds the whole wait, ending it with
    the same StoreLocked. `None`: SQLite waits the busy timeout in one go again."""
    if not isinstance(conn, StoreConnection):
        raise TypeError("lock_waits_in_slices needs a store opened by open_store")
    conn.between_lock_tries = between


def write(conn: sqlite3.Connection) -> _Write:
    """One command, one transaction: BEGIN IMMEDIATE, then commit or roll back.

    Inside a transaction already, it is a savepoint of that transaction, so a caller can
    commit its own rows with a pipeline operation's (the mailbox bridge records a response
    file as ingested in the transaction of its message)."""
    return _Write(conn)


class _Savepoint:
    __slots__ = ("conn", "name")

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self.conn, self.name = conn, name

    def __enter__(self) -> None:
        self.conn.execute(f"SAVEPOINT {self.name}")

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc is not None:
            self.conn.execute(f"ROLLBACK TO {self.name}")
        self.conn.execute(f"RELEASE {self.name}")


def identity_auth(conn: sqlite3.Connection) -> str | None:
    """The store's `identity.auth` (store_meta; store/credentials.py writes it). Here because
    every command that acts as an agent reads it, a send too, which loads no other module."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = 'identity.auth'").fetchone()
    return row[0] if row else None


def savepoint(conn: sqlite3.Connection, name: str) -> _Savepoint:
    """A nested transaction: on an exception only its own work is undone, then re-raised."""
    return _Savepoint(conn, name)


_STORAGE_CODES = (
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_READONLY",
    "SQLITE_CANTOPEN",
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
)


def _code(exc: sqlite3.Error) -> str:
    """SQLite's primary result code name (SQLITE_IOERR for SQLITE_IOERR_SHMSIZE)."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    for code in _STORAGE_CODES + ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        if name.startswith(code):
            return code
    return name


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Space left for this process on the filesystem holding `path` (None: unknown)."""
    try:
        st = os.statvfs(os.path.dirname(paths.absolute(os.fspath(path))))
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _read_only_fs(path: str | os.PathLike[str]) -> bool:
    """The store's file or directory cannot be written by this process (a read-only mount,
    or permissions): SQLite then fails to create its -wal/-shm files, or refuses writes."""
    p = paths.absolute(os.fspath(path))
    parent = os.path.dirname(p)
    try:
        if os.statvfs(parent).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(parent, os.W_OK) or (os.path.exists(p) and not os.access(p, os.W_OK))


def store_error(exc: sqlite3.Error, path: str | os.PathLike[str] | None) -> CommError:
    """What an error from SQLite means for the user. Only the error path pays for the
    statvfs/access calls that tell a full disk or a read-only store from a damaged one."""
    text, code = str(exc), _code(exc)
    where = f"store {path}" if path else "store"
    if code in ("SQLITE_BUSY", "SQLITE_LOCKED") or "locked" in text:
        return StoreLocked(f"{where} is locked by another process past the busy timeout ({text})")
    if code in ("SQLITE_FULL", "SQLITE_IOERR"):
        free = free_bytes(path) if path else None
        if code == "SQLITE_FULL" or (free is not None and free < NEARLY_FULL):
            where_free: dict[str, Any] = {"path": str(path), "free_bytes": free} if path else {}
            return DiskFull(
                f"the disk holding the {where} is full ({text}; {free} bytes free); nothing "
                "was written: free some space and retry",
                **where_free,
            )
    if code == "SQLITE_READONLY" or (
        code in ("SQLITE_CANTOPEN", "SQLITE_IOERR") and path and _read_only_fs(path)
    ):
        return StoreReadOnly(
            f"{where} is read-only ({text}); nothing was written",
            **({"path": str(path)} if path else {}),
        )
    if code in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return StoreUnavailable(
            f"{where} is corrupt or unreadable: {text}", **({"path": str(path)} if path else {})
        )
    if code == "SQLITE_IOERR":
        return StoreUnavailable(
            f"{where} cannot be read or written: {text}", **({"path": str(path)} if path else {})
        )
    return StoreUnavailable(f"{where} is unusable: {text}", **({"path": str(path)} if path else {}))


def open_store(
    path: str | os.PathLike[str],
    *,
    create: bool = False,
    read_only: bool = False,
    busy_timeout_ms: int = 5000,
    flush: str = "batch",
    now_ms: int = 0,
) -> sqlite3.Connection:
    """Open (or create) a store and bring its schema up to date.

    A file that is not SQLite, is corrupt, belongs to something else, or was written by a newer
    acomm is refused with StoreUnavailable (exit 7) and left exactly as it was. `read_only`
    opens it with SQLite's mode=ro, so a reading command never writes (see open_read_only).
    The path is a string as pathlib writes it, without importing pathlib (a send must not load it).
    """
    p = paths.pure(os.fspath(path))
    try:
        size: int | None = os.stat(p).st_size
    except OSError as exc:  # the errors Path.exists() takes for "no such file"; others raise
        if exc.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP):
            raise
        size = None
    except ValueError:
        size = None
    exists = size is not None
    if exists and size:
        if not _open_here(p):
            _check_header(p)
    elif exists:
        raise StoreUnavailable(
            f"{p} is an empty file, not an acomm store; refusing to touch it", path=str(p)
        )
    elif create:
        _create_file(p)
    else:
        raise StoreUnavailable(f"no store at {p} (acomm init creates one)", path=str(p))
    if read_only:
        return open_read_only(p, busy_timeout_ms, flush, now_ms)
    conn = _connect(p, p, busy_timeout_ms, uri=False)
    try:
        _prepare(conn, p, busy_timeout_ms, flush, now_ms)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise store_error(exc, p) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _connect(p: str, target: str, busy_timeout_ms: int, *, uri: bool) -> StoreConnection:
    try:
        conn = sqlite3.connect(
            target,
            uri=uri,
            isolation_level=None,
            timeout=busy_timeout_ms / 1000,
            check_same_thread=False,
            factory=StoreConnection,
            # prepared statements kept per connection (the default is 128): a long-lived
            # connection (a gateway, `acomm mcp`, a follow) runs more distinct statements
            # than that, an IN list of each length being one
            cached_statements=CACHED_STATEMENTS,
        )
    except sqlite3.Error as exc:
        raise store_error(exc, p) from None
    conn.path = paths.absolute(p)
    conn.read_only = uri
    conn.busy_ms = busy_timeout_ms
    with _LIVE_LOCK:
        _LIVE[conn.path] = _LIVE.get(conn.path, 0) + 1
    conn._live = True
    return conn


def open_read_only(p: str, busy_timeout_ms: int, flush: str, now_ms: int) -> sqlite3.Connection:
    """A connection that cannot write: reads work on a read-only mount and on a full disk.

    First mode=ro (it shares the WAL and its index with writers). When SQLite cannot make
    or size the -shm index (a read-only directory, a full disk) and the WAL holds nothing,
    the file itself is the whole store: it is opened immutable=1 (no locks, no -shm). A
    store whose schema is older than this acomm is migrated by a writable open first."""
    from pathlib import Path  # not on the writing path

    base = Path(paths.absolute(p)).as_uri()
    try:
        conn, version = _open_checked(p, f"{base}?mode=ro", busy_timeout_ms)
    except sqlite3.DatabaseError as exc:
        if (
            _code(exc) not in ("SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_FULL", "SQLITE_READONLY")
            or _wal_bytes(p) != 0
        ):
            raise store_error(exc, p) from None
        try:
            conn, version = _open_checked(p, f"{base}?immutable=1", busy_timeout_ms)
        except sqlite3.DatabaseError as exc2:
            raise store_error(exc2, p) from None
    if version < len(MIGRATIONS):
        conn.close()
        return _migrated(p, busy_timeout_ms, flush, now_ms, version)
    return conn


def _open_checked(p: str, uri: str, busy_ms: int) -> tuple[sqlite3.Connection, int]:
    conn = _connect(p, uri, busy_ms, uri=True)
    try:
        return conn, _check_version(conn, p, busy_ms)
    except BaseException:
        conn.close()
        raise


def _wal_bytes(p: str) -> int:
    try:
        return os.stat(f"{p}-wal").st_size
    except FileNotFoundError:
        return 0


def _migrated(p: str, busy_ms: int, flush: str, now_ms: int, version: int) -> sqlite3.Connection:
    """An older store, opened for reading: bring it up to date as any writer would."""
    try:
        return open_store(p, busy_timeout_ms=busy_ms, flush=flush, now_ms=now_ms)
    except StoreReadOnly as exc:
        raise StoreReadOnly(
            f"store {p} has schema version {version} and needs upgrading to "
            f"{len(MIGRATIONS)}, but it is read-only ({exc.message})",
            path=str(p),
        ) from None


def _check_version(conn: sqlite3.Connection, p: str, busy_ms: int) -> int:
    """The schema version, refusing stores newer than this acomm or not acomm's at all."""
    conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise StoreUnavailable(
            f"store {p} has schema version {version}, newer than this acomm understands "
            f"({len(MIGRATIONS)}); upgrade acomm to use it",
            path=str(p),
            schema_version=version,
        )
    if version == 0 and conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
        raise StoreUnavailable(
            f"{p} is a SQLite database but not an acomm store; refusing to touch it", path=str(p)
        )
    _register_functions(conn)
    return version


def _prepare(conn: sqlite3.Connection, p: str, busy_ms: int, flush: str, now_ms: int) -> None:
    version = _check_version(conn, p, busy_ms)
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA synchronous = {SYNCHRONOUS.get(flush, 'NORMAL')}")
    if flush != "batch":
        conn.execute(
            "PRAGMA wal_autocheckpoint = 0"
            if flush == "manual"
            else "PRAGMA wal_autocheckpoint = 1000"
        )
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
            conn.execute(
                "CREATE TABLE IF NOT EXISTS _acomm_migrations "
                "(name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)"
            )
        for fn in MIGRATIONS[version:]:
            fn(conn, now_ms)
            conn.execute("INSERT INTO _acomm_migrations VALUES (?, ?)", (fn.__name__, now_ms))
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")


def _regexp(pattern: str, value: str | None) -> bool:
    return value is not None and _compiled(pattern).search(value)


def _compiled(pattern: str) -> GrepPattern:
    cached = _PATTERNS.get(pattern)
    if cached is None:
        from acomm_cli.model import grep_pattern

        cached = _PATTERNS[pattern] = grep_pattern(pattern)
    return cached


_PATTERNS: dict[str, GrepPattern] = {}


def _register_functions(conn: sqlite3.Connection) -> None:
    from acomm_cli.topics import matches

    conn.create_function("topic_match", 2, lambda p, t: matches(t, p), deterministic=True)
    conn.create_function("regexp", 2, _regexp, deterministic=True)


def maybe_checkpoint(
    conn: sqlite3.Connection, batch_messages: int, batch_interval_ms: int, now_ms: int
) -> bool:
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
    if (
        wal < PAGES_PER_COMMIT * (page + 24) * batch_messages
        and now_ms - db.st_mtime * 1000 < batch_interval_ms
    ):
        return False
    try:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.OperationalError:
        return False  # a full disk: the command has committed to the WAL; a later one retries
    return True
