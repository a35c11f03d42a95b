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

import os
import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection, int], None]
MIGRATIONS: list[Migration] = []


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
def m001_initial(conn: sqlite3.Connection, now_ms: int) -> None:
    _script(
        conn,
        """
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE channels (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            type TEXT NOT NULL,
            owner TEXT NOT NULL,
            state TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            delivery TEXT NOT NULL,
            max_message_size INTEGER NOT NULL,
            ack_timeout_ms INTEGER NOT NULL,
            max_retries INTEGER NOT NULL,
            retry_backoff_ms INTEGER NOT NULL,
            retry_jitter REAL NOT NULL,
            echo INTEGER NOT NULL,
            priority_ordering INTEGER NOT NULL,
            max_pending INTEGER NOT NULL,
            dedupe_window_ms INTEGER NOT NULL,
            -- compact removes finished messages beyond the newest N / older than this (0: off)
            retention_count INTEGER NOT NULL DEFAULT 0,
            retention_age_ms INTEGER NOT NULL DEFAULT 0,
            direct_pair TEXT UNIQUE
        );
        CREATE TABLE participants (
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            agent TEXT NOT NULL,
            role TEXT NOT NULL,
            joined_at INTEGER NOT NULL,
            PRIMARY KEY (channel_id, agent)
        ) WITHOUT ROWID;
        CREATE INDEX participants_agent ON participants(agent);
        CREATE TABLE subscriptions (
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            agent TEXT NOT NULL,
            pattern TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (channel_id, agent, pattern)
        ) WITHOUT ROWID;
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            channel_id INTEGER NOT NULL REFERENCES channels(id),
            sender TEXT NOT NULL,
            type TEXT NOT NULL,
            content TEXT NOT NULL,
            topic TEXT,
            priority INTEGER NOT NULL,
            correlation_id TEXT,
            dedupe_key TEXT,
            metadata TEXT,
            created_at INTEGER NOT NULL,
            deliver_at INTEGER,
            -- after this, deliveries not yet read are dead-lettered as `expired`
            expires_at INTEGER,
            -- federation (spec 002): set for messages that came from another node
            origin_node TEXT,
            global_id TEXT
        );
        -- partial: local messages (NULL) cost nothing on insert
        CREATE UNIQUE INDEX messages_global_id ON messages(global_id)
            WHERE global_id IS NOT NULL;
        CREATE INDEX messages_channel ON messages(channel_id, id);
        CREATE INDEX messages_created ON messages(created_at);
        CREATE INDEX messages_sender ON messages(sender);
        CREATE INDEX messages_correlation ON messages(correlation_id)
            WHERE correlation_id IS NOT NULL;
        CREATE INDEX messages_dedupe ON messages(channel_id, dedupe_key)
            WHERE dedupe_key IS NOT NULL;
        CREATE INDEX messages_expiry ON messages(expires_at) WHERE expires_at IS NOT NULL;
        CREATE TABLE deliveries (
            message_id INTEGER NOT NULL REFERENCES messages(id),
            recipient TEXT NOT NULL,
            channel_id INTEGER NOT NULL,
            state TEXT NOT NULL,
            -- the message priority when its channel orders by priority, else 0
            rank INTEGER NOT NULL,
            tracked INTEGER NOT NULL,
            retry_count INTEGER NOT NULL DEFAULT 0,
            delivered_at INTEGER,
            read_at INTEGER,
            ack_status TEXT,
            acked_at INTEGER,
            ack_note TEXT,
            next_timer_at INTEGER,
            last_error TEXT,
            PRIMARY KEY (message_id, recipient)
        ) WITHOUT ROWID;
        CREATE INDEX deliveries_inbox ON deliveries(recipient, state, rank DESC, message_id);
        CREATE INDEX deliveries_timer ON deliveries(next_timer_at)
            WHERE next_timer_at IS NOT NULL;
        -- messages not yet done with: what limits.max_active_messages and max_pending count
        CREATE INDEX deliveries_active ON deliveries(message_id)
            WHERE state IN ('queued', 'waiting', 'unread') OR (tracked = 1 AND state = 'read');
        CREATE TABLE dead_letters (
            message_id INTEGER NOT NULL REFERENCES messages(id),
            recipient TEXT NOT NULL,
            channel_id INTEGER NOT NULL,
            reason TEXT NOT NULL,
            retry_count INTEGER NOT NULL,
            last_error TEXT,
            dead_lettered_at INTEGER NOT NULL,
            PRIMARY KEY (message_id, recipient)
        ) WITHOUT ROWID;
        CREATE INDEX dead_letters_time ON dead_letters(dead_lettered_at);
        CREATE TABLE exactly_once (
            correlation_id TEXT NOT NULL,
            recipient TEXT NOT NULL,
            -- the same sender re-sending the same type: a response from a second responder
            -- to the same query is a new message, not a duplicate
            sender TEXT NOT NULL,
            type TEXT NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (correlation_id, recipient, sender, type)
        ) WITHOUT ROWID;
        CREATE INDEX exactly_once_expiry ON exactly_once(expires_at);
        """
    )
    conn.execute("INSERT INTO store_meta VALUES ('store_id', ?)", (os.urandom(16).hex(),))
    conn.execute("INSERT INTO store_meta VALUES ('created_at', ?)", (str(now_ms),))
    # The reserved pubsub channel for acomm's own notifications, present in every store.
    conn.execute(
        "INSERT INTO channels (name, type, owner, state, created_at, delivery, max_message_size,"
        " ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter, echo, priority_ordering,"
        " max_pending, dedupe_window_ms) VALUES ('_system', 'pubsub', 'acomm', 'active', ?,"
        " 'at-most-once', 1048576, 30000, 3, 1000, 0, 0, 0, 0, 86400000)",
        (now_ms,),
    )
    conn.execute(
        "INSERT INTO participants VALUES ((SELECT id FROM channels WHERE name = '_system'),"
        " 'acomm', 'owner', ?)",
        (now_ms,),
    )


