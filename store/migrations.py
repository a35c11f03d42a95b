"""Schema migrations: an append-only list. A shipped function is never edited, only followed.

The next one is a function appended at the end, its DDL written as SQLite's own SQL:

    @migration
    def m005_what_it_does(conn: sqlite3.Connection, now_ms: int) -> None:
        # why the tables exist, what a row means
        _script(conn, '''
            CREATE TABLE things (id TEXT PRIMARY KEY, ...) WITHOUT ROWID;
            CREATE INDEX things_due ON things(due_at) WHERE due_at IS NOT NULL;
            ALTER TABLE messages ADD COLUMN thing_id TEXT;
        ''')

It runs inside the `BEGIN IMMEDIATE` of whichever command first opens an older store (`acomm
send` too), holding the write lock: it imports nothing, sqlite-utils included (docs/DECISIONS.md
says why).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection, int], None]


def _shipped(module: str, name: str) -> Migration:
    """m001-m010, whose bodies live in `store/migrations_001_005.py` and `_006_010.py` (this
    module neared 800 lines): imported only when a store older than them is opened, so a
    command on a current store loads none of their code (DECISIONS.md, "Migrations: complete
    statements, shipped bodies loaded on demand")."""

    def run(conn: sqlite3.Connection, now_ms: int) -> None:
        from importlib import import_module

        body: Migration = getattr(import_module(f"acomm_cli.store.{module}"), name)
        body(conn, now_ms)

    run.__name__ = run.__qualname__ = name  # what _acomm_migrations records
    return run


# The schema's history, in order: never reordered, never edited, only appended to.
MIGRATIONS: list[Migration] = [
    *(
        _shipped("migrations_001_005", n)
        for n in (
            "m001_initial",
            "m002_export_watermark",
            "m003_bridge",
            "m004_dispatch",
            "m005_federation",
        )
    ),
    *(
        _shipped("migrations_006_010", n)
        for n in (
            "m006_tasks",
            "m007_agent_tokens",
            "m008_capabilities",
            "m009_leases",
            "m010_queues",
        )
    ),
]


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


def statements(sql: str) -> list[str]:
    """Split a script into whole statements. A `;` ends a statement only where SQLite says
    the statement is complete (`sqlite3.complete_statement`), so a trigger body
    (`BEGIN ...; ...; END;`) or a `;` inside a string literal or comment stays in one piece.
    A trailing fragment that never completes is kept too, so SQLite reports its error."""
    out: list[str] = []
    current = ""
    for piece in sql.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \t\r\n;"):
                out.append(current.strip())
            current = ""
    rest = current[:-1]  # the last piece got a ';' it never had
    if rest.strip():
        out.append(rest.strip())
    return out


def _script(conn: sqlite3.Connection, sql: str) -> None:
    """Run DDL statement by statement: executescript() would commit the open transaction."""
    for statement in statements(sql):
        conn.execute(statement)


@migration
def m011_channels_version(conn: sqlite3.Connection, now_ms: int) -> None:
    # A send reads its channel and participants from a per-connection cache, valid
    # while this counter is what the cache was filled under. Every change to channels,
    # participants or subscriptions, by any process or command, adds one. A counter (not a
    # random value, so two stores that lived the same commands are alike, row for row): the
    # engine caches only under a value read at the start of a transaction of its own, i.e. a
    # committed one, and committed values never repeat. One row.
    _script(
        conn,
        """
        CREATE TABLE channels_version (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            token INTEGER NOT NULL
        );
        INSERT INTO channels_version VALUES (1, 0);
    """,
    )
    for table in ("channels", "participants", "subscriptions"):
        for event in ("INSERT", "UPDATE", "DELETE"):
            conn.execute(
                f"CREATE TRIGGER {table}_version_{event.lower()} AFTER {event} ON {table}"
                " BEGIN UPDATE channels_version SET token = token + 1 WHERE id = 1; END"
            )


@migration
def m012_first_read_at(conn: sqlite3.Connection, now_ms: int) -> None:
    # A delivery's read history. deliveries.read_at is the latest read (a
    # redelivered message read again moves it); first_read_at keeps the first, through
    # redeliveries and replays. delivery_attempts keeps each attempt that ended (an ack
    # deadline or lease passed, a give-back, a replay): written by a trigger whenever
    # retry_count changes, so every path that starts a new attempt records the old one, and
    # send and receive (which never change retry_count) pay nothing. `deadletter show` lists
    # them with the current attempt from the delivery row. No foreign keys: compaction
    # removes them with their messages.
    _script(
        conn,
        """
        ALTER TABLE deliveries ADD COLUMN first_read_at INTEGER;
        UPDATE deliveries SET first_read_at = read_at WHERE read_at IS NOT NULL;
        CREATE TABLE delivery_attempts (
            seq INTEGER PRIMARY KEY,
            message_id INTEGER NOT NULL,
            -- who held it (on a work queue, the worker whose claim ended)
            recipient TEXT NOT NULL,
            -- 1 = the first delivery; counts again from 1 after a replay
            attempt INTEGER NOT NULL,
            delivered_at INTEGER,
            read_at INTEGER,
            ack_status TEXT
        );
        CREATE INDEX delivery_attempts_message ON delivery_attempts(message_id, recipient);
        CREATE TRIGGER deliveries_attempt AFTER UPDATE OF retry_count ON deliveries
            WHEN new.retry_count != old.retry_count
        BEGIN
            INSERT INTO delivery_attempts (message_id, recipient, attempt, delivered_at,
                                           read_at, ack_status)
            VALUES (old.message_id, old.recipient, old.retry_count + 1, old.delivered_at,
                    old.read_at, old.ack_status);
        END;
    """,
    )


@migration
def m013_channel_admins(conn: sqlite3.Connection, now_ms: int) -> None:
    # Only a channel's owner, or a participant the owner made an admin, may change
    # its state, settings or membership. The owner is `channels.owner` (set by `channel create`
    # since m001, so every existing channel has one: its creator); an admin is a participant
    # with this flag, granted and revoked by `channel admin`. A flag on the participant (not a
    # table of its own) so that leaving ends the grant, and a send's channel read stays one
    # query. Existing rows: no admins (0).
    _script(
        conn,
        """
        ALTER TABLE participants ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
    """,
    )


@migration
def m014_nats_outbox(conn: sqlite3.Connection, now_ms: int) -> None:
    # A node whose outbox travels on NATS JetStream. One row: the server url (what
    # the room advertises as this node's url), the credentials file `node init` was given,
    # how far the outbox has been published into the stream (outbox seq = stream seq: the
    # stream is filled in seq order from 1, so a peer's cursor means the same on either
    # transport), and what `fed migrate --to` recorded when the node switched over.
    _script(
        conn,
        """
        CREATE TABLE fed_nats (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            url TEXT NOT NULL,
            creds TEXT,
            published_seq INTEGER NOT NULL DEFAULT 0,
            migrated_from TEXT,
            migrated_head INTEGER,
            migrated_at INTEGER
        );
    """,
    )


@migration
def m015_inbox_indexes(conn: sqlite3.Connection, now_ms: int) -> None:
    # The indexes of deliveries a mark read (and an ack) must keep, made cheaper to keep
    # (docs/DECISIONS.md, "Inbox indexes", measured).
    # - deliveries_active: `state IN (a, b, c)` in an index's WHERE is evaluated, on every
    #   row an UPDATE touches, by building a temporary b-tree of the list, twice (old row and
    #   new): about half of marking 100 messages read. The same set as a chain of `=` ORs
    #   costs a few comparisons, and a query's `state = 'unread'` now implies it.
    # - deliveries_queue: `recipient = '*'` made every statement comparing recipient to a
    #   bound parameter (receive, ack, the timers of one agent) prepare again on each run
    #   (SQLite checks whether the bound value might be '*' and re-plans when it changes).
    #   `IS` on this NOT NULL column means the same and is not compared with a parameter.
    # - deliveries_inbox held `state` in its key, so marking a message read moved its entry
    #   (a delete and an insert in an index of every delivery ever made). It is now ordered
    #   by recipient only (totals per agent, any recipient's listing), and the deliveries not
    #   yet done with have their own (recipient, state, ...) index, under the same WHERE as
    #   deliveries_active: `receive` reads it, and a mark read only takes the entry out.
    _script(
        conn,
        """
        DROP INDEX IF EXISTS deliveries_inbox;
        CREATE INDEX deliveries_inbox ON deliveries(recipient, rank DESC, message_id);
        DROP INDEX IF EXISTS deliveries_agent_active;
        CREATE INDEX deliveries_agent_active ON deliveries(recipient, state, rank DESC,
                                                           message_id)
            WHERE state = 'queued' OR state = 'waiting' OR state = 'unread'
                OR (tracked = 1 AND state = 'read');
        DROP INDEX IF EXISTS deliveries_active;
        CREATE INDEX deliveries_active ON deliveries(message_id)
            WHERE state = 'queued' OR state = 'waiting' OR state = 'unread'
                OR (tracked = 1 AND state = 'read');
        DROP INDEX IF EXISTS deliveries_queue;
        CREATE INDEX deliveries_queue ON deliveries(channel_id, rank DESC, message_id)
            WHERE recipient IS '*' AND state = 'unread';
    """,
    )


@migration
def m016_request_nonces(conn: sqlite3.Connection, now_ms: int) -> None:
    # The replay guards forget what can no longer be replayed (docs/DECISIONS.md, "Replay
    # guards"). fed_nonces.expires_at: when a handshake nonce stops mattering
    # (its own time + the window, for a nonce that carries its time; NULL, kept, for an
    # older node's nonce, whose signed proof never expires). fed_request_nonces: the
    # signatures of signed outbox reads already answered, each accepted once within its
    # 60 s window. No expiry index on it: it holds two minutes of reads, and the gateway's
    # prune every 5 s scans that much, where an index would cost every read an insert more.
    _script(
        conn,
        """
        ALTER TABLE fed_nonces ADD COLUMN expires_at INTEGER;
        CREATE INDEX fed_nonces_expiry ON fed_nonces(expires_at) WHERE expires_at IS NOT NULL;
        CREATE TABLE fed_request_nonces (
            signature BLOB PRIMARY KEY,
            node_id TEXT NOT NULL,
            expires_at INTEGER NOT NULL
        ) WITHOUT ROWID;
    """,
    )


@migration
def m017_ticket_expiry(conn: sqlite3.Connection, now_ms: int) -> None:
    # The seed's exchange deletes the tickets past their expiry (docs/DECISIONS.md, "A seed
    # forgets its expired tickets"); this index keeps that delete to the rows it removes, as
    # fed_nonces_expiry does for the nonces pruned in the same transaction.
    _script(
        conn,
        """
        CREATE INDEX fed_tickets_expiry ON fed_tickets(expires_at);
    """,
    )


@migration
def m018_inbound_by_origin(conn: sqlite3.Connection, now_ms: int) -> None:
    # Events read from a peer are strangers until checked.
    # - fed_rejected: each event `fed pull` refused (a malformed envelope, or one its peer
    #   may not send): the peer, what the event said of its seq, id and kind (NULL where it
    #   said nothing usable), why, and when. The cursor moved past it; nothing else of it
    #   was kept. `fed status` lists the latest, `stats` counts them.
    # - An event id is scoped by the node it came from: fed_inbound is unique on
    #   (source_node, event_id), and so are the federated messages and tasks (origin_node
    #   with their global_id; a task created here has none), so another node re-using an
    #   event id cannot make the real event a duplicate.
    _script(
        conn,
        """
        CREATE TABLE fed_rejected (
            id INTEGER PRIMARY KEY,
            source_node TEXT NOT NULL,
            seq INTEGER,
            event_id TEXT,
            kind TEXT,
            reason TEXT NOT NULL,
            rejected_at INTEGER NOT NULL
        );
        CREATE TABLE fed_inbound_new (
            source_node TEXT NOT NULL,
            event_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            message_id INTEGER,
            received_at INTEGER NOT NULL,
            PRIMARY KEY (source_node, event_id)
        ) WITHOUT ROWID;
        INSERT INTO fed_inbound_new (source_node, event_id, seq, kind, attempt, message_id,
                                     received_at)
            SELECT source_node, event_id, seq, kind, attempt, message_id, received_at
            FROM fed_inbound;
        DROP TABLE fed_inbound;
        ALTER TABLE fed_inbound_new RENAME TO fed_inbound;
        CREATE INDEX fed_inbound_message ON fed_inbound(message_id)
            WHERE message_id IS NOT NULL;
        DROP INDEX messages_global_id;
        CREATE UNIQUE INDEX messages_global_id ON messages(global_id, origin_node)
            WHERE global_id IS NOT NULL;
        DROP INDEX tasks_global_id;
        CREATE UNIQUE INDEX tasks_global_id ON tasks(global_id, coalesce(origin_node, ''))
            WHERE global_id IS NOT NULL;
    """,
    )


@migration
def m019_task_events_by_origin(conn: sqlite3.Connection, now_ms: int) -> None:
    # A task's history row is unique on its event id within the node the event
    # happened on (origin_node; NULL: this store), no longer on the event id alone, so a
    # node re-using an event id of another node's task event cannot make the real one a
    # no-op. The table is rebuilt (a column's UNIQUE cannot be dropped), keeping every row
    # and its seq.
    _script(
        conn,
        """
        CREATE TABLE task_events_new (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            task_id INTEGER NOT NULL,
            event TEXT NOT NULL,
            agent TEXT,
            at INTEGER NOT NULL,
            progress INTEGER,
            note TEXT,
            eta_at INTEGER,
            message_id INTEGER,
            origin_node TEXT,
            detail TEXT
        );
        INSERT INTO task_events_new (seq, event_id, task_id, event, agent, at, progress, note,
                                     eta_at, message_id, origin_node, detail)
            SELECT seq, event_id, task_id, event, agent, at, progress, note, eta_at,
                   message_id, origin_node, detail
            FROM task_events;
        DROP TABLE task_events;
        ALTER TABLE task_events_new RENAME TO task_events;
        CREATE INDEX task_events_task ON task_events(task_id, seq);
        CREATE UNIQUE INDEX task_events_id ON task_events(event_id, coalesce(origin_node, ''));
    """,
    )


@migration
def m020_agent_directory(conn: sqlite3.Connection, now_ms: int) -> None:
    # The agent directory: who an agent name is.
    # - agents: one row per registered name. kind is agent | human | service (a human is
    #   never dispatched); accept says whose direct messages and tasks reach it (anyone |
    #   team | contacts | nobody); is_admin grants the admin verbs when identity.auth is
    #   `token`; retired_at set: it receives nothing new, its history stays; last_seen_at
    #   is when it last acted through acomm (NULL: never since the directory existed).
    # - agent_contacts: whom an agent with accept `contacts` admits.
    # - store_meta `identity.directory_default`: `open` on a store that existed before the
    #   directory (its scripts name agents nobody registered); `acomm init` writes `strict`.
    # Every name a store already knows is registered here, kind `agent`, so nothing breaks:
    # participants, subscribers, local senders, recipients, task parties, token holders.
    # `acomm` itself (the system sender) and the queue recipient `*` are not agents.
    _script(
        conn,
        """
        CREATE TABLE agents (
            name TEXT PRIMARY KEY,
            kind TEXT NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent', 'human', 'service')),
            display_name TEXT,
            description TEXT,
            team TEXT,
            accept TEXT NOT NULL DEFAULT 'anyone'
                CHECK (accept IN ('anyone', 'team', 'contacts', 'nobody')),
            is_admin INTEGER NOT NULL DEFAULT 0,
            registered_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            retired_at INTEGER,
            last_seen_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX agents_seen ON agents(last_seen_at) WHERE last_seen_at IS NOT NULL;
        CREATE TABLE agent_contacts (
            agent TEXT NOT NULL,
            contact TEXT NOT NULL,
            added_at INTEGER NOT NULL,
            PRIMARY KEY (agent, contact)
        ) WITHOUT ROWID;
    """,
    )
    conn.execute(
        """
        INSERT OR IGNORE INTO agents (name, registered_at, updated_at)
        SELECT name, ?, ? FROM (
            SELECT agent AS name FROM participants
            UNION SELECT agent FROM subscriptions
            UNION SELECT sender FROM messages WHERE origin_node IS NULL
            UNION SELECT recipient FROM deliveries
            UNION SELECT creator FROM tasks WHERE origin_node IS NULL
            UNION SELECT owner FROM tasks
            UNION SELECT agent FROM agent_tokens
        ) WHERE name NOT IN ('acomm', '*')
        """,
        (now_ms, now_ms),
    )
    conn.execute(
        "INSERT OR REPLACE INTO store_meta (key, value)"
        " VALUES ('identity.directory_default', 'open')"
    )


@migration
def m021_events_traces_attachments(conn: sqlite3.Connection, now_ms: int) -> None:
    # The event a message carries, its trace, and rich direct messages.
    # - message_events: at most one per message, the notification event's typed fields
    #   (event_type one of comment.created, comment.replied, mention.created, like.created,
    #   thread.created, agent.action.feedback; actor and target agent names, the target's
    #   kind as it was when sent; depth only on comment events; action_hint notify_only |
    #   consider_reply | must_reply). event_id is the idempotency key, unique per channel as
    #   a dedupe key is; content_preview is acomm's own cut of the body.
    # - messages.trace_id: the trace a message belongs to (inherited by what it causes);
    #   messages.format (text | markdown, NULL: text) and messages.subject.
    # - attachments: content-addressed blobs, one row per distinct sha256; a message names
    #   them in message_attachments (compact removes a blob no message names).
    _script(
        conn,
        """
        CREATE TABLE message_events (
            message_id INTEGER PRIMARY KEY REFERENCES messages(id),
            channel_id INTEGER NOT NULL,
            event_id TEXT,
            event_type TEXT NOT NULL,
            occurred_at INTEGER,
            actor TEXT,
            target TEXT,
            target_kind TEXT,
            thread_id TEXT,
            comment_id TEXT,
            parent_comment_id TEXT,
            depth INTEGER CHECK (depth IS NULL OR depth IN (1, 2, 3)),
            language TEXT,
            action_hint TEXT
                CHECK (action_hint IS NULL
                       OR action_hint IN ('notify_only', 'consider_reply', 'must_reply')),
            content_preview TEXT
        );
        CREATE UNIQUE INDEX message_events_id ON message_events(channel_id, event_id)
            WHERE event_id IS NOT NULL;
        CREATE INDEX message_events_type ON message_events(event_type);
        CREATE INDEX message_events_thread ON message_events(thread_id)
            WHERE thread_id IS NOT NULL;
        CREATE INDEX message_events_actor ON message_events(actor) WHERE actor IS NOT NULL;
        ALTER TABLE messages ADD COLUMN trace_id TEXT;
        ALTER TABLE messages ADD COLUMN format TEXT;
        ALTER TABLE messages ADD COLUMN subject TEXT;
        CREATE INDEX messages_trace ON messages(trace_id) WHERE trace_id IS NOT NULL;
        CREATE TABLE attachments (
            sha256 TEXT PRIMARY KEY,
            size INTEGER NOT NULL,
            data BLOB NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE message_attachments (
            message_id INTEGER NOT NULL REFERENCES messages(id),
            name TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            content_type TEXT,
            PRIMARY KEY (message_id, name)
        ) WITHOUT ROWID;
        CREATE INDEX message_attachments_blob ON message_attachments(sha256);
    """,
    )


@migration
def m022_notifications_remote_blobs(conn: sqlite3.Connection, now_ms: int) -> None:
    # What outlives the thing that did it.
    # - notifications: the first time each recipient was told of a message, and how
    #   (bridge | team_inbox | mcp | dispatch). A bridge mirror row goes when the message is
    #   read, so the time it was written is kept here; only the first notice is kept.
    # - message_attachments.origin_node: the node holding the blob of a message that came
    #   from another node. The blob is fetched from that node's gateway on demand and checked
    #   against its sha256; until then `attachments` has no row for it.
    # - counters: named totals of things that leave no row of their own (spans dropped when
    #   the trace collector is down), shown by `stats`.
    _script(
        conn,
        """
        CREATE TABLE notifications (
            message_id INTEGER NOT NULL REFERENCES messages(id),
            recipient TEXT NOT NULL,
            notified_at INTEGER NOT NULL,
            how TEXT NOT NULL
                CHECK (how IN ('bridge', 'team_inbox', 'mcp', 'dispatch')),
            PRIMARY KEY (message_id, recipient)
        ) WITHOUT ROWID;
        CREATE INDEX notifications_time ON notifications(notified_at);
        ALTER TABLE message_attachments ADD COLUMN origin_node TEXT;
        CREATE TABLE counters (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
    """,
    )


@migration
def m023_cursors(conn: sqlite3.Connection, now_ms: int) -> None:
    # Durable replay cursors: a named position in one channel's history (the id of the last
    # message read through it, 0 before the first), read forward by `receive --cursor`
    # without touching any delivery. `filter`: the conditions it reads with (JSON).
    # `lost_through`: set by compact when it removes messages past the position that the
    # cursor had not read, the highest such id; a read then says so instead of skipping them.
    _script(
        conn,
        """
        CREATE TABLE cursors (
            name TEXT PRIMARY KEY,
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            position INTEGER NOT NULL CHECK (position >= 0),
            filter TEXT,
            lost_through INTEGER,
            created_by TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX cursors_channel ON cursors(channel_id);
    """,
    )


@migration
def m024_schedules(conn: sqlite3.Connection, now_ms: int) -> None:
    # Recurring schedules: each occurrence is a normal message sent by `tick` (or a reader)
    # at its time. `next_at`: the next occurrence not yet sent (NULL once finished); an
    # occurrence is sent and next_at moved past it in one transaction, so none is sent twice
    # or skipped. `every_ms` or `cron` (UTC); `catch_up`: after a late tick, `all` missed
    # occurrences are sent once each, `last` only the latest. `request`: the send's other
    # options (JSON: topic, priority, metadata).
    _script(
        conn,
        """
        CREATE TABLE schedules (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            sender TEXT NOT NULL,
            content TEXT NOT NULL,
            request TEXT,
            every_ms INTEGER CHECK (every_ms IS NULL OR every_ms > 0),
            cron TEXT,
            next_at INTEGER,
            until_at INTEGER,
            max_runs INTEGER CHECK (max_runs IS NULL OR max_runs > 0),
            runs INTEGER NOT NULL DEFAULT 0,
            catch_up TEXT NOT NULL DEFAULT 'all' CHECK (catch_up IN ('all', 'last')),
            state TEXT NOT NULL DEFAULT 'active'
                CHECK (state IN ('active', 'paused', 'finished')),
            last_run_at INTEGER,
            last_message_id INTEGER,
            last_error TEXT,
            created_by TEXT,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            CHECK ((every_ms IS NULL) != (cron IS NULL))
        );
        CREATE INDEX schedules_due ON schedules(next_at) WHERE state = 'active';
    """,
    )


@migration
def m025_consumer_groups(conn: sqlite3.Connection, now_ms: int) -> None:
    # Worker pools on a pubsub channel and FIFO message groups.
    # - subscriptions.grp: the pool a subscription serves (NULL: the agent's own copy). The
    #   pool's messages wait on one delivery row whose recipient is '*' || grp, as a queue's
    #   wait under '*', until a member's receive claims it.
    # - deliveries.pool: that placeholder ('*' on a queue), kept on the row once claimed, so
    #   that a nack or a lapsed lease gives it back to the pool and not to the member. Set
    #   on a pool's rows and on a queue's keyed rows only.
    # - deliveries.group_key: a FIFO group; within one pool its messages are handed out in
    #   id order, one at a time. deliveries_fifo holds a pool's keyed rows not yet finished
    #   (not dead, not acked for good, not read on an untracked channel), so the check
    #   "is an earlier one of this key still open" reads only open rows.
    _script(
        conn,
        """
        ALTER TABLE subscriptions ADD COLUMN grp TEXT;
        CREATE INDEX subscriptions_group ON subscriptions(agent, channel_id, grp)
            WHERE grp IS NOT NULL;
        ALTER TABLE deliveries ADD COLUMN pool TEXT;
        ALTER TABLE deliveries ADD COLUMN group_key TEXT;
        CREATE INDEX deliveries_fifo ON deliveries(channel_id, pool, group_key, message_id)
            WHERE group_key IS NOT NULL AND state != 'dead'
            AND (tracked = 1 OR (state != 'read' AND state != 'acked'))
            AND (state != 'acked' OR ack_status = 'received' OR ack_status = 'in_progress');
    """,
    )


@migration
def m026_search(conn: sqlite3.Connection, now_ms: int) -> None:
    # Full-text search over messages (`messages --search`): an FTS5 index whose text stays
    # in `messages` and `message_events` (external content, read through the view
    # `message_search_source`), so the words are stored once. Columns: the body, the
    # subject, and the event's thread, actor and target (the event's preview is a cut of
    # the body). Messages enter it in id order, in batches, not one by one inside each send
    # (FTS5 writes a segment per transaction: it cost a send 1.7x): `search_state
    # .indexed_through` is the highest id indexed, and a search first indexes the messages
    # past it. The triggers keep what is already indexed in step: a subject set, an event
    # inserted, changed or deleted after its message, a message deleted (compact deletes
    # the event first, then the message). An external-content index must be told the exact
    # text a row was indexed under to remove it, so each trigger removes the row with that
    # text and adds it back with the new. Nothing is indexed here: on a large store the
    # first search does it (one pass, about a full scan of the messages), not whichever
    # command opened the store first.
    _script(
        conn,
        """
        CREATE TABLE search_state (id INTEGER PRIMARY KEY CHECK (id = 1),
            indexed_through INTEGER NOT NULL);
        INSERT INTO search_state VALUES (1, 0);
        CREATE VIEW message_search_source AS SELECT m.id AS id, m.content AS
            content, m.subject AS subject, (SELECT trim(coalesce(e.thread_id,
            '') || ' ' || coalesce(e.actor, '') || ' ' || coalesce(e.target,
            '')) FROM message_events e WHERE e.message_id = m.id) AS event FROM
            messages m;
        CREATE VIRTUAL TABLE message_search USING fts5(content, subject,
            event, content = 'message_search_source', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2');
        CREATE TRIGGER message_search_update AFTER UPDATE OF content,
            subject ON messages WHEN old.id <= (SELECT indexed_through FROM
            search_state) AND (old.content IS NOT new.content OR old.subject IS
            NOT new.subject) BEGIN
            INSERT INTO message_search (message_search, rowid, content,
                subject, event)
                SELECT 'delete', old.id, old.content, old.subject, s.event
                FROM message_search_source s WHERE s.id = old.id;
            INSERT INTO message_search (rowid, content, subject, event)
                SELECT id, content, subject, event FROM message_search_source
                WHERE id = new.id;
        END;
        CREATE TRIGGER message_search_delete AFTER DELETE ON messages WHEN
            old.id <= (SELECT indexed_through FROM search_state) BEGIN
            INSERT INTO message_search (message_search, rowid, content,
                subject, event)
                VALUES ('delete', old.id, old.content, old.subject, (SELECT
                    trim(coalesce(e.thread_id, '') || ' ' || coalesce(e.actor,
                    '') || ' ' || coalesce(e.target, '')) FROM message_events e
                    WHERE e.message_id = old.id));
        END;
        CREATE TRIGGER message_search_event_insert AFTER INSERT ON
            message_events WHEN new.message_id <= (SELECT indexed_through FROM
            search_state) BEGIN
            INSERT INTO message_search (message_search, rowid, content,
                subject, event)
                SELECT 'delete', id, content, subject, NULL FROM messages
                    WHERE id = new.message_id;
            INSERT INTO message_search (rowid, content, subject, event)
                SELECT id, content, subject, event FROM message_search_source
                WHERE id = new.message_id;
        END;
        CREATE TRIGGER message_search_event_update AFTER UPDATE OF
            thread_id, actor, target ON message_events WHEN old.message_id <=
            (SELECT indexed_through FROM search_state) BEGIN
            INSERT INTO message_search (message_search, rowid, content,
                subject, event)
                SELECT 'delete', id, content, subject,
                    trim(coalesce(old.thread_id, '') || ' ' ||
                    coalesce(old.actor, '') || ' ' || coalesce(old.target, ''))
                    FROM messages WHERE id = old.message_id;
            INSERT INTO message_search (rowid, content, subject, event)
                SELECT id, content, subject, event FROM message_search_source
                WHERE id = new.message_id;
        END;
        CREATE TRIGGER message_search_event_delete AFTER DELETE ON
            message_events WHEN old.message_id <= (SELECT indexed_through FROM
            search_state) BEGIN
            INSERT INTO message_search (message_search, rowid, content,
                subject, event)
                SELECT 'delete', id, content, subject,
                    trim(coalesce(old.thread_id, '') || ' ' ||
                    coalesce(old.actor, '') || ' ' || coalesce(old.target, ''))
                    FROM messages WHERE id = old.message_id;
            INSERT INTO message_search (rowid, content, subject, event)
                SELECT id, content, subject, event FROM message_search_source
                WHERE id = old.message_id;
        END;
    """,
    )


@migration
def m027_ack_clock(conn: sqlite3.Connection, now_ms: int) -> None:
    # Per channel: when a tracked delivery's ack deadline starts (`sent`: at delivery, as
    # before; `read`: at the recipient's first read of each delivery, so a slow poller is not
    # retried before it has looked) and which acks become a message to the sender (`all`,
    # `failures`: only `failed`, `none`). An unread delivery under `read` has no timer.
    _script(
        conn,
        """
        ALTER TABLE channels ADD COLUMN ack_clock TEXT NOT NULL DEFAULT 'sent'
            CHECK (ack_clock IN ('sent', 'read'));
        ALTER TABLE channels ADD COLUMN ack_notify TEXT NOT NULL DEFAULT 'all'
            CHECK (ack_notify IN ('all', 'failures', 'none'));
    """,
    )


@migration
def m028_pool_bindings(conn: sqlite3.Connection, now_ms: int) -> None:
    # A worker pool outlives its members (an SQS queue subscribed to an SNS topic keeps
    # filling with no consumer): when the last member's subscriptions go, the patterns they
    # held stay here and route new messages to the pool's placeholder '*' || grp, until a
    # member subscribes again (its patterns are the pool's from then on) or the pool is
    # deleted (`unsubscribe CH --group NAME --delete`). Sends cache their routes under the
    # channels token, so a change here moves it, as one to subscriptions does.
    _script(
        conn,
        """
        CREATE TABLE pool_bindings (
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            grp TEXT NOT NULL,
            pattern TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (channel_id, grp, pattern)
        ) WITHOUT ROWID;
    """,
    )
    for event in ("INSERT", "UPDATE", "DELETE"):
        conn.execute(
            f"CREATE TRIGGER pool_bindings_version_{event.lower()} AFTER {event} ON pool_bindings"
            " BEGIN UPDATE channels_version SET token = token + 1 WHERE id = 1; END"
        )


@migration
def m029_nats_replicas(conn: sqlite3.Connection, now_ms: int) -> None:
    # How many replicas a NATS node's stream has in a JetStream cluster (`node init
    # --replicas`): the stream is created, or raised, to it by the node's publisher.
    _script(
        conn,
        """
        ALTER TABLE fed_nats ADD COLUMN replicas INTEGER NOT NULL DEFAULT 1
            CHECK (replicas BETWEEN 1 AND 5);
    """,
    )


@migration
def m030_agents_token_and_pool_index(conn: sqlite3.Connection, now_ms: int) -> None:
    # A counter like m011's channels token that every change to the directory (agents,
    # their contacts) adds one to, in any process: a long-lived connection keeps what a send
    # reads of agents (the retired names, a name's retirement, a recipient's contact rule)
    # while it is unchanged. An agent's presence (last_seen_at) is not a change of it.
    # And the worker pools' rows indexed apart: `stats` counts each pool's backlog from them
    # (store/queues.pool_depth), which scanned every delivery of the store.
    _script(
        conn,
        """
        CREATE TABLE agents_version (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            token INTEGER NOT NULL
        );
        INSERT INTO agents_version VALUES (1, 0);
        CREATE TRIGGER agents_version_insert AFTER INSERT ON agents
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE TRIGGER agents_version_delete AFTER DELETE ON agents
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE TRIGGER agents_version_update AFTER UPDATE OF name, kind, display_name,
            description, team, accept, is_admin, registered_at, updated_at, retired_at
            ON agents
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE TRIGGER agent_contacts_version_insert AFTER INSERT ON agent_contacts
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE TRIGGER agent_contacts_version_delete AFTER DELETE ON agent_contacts
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE TRIGGER agent_contacts_version_update AFTER UPDATE ON agent_contacts
            BEGIN UPDATE agents_version SET token = token + 1 WHERE id = 1; END;
        CREATE INDEX deliveries_pool ON deliveries(channel_id, pool)
            WHERE pool IS NOT NULL AND pool != '*';
    """,
    )
