"""Other SQLite-backed queues, run beside acomm in the same invocation.

persist-queue (`SQLiteAckQueue`), litequeue (`LiteQueue`) and huey's `SqliteStorage` are the
`bench` extra (`pip install -e '.[bench]'`); a peer that cannot be imported is skipped with a
note. Each peer gets its own fresh file and, like acomm, WAL and the synchronous level of
acomm's store (acomm's default `store.flush: batch` is NORMAL): the peers' own defaults differ
(persist-queue and huey leave SQLite's FULL, litequeue sets NORMAL), and the comparison is of
the work per message, not of how often each one syncs.
"""

from __future__ import annotations

import importlib
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

from stores import remove

BODY = "hello from the benchmark"


@dataclass
class Peer:
    name: str
    put: Callable[[], None]  # one message in, one transaction
    close: Callable[[], None]
    take: Callable[[], None] | None = None  # one message out and acknowledged, if it can
    conn: sqlite3.Connection | None = None  # the connection a put writes on (pages_per_commit)
    file: Path | None = None  # its database file


def _sync(conn: sqlite3.Connection, synchronous: str) -> None:
    conn.execute(f"PRAGMA synchronous = {synchronous}")


def _persist_queue(path: Path, synchronous: str) -> Peer:
    persistqueue = importlib.import_module("persistqueue")
    q = persistqueue.SQLiteAckQueue(str(path), auto_commit=True, multithreading=False)
    _sync(q._putter, synchronous)

    def take() -> None:
        item = q.get(block=False)
        q.ack(item)

    return Peer(
        "persist-queue",
        lambda: q.put(BODY),
        q.close if hasattr(q, "close") else lambda: None,
        take,
        q._putter,
        path / q.db_file_name,
    )


def _litequeue(path: Path, synchronous: str) -> Peer:
    litequeue = importlib.import_module("litequeue")
    q = litequeue.LiteQueue(str(path))
    _sync(q.conn, synchronous)

    def take() -> None:
        msg = q.pop()
        q.done(msg.message_id)

    return Peer("litequeue", lambda: q.put(BODY), q.conn.close, take)


def _huey(path: Path, synchronous: str) -> Peer:
    storage = importlib.import_module("huey.storage")
    s = storage.SqliteStorage("bench", filename=str(path))
    _sync(s.conn, synchronous)
    data = BODY.encode()
    return Peer("huey SqliteStorage", lambda: s.enqueue(data), s.close)


MAKERS = {"persist-queue": _persist_queue, "litequeue": _litequeue, "huey SqliteStorage": _huey}


def open_peers(
    workdir: Path, synchronous: str, names: tuple[str, ...] = tuple(MAKERS)
) -> tuple[list[Peer], list[str]]:
    """Fresh queues of the peers that import; notes for those that do not."""
    peers, notes = [], []
    for name in names:
        path = workdir / f"peer-{name.split()[0]}.db"
        if path.is_dir():  # persist-queue takes a directory and keeps data.db in it
            shutil.rmtree(path)
        remove(path)
        try:
            peers.append(MAKERS[name](path, synchronous))
        except Exception as exc:  # not installed, or an API that moved: skip it, say so
            notes.append(f"{name} skipped: {type(exc).__name__}: {exc}")
    return peers, notes


def pages_per_commit(
    conn: sqlite3.Connection, file: Path, one: Callable[[], object], n: int = 200
) -> float:
    """WAL frames (pages) that `one` (a transaction) writes, on average over `n` of them.
    With WAL and synchronous=NORMAL a commit writes each page it changed to the WAL, and a
    checkpoint copies those pages back (syncing both files) once the WAL holds
    wal_autocheckpoint of them: the cost of a small transaction follows its page count.
    Untimed; the automatic checkpoint is off while it counts and restored after."""
    before = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        for _ in range(n):
            one()
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        wal = Path(str(file) + "-wal")
        size = wal.stat().st_size if wal.exists() else 0
        return max(0, size - 32) / (page + 24) / n  # a 32-byte header, 24 bytes a frame
    finally:
        conn.execute(f"PRAGMA wal_autocheckpoint = {before}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def put_round(peer: Peer, k: int) -> Callable[[], float]:
    def run() -> float:
        t0 = perf_counter()
        for _ in range(k):
            peer.put()
        return perf_counter() - t0

    return run


def take_round(peer: Peer, k: int) -> Callable[[], float]:
    """k messages put (untimed), then taken and acknowledged one by one (timed)."""
    assert peer.take is not None

    def run() -> float:
        for _ in range(k):
            peer.put()
        take = peer.take
        assert take is not None
        t0 = perf_counter()
        for _ in range(k):
            take()
        return perf_counter() - t0

    return run