@migration
def m002_export_watermark(conn: sqlite3.Connection, now_ms: int) -> None:
    # `acomm export --incremental`: per output path, the highest message id exported there.
    _script(
        conn,
        """
        CREATE TABLE exports (
            target TEXT PRIMARY KEY,
            last_message_id INTEGER NOT NULL,
            exported_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
    )


@migration
def m003_bridge(conn: sqlite3.Connection, now_ms: int) -> None:
    # The mailbox bridge (issue 6): per (message, recipient, kind) the state of its mirror
    # file (written; stale = to be taken away, with the error, attempts and next attempt
    # when taking it away failed; failed, with the error and the next attempt; a row goes
    # once its mirror is taken away), deliveries made unread again since the bridge last
    # looked, response files left in place (bad: reported once until their size or
    # modification time changes; retry: refused for now, tried again by every sync), and
    # response files committed as messages but not deleted yet.
    _script(
        conn,
        """
        CREATE TABLE bridge_mirrors (
            message_id INTEGER NOT NULL,
            recipient TEXT NOT NULL,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            next_attempt_at INTEGER,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (message_id, recipient, kind)
        ) WITHOUT ROWID;
        CREATE INDEX bridge_mirrors_state ON bridge_mirrors(state, kind, recipient);
        -- every agent@team acomm has mirrored to: their native inboxes get pruned
        CREATE TABLE bridge_team_inboxes (
            recipient TEXT PRIMARY KEY
        ) WITHOUT ROWID;
        -- deliveries that became unread by an update (a queue released, a redelivery, a
        -- replay), filled by a trigger and drained by the next sync (a row also goes when
        -- its delivery stops being unread, so it never holds more rows than unread deliveries)
        CREATE TABLE bridge_unread (
            message_id INTEGER NOT NULL,
            recipient TEXT NOT NULL,
            PRIMARY KEY (message_id, recipient)
        ) WITHOUT ROWID;
        CREATE TABLE bridge_bad_files (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            reason TEXT NOT NULL,
            reported_at INTEGER NOT NULL,
            retry INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        -- a response file committed as a message (in the same transaction) until it is
        -- deleted: seen again after a crash or a failed deletion, it is only deleted
        CREATE TABLE bridge_ingested (
            path TEXT PRIMARY KEY,
            mtime_ns INTEGER NOT NULL,
            size INTEGER NOT NULL,
            message_id INTEGER,
            error TEXT,
            ingested_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
    )
    # The triggers that fill bridge_mirrors' stale state and bridge_unread are created by
    # the bridge on first use (store/bridge.py, create_triggers): stores without a bridge
    # never pay for them.


@migration
def m004_dispatch(conn: sqlite3.Connection, now_ms: int) -> None:
    # Agent dispatch (issue 7). dispatch_claims: per (message, agent) the state of its
    # dispatch round: `running` (held by a lease until lease_until), `retry` (failed, due
    # again at next_retry_at), `done` (accepted or ignored) or `dead` (dead-lettered). A
    # delivery that becomes unread again after done or dead (a redelivery, a replay) starts
    # a new round. dispatch_receipts: one row per run, the history `acomm receipts` lists.
    # No foreign keys: compaction removes both with their messages.
    _script(
        conn,
        """
        CREATE TABLE dispatch_claims (
            message_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            state TEXT NOT NULL,
            run_id TEXT NOT NULL,
            attempts INTEGER NOT NULL,
            lease_until INTEGER,
            next_retry_at INTEGER,
            PRIMARY KEY (message_id, agent)
        ) WITHOUT ROWID;
        -- the runs in progress or waiting for a retry: leases run out, retries fall due
        CREATE INDEX dispatch_claims_state ON dispatch_claims(state, lease_until);
        CREATE TABLE dispatch_receipts (
            -- the order runs started in (several may start in one millisecond)
            seq INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL UNIQUE,
            message_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            status TEXT NOT NULL,
            reason TEXT,
            exit_code INTEGER,
            started_at INTEGER NOT NULL,
            finished_at INTEGER,
            attempt INTEGER NOT NULL,
            next_retry_at INTEGER,
            -- the message's dedupe key: a key this agent handled inside the window is a
            -- duplicate
            dedupe_key TEXT
        );
        CREATE INDEX dispatch_receipts_message ON dispatch_receipts(message_id, agent);
        CREATE INDEX dispatch_receipts_agent ON dispatch_receipts(agent, seq);
        CREATE INDEX dispatch_receipts_dedupe ON dispatch_receipts(agent, dedupe_key)
            WHERE dedupe_key IS NOT NULL;
        """
    )


@migration
def m005_federation(conn: sqlite3.Connection, now_ms: int) -> None:
    # Federation (spec 002, DESIGN.md §7). Every table is empty on a store that is not a
    # node, and nothing on the send path reads or writes them: a plain store pays nothing.
    # messages.global_id / origin_node and their unique index exist since m001 (the durable
    # receiver dedupe).
    _script(
        conn,
        """
        -- this store's node identity: one row at most (`acomm node init --id NODE`); the
        -- Ed25519 private key (its 32-byte seed) lives in the store file, which is 0600
        CREATE TABLE fed_node (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            node_id TEXT NOT NULL,
            public_key BLOB NOT NULL,
            private_key BLOB NOT NULL,
            created_at INTEGER NOT NULL
        );
        -- this node's outbox: append-only (the triggers below), seq = the cursor position
        -- peers read from; a retry is the same event_id with attempt + 1
        CREATE TABLE fed_outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            kind TEXT NOT NULL,
            to_node TEXT,
            envelope TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            UNIQUE (event_id, attempt)
        );
        CREATE TRIGGER fed_outbox_no_update BEFORE UPDATE ON fed_outbox
        BEGIN SELECT RAISE(ABORT, 'fed_outbox is append-only'); END;
        CREATE TRIGGER fed_outbox_no_delete BEFORE DELETE ON fed_outbox
        BEGIN SELECT RAISE(ABORT, 'fed_outbox is append-only'); END;
        -- how far this node has read each peer's outbox (the last seq taken)
        CREATE TABLE fed_cursors (
            source_node TEXT PRIMARY KEY,
            position INTEGER NOT NULL DEFAULT 0,
            head INTEGER,
            pulled_at INTEGER,
            last_error TEXT
        ) WITHOUT ROWID;
        -- every event read from a peer, once: the receiver's dedupe of acks, replies and
        -- signals (messages are also deduped by messages.global_id)
        CREATE TABLE fed_inbound (
            event_id TEXT PRIMARY KEY,
            source_node TEXT NOT NULL,
            seq INTEGER NOT NULL,
            kind TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            message_id INTEGER,
            received_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX fed_inbound_message ON fed_inbound(message_id)
            WHERE message_id IS NOT NULL;
        -- the sender's state of each event it emitted: emitted, accepted, processed,
        -- replied, dead_letter, incident; next_timer_at drives retries and the SLA
        CREATE TABLE fed_sent (
            event_id TEXT PRIMARY KEY,
            message_id INTEGER,
            to_node TEXT NOT NULL,
            to_agent TEXT,
            route_decision TEXT NOT NULL,
            state TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            next_timer_at INTEGER,
            created_at INTEGER NOT NULL,
            accepted_at INTEGER,
            processed_at INTEGER,
            incident_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX fed_sent_message ON fed_sent(message_id) WHERE message_id IS NOT NULL;
        CREATE INDEX fed_sent_timer ON fed_sent(next_timer_at) WHERE next_timer_at IS NOT NULL;
        -- this node's copy of the state room: one row per entry of one of its maps
        -- (nodes, agents, routing, cursors, invites, ...), the value as JSON
        CREATE TABLE fed_room (
            map TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (map, key)
        ) WITHOUT ROWID;
        -- changes short commands queue for the gateway to apply to the room (value NULL:
        -- delete the entry); applied_at is set once the room has them
        CREATE TABLE fed_room_changes (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            map TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT,
            queued_at INTEGER NOT NULL,
            applied_at INTEGER
        );
        CREATE INDEX fed_room_changes_pending ON fed_room_changes(seq) WHERE applied_at IS NULL;
        -- on a seed: invites (only the SHA-256 of the token), the nonces and tickets seen by
        -- the exchange (the replay guard), and the nodes that joined with a key (rejoin by
        -- node proof)
        CREATE TABLE fed_invites (
            invite_id TEXT PRIMARY KEY,
            token_sha256 TEXT NOT NULL UNIQUE,
            expected_node TEXT,
            pinned_key BLOB,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER,
            used_by TEXT,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE fed_nonces (
            nonce TEXT PRIMARY KEY,
            node_id TEXT NOT NULL,
            seen_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE fed_tickets (
            jti TEXT PRIMARY KEY,
            invite_id TEXT,
            node_id TEXT NOT NULL,
            public_key BLOB,
            issued_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            used_at INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX fed_tickets_invite ON fed_tickets(invite_id) WHERE invite_id IS NOT NULL;
        CREATE TABLE fed_members (
            node_id TEXT PRIMARY KEY,
            public_key BLOB NOT NULL,
            joined_at INTEGER NOT NULL,
            last_auth_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """
    )


@migration
def m006_tasks(conn: sqlite3.Connection, now_ms: int) -> None:
    # Tasks (issue 15, spec 002 §5, §6, §9): work one agent delegates to another. A task is
    # carried by a `command` message to its owner (its direct channel, or `_fed:` across
    # nodes): tasks.id IS that message's id on this store, so `task show 7` and `show 7` are
    # the same thing. The row is the task's current state; task_events is its history, one
    # row per event, each with a UUIDv7 event_id that is also the outbox eventId when the
    # event travels to another node (the receiver records it under the same id, once).
    # No foreign keys: compaction may remove the carrying message, never the task.
    _script(
        conn,
        """
        CREATE TABLE tasks (
            id INTEGER PRIMARY KEY,
            correlation_id TEXT NOT NULL,
            channel_id INTEGER NOT NULL,
            -- task | skill_distribution (the capability fan-out)
            task_type TEXT NOT NULL,
            -- the capability asked for (free text until the catalog exists); NULL: none
            capability_id TEXT,
            creator TEXT NOT NULL,
            owner TEXT NOT NULL,
            -- created, accepted, updated, completed, failed, overdue, incident
            state TEXT NOT NULL,
            eta_required INTEGER NOT NULL DEFAULT 0,
            eta_at INTEGER,
            progress INTEGER NOT NULL DEFAULT 0,
            plan TEXT,
            -- the last note, the completion's body or the failure's reason
            note TEXT,
            -- the response (complete) or acknowledgement (fail) that ended it
            result_message_id INTEGER,
            created_at INTEGER NOT NULL,
            accepted_at INTEGER,
            updated_at INTEGER NOT NULL,
            finished_at INTEGER,
            -- federation: the task_create eventId on both nodes (NULL: local only), the node
            -- it was created on, and the node of the other side (NULL: this store)
            global_id TEXT,
            origin_node TEXT,
            peer_node TEXT
        );
        CREATE UNIQUE INDEX tasks_global_id ON tasks(global_id) WHERE global_id IS NOT NULL;
        CREATE INDEX tasks_owner ON tasks(owner, state);
        CREATE INDEX tasks_creator ON tasks(creator, state);
        CREATE INDEX tasks_capability ON tasks(capability_id) WHERE capability_id IS NOT NULL;
        -- the overdue timer: open tasks with an ETA (tick marks them once it passes)
        CREATE INDEX tasks_due ON tasks(eta_at)
            WHERE eta_at IS NOT NULL AND state IN ('created', 'accepted', 'updated');
        CREATE TABLE task_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            event_id TEXT NOT NULL UNIQUE,
            task_id INTEGER NOT NULL,
            -- created, accepted, updated, completed, failed, overdue, incident
            event TEXT NOT NULL,
            agent TEXT,
            at INTEGER NOT NULL,
            progress INTEGER,
            note TEXT,
            eta_at INTEGER,
            -- the message this event sent (an acknowledgement, a response), if any
            message_id INTEGER,
            -- the node the event happened on (NULL: this store)
            origin_node TEXT,
            -- more fields as a JSON object (an incident's class, skill versions, ...)
            detail TEXT
        );
        CREATE INDEX task_events_task ON task_events(task_id, seq);
        """
    )


@migration
def m007_agent_tokens(conn: sqlite3.Connection, now_ms: int) -> None:
    # External agents (spec 002 §12, issue 15): scoped session tokens with which an agent
    # that is not a transport peer sends and receives through this node's gateway (`acomm
    # token create`). Only the SHA-256 of a token is kept; scopes is a comma-separated
    # subset of send,receive; a revoked or expired token is refused, its row kept for
    # `token list`.
    _script(
        conn,
        """
        CREATE TABLE agent_tokens (
            token_id TEXT PRIMARY KEY,
            token_sha256 TEXT NOT NULL UNIQUE,
            agent TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            revoked_at INTEGER
        ) WITHOUT ROWID;
        """
    )


@migration
def m008_capabilities(conn: sqlite3.Connection, now_ms: int) -> None:
    # Capabilities (issue 15, spec 002 §9): what an agent can be asked to do, under a contract
    # (a JSON Schema for the output, a default ETA) and a pair of skills: the delegation skill
    # requesters install, the executor skill the owner hosts. The list position is what
    # orders migrations (built as m009 beside m007; renamed at the merge to follow it).
    # A row stays after unpublish (state `unpublished`): routing misses and incidents still
    # name its skill versions.
    _script(
        conn,
        """
        CREATE TABLE agent_skills (
            agent TEXT NOT NULL,
            ref TEXT NOT NULL,
            version TEXT NOT NULL,
            added_at INTEGER NOT NULL,
            PRIMARY KEY (agent, ref)
        ) WITHOUT ROWID;
        CREATE TABLE capabilities (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            delegation_ref TEXT NOT NULL,
            delegation_version TEXT NOT NULL,
            executor_ref TEXT NOT NULL,
            executor_version TEXT NOT NULL,
            -- the output contract, a JSON Schema document as JSON text, and its sha256
            schema TEXT NOT NULL,
            schema_sha256 TEXT NOT NULL,
            eta_ms INTEGER NOT NULL,
            -- published | unpublished
            state TEXT NOT NULL,
            published_at INTEGER NOT NULL,
            unpublished_at INTEGER
        ) WITHOUT ROWID;
        CREATE TABLE routing_misses (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            capability_id TEXT NOT NULL,
            agent TEXT NOT NULL,
            reason TEXT NOT NULL,
            at INTEGER NOT NULL
        );
        CREATE INDEX routing_misses_capability ON routing_misses(capability_id, at);
        CREATE TABLE incidents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            capability_id TEXT NOT NULL,
            delegation_skill TEXT NOT NULL,
            executor_skill TEXT NOT NULL,
            -- eta_breach | execution_error | output_mismatch | routing_miss
            failure_class TEXT NOT NULL,
            -- JSON: the correlation ids (tasks) or miss samples behind it
            sample_corr_ids TEXT NOT NULL,
            samples TEXT,
            task_id INTEGER,
            -- what makes it one occurrence (class:task id, or class:capability:first miss):
            -- a second tick or a replayed event finds it and writes nothing
            occurrence TEXT NOT NULL UNIQUE,
            created_at INTEGER NOT NULL,
            -- open | resolved
            state TEXT NOT NULL,
            resolved_at INTEGER,
            resolved_by TEXT,
            note TEXT,
            -- the _system notification that published it
            message_id INTEGER
        );
        CREATE INDEX incidents_state ON incidents(state, id);
        """
    )


@migration
def m009_leases(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 18: consumers that do real work. A `received` or `in_progress` ack on an
    # ack-tracked delivery holds it for a lease (the delivery stays `acked`, its
    # next_timer_at is the lease's end); a lease that runs out re-arms the retry timer.
    # channels.lease_ms: 0 = the channel's ack timeout. message_ttl_ms: 0 = no default TTL
    # (messages.expires_at, from m001, is each message's own end). retry_failed: a `failed`
    # ack gives the delivery back for a retry instead of ending it.
    # deliveries.lease_expired: how many times this delivery's lease ran out (stats).
    _script(
        conn,
        """
        ALTER TABLE channels ADD COLUMN lease_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE channels ADD COLUMN message_ttl_ms INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE channels ADD COLUMN retry_failed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE deliveries ADD COLUMN lease_expired INTEGER NOT NULL DEFAULT 0;
        -- held work (stats `in_progress`, messages --status in_progress): few rows
        CREATE INDEX deliveries_in_progress ON deliveries(recipient, channel_id)
            WHERE state = 'acked' AND ack_status = 'in_progress';
        CREATE INDEX deliveries_lease_expired ON deliveries(recipient, channel_id)
            WHERE lease_expired > 0;
        """
    )
    # Work parked before the upgrade (the bug this fixes) is held from now on for one ack
    # timeout; deliveries dispatch holds by its claim, and tasks (their ETA), are left alone.
    conn.execute(
        "UPDATE deliveries SET next_timer_at = ? + (SELECT c.ack_timeout_ms FROM channels c"
        " WHERE c.id = deliveries.channel_id) WHERE state = 'acked' AND tracked = 1"
        " AND ack_status IN ('received', 'in_progress') AND next_timer_at IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM dispatch_claims cl WHERE cl.message_id ="
        " deliveries.message_id AND cl.agent = deliveries.recipient"
        " AND cl.state IN ('running', 'retry'))"
        " AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = deliveries.message_id)",
        (now_ms,))


@migration
def m010_queues(conn: sqlite3.Connection, now_ms: int) -> None:
    # Work queues (channel type `queue`): a queue message has ONE delivery row, whose
    # recipient is '*' (the queue) until a member's `receive` claims it by rewriting the
    # recipient (a compare-and-set on recipient = '*'). This index holds exactly the claimable
    # rows, in claim order (priority rank first when the channel orders by it, then oldest), so
    # a claim reads the head of one channel's queue and nothing else.
    _script(conn, """
        CREATE INDEX deliveries_queue ON deliveries(channel_id, rank DESC, message_id)
            WHERE recipient = '*' AND state = 'unread';
    """)


@migration
def m011_channels_version(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 17: a send reads its channel and participants from a per-connection cache, valid
    # while this counter is what the cache was filled under. Every change to channels,
    # participants or subscriptions, by any process or command, adds one. A counter (not a
    # random value, so two stores that lived the same commands are alike, row for row): the
    # engine caches only under a value read at the start of a transaction of its own, i.e. a
    # committed one, and committed values never repeat. One row.
    _script(conn, """
        CREATE TABLE channels_version (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            token INTEGER NOT NULL
        );
        INSERT INTO channels_version VALUES (1, 0);
    """)
    for table in ("channels", "participants", "subscriptions"):
        for event in ("INSERT", "UPDATE", "DELETE"):
            conn.execute(
                f"CREATE TRIGGER {table}_version_{event.lower()} AFTER {event} ON {table}"
                " BEGIN UPDATE channels_version SET token = token + 1 WHERE id = 1; END")


@migration
def m012_first_read_at(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 19: a delivery's read history. deliveries.read_at is the latest read (a
    # redelivered message read again moves it); first_read_at keeps the first, through
    # redeliveries and replays. delivery_attempts keeps each attempt that ended (an ack
    # deadline or lease passed, a give-back, a replay): written by a trigger whenever
    # retry_count changes, so every path that starts a new attempt records the old one, and
    # send and receive (which never change retry_count) pay nothing. `deadletter show` lists
    # them with the current attempt from the delivery row. No foreign keys: compaction
    # removes them with their messages.
    _script(conn, """
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
    """)


@migration
def m013_channel_admins(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 19: only a channel's owner, or a participant the owner made an admin, may change
    # its state, settings or membership. The owner is `channels.owner` (set by `channel create`
    # since m001, so every existing channel has one: its creator); an admin is a participant
    # with this flag, granted and revoked by `channel admin`. A flag on the participant (not a
    # table of its own) so that leaving ends the grant, and a send's channel read stays one
    # query. Existing rows: no admins (0).
    _script(conn, """
        ALTER TABLE participants ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
    """)


@migration
def m014_nats_outbox(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 22: a node whose outbox travels on NATS JetStream. One row: the server url (what
    # the room advertises as this node's url), the credentials file `node init` was given,
    # how far the outbox has been published into the stream (outbox seq = stream seq: the
    # stream is filled in seq order from 1, so a peer's cursor means the same on either
    # transport), and what `fed migrate --to` recorded when the node switched over.
    _script(conn, """
        CREATE TABLE fed_nats (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            url TEXT NOT NULL,
            creds TEXT,
            published_seq INTEGER NOT NULL DEFAULT 0,
            migrated_from TEXT,
            migrated_head INTEGER,
            migrated_at INTEGER
        );
    """)


@migration
def m015_inbox_indexes(conn: sqlite3.Connection, now_ms: int) -> None:
    # Issue 17 (receive): the indexes of deliveries a mark read (and an ack) must keep, made
    # cheaper to keep (docs/DECISIONS.md "Issue 17, receive's indexes", measured).
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
    _script(conn, """
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
    """)
