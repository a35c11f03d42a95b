"""SQL of federation (docs/FEDERATION.md): the node identity, and on a seed invites, nonces,
tickets and the nodes that joined; the room copy and its queued changes, the outbox, the
cursors, the inbound events and the sender's state of each event (routing, `fed pull`, acks,
timers). Nothing here runs on a store that is not a node, except `node_id` on the rare path of a
direct message to an agent that has no direct channel yet."""

from __future__ import annotations

import json
import sqlite3

from acomm_cli.store.connection import AGENTS_TOKEN

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def node(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """(node_id, public_key, private_key, created_at) of this store, or None."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT node_id, public_key, private_key, created_at FROM fed_node WHERE id = 1"
    ).fetchone()
    return row


def insert_node(
    conn: sqlite3.Connection, node_id: str, public_key: bytes, private_key: bytes, now_ms: int
) -> None:
    conn.execute(
        "INSERT INTO fed_node (id, node_id, public_key, private_key, created_at)"
        " VALUES (1, ?, ?, ?, ?)",
        (node_id, public_key, private_key, now_ms),
    )


# ---------------------------------------------------------------- invites (on a seed)

_INVITE_COLUMNS = (
    "invite_id, token_sha256, expected_node, pinned_key, created_at, expires_at,"
    " used_at, used_by, revoked_at"
)


def insert_invite(
    conn: sqlite3.Connection,
    invite_id: str,
    token_sha256: str,
    expected_node: str | None,
    pinned_key: bytes | None,
    created_at: int,
    expires_at: int,
) -> None:
    conn.execute(
        "INSERT INTO fed_invites (invite_id, token_sha256, expected_node, pinned_key,"
        " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
        (invite_id, token_sha256, expected_node, pinned_key, created_at, expires_at),
    )


def invites(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites ORDER BY created_at, invite_id"
    ).fetchall()


def invite(conn: sqlite3.Connection, invite_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites WHERE invite_id = ?", (invite_id,)
    ).fetchone()
    return row


def invite_by_hash(conn: sqlite3.Connection, token_sha256: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_INVITE_COLUMNS} FROM fed_invites WHERE token_sha256 = ?", (token_sha256,)
    ).fetchone()
    return row


def revoke_invite(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> bool:
    """Revoke an invite not used nor revoked yet; False when nothing changed."""
    cur = conn.execute(
        "UPDATE fed_invites SET revoked_at = ? WHERE invite_id = ?"
        " AND revoked_at IS NULL AND used_at IS NULL",
        (now_ms, invite_id),
    )
    return cur.rowcount == 1


def use_invite(conn: sqlite3.Connection, invite_id: str, node_id: str, now_ms: int) -> bool:
    """Consume an invite (the first successful WebSocket authentication); False if it was
    used or revoked meanwhile."""
    cur = conn.execute(
        "UPDATE fed_invites SET used_at = ?, used_by = ? WHERE invite_id = ?"
        " AND used_at IS NULL AND revoked_at IS NULL",
        (now_ms, node_id, invite_id),
    )
    return cur.rowcount == 1


# ---------------------------------------------------------------- the replay guard
# (the nonces' SQL is in store/nonces.py)


def live_ticket_for_invite(conn: sqlite3.Connection, invite_id: str, now_ms: int) -> bool:
    """A ticket minted for this invite that is neither used nor expired."""
    return (
        conn.execute(
            "SELECT 1 FROM fed_tickets WHERE invite_id = ? AND used_at IS NULL AND expires_at > ?",
            (invite_id, now_ms),
        ).fetchone()
        is not None
    )


def ticket_exists(conn: sqlite3.Connection, jti: str) -> bool:
    return conn.execute("SELECT 1 FROM fed_tickets WHERE jti = ?", (jti,)).fetchone() is not None


def insert_ticket(
    conn: sqlite3.Connection,
    jti: str,
    invite_id: str | None,
    node_id: str,
    public_key: bytes | None,
    issued_at: int,
    expires_at: int,
) -> None:
    conn.execute(
        "INSERT INTO fed_tickets (jti, invite_id, node_id, public_key, issued_at, expires_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (jti, invite_id, node_id, public_key, issued_at, expires_at),
    )


def prune_tickets(conn: sqlite3.Connection, now_ms: int) -> int:
    """Forget the tickets past their expiry, used or not (the index on expires_at, m017)."""
    return conn.execute("DELETE FROM fed_tickets WHERE expires_at < ?", (now_ms,)).rowcount


def ticket(conn: sqlite3.Connection, jti: str) -> tuple[Any, ...] | None:
    """(jti, invite_id, node_id, public_key, issued_at, expires_at, used_at) or None."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT jti, invite_id, node_id, public_key, issued_at, expires_at, used_at"
        " FROM fed_tickets WHERE jti = ?",
        (jti,),
    ).fetchone()
    return row


