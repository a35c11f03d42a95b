"""The mailbox bridge (docs/BRIDGE.md): mirror unread deliveries as JSON files, append to Claude
Code team inboxes, and ingest agents' response files.

The store stays the source of truth. `sync` reconciles the files with it, idempotently:
mirrors are written after the store committed (a failed write or removal never undoes a
command; it is recorded and retried), a mirror exists exactly while its delivery is unread, a
deleted inbox file or a team entry set `read: true` marks the delivery read, and a response
file becomes a message through the normal pipeline, recorded as ingested in the same
transaction, and is deleted only once that message is committed (never sent twice).

The parts: `settings` (the configuration, what a sync did), `paths` (safe paths and writes),
`mirror` (inbox files, team entries, agent reads), `teams` (the native team inbox files),
`ingest` (response files) and `responses` (what a response file's object asks for).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3

from acomm_cli.bridge import mirror as mirrors
from acomm_cli.bridge.paths import under
from acomm_cli.bridge.settings import BridgeConfig, SyncResult, config
from acomm_cli.errors import UnsafePath
from acomm_cli.store import bridge as q
from acomm_cli.store import sending, write

__all__ = ["BridgeConfig", "SyncResult", "config", "prepare", "sync", "watermark"]


def sync(
    conn: sqlite3.Connection,
    cfg: BridgeConfig,
    now: int,
    *,
    after_message_id: int | None = None,
    full: bool = True,
) -> SyncResult:
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
    _make_dirs(cfg)
    if full and cfg.outbox_dir is not None:
        from acomm_cli.bridge import ingest  # only a full sync reads response files

        ingest.ingest(conn, cfg, now, result)
    if full:
        mirrors.agent_reads(conn, cfg, now, result)
    mirrors.remove(conn, cfg, now, result, full)
    mirrors.mirror(conn, cfg, now, result, None if full else after_message_id)
    return result


def _make_dirs(cfg: BridgeConfig) -> None:
    """The inbox and outbox roots exist once the bridge runs, before any mirror is
    written or response file looked for (each agent's own directory is made with its first
    mirror; an agent makes its outbox directory). A root that cannot be made is left to the
    parts that use it: a mirror write fails and is recorded, ingestion finds nothing."""
    for root in (cfg.inbox_dir, cfg.outbox_dir):
        if root is not None and not os.path.isdir(root):
            with contextlib.suppress(OSError, UnsafePath):
                under(root, [], create=True)


def watermark(conn: sqlite3.Connection) -> int:
    """The highest message id so far: a writing command mirrors the messages above it."""
    return sending.last_message_id(conn)


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
