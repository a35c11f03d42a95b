"""What a running gateway tells the short commands: a small JSON file beside the store
(`<store>.gateway.json`: pid, listen, public url, room_synced), rewritten atomically by the
gateway and removed when it stops; `gateway status` reads it with the store. A file, not a
table: it says whether a process is alive, which the store cannot know after a SIGKILL, and
writing it never contends for the store's write lock."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from acomm_cli.federation import identity, room
from acomm_cli.store import federation as sql


def state_path(store_path: Path) -> Path:
    return Path(str(store_path) + ".gateway.json")


def write_state(store_path: Path, state: dict[str, Any]) -> None:
    path = state_path(store_path)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, separators=(",", ":")))
    os.replace(tmp, path)


def clear_state(store_path: Path) -> None:
    try:
        state_path(store_path).unlink()
    except FileNotFoundError:
        pass


def read_state(store_path: Path) -> dict[str, Any] | None:
    """The running gateway's state, or None (no file, or its process is gone)."""
    try:
        state = json.loads(state_path(store_path).read_text())
        pid = int(state["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, another user's
    return state if isinstance(state, dict) else None


def status(conn: sqlite3.Connection, store_path: Path) -> dict[str, Any]:
    """`gateway status`: {node_id, listen, room_synced, peers, outbox_head}; listen is null
    and room_synced false when no gateway runs for this store."""
    me = identity.require(conn).node_id
    state = read_state(store_path) or {}
    return {
        "node_id": me,
        "listen": state.get("listen"),
        "room_synced": bool(state.get("room_synced", False)),
        "peers": room.peer_ids(conn, me),
        "outbox_head": sql.outbox_head(conn),
    }
