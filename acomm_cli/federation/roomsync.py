"""The gateway's half of the state room: the Yjs document <-> this node's SQLite copy.

`Mirror` keeps `fed_room` (what short commands read) in step with the room document: the
changes commands queued (`fed_room_changes`) go into the document, the document's entries
(its `nodes`, `agents`, `routing` and `capabilities.*` maps, values as JSON text) come back
into `fed_room`, and the gateway's heartbeat refreshes `nodes.<self>`. One write transaction
per pass.

`join` is a joining gateway's client: it trades its invite (or, once it has joined, a node
proof) for a ticket at the seed's exchange, then speaks the Yjs sync protocol over a
WebSocket (httpx-ws) with that ticket, reconnecting with a fresh proof when the seed goes
away. pycrdt and httpx are imported inside: this module loads only in `gateway serve`."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from acomm_cli import clock
from acomm_cli.federation import identity, nonces
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

# capabilities.*: the capability catalog (capability id -> its metadata, not its schema) and
# index (agent -> the capabilities it executes), written by engine/capabilities.py;
# cursors.<node> and subscriptions.<node>: what each node reads (metadata, never a payload),
# written by its own gateway; invites.<id>: the seeds' invite registry (seeds.py)
MAPS = (
    "nodes",
    "agents",
    "routing",
    "capabilities.catalog",
    "capabilities.index",
    "cursors",
    "subscriptions",
    "invites",
)
ROOM_PATH = "/ansible/yjs/control"
EXCHANGE_PATH = "/ansible/auth/exchange"
EXCHANGE_DEADLINE_S = 30.0  # the whole exchange with the seed, however slowly it answers
log = logging.getLogger("acomm.gateway")


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class Mirror:
    """The room document and this node's copy of it."""

    def __init__(self, doc: Any, me: identity.Node, public_url: str, *, seed: bool = False) -> None:
        from pycrdt import Map

        self.doc, self.me, self.public_url, self.seed = doc, me, public_url, seed
        self.maps = {name: doc.get(name, type=Map) for name in MAPS}
        self.dirty: set[tuple[str, str]] = set()
        self.full = True  # the first pass copies every entry
        for name, ymap in self.maps.items():
            ymap.observe(partial(self._changed, name))

    def _changed(self, name: str, event: Any, *_: Any) -> None:  # (event[, transaction])
        self.dirty.update((name, key) for key in event.keys)

    def sync(self, conn: sqlite3.Connection, now: int, *, heartbeat: bool) -> int:
        """One pass: queued changes into the room, the heartbeat, the room into fed_room.
        Returns how many queued changes were applied. A failed pass (a locked store) is
        redone whole by the next: applying a queued change twice sets the same value."""
        was_full = self.full
        try:
            return self._sync(conn, now, heartbeat)
        except BaseException:
            self.full = was_full
            raise

    def _sync(self, conn: sqlite3.Connection, now: int, heartbeat: bool) -> int:
        with write(conn):
            changes = sql.pending_room_changes(conn)
            # one room transaction: an agent's owner and its routing arrive as one update
            with self.doc.transaction():
                for _, map_, key, value in changes:
                    ymap = self.maps.get(map_)
                    if ymap is None:
                        continue  # a map the room does not carry: dropped, not retried
                    if value is None:
                        if key in ymap:
                            del ymap[key]
                    elif ymap.get(key) != value:
                        ymap[key] = value
            if changes:
                sql.mark_room_changes_applied(conn, changes[-1][0], now)
            if heartbeat:
                self._heartbeat(now)
                self._metadata(conn)
            keys = set(self.dirty)
            # the document read in one transaction: each read alone would open (and
            # commit) one of its own, the most of a pass over a large room
            with self.doc.transaction():
                if self.full:
                    keys |= {(m, k) for m, ymap in self.maps.items() for k in ymap.keys()}
                values = self._values(keys | {("agents", k) for m, k in keys if m == "routing"})
            owners = {k: _owner(values[("agents", k)]) for m, k in keys if m == "agents"}
            owners.update((k, _owner(values[("agents", k)])) for m, k in keys if m == "routing")
            for map_, key in sorted(keys):
                value = values[(map_, key)]
                if map_ in ("agents", "routing") and self._ours_unclaimed(conn, key, owners[key]):
                    continue
                sql.room_put(
                    conn, map_, key, value if isinstance(value, str) else None, now, queue=False
                )
        self.full = False
        self.dirty -= keys
        return len(changes)

    def _values(self, keys: set[tuple[str, str]]) -> dict[tuple[str, str], Any]:
        """The entries' values (None: absent); a map with many of them read whole."""
        out: dict[tuple[str, str], Any] = {}
        for name, ymap in self.maps.items():
            wanted = [k for m, k in keys if m == name]
            if len(wanted) > 64:
                whole = ymap.to_py() or {}
                out.update(((name, k), whole.get(k)) for k in wanted)
            else:
                out.update(((name, k), ymap.get(k)) for k in wanted)
        return out

    def _ours_unclaimed(self, conn: sqlite3.Connection, agent: str, owner: str | None) -> bool:
        """An agent no node owns in our copy that takes part in a channel here is this
        node's own: another node's claim on it in the room is not copied (so this node
        neither routes its messages away nor lets that node speak as it)."""
        if owner is None or owner == self.me.node_id:
            return False
        raw = sql.room_get(conn, "agents", agent)
        return (raw is None or _owner(raw) is None) and sql.local_participant(conn, agent)

    def _heartbeat(self, now: int) -> None:
        nodes = self.maps["nodes"]
        raw = nodes.get(self.me.node_id)
        entry = json.loads(raw) if isinstance(raw, str) else {}
        entry.update(
            lastSeenAt=clock.iso(now), url=self.public_url, publicKey=self.me.public_paserk
        )
        if self.seed:
            entry["seed"] = True
        else:
            entry.pop("seed", None)
        nodes[self.me.node_id] = _dump(entry)

    def _metadata(self, conn: sqlite3.Connection) -> None:
        """This node's read positions and its agents' subscriptions into the room, when
        they changed (with the heartbeat, not every pass)."""
        from acomm_cli.federation import room

        for map_, value in room.own_metadata(conn, self.me.node_id).items():
            if self.maps[map_].get(self.me.node_id) != value:
                self.maps[map_][self.me.node_id] = value


