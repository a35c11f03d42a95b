"""Stores for the benchmarks: small fresh ones, and a large one built once and cached.

The large store is built with the real pipeline (`sending.send_batch` in chunks) so it has the
real schema, indexes and delivery rows; it is cached under bench/out/ keyed by its size, the
schema version and a hash of the migrations, and copied before a benchmark writes to it.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from pathlib import Path
from time import perf_counter

from harness import OUT, WORK

from acomm_cli import clock
from acomm_cli.engine import channels, directory, opening, sending
from acomm_cli.model import ChannelConfig, SendRequest
from acomm_cli.store import migrations, migrations_001_005, migrations_006_010

# Bump when the layout below changes, so that cached stores are rebuilt.
BUILD_VERSION = 3
CHUNK = 50_000
READER = "reader"
UNREAD_FOR_READER = 100
AGENTS = [f"a{i:02d}" for i in range(50)]

LAYOUT = (
    "Channels: `team` (group: alice, bob, carol; the channel `acomm send` writes to), `ops` "
    "(group: a00, a01, reader) and about 350 implicit direct channels among 50 agents a00-a49 "
    "(7 partners each). Traffic: 10% team, 10% ops, 80% direct (every 20th a `command`, with a "
    "correlation id); about 1.2 delivery rows per message. Every delivery is `read` except the "
    f"newest 100 of `{READER}` (an agent 100 messages behind)."
)


def schema_key() -> str:
    # every module holding migration bodies (m001-m010 moved out of migrations.py unchanged)
    text = b"".join(
        Path(m.__file__).read_bytes() for m in (migrations, migrations_001_005, migrations_006_010)
    )
    return f"s{len(migrations.MIGRATIONS)}-{hashlib.sha1(text).hexdigest()[:8]}-b{BUILD_VERSION}"


def remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def group_store(path: Path) -> Path:
    """A fresh store with the group channel `team` (alice owns it; bob and carol joined)."""
    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    now = clock.now_ms()
    conn = opening.connect(path, create=True, now=now)
    try:
        channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), now)
        for agent in ("bob", "carol"):
            channels.join_channel(conn, "team", agent, "member", now, by="alice")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def direct_store(path: Path) -> Path:
    """A fresh store with the direct channel `dm` between alice (owner) and bob."""
    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    now = clock.now_ms()
    conn = opening.connect(path, create=True, now=now)
    try:
        channels.create_channel(conn, "dm", "direct", "alice", ChannelConfig(), now)
        channels.join_channel(conn, "dm", "bob", "member", now, by="alice")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def copy_store(src: Path, dst: Path) -> Path:
    remove(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def _item(i: int) -> tuple[SendRequest, str | None]:
    body = f"message {i}: status update with a few words of payload, like agents send"
    slot = i % 10
    if slot == 0:
        return SendRequest(
            sender=("alice", "bob", "carol")[i // 10 % 3], content=body, channel="team"
        ), None
    if slot == 1:
        return SendRequest(sender=("a00", "a01")[i // 10 % 2], content=body, channel="ops"), None
    a = i % 50
    b = (a + 1 + (i // 50) % 7) % 50
    kind = "command" if i % 20 == 3 else "text"
    return SendRequest(sender=AGENTS[a], content=body, type=kind), AGENTS[b]


def _build(path: Path, n: int) -> None:
    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = perf_counter()
    now = clock.now_ms() - n  # one millisecond per message, ending about now
    conn = opening.connect(path, create=True, now=now)
    try:
        conn.execute("PRAGMA cache_size = -262144")  # 256 MiB for the build only
        # a new store's directory is strict: every name that sends or reads here registered
        directory.register_many(conn, sorted({"alice", "bob", "carol", READER, *AGENTS}), now)
        channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), now)
        for agent in ("bob", "carol"):
            channels.join_channel(conn, "team", agent, "member", now, by="alice")
        channels.create_channel(conn, "ops", "group", "a00", ChannelConfig(), now)
        for agent in ("a01", READER):
            channels.join_channel(conn, "ops", agent, "member", now, by="a00")
        for lo in range(0, n, CHUNK):
            hi = min(n, lo + CHUNK)
            items = [(*_item(i), i + 1) for i in range(lo, hi)]
            results = sending.send_batch(conn, items, now + lo)
            first = results[0].id
            conn.execute(
                "UPDATE deliveries SET state = 'read', read_at = delivered_at"
                " WHERE message_id >= ? AND state = 'unread'",
                (first,),
            )
            print(
                f"  built {hi:,} / {n:,} messages ({perf_counter() - start:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
        chosen = [
            r[0]
            for r in conn.execute(
                "SELECT message_id FROM deliveries WHERE recipient = ? ORDER BY message_id DESC"
                " LIMIT ?",
                (READER, UNREAD_FOR_READER),
            )
        ]
        conn.executemany(
            "UPDATE deliveries SET state = 'unread', read_at = NULL"
            " WHERE message_id = ? AND recipient = ?",
            [(m, READER) for m in chosen],
        )
        count = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        if count < n:
            raise RuntimeError(f"built {count} messages, wanted {n}")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    print(
        f"  built the {n:,}-message store in {perf_counter() - start:.0f} s",
        file=sys.stderr,
        flush=True,
    )


def big_store(n: int) -> tuple[Path, bool]:
    """The cached store of `n` messages (built when missing); returns (path, built now)."""
    key = schema_key()
    path = OUT / f"big-{n}-{key}.acomm"
    if path.exists():
        try:
            conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
            ok = conn.execute("SELECT count(*) FROM messages").fetchone()[0] >= n
            conn.close()
        except sqlite3.Error:
            ok = False
        if ok:
            return path, False
    for stale in OUT.glob(f"big-{n}-*.acomm*"):
        stale.unlink()
    print(f"building a {n:,}-message store (cached as {path.name}) ...", file=sys.stderr)
    tmp = OUT / f"building-{path.name}"
    _build(tmp, n)
    tmp.rename(path)
    remove(tmp)
    return path, True


def work_copy(n: int, name: str = "big.acomm") -> Path:
    src, _ = big_store(n)
    return copy_store(src, WORK / name)
