"""Shipped migrations m006-m010, never edited; `migrations.MIGRATIONS` imports them to run."""

from __future__ import annotations

import sqlite3

from acomm_cli.store.migrations import _script


def m006_tasks(conn: sqlite3.Connection, now_ms: int) -> None:
    # Tasks (docs/TASKS.md): work one agent delegates to another. A task is
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
        """,
    )


def m007_agent_tokens(conn: sqlite3.Connection, now_ms: int) -> None:
    # External agents (docs/FEDERATION.md): scoped session tokens with which an agent
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
        """,
    )


def m008_capabilities(conn: sqlite3.Connection, now_ms: int) -> None:
    # Capabilities (docs/CAPABILITIES.md): what an agent can be asked to do, under a contract
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
        """,
    )


def m009_leases(conn: sqlite3.Connection, now_ms: int) -> None:
    # Consumers that do real work. A `received` or `in_progress` ack on an
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
        """,
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
        (now_ms,),
    )


def m010_queues(conn: sqlite3.Connection, now_ms: int) -> None:
    # Work queues (channel type `queue`): a queue message has ONE delivery row, whose
    # recipient is '*' (the queue) until a member's `receive` claims it by rewriting the
    # recipient (a compare-and-set on recipient = '*'). This index holds exactly the claimable
    # rows, in claim order (priority rank first when the channel orders by it, then oldest), so
    # a claim reads the head of one channel's queue and nothing else.
    _script(
        conn,
        """
        CREATE INDEX deliveries_queue ON deliveries(channel_id, rank DESC, message_id)
            WHERE recipient = '*' AND state = 'unread';
    """,
    )
