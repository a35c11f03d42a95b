"""Opening, creating and describing a store: what every command needs first, so it stays
small (the hot commands import it; statistics, doctor and compaction live in operations.py)."""

from __future__ import annotations

import os
import sqlite3

from acomm_cli.store import open_store
from acomm_cli.store.connection import StoreConnection, maybe_checkpoint

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from pathlib import Path
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass


def connect(
    path: str | os.PathLike[str],
    *,
    create: bool,
    busy_timeout_ms: int = 5000,
    flush: str = "batch",
    now: int = 0,
    read_only: bool = False,
    directory: str | None = None,
) -> sqlite3.Connection:
    """Open the store at `path`, creating and migrating it when asked; `read_only` for the
    commands that only read (they then work on a read-only mount or a full disk).
    `directory`: the configured `identity.directory` (None: the store's own default). A
    store created here is strict: names must be registered before they are used."""
    new = create and not os.path.exists(path)
    conn = open_store(
        path,
        create=create,
        read_only=read_only,
        busy_timeout_ms=busy_timeout_ms,
        flush=flush,
        now_ms=now,
    )
    if new:
        from acomm_cli.engine import directory as agent_directory

        agent_directory.set_default(conn, "strict")
    if directory is not None and isinstance(conn, StoreConnection):
        conn.directory = directory
    return conn


def init_store(path: str | Path, now: int, config_text: str | None = None) -> bool:
    """Create a store (and a commented config file beside it, if none is there).

    Returns False when a store was already there: initialising twice is harmless."""
    from pathlib import Path  # not imported by the hot commands (start-up time)

    path = Path(path)
    existed = path.exists()
    conn = connect(path, create=True, now=now)
    conn.close()
    if config_text is not None:
        cfg = path.parent / "config.yaml"
        if not cfg.exists():
            fd = os.open(cfg, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(config_text)
    return not existed


def batch_checkpoint(
    conn: sqlite3.Connection, batch_messages: int, batch_interval_ms: int, now: int
) -> bool:
    """`store.flush: batch`, applied after each writing command."""
    return maybe_checkpoint(conn, batch_messages, batch_interval_ms, now)


@dataclass(frozen=True)
class StoreStatus:
    """What `acomm status` reports about a store."""

    path: str
    store_id: str | None
    schema_version: int
    channels: int
    messages: int
    unread: int
    dead_letters: int
    bytes: int
    wal_bytes: int
    flush: str


def status(conn: sqlite3.Connection, path: str | Path, flush: str) -> StoreStatus:
    from pathlib import Path  # not imported by the hot commands (start-up time)

    from acomm_cli.store import stats  # nor this (`acomm info` only)

    path = Path(path)
    c = stats.counts(conn)
    wal = Path(str(path) + "-wal")
    return StoreStatus(
        path=str(path.resolve()),
        store_id=stats.meta(conn, "store_id"),
        schema_version=stats.schema_version(conn),
        bytes=path.stat().st_size,
        wal_bytes=wal.stat().st_size if wal.exists() else 0,
        flush=flush,
        **c,
    )