def use_ticket(conn: sqlite3.Connection, jti: str, now_ms: int) -> bool:
    cur = conn.execute(
        "UPDATE fed_tickets SET used_at = ? WHERE jti = ? AND used_at IS NULL", (now_ms, jti)
    )
    return cur.rowcount == 1


# ---------------------------------------------------------------- members (rejoin by proof)


def member_key(conn: sqlite3.Connection, node_id: str) -> bytes | None:
    row = conn.execute(
        "SELECT public_key FROM fed_members WHERE node_id = ?", (node_id,)
    ).fetchone()
    return None if row is None else bytes(row[0])


def upsert_member(conn: sqlite3.Connection, node_id: str, public_key: bytes, now_ms: int) -> None:
    conn.execute(
        "INSERT INTO fed_members (node_id, public_key, joined_at, last_auth_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (node_id) DO UPDATE SET"
        " public_key = excluded.public_key, last_auth_at = excluded.last_auth_at",
        (node_id, public_key, now_ms, now_ms),
    )


def touch_member(conn: sqlite3.Connection, node_id: str, now_ms: int) -> None:
    conn.execute("UPDATE fed_members SET last_auth_at = ? WHERE node_id = ?", (now_ms, node_id))


def node_id(conn: sqlite3.Connection) -> str | None:
    """This store's node id, or None on a plain store (one indexed read of an empty or
    one-row table)."""
    row = conn.execute("SELECT node_id FROM fed_node WHERE id = 1").fetchone()
    return None if row is None else str(row[0])


# ---------------------------------------------------------------- the room copy


def room_get(conn: sqlite3.Connection, map_: str, key: str) -> str | None:
    row = conn.execute(
        "SELECT value FROM fed_room WHERE map = ? AND key = ?", (map_, key)
    ).fetchone()
    return None if row is None else str(row[0])


def room_map(conn: sqlite3.Connection, map_: str) -> list[tuple[str, str]]:
    return conn.execute(
        "SELECT key, value FROM fed_room WHERE map = ? ORDER BY key", (map_,)
    ).fetchall()


def room_put(
    conn: sqlite3.Connection, map_: str, key: str, value: str | None, now_ms: int, *, queue: bool
) -> None:
    """Write the local copy (value None: delete the entry) and, with `queue`, queue the
    change for the gateway to apply to the room."""
    if value is None:
        conn.execute("DELETE FROM fed_room WHERE map = ? AND key = ?", (map_, key))
    else:
        conn.execute(
            "INSERT INTO fed_room (map, key, value, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (map, key) DO UPDATE SET value = excluded.value,"
            " updated_at = excluded.updated_at",
            (map_, key, value, now_ms),
        )
    if queue:
        conn.execute(
            "INSERT INTO fed_room_changes (map, key, value, queued_at) VALUES (?, ?, ?, ?)",
            (map_, key, value, now_ms),
        )


def local_participant(conn: sqlite3.Connection, agent: str) -> bool:
    """A participant of a local channel (federation's own `_fed:` channels excepted)."""
    return (
        conn.execute(
            "SELECT 1 FROM participants p JOIN channels c ON c.id = p.channel_id"
            " WHERE p.agent = ? AND c.name NOT LIKE '\\_fed:%' ESCAPE '\\' LIMIT 1",
            (agent,),
        ).fetchone()
        is not None
    )


# ---------------------------------------------------------------- the outbox


