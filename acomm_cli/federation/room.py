"""This node's copy of the state room (`fed_room`): agent ownership and fallbacks, the nodes
and how to reach them, heartbeats. Commands write the local copy AND queue the change
(`fed_room_changes`) for the gateway to apply to the room; until a gateway runs, `peers add`
registers a peer by hand and `fed pull` copies a peer's own entries from its store
(StoreTransport), which is how ownership made on B becomes visible on A."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import directory, remote
from acomm_cli.errors import NotFound, ValidationFailed
from acomm_cli.federation import identity
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


DEFAULT_TAKEOVER_GRACE_MS = 600_000  # federation.takeover_grace


def own(
    conn: sqlite3.Connection,
    agent: str,
    fallbacks: list[str],
    now: int,
    offline_after_ms: int,
    takeover_grace_ms: int = DEFAULT_TAKEOVER_GRACE_MS,
) -> dict[str, Any]:
    """`agent own AGENT [--fallback NODE]...`: this node owns the agent. An agent another
    node owns is taken over only once that node has been silent past the takeover grace
    (exit 5 naming the owner otherwise): one agent, one owner."""
    model.agent_id(agent, "agent")
    for n in fallbacks:
        identity.node_id(n, "fallback")
    with write(conn):
        me = identity.require(conn).node_id
        directory.known(conn, agent, "agent", now)
        if me in fallbacks:
            raise ValidationFailed(
                "fallback: the owner cannot be its own fallback", field="fallback", value=me
            )
        owner = remote.room_value(conn, "agents", agent).get("ownerNodeId")
        taken = isinstance(owner, str) and owner != me
        if taken and not stale(conn, str(owner), now, takeover_grace_ms):
            from acomm_cli.errors import InvalidState

            raise InvalidState(
                f"{agent!r} is owned by node {owner!r}, seen within the takeover grace "
                f"({takeover_grace_ms // 1000} s): that node must `agent disown` it first, or "
                "be silent past the grace (federation.takeover_grace)",
                field="agent",
                value=agent,
                owner_node=owner,
            )
        sql.room_put(conn, "agents", agent, _dump({"ownerNodeId": me}), now, queue=True)
        sql.room_put(
            conn,
            "routing",
            agent,
            _dump({"fallbackOwners": fallbacks}) if fallbacks else None,
            now,
            queue=True,
        )
        return where_doc(conn, me, agent, now, offline_after_ms)


def stale(conn: sqlite3.Connection, node: str, now: int, grace_ms: int) -> bool:
    """The node has not been seen for longer than the grace (or was never seen): what it
    owns may be taken over."""
    seen = remote.last_seen(conn, node)
    return seen is None or now - seen > grace_ms


def disown(conn: sqlite3.Connection, agent: str, now: int, offline_after_ms: int) -> dict[str, Any]:
    """`agent disown AGENT`: only the owner gives an agent up (exit 5 otherwise)."""
    from acomm_cli.errors import InvalidState

    model.agent_id(agent, "agent")
    with write(conn):
        me = identity.require(conn).node_id
        owner = remote.room_value(conn, "agents", agent).get("ownerNodeId")
        if owner is not None and owner != me:
            raise InvalidState(
                f"{agent!r} is owned by node {owner!r}, not this one",
                field="agent",
                value=agent,
                owner_node=owner,
            )
        if owner is not None:
            sql.room_put(conn, "agents", agent, None, now, queue=True)
            sql.room_put(conn, "routing", agent, None, now, queue=True)
        return where_doc(conn, me, agent, now, offline_after_ms)


def where(conn: sqlite3.Connection, agent: str, now: int, offline_after_ms: int) -> dict[str, Any]:
    model.agent_id(agent, "agent")
    me = identity.require(conn).node_id
    return where_doc(conn, me, agent, now, offline_after_ms)


def where_doc(
    conn: sqlite3.Connection, me: str, agent: str, now: int, offline_after_ms: int
) -> dict[str, Any]:
    """{agent, owner_node, fallback_nodes, online, route}: route is local, owner, fallback,
    no_owner or owner_offline, as a send would decide now."""
    rt = remote.route(conn, me, agent, now, offline_after_ms)
    owner = remote.room_value(conn, "agents", agent).get("ownerNodeId")
    fallbacks = remote.room_value(conn, "routing", agent).get("fallbackOwners", [])
    return {
        "agent": agent,
        "owner_node": owner,
        "fallback_nodes": fallbacks,
        "online": None if owner is None else remote.online(conn, me, owner, now, offline_after_ms),
        "route": rt.decision,
    }


# ---------------------------------------------------------------- nodes


def node_entry(conn: sqlite3.Connection, node: str) -> dict[str, Any]:
    return remote.room_value(conn, "nodes", node)


def heartbeat(conn: sqlite3.Connection, me: identity.Node, now: int) -> None:
    """Refresh this node's own `nodes.<self>` entry (lastSeenAt) in its copy, inside the
    caller's transaction; the gateway's heartbeats into the room replace this."""
    entry = node_entry(conn, me.node_id)
    entry.update(lastSeenAt=clock.iso(now), publicKey=me.public_paserk)
    sql.room_put(conn, "nodes", me.node_id, _dump(entry), now, queue=True)


def add_peer(conn: sqlite3.Connection, node: str, url: str, now: int) -> dict[str, Any]:
    """`peers add NODE --url URL`: register a peer in the room copy by hand (the stand-in
    until the gateway syncs the room). `store:PATH` urls are read by StoreTransport."""
    identity.node_id(node, "node")
    if not isinstance(url, str) or not url.strip():
        raise ValidationFailed("url: must not be empty", field="url")
    if url.startswith("store:"):
        from pathlib import Path

        url = "store:" + str(Path(url[len("store:") :]).expanduser().absolute())
    with write(conn):
        me = identity.require(conn).node_id
        if node == me:
            raise ValidationFailed("node: that is this node", field="node", value=node)
        entry = node_entry(conn, node)
        entry["url"] = url
        sql.room_put(conn, "nodes", node, _dump(entry), now, queue=False)
    return {"node": node, "url": url}


def peer_ids(conn: sqlite3.Connection, me: str) -> list[str]:
    return [k for k, _ in sql.room_map(conn, "nodes") if k != me]


def peers(conn: sqlite3.Connection, now: int, offline_after_ms: int) -> dict[str, Any]:
    """`peers`: {peers: [{node, url, online, last_seen_at, cursor, head, lag}]}."""
    me = identity.require(conn).node_id
    out = []
    for node in peer_ids(conn, me):
        entry = node_entry(conn, node)
        position, head, _ = sql.cursor(conn, node)
        seen = remote.last_seen(conn, node)
        out.append(
            {
                "node": node,
                "url": entry.get("url"),
                "online": remote.online(conn, me, node, now, offline_after_ms),
                "last_seen_at": clock.iso(seen),
                "cursor": position,
                "head": head,
                "lag": None if head is None else max(head - position, 0),
            }
        )
    return {"peers": out, "room": room_metadata(conn, now)}


ROOM_METADATA_MAX = 1000  # subscriptions, cursors: a node's entry stays small


def own_metadata(conn: sqlite3.Connection, me: str) -> dict[str, str]:
    """This node's entries of the room's `cursors` and `subscriptions` maps, as JSON text:
    how far it read each peer's outbox, and its agents' subscriptions and durable cursors.
    Metadata only: names and positions, never a message."""
    agents: dict[str, dict[str, list[dict[str, Any]]]] = {}
    subs = sql.agent_subscriptions(conn, ROOM_METADATA_MAX)
    for agent, channel, pattern in subs:
        entry = agents.setdefault(agent, {"subscriptions": [], "cursors": []})
        entry["subscriptions"].append({"channel": channel, "pattern": pattern})
    kept = sql.agent_cursors(conn, ROOM_METADATA_MAX)
    for agent, name, channel, position in kept:
        entry = agents.setdefault(agent, {"subscriptions": [], "cursors": []})
        entry["cursors"].append({"name": name, "channel": channel, "position": position})
    truncated = len(subs) >= ROOM_METADATA_MAX or len(kept) >= ROOM_METADATA_MAX
    return {
        "cursors": _dump({"ownerNodeId": me, "lastSeenSeqBySourceNode": sql.pull_positions(conn)}),
        "subscriptions": _dump(
            {"ownerNodeId": me, "agents": agents, **({"truncated": True} if truncated else {})}
        ),
    }


def _entries(conn: sqlite3.Connection, map_: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for key, raw in sql.room_map(conn, map_):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append((key, value))
    return out


def room_metadata(conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    """What the room says of every node's reading, as this node's copy has it: each node's
    cursor per source node, its agents' subscriptions and durable cursors, and the seeds'
    invite registry (state, seed, expected node; never a token or its hash)."""
    from datetime import datetime

    def ms(text: Any) -> int | None:
        try:
            return int(datetime.fromisoformat(text).timestamp() * 1000)
        except (TypeError, ValueError):
            return None

    cursors = {
        node: dict(v.get("lastSeenSeqBySourceNode") or {}) for node, v in _entries(conn, "cursors")
    }
    subscriptions, agent_cursors = [], []
    for node, v in _entries(conn, "subscriptions"):
        for agent, entry in sorted((v.get("agents") or {}).items()):
            for sub in entry.get("subscriptions", []):
                subscriptions.append({"node": node, "agent": agent, **sub})
            for cur in entry.get("cursors", []):
                agent_cursors.append({"node": node, "agent": agent, **cur})
    invites = []
    for invite_id, v in _entries(conn, "invites"):
        expires = ms(v.get("expiresAt"))
        state = (
            "revoked"
            if v.get("revokedAt")
            else "used"
            if v.get("usedAt")
            else "expired"
            if expires is not None and expires <= now
            else "pending"
        )
        invites.append(
            {
                "invite_id": invite_id,
                "seed": v.get("ownerNodeId"),
                "state": state,
                "expected_node": v.get("expectedNodeId"),
                "expires_at": v.get("expiresAt"),
                "used_by": v.get("usedBy"),
            }
        )
    seeds = sorted(node for node, v in _entries(conn, "nodes") if v.get("seed") is True)
    return {
        "seeds": seeds,
        "cursors": cursors,
        "subscriptions": subscriptions,
        "agent_cursors": agent_cursors,
        "invites": invites,
    }


def status(
    conn: sqlite3.Connection, now: int, offline_after_ms: int, latest: int = 5
) -> dict[str, Any]:
    """`fed status`: each peer's state (`ok`, `peer_unreachable`: its last pull failed, the
    reason in `error`; `never_pulled`), cursor and last pull, and the events refused from
    peers (how many, each peer's share, the `latest` newest with their reasons)."""
    me = identity.require(conn).node_id
    cursors = sql.cursor_rows(conn)
    by_peer = sql.rejected_by_source(conn)
    out = []
    for node in sorted(set(peer_ids(conn, me)) | set(cursors)):
        pulled = node in cursors
        position, head, pulled_at, error = cursors.get(node, (0, None, None, None))
        out.append(
            {
                "node": node,
                "url": node_entry(conn, node).get("url"),
                "state": "never_pulled" if not pulled else "peer_unreachable" if error else "ok",
                "online": remote.online(conn, me, node, now, offline_after_ms),
                "cursor": position,
                "head": head,
                "lag": None if head is None else max(head - position, 0),
                "pulled_at": clock.iso(pulled_at),
                "error": error,
                "rejected": by_peer.get(node, 0),
            }
        )
    return {
        "node_id": me,
        "peers": out,
        "rejected": {
            "count": sql.rejected_count(conn),
            "latest": [
                {
                    "node": r[0],
                    "seq": r[1],
                    "event_id": r[2],
                    "kind": r[3],
                    "reason": r[4],
                    "rejected_at": clock.iso(r[5]),
                }
                for r in sql.rejected_latest(conn, latest)
            ],
        },
        "room": room_metadata(conn, now),
    }


def url_of(conn: sqlite3.Connection, node: str) -> str:
    entry = node_entry(conn, node)
    if not entry:
        raise NotFound(
            f"no node {node!r} in this node's copy of the room", field="peer", value=node
        )
    return str(entry.get("url") or "")


_CAP_MAPS = ("capabilities.catalog", "capabilities.index")  # engine/capabilities.py writes them


def merge_peer_entries(
    conn: sqlite3.Connection, me: str, peer: str, entries: list[tuple[str, str, str]], now: int
) -> None:
    """Copy what a peer says about itself (its node entry, the agents it owns and their
    routing, the capabilities it publishes) into our copy; read from its store by
    StoreTransport. Never queued: the room already has them once a gateway runs. Our own
    url for the peer is kept. As in the room, a peer's claim on an agent or a capability
    another live node owns in our copy is not taken (see `claimable`)."""
    owned = {
        k
        for m, k, v in entries
        if m == "agents"
        and json.loads(v).get("ownerNodeId") == peer
        and claimable(conn, me, m, k, peer, now)
    }
    for map_, key, value in entries:
        if map_ == "nodes" and key == peer:
            entry = json.loads(value)
            entry["url"] = node_entry(conn, peer).get("url") or entry.get("url")
            sql.room_put(conn, "nodes", peer, _dump(entry), now, queue=False)
        elif map_ in ("agents", "routing") and key in owned:
            sql.room_put(conn, map_, key, value, now, queue=False)
        elif (
            map_ in _CAP_MAPS
            and json.loads(value).get("ownerNodeId") == peer
            and claimable(conn, me, map_, key, peer, now)
        ):
            sql.room_put(conn, map_, key, value, now, queue=False)
    # capabilities the peer unpublished: drop our copy of its catalog and index entries
    for map_ in _CAP_MAPS:
        theirs = {
            k for m, k, v in entries if m == map_ and json.loads(v).get("ownerNodeId") == peer
        }
        for key, value in sql.room_map(conn, map_):
            if json.loads(value).get("ownerNodeId") == peer and key not in theirs:
                sql.room_put(conn, map_, key, None, now, queue=False)
    # agents the peer gave up: drop our copy of its ownership
    for key, value in sql.room_map(conn, "agents"):
        if json.loads(value).get("ownerNodeId") == peer and key not in owned:
            sql.room_put(conn, "agents", key, None, now, queue=False)
            sql.room_put(conn, "routing", key, None, now, queue=False)


def claimable(
    conn: sqlite3.Connection,
    me: str,
    map_: str,
    key: str,
    node: str,
    now: int,
    grace_ms: int = DEFAULT_TAKEOVER_GRACE_MS,
) -> bool:
    """A peer `node` may hold this entry in our copy: no owner for it (and, for an agent,
    not a participant of a channel here: one of this node's own), or `node`'s own, or its
    owner (never this node, live to itself) has been silent past the takeover grace: the
    room's rule (roomsync.RoomGuard). A peer read by StoreTransport could write our
    store file anyway; the rule keeps one owner per entry in our copy."""
    owner = remote.room_value(conn, map_, key).get("ownerNodeId")
    if not isinstance(owner, str):
        # no one's: a peer's claim is taken, unless it is one of this node's own agents
        return map_ != "agents" or not sql.local_participant(conn, key)
    if owner == node:
        return True
    return owner != me and stale(conn, owner, now, grace_ms)