@dataclass
class JoinState:
    """What the joining side knows: whether it has joined (then it rejoins by proof), and
    whether its document is in sync with a seed's room now, and which seed's."""

    invite: str | None
    joined: bool = False
    synced: bool = False
    last_error: str | None = field(default=None)
    seed_url: str | None = field(default=None)


class _Refused(Exception):
    """The seed answered with an HTTP refusal: (status, code)."""

    def __init__(self, status: int, code: str, message: str = "") -> None:
        # the seed's message says why (a clock off by minutes is a replay_detected too)
        super().__init__(f"{status} {code}" + (f": {message}" if message else ""))
        self.status, self.code = status, code


async def exchange(client: Any, base: str, me: identity.Node, invite: str | None) -> str:
    """POST the exchange: an invite (with this node's key and proof, so that the seed records
    the key for later rejoins) or a node proof alone. Returns the wsTicket."""
    nonce = nonces.stamped_nonce(clock.now_ms())  # its time, signed by the proof
    body: dict[str, Any] = {
        "nodeId": me.node_id,
        "nonce": nonce,
        "nodeProof": identity.sign_proof(me.private_key, me.node_id, nonce),
        "publicKey": me.public_paserk,
    }
    if invite is not None:
        body["inviteToken"] = invite
    import anyio

    # the client's timeouts are per read: a seed answering a byte at a time would hold the
    # join forever; past the deadline it is TimeoutError, noted and retried like a lost seed
    with anyio.fail_after(EXCHANGE_DEADLINE_S):
        r = await client.post(base + EXCHANGE_PATH, json=body)
    if r.status_code != 200:
        raise _Refused(r.status_code, _code(r), _message(r))
    return str(r.json()["wsTicket"])


def _code(response: Any) -> str:
    try:
        return str(response.json()["error"]["code"])
    except Exception:  # not JSON, or (a refused upgrade) a body that was never read
        return "http_error"


def _message(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])
    except Exception:  # not JSON, or no message
        return ""


