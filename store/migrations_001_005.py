"""Shipped migrations m001-m005, never edited; `migrations.MIGRATIONS` imports them to run."""

from __future__ import annotations

import os
import sqlite3

from acomm_cli.store.migrations import _script


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
            -- federation: set for messages that came from another node
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
        """,
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
        """,
    )


def m003_bridge(conn: sqlite3.Connection, now_ms: int) -> None:
    # The mailbox bridge: per (message, recipient, kind) the state of its mirror
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
        """,
    )


def m004_dispatch(conn: sqlite3.Connection, now_ms: int) -> None:
    # Agent dispatch. dispatch_claims: per (message, agent) the state of its
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
        """,
    )


def m005_federation(conn: sqlite3.Connection, now_ms: int) -> None:
    # Federation (docs/FEDERATION.md). Every table is empty on a store that is not a
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
        """,
    )