def append_outbox(
    conn: sqlite3.Connection,
    event_id: str,
    attempt: int,
    kind: str,
    to_node: str | None,
    envelope_without_seq: dict[str, Any],
    now_ms: int,
) -> int:
    """Append one event; its envelope gets the seq SQLite assigns. Returns the seq."""
    seq = int(conn.execute("SELECT coalesce(max(seq), 0) + 1 FROM fed_outbox").fetchone()[0])
    envelope = dict(envelope_without_seq, seq=seq)
    if hasattr(conn, "outbox_appended"):  # the command publishes it after its commit
        conn.outbox_appended = True
    conn.execute(
        "INSERT INTO fed_outbox (seq, event_id, attempt, kind, to_node, envelope,"
        " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            seq,
            event_id,
            attempt,
            kind,
            to_node,
            json.dumps(envelope, separators=(",", ":")),
            now_ms,
        ),
    )
    return seq


_compact = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps's, made once


def append_outbox_many(
    conn: sqlite3.Connection, events: Sequence[tuple[str | None, dict[str, Any]]], now_ms: int
) -> None:
    """Append first-attempt events (to node, envelope without seq) in order, in one
    statement: as append_outbox each, their seqs following one another."""
    seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM fed_outbox").fetchone()[0])
    if hasattr(conn, "outbox_appended"):  # the command publishes them after its commit
        conn.outbox_appended = True
    conn.executemany(
        "INSERT INTO fed_outbox (seq, event_id, attempt, kind, to_node, envelope,"
        " created_at) VALUES (?, ?, 1, ?, ?, ?, ?)",
        [
            (
                seq + i,
                env["eventId"],
                env["kind"],
                to_node,
                _compact(dict(env, seq=seq + i)),
                now_ms,
            )
            for i, (to_node, env) in enumerate(events, start=1)
        ],
    )


def append_outbox_texts(
    conn: sqlite3.Connection, rows: Sequence[tuple[str, str, str | None, str]], now_ms: int
) -> None:
    """Append first-attempt events already encoded, in order, in one statement: (event id,
    kind, to node, head), each head the envelope's JSON text without its closing brace;
    the seq is appended to it last, as append_outbox_many writes it."""
    seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM fed_outbox").fetchone()[0])
    if hasattr(conn, "outbox_appended"):  # the command publishes them after its commit
        conn.outbox_appended = True
    conn.executemany(
        "INSERT INTO fed_outbox (seq, event_id, attempt, kind, to_node, envelope,"
        " created_at) VALUES (?, ?, 1, ?, ?, ?, ?)",
        [
            (seq + i, event_id, kind, to_node, f'{head},"seq":{seq + i}}}', now_ms)
            for i, (event_id, kind, to_node, head) in enumerate(rows, start=1)
        ],
    )


def outbox_page(
    conn: sqlite3.Connection, after_seq: int, limit: int
) -> tuple[list[dict[str, Any]], int]:
    """(envelopes after `after_seq`, at most `limit`, in seq order; the outbox head)."""
    rows = conn.execute(
        "SELECT envelope, json_valid(envelope) FROM fed_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit),
    ).fetchall()
    head = conn.execute("SELECT coalesce(max(seq), 0) FROM fed_outbox").fetchone()[0]
    return _parsed_page(rows), int(head)


def _parsed_page(rows: Sequence[tuple[str, int]]) -> list[Any]:
    """The stored texts parsed: when SQLite finds every one valid JSON, as one array (one
    parser call for the page, not one per event); else, or when that array does not hold
    exactly one value per text, each alone (_parsed)."""
    if rows and all(valid for _, valid in rows):
        try:
            whole = json.loads("[" + ",".join(text for text, _ in rows) + "]")
        except (ValueError, TypeError, RecursionError):
            whole = None
        if isinstance(whole, list) and len(whole) == len(rows):
            return whole
    return [_parsed(text) for text, _ in rows]