async def join(
    base: str | list[str],
    me: identity.Node,
    doc: Any,
    state: JoinState,
    on_synced: Callable[[], None],
    retry_max_s: float = 15.0,
) -> None:
    """Keep this node's document connected to a seed's room, forever (cancelled at
    shutdown). `base` is one seed's url or a list: they are tried in order, and a seed
    that is down, refusing or lost hands over to the next one at once; a whole round that
    failed waits, with back-off, before the next. Only the urls given: a seed the room
    names is what a member says of itself, and this node's proof (or invite) is for the
    seeds its operator chose."""
    import anyio
    import httpx

    from acomm_cli.federation.http_transport import tls_verify

    given = [base] if isinstance(base, str) else list(base)
    given = [b.rstrip("/") for b in given]
    delay, turn = 1.0, 0
    async with httpx.AsyncClient(timeout=10.0, verify=tls_verify()) as client:
        while True:
            candidates = given
            url = candidates[turn % len(candidates)]
            state.seed_url = url
            connected = False
            try:
                connected = await _session(client, url, me, doc, state, on_synced)
                delay = 1.0
            except _Refused as exc:
                state.last_error = str(exc)
                last_of_round = turn % len(candidates) == len(candidates) - 1
                if state.invite is not None and (
                    exc.code in ("token_already_used", "node_already_joined")
                    # a seed that has not yet heard of an invite another seed minted says
                    # invalid_token: the invite is dropped only once every seed said so
                    or (exc.code == "invalid_token" and last_of_round)
                ):
                    state.invite = None  # perhaps joined before: try the node proof
                log.warning("the seed at %s refused this node: %s", url, exc)
            except Exception as exc:  # the seed going away is the normal case
                # (a closed socket, a reset, a restart; from the session's task group, as a
                # group): noted, retried with back-off
                leaf = _leaf(exc)
                state.last_error = f"{type(leaf).__name__}: {leaf}"
                log.warning("lost the seed's room at %s (%s); retrying", url, state.last_error)
            state.synced = False
            if connected:  # it ran: start again from the first seed of the list
                turn = 0
                await anyio.sleep(0.2)
                continue
            turn += 1
            if turn % len(candidates) == 0:  # a whole round failed: back off
                turn = 0
                await anyio.sleep(delay)
                delay = min(delay * 2, retry_max_s)
            else:
                await anyio.sleep(0.05)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _session(
    client: Any,
    base: str,
    me: identity.Node,
    doc: Any,
    state: JoinState,
    on_synced: Callable[[], None],
) -> bool:
    """One connection: exchange, upgrade with the ticket, sync until the socket closes.
    True when it was connected (False never returns: a failure raises)."""
    import anyio
    from httpx_ws import WebSocketUpgradeError, aconnect_ws
    from pycrdt import (
        YMessageType,
        YSyncMessageType,
        create_sync_message,
        create_update_message,
        handle_sync_message,
    )

    ticket = await exchange(client, base, me, None if state.joined else state.invite)
    headers = {"Authorization": f"Bearer {ticket}", "X-Acomm-Node": me.node_id}
    ws: Any
    try:
        async with aconnect_ws(
            base + ROOM_PATH,
            client,
            headers=headers,
            keepalive_ping_interval_seconds=10,
            keepalive_ping_timeout_seconds=10,
        ) as ws:
            state.joined, state.invite, state.last_error = True, None, None

            # what this document changes goes to the seed, except what the seed itself just
            # sent (an echo it has; a seed's room would check it against its write rule
            # again, a copy of the whole room each time)
            out_send, out_receive = anyio.create_memory_object_stream[bytes](
                max_buffer_size=float("inf")
            )
            from_seed = [False]

            def local(event: Any) -> None:
                if not from_seed[0]:
                    out_send.send_nowait(event.update)

            async def send_updates() -> None:
                async for update in out_receive:
                    await ws.send_bytes(create_update_message(update))

            subscription = doc.observe(local)
            try:
                await ws.send_bytes(create_sync_message(doc))
                async with anyio.create_task_group() as tg:
                    tg.start_soon(send_updates)
                    try:
                        while True:
                            message = bytes(await ws.receive_bytes())
                            if not message or message[0] != YMessageType.SYNC:
                                continue  # awareness: not used by acomm
                            from_seed[0] = True
                            try:
                                reply = handle_sync_message(message[1:], doc)
                            finally:
                                from_seed[0] = False
                            if message[1] == YSyncMessageType.SYNC_STEP2 and not state.synced:
                                state.synced = True
                                on_synced()
                            if reply is not None:
                                await ws.send_bytes(reply)
                    finally:
                        tg.cancel_scope.cancel()
            finally:
                doc.unobserve(subscription)
    except WebSocketUpgradeError as exc:
        raise _Refused(exc.response.status_code, _code(exc.response)) from None
    except Exception as exc:
        if not state.synced:
            raise
        # it ran, then the seed went away: said, and the caller starts over
        leaf = _leaf(exc)
        state.last_error = f"{type(leaf).__name__}: {leaf}"
        log.warning("lost the seed's room at %s (%s)", base, state.last_error)
    return True


