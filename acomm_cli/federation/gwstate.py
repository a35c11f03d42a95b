"""What a running gateway tells the short commands: a small JSON file beside the store
(`<store>.gateway.json`: pid, listen, public url, room_synced, heartbeat), rewritten
atomically by the gateway every few seconds (also while its store is locked) and removed when
it stops; `gateway status` reads it with the store. A file, not a table: it says whether a
process is alive, which the store cannot know after a SIGKILL, and writing it never contends
for the store's write lock. A file whose process is gone, or whose heartbeat is older than
STALE_AFTER_MS (a gateway SIGKILLed and its pid reused, or hung), is no running gateway.

A gateway running `--push` on a NATS node also says whether its outbox publisher is at work
(`publisher`: connected to NATS at its last look); a short command that appended to the
outbox then leaves the publish to it (`publisher_live`). Every such command reads this module
after its commit: it imports little at the top, the rest inside the functions that need it."""

from __future__ import annotations

import json
import os

TYPE_CHECKING = False  # typing's, without importing typing (a command's start-up time)
if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path
    from typing import Any

    from acomm_cli.errors import GatewayNotRunning

STALE_AFTER_MS = 30_000  # six missed heartbeats (the gateway writes the file every 5 s)
# a publisher trusted with a command's rows: its gateway's heartbeat at most three beats old
# (an older one may be hung: the command publishes itself)
PUBLISHER_STALE_MS = 15_000


def state_path(store_path: Path | str) -> Path:
    from pathlib import Path

    return Path(str(store_path) + ".gateway.json")


def write_state(store_path: Path, state: dict[str, Any]) -> None:
    path = state_path(store_path)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(state, separators=(",", ":")))
    os.replace(tmp, path)


def publisher_live(store_path: str, now_ms: int) -> bool:
    """True when a gateway with a fresh heartbeat runs this store's NATS outbox publisher
    and last found NATS connected: it publishes what a command appended, woken by the
    commit. One that stops or is killed after this answer loses nothing: the rows wait in
    the outbox for the next publisher (the gateway again, any command that appends, tick)."""
    state, _ = _live(store_path, now_ms)
    publisher = state.get("publisher") if state is not None else None
    beat = state.get("heartbeat_ms") if state is not None else None
    return (
        isinstance(publisher, dict)
        and publisher.get("connected") is True
        and isinstance(beat, int)
        and now_ms - beat <= PUBLISHER_STALE_MS
    )


def clear_state(store_path: Path) -> None:
    try:
        state_path(store_path).unlink()
    except FileNotFoundError:
        pass


def read_state(store_path: Path, now_ms: int | None = None) -> dict[str, Any] | None:
    """The running gateway's state, or None (no file, its process gone, or, given `now_ms`,
    its heartbeat stale)."""
    return _live(store_path, now_ms)[0]


def _live(store_path: Path | str, now_ms: int | None) -> tuple[dict[str, Any] | None, str]:
    """(the state, "") for a running gateway, else (None, why not)."""
    name = str(store_path) + ".gateway.json"
    try:
        with open(name, encoding="utf-8") as f:
            state = json.loads(f.read())
        pid = int(state["pid"])
    except FileNotFoundError:
        return None, "no gateway has run since the last one stopped (no state file)"
    except (OSError, ValueError, KeyError, TypeError):
        return None, f"its state file {name} cannot be read"
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None, f"its process {pid} is gone (killed?)"
    except PermissionError:
        pass  # alive, another user's
    beat = state.get("heartbeat_ms")
    if now_ms is not None and isinstance(beat, int) and now_ms - beat > STALE_AFTER_MS:
        return None, (
            f"its last heartbeat was {(now_ms - beat) / 1000:.0f}s ago "
            f"(process {pid}: hung, or another process by now)"
        )
    return (state, "") if isinstance(state, dict) else (None, "its state file is not an object")


def status(conn: sqlite3.Connection, store_path: Path, now_ms: int) -> dict[str, Any]:
    """`gateway status`: {node_id, running, listen, room_synced, peers, outbox_head, pid,
    heartbeat_at, tls, pull}; listen is null, room_synced false and `not_running` says why
    when no gateway runs for this store."""
    from acomm_cli import clock
    from acomm_cli.federation import identity, room
    from acomm_cli.store import federation as sql

    me = identity.require(conn).node_id
    state, why = _live(store_path, now_ms)
    live = state or {}
    beat = live.get("heartbeat_ms")
    doc = {
        "node_id": me,
        "running": state is not None,
        "listen": live.get("listen"),
        "public_url": live.get("public_url"),
        "room_synced": bool(live.get("room_synced", False)),
        "peers": room.peer_ids(conn, me),
        "outbox_head": sql.outbox_head(conn),
        "pid": live.get("pid"),
        "heartbeat_at": clock.iso(beat) if isinstance(beat, int) else None,
        "tls": bool(live.get("tls", False)),
        "pull": live.get("pull"),
    }
    if state is None:
        doc["not_running"] = why
    return doc


def not_running(doc: dict[str, Any]) -> GatewayNotRunning | None:
    """The error `gateway status` exits with when the document says no gateway runs."""
    from acomm_cli.errors import GatewayNotRunning

    if doc["running"]:
        return None
    return GatewayNotRunning(
        f"no gateway is running for node {doc['node_id']}: {doc['not_running']}; "
        "start one with `acomm gateway serve`",
        field="gateway",
    )