def outbox_page_texts(
    conn: sqlite3.Connection, after_seq: int, limit: int
) -> tuple[list[str], int]:
    """outbox_page's envelopes as JSON texts to serve as they are: a stored text that is
    JSON (SQLite's json_valid) and too shallow to strain a parser is served unparsed, any
    other as outbox_page would give it (parsed, or as a string)."""
    rows = conn.execute(
        "SELECT envelope, json_valid(envelope) FROM fed_outbox WHERE seq > ? ORDER BY seq LIMIT ?",
        (after_seq, limit),
    ).fetchall()
    head = conn.execute("SELECT coalesce(max(seq), 0) FROM fed_outbox").fetchone()[0]
    return [
        text
        if valid and text.count("[") + text.count("{") < _SHALLOW
        else json.dumps(_parsed(text), ensure_ascii=False, allow_nan=False)
        for text, valid in rows
    ], int(head)


_SHALLOW = 64  # brackets in a text served unparsed (an envelope has a handful)


def _parsed(text: str) -> Any:
    """An envelope as stored; text that is not JSON (or nests past the parser's stack) as
    it is: the reader refuses that event alone (engine/envelope.py)."""
    try:
        return json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return text


def outbox_event(conn: sqlite3.Connection, event_id: str) -> dict[str, Any] | None:
    """The latest attempt of an event in our outbox."""
    row = conn.execute(
        "SELECT envelope FROM fed_outbox WHERE event_id = ? ORDER BY attempt DESC LIMIT 1",
        (event_id,),
    ).fetchone()
    return None if row is None else dict(json.loads(row[0]))


# ---------------------------------------------------------------- cursors and inbound


def cursor(conn: sqlite3.Connection, source: str) -> tuple[int, int | None, int | None]:
    """(position, head, pulled_at) of a peer's outbox; (0, None, None) before any pull."""
    row = conn.execute(
        "SELECT position, head, pulled_at FROM fed_cursors WHERE source_node = ?", (source,)
    ).fetchone()
    return (0, None, None) if row is None else (int(row[0]), row[1], row[2])


def set_cursor(
    conn: sqlite3.Connection,
    source: str,
    position: int,
    head: int | None,
    now_ms: int,
    error: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO fed_cursors (source_node, position, head, pulled_at, last_error)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (source_node) DO UPDATE SET"
        " position = excluded.position, head = coalesce(excluded.head, head),"
        " pulled_at = excluded.pulled_at, last_error = excluded.last_error",
        (source, position, head, now_ms, error),
    )


def cursor_error(conn: sqlite3.Connection, source: str, error: str, now_ms: int) -> None:
    position = cursor(conn, source)[0]
    set_cursor(conn, source, position, None, now_ms, error)


def record_inbound(
    conn: sqlite3.Connection,
    event_id: str,
    source: str,
    seq: int,
    kind: str,
    attempt: int,
    now_ms: int,
) -> bool:
    """Record an event read from a peer; False when it was read before (a duplicate)."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO fed_inbound (event_id, source_node, seq, kind,"
        " attempt, received_at) VALUES (?, ?, ?, ?, ?, ?)",
        (event_id, source, seq, kind, attempt, now_ms),
    )
    return cur.rowcount == 1


def agents_token(conn: sqlite3.Connection) -> int:
    """The agents token (m030), read first thing in a pull's page transaction."""
    return int(conn.execute(f"SELECT {AGENTS_TOKEN}").fetchone()[0])


def inbound_known(conn: sqlite3.Connection, source: str, event_ids: Sequence[str]) -> set[str]:
    """Which of these event ids from `source` were recorded before (one read for a page)."""
    if not event_ids:
        return set()
    return {
        r[0]
        for r in conn.execute(
            "SELECT event_id FROM fed_inbound WHERE source_node = ?"
            " AND event_id IN (SELECT value FROM json_each(?))",
            (source, json.dumps(list(event_ids))),
        )
    }