# ---------------------------------------------------------------- who may write what

# the maps whose entries name their owner node in `ownerNodeId`
_OWNED = ("agents", "capabilities.catalog", "capabilities.index")


class RoomGuard:
    """The room's write rule, checked on every gateway for each update a connection sends,
    before the room applies it: a node writes only its own entries. `nodes.<N>` is N's
    alone; an `agents`, `capabilities.catalog` or `capabilities.index` entry may be set
    only to one its sender owns, and replaced or deleted only when the sender owned it (or
    its owner has been silent past the takeover grace, as `agent own` allows);
    `routing.<agent>` belongs to the agent's owner.

    The update is applied to a scratch copy of the room and the entries it changes are
    compared. An update that changes only the sender's entries goes to the room as it
    came. One that changes another's is refused and logged: its foreign entries are put
    back, in the same room transaction that applies it, so the room and every copy of it
    (the sender's too: it receives the correction) never hold the forged values, and the
    sender's later updates, which build on this one, still apply. An update that cannot
    be applied whole yet (it would wait in the room for a missing part, unchecked) or
    cannot be read is dropped."""

    def __init__(self, doc: Any, takeover_grace_ms: int) -> None:
        self.doc, self.grace_ms = doc, takeover_grace_ms
        self._scratch: Any = None
        self._kept = False  # the copy holds only what the room holds: kept for the next
        self._subscriptions: list[Any] = []
        self._changed: set[tuple[str, str]] = set()

    def allows(self, sender: str, message: bytes) -> bool:
        """True: the room may apply the message. False: it was refused (dropped, or
        applied here with its foreign entries put back) and the room must not read it."""
        from pycrdt import YMessageType, YSyncMessageType, read_message

        if len(message) < 2 or message[0] != YMessageType.SYNC:
            return True  # awareness: not part of the room's state
        if message[1] not in (YSyncMessageType.SYNC_STEP2, YSyncMessageType.SYNC_UPDATE):
            return True  # a state vector asks, it changes nothing
        try:
            update = read_message(message[2:])
            foreign = self.foreign_entries(sender, update, clock.now_ms())
        except Exception as exc:  # a malformed update: dropped
            log.warning(
                "refused: an unreadable room update from node %s (%s)",
                sender,
                type(exc).__name__,
            )
            return False
        if foreign is None:
            log.warning(
                "refused: a room update from node %s that cannot be applied whole yet", sender
            )
            return False
        if not foreign:
            self._kept = True  # the room applies it next, before this sender's next update
            return True
        from pycrdt import Map

        with self.doc.transaction():
            self.doc.apply_update(update)
            for (map_, key), old in foreign.items():
                ymap = self.doc.get(map_, type=Map)
                if old is None:
                    if key in ymap:
                        del ymap[key]
                else:
                    ymap[key] = old
        self._kept = True
        log.warning(
            "refused: a room update from node %s changes entries it does not own: %s",
            sender,
            ", ".join(f"{m}.{k}" for m, k in sorted(foreign)[:10]),
        )
        return False

    def foreign_entries(
        self, sender: str, update: bytes, now: int
    ) -> dict[tuple[str, str], str | None] | None:
        """The entries `update` would change that are not the sender's, with the values
        they have now ({}: none); None when it cannot be applied whole to the room now."""
        from pycrdt import get_state

        try:
            scratch = self._replica()
            scratch.apply_update(update)
            if not _covers(scratch.get_state(), get_state(update)):
                self._scratch = None  # it holds a part the room does not: made afresh
                return None
            before, after = _View(self.doc), _View(scratch)
            out: dict[tuple[str, str], str | None] = {}
            # read in one transaction each (one per read would commit each time)
            with self.doc.transaction(), scratch.transaction():
                for map_, key in sorted(self._changed):
                    old, new = before.get((map_, key)), after.get((map_, key))
                    if old != new and not self._may(
                        sender, map_, key, old, new, before, after, now
                    ):
                        out[(map_, key)] = old
            return out
        except BaseException:
            self._scratch = None
            raise

    def _replica(self) -> Any:
        """A copy of the room, kept from one update to the next and brought up to date by
        the difference alone: a whole copy per update is most of a large room's cost. Only
        the entries the next update touches are then noted (subscriptions kept alive)."""
        from pycrdt import Doc, Map

        if self._scratch is None or not self._kept:
            scratch: Any = Doc()
            scratch.apply_update(self.doc.get_update())
            self._subscriptions = [
                scratch.get(n, type=Map).observe(partial(self._note, n)) for n in MAPS
            ]
            self._scratch = scratch
        else:  # the room moved on since: the difference alone
            self._scratch.apply_update(self.doc.get_update(self._scratch.get_state()))
        self._changed.clear()
        self._kept = False  # until the room is known to apply what is checked now
        return self._scratch

    def _note(self, name: str, event: Any, *_: Any) -> None:
        self._changed.update((name, key) for key in event.keys)

    def _may(
        self,
        sender: str,
        map_: str,
        key: str,
        old: Any,
        new: Any,
        before: _View,
        after: _View,
        now: int,
    ) -> bool:
        if map_ in ("nodes", "cursors", "subscriptions"):
            return key == sender
        if map_ == "invites":  # the seeds' registry: written over seed links only
            return False
        if map_ == "routing":  # the agent's owner's, or a leftover of an agent none owns
            owner_after = _owner(after.get(("agents", key)))
            return sender in (_owner(before.get(("agents", key))), owner_after) or (
                new is None and owner_after is None
            )
        if map_ in _OWNED:
            if new is not None and _owner(new) != sender:
                return False
            prior = _owner(old)
            return old is None or prior == sender or self._stale(prior, before, now)
        return False  # a map the room does not carry

    def _stale(self, node: str | None, before: _View, now: int) -> bool:
        if node is None:
            return True
        seen = _last_seen(before.get(("nodes", node)))
        return seen is None or now - seen > self.grace_ms