def insert_inbound(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Record events read from a peer, known to be new: (event_id, source, seq, kind,
    attempt, message_id, received_at) each."""
    conn.executemany(
        "INSERT INTO fed_inbound (event_id, source_node, seq, kind, attempt, message_id,"
        " received_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def insert_inbound_messages(conn: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> None:
    """Messages from peers, each with its id, the planned row of a send and then its
    global id and origin node."""
    conn.executemany(
        "INSERT INTO messages (id, channel_id, sender, type, content, topic, priority,"
        " correlation_id, dedupe_key, metadata, created_at, deliver_at, expires_at, trace_id,"
        " global_id, origin_node) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


def set_inbound_message(
    conn: sqlite3.Connection, source: str, event_id: str, message_id: int
) -> None:
    conn.execute(
        "UPDATE fed_inbound SET message_id = ? WHERE source_node = ? AND event_id = ?",
        (message_id, source, event_id),
    )


def record_rejected(
    conn: sqlite3.Connection,
    source: str,
    seq: int | None,
    event_id: str | None,
    kind: str | None,
    reason: str,
    now_ms: int,
) -> None:
    """An event `fed pull` refused (m018's fed_rejected)."""
    conn.execute(
        "INSERT INTO fed_rejected (source_node, seq, event_id, kind, reason, rejected_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (source, seq, event_id, kind, reason, now_ms),
    )


def rejected_count(conn: sqlite3.Connection) -> int:
    """How many events read from peers were refused (0 on a store older than m018)."""
    try:
        return int(conn.execute("SELECT count(*) FROM fed_rejected").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def rejected_by_source(conn: sqlite3.Connection) -> dict[str, int]:
    """How many events each peer had refused."""
    return {
        str(r[0]): int(r[1])
        for r in conn.execute("SELECT source_node, count(*) FROM fed_rejected GROUP BY 1")
    }


def cursor_rows(conn: sqlite3.Connection) -> dict[str, tuple[Any, ...]]:
    """source_node -> (position, head, pulled_at, last_error) of every peer pulled."""
    return {
        str(r[0]): tuple(r[1:])
        for r in conn.execute(
            "SELECT source_node, position, head, pulled_at, last_error FROM fed_cursors"
        )
    }


def rejected_latest(conn: sqlite3.Connection, limit: int) -> list[tuple[Any, ...]]:
    """(source_node, seq, event_id, kind, reason, rejected_at) of the latest refusals."""
    return conn.execute(
        "SELECT source_node, seq, event_id, kind, reason, rejected_at FROM fed_rejected"
        " ORDER BY id DESC LIMIT ?",
        (limit,),
    ).fetchall()


def inbound_row_of_message(conn: sqlite3.Connection, message_id: int) -> tuple[Any, ...] | None:
    """(event_id, source_node, attempt, received_at) of an inbound message."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT event_id, source_node, attempt, received_at FROM fed_inbound WHERE message_id = ?",
        (message_id,),
    ).fetchone()
    return row


def answers_of(conn: sqlite3.Connection, event_id: str, source: str) -> list[tuple[str, int]]:
    """(kind, created_at) of the `reply` and `ack processed` events in our outbox that
    answer an inbound event of node `source`, first attempts only, oldest first (`show`
    reads them)."""
    return conn.execute(
        "SELECT kind, created_at FROM fed_outbox WHERE attempt = 1 AND to_node = ? AND ("
        " (kind = 'reply' AND json_extract(envelope, '$.payload.replyTo') = ?) OR"
        " (kind = 'ack' AND json_extract(envelope, '$.payload.ackOf') = ?"
        "  AND json_extract(envelope, '$.payload.status') = 'processed')) ORDER BY seq",
        (source, event_id, event_id),
    ).fetchall()


def inbound_of_message(conn: sqlite3.Connection, message_id: int) -> tuple[str, str] | None:
    """(event_id, source_node) of an inbound message."""
    row = conn.execute(
        "SELECT event_id, source_node FROM fed_inbound WHERE message_id = ?", (message_id,)
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


def dying_inbound(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    """The staged dead letters (temp.dying) of messages that came from another node:
    (event_id, source_node, recipient, sender, correlation_id, reason, last_error, at)."""
    return conn.execute(
        "SELECT i.event_id, i.source_node, x.recipient, m.sender, m.correlation_id, x.reason,"
        " x.last_error, x.at FROM temp.dying x"
        " JOIN fed_inbound i ON i.message_id = x.message_id"
        " JOIN messages m ON m.id = x.message_id ORDER BY x.at, x.message_id, x.recipient"
    ).fetchall()


def dead_letter_of_message(conn: sqlite3.Connection, message_id: int) -> tuple[Any, ...] | None:
    """(reason, last_error, dead_lettered_at) of a message's latest dead letter (`show`)."""
    row: tuple[Any, ...] | None = conn.execute(
        "SELECT reason, last_error, dead_lettered_at FROM dead_letters WHERE message_id = ?"
        " ORDER BY dead_lettered_at DESC LIMIT 1",
        (message_id,),
    ).fetchone()
    return row


# ---------------------------------------------------------------- the sender's state

_SENT_COLUMNS = (
    "event_id, message_id, to_node, to_agent, route_decision, state, attempt,"
    " next_timer_at, created_at, accepted_at, processed_at, incident_at"
)


def insert_sent(
    conn: sqlite3.Connection,
    event_id: str,
    message_id: int | None,
    to_node: str,
    to_agent: str | None,
    decision: str,
    state: str,
    next_timer_at: int | None,
    now_ms: int,
) -> None:
    conn.execute(
        f"INSERT INTO fed_sent ({_SENT_COLUMNS}) VALUES"
        " (?, ?, ?, ?, ?, ?, 1, ?, ?, NULL, NULL, NULL)",
        (event_id, message_id, to_node, to_agent, decision, state, next_timer_at, now_ms),
    )


def sent(conn: sqlite3.Connection, event_id: str) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_SENT_COLUMNS} FROM fed_sent WHERE event_id = ?", (event_id,)
    ).fetchone()
    return row


def sent_of_message(conn: sqlite3.Connection, message_id: int) -> tuple[Any, ...] | None:
    row: tuple[Any, ...] | None = conn.execute(
        f"SELECT {_SENT_COLUMNS} FROM fed_sent WHERE message_id = ?", (message_id,)
    ).fetchone()
    return row


def update_sent(conn: sqlite3.Connection, event_id: str, **fields: Any) -> None:
    names = ", ".join(f"{k} = ?" for k in fields)
    conn.execute(f"UPDATE fed_sent SET {names} WHERE event_id = ?", (*fields.values(), event_id))


def due_sent(conn: sqlite3.Connection, now_ms: int) -> list[tuple[Any, ...]]:
    return conn.execute(
        f"SELECT {_SENT_COLUMNS} FROM fed_sent WHERE next_timer_at <= ?"
        " ORDER BY next_timer_at, event_id",
        (now_ms,),
    ).fetchall()


def outbox_head(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(seq), 0) FROM fed_outbox").fetchone()[0])


def set_message_global_id(
    conn: sqlite3.Connection, message_id: int, global_id: str, origin_node: str | None
) -> None:
    conn.execute(
        "UPDATE messages SET global_id = ?, origin_node = ? WHERE id = ?",
        (global_id, origin_node, message_id),
    )


def global_id_of(conn: sqlite3.Connection, message_id: int) -> str | None:
    row = conn.execute("SELECT global_id FROM messages WHERE id = ?", (message_id,)).fetchone()
    return None if row is None else row[0]


# ---------------------------------------------------------------- the gateway's room sync


def pending_room_changes(
    conn: sqlite3.Connection, limit: int = 500
) -> list[tuple[int, str, str, str | None]]:
    """(seq, map, key, value) of the changes queued for the room, oldest first."""
    return conn.execute(
        "SELECT seq, map, key, value FROM fed_room_changes"
        " WHERE applied_at IS NULL ORDER BY seq LIMIT ?",
        (limit,),
    ).fetchall()


def mark_room_changes_applied(conn: sqlite3.Connection, up_to_seq: int, now_ms: int) -> None:
    conn.execute(
        "UPDATE fed_room_changes SET applied_at = ? WHERE applied_at IS NULL AND seq <= ?",
        (now_ms, up_to_seq),
    )


# ---------------------------------------------------------------- NATS JetStream


def nats_config(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
    """(url, creds, published_seq, migrated_from, migrated_head, migrated_at, replicas) or
    None."""
    return conn.execute(
        "SELECT url, creds, published_seq, migrated_from, migrated_head,"
        " migrated_at, replicas FROM fed_nats WHERE id = 1"
    ).fetchone()


def set_nats(conn: sqlite3.Connection, url: str, creds: str | None) -> None:
    conn.execute(
        "INSERT INTO fed_nats (id, url, creds) VALUES (1, ?, ?) ON CONFLICT (id)"
        " DO UPDATE SET url = excluded.url, creds = coalesce(excluded.creds, creds)",
        (url, creds),
    )


def set_nats_replicas(conn: sqlite3.Connection, replicas: int) -> None:
    conn.execute("UPDATE fed_nats SET replicas = ? WHERE id = 1", (replicas,))


def set_nats_migrated(conn: sqlite3.Connection, from_url: str, head: int, now_ms: int) -> None:
    conn.execute(
        "UPDATE fed_nats SET migrated_from = ?, migrated_head = ?, migrated_at = ? WHERE id = 1",
        (from_url, head, now_ms),
    )


def set_published(conn: sqlite3.Connection, seq: int) -> None:
    """Only forwards: two publishers racing never move the mark back."""
    conn.execute("UPDATE fed_nats SET published_seq = max(published_seq, ?) WHERE id = 1", (seq,))


def unpublished(
    conn: sqlite3.Connection, after_seq: int, limit: int
) -> list[tuple[int, str, int, str]]:
    """(seq, event_id, attempt, envelope JSON) after `after_seq`, in seq order."""
    return [
        (int(r[0]), str(r[1]), int(r[2]), str(r[3]))
        for r in conn.execute(
            "SELECT seq, event_id, attempt, envelope FROM fed_outbox WHERE seq > ?"
            " ORDER BY seq LIMIT ?",
            (after_seq, limit),
        )
    ]


def has_nats(conn: sqlite3.Connection) -> bool:
    """One indexed read; False on a store older than m014 too (it never had NATS)."""
    try:
        return conn.execute("SELECT 1 FROM fed_nats WHERE id = 1").fetchone() is not None
    except sqlite3.OperationalError:
        return False


def drop_nats(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM fed_nats WHERE id = 1")


# ---------------------------------------------------------------- the node's profile

PROFILE_KEY = "federation.profile"  # store_meta: `production` once `node init --production`


def profile(conn: sqlite3.Connection) -> str | None:
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (PROFILE_KEY,)).fetchone()
    return None if row is None else str(row[0])


def set_profile(conn: sqlite3.Connection, value: str) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)", (PROFILE_KEY, value)
    )