class _View:
    """A document's room entries, read on demand: (map, key) -> its value as text, or None."""

    def __init__(self, doc: Any) -> None:
        from pycrdt import Map

        self._maps = {name: doc.get(name, type=Map) for name in MAPS}

    def get(self, entry: tuple[str, str]) -> str | None:
        ymap = self._maps.get(entry[0])
        value = ymap.get(entry[1]) if ymap is not None else None
        return value if value is None or isinstance(value, str) else repr(value)


def _owner(value: Any) -> str | None:
    try:
        owner = json.loads(value).get("ownerNodeId") if isinstance(value, str) else None
    except (ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None


def _last_seen(value: Any) -> int | None:
    from datetime import datetime

    try:
        seen = json.loads(value).get("lastSeenAt") if isinstance(value, str) else None
        return int(datetime.fromisoformat(seen).timestamp() * 1000) if seen else None
    except (ValueError, AttributeError, TypeError):
        return None


def _covers(state: bytes, wanted: bytes) -> bool:
    """Every client's clock in `wanted` (an encoded state vector) is reached in `state`."""
    have = _state_vector(state)
    return all(have.get(client, 0) >= clk for client, clk in _state_vector(wanted).items())


def _state_vector(encoded: bytes) -> dict[int, int]:
    from pycrdt import Decoder

    d = Decoder(encoded)
    return {d.read_var_uint(): d.read_var_uint() for _ in range(d.read_var_uint())}