# ---------------------------------------------------------------- several seeds

SEED_KEY = "federation.seed"


def seed_flag(conn: sqlite3.Connection) -> bool:
    """store_meta's `federation.seed`: `node init --seed` made this node a seed."""
    row = conn.execute("SELECT value FROM store_meta WHERE key = ?", (SEED_KEY,)).fetchone()
    return row is not None and row[0] == "1"


def set_seed_flag(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, '1')", (SEED_KEY,))


def pull_positions(conn: sqlite3.Connection) -> dict[str, int]:
    """source node -> the last seq this node took from its outbox."""
    return {
        str(r[0]): int(r[1])
        for r in conn.execute("SELECT source_node, position FROM fed_cursors ORDER BY 1")
    }


def agent_subscriptions(conn: sqlite3.Connection, limit: int) -> list[tuple[str, str, str]]:
    """(agent, channel, pattern) of this store's subscriptions, federation's own `_fed:`
    channels left out, at most `limit`."""
    return conn.execute(
        "SELECT s.agent, c.name, s.pattern FROM subscriptions s"
        " JOIN channels c ON c.id = s.channel_id"
        " WHERE c.name NOT LIKE '\\_fed:%' ESCAPE '\\' ORDER BY 1, 2, 3 LIMIT ?",
        (limit,),
    ).fetchall()


def agent_cursors(conn: sqlite3.Connection, limit: int) -> list[tuple[Any, ...]]:
    """(agent, cursor name, channel, position) of the durable cursors agents made."""
    return conn.execute(
        "SELECT k.created_by, k.name, c.name, k.position FROM cursors k"
        " JOIN channels c ON c.id = k.channel_id"
        " WHERE k.created_by IS NOT NULL ORDER BY 1, 2 LIMIT ?",
        (limit,),
    ).fetchall()
