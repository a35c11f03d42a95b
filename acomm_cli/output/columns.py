"""The columns of every listing, once: the renderers take their --csv/--tsv header row and
their terminal table's headings from here, and each listing command's --help lists them (see
`cli/params.listing`). A column is (name, what it holds). Light: no imports."""

from __future__ import annotations

Columns = tuple[tuple[str, str], ...]


def column_names(columns: Columns) -> list[str]:
    return [name for name, _ in columns]


def describe(columns: Columns) -> str:
    """The paragraph a listing's --help ends with (one line per column, kept by click)."""
    width = max(len(name) for name, _ in columns)
    lines = [f"  {name:<{width}}  {what}" for name, what in columns]
    return (
        "Output: a table on a terminal, tab-separated lines when piped; --csv or --tsv "
        "add a header row (--no-headers drops it), --jsonl prints one JSON object a row, "
        "--json one document (global options, also after the command).\n\n"
        "\b\nColumns:\n" + "\n".join(lines)
    )


_TIME = "(ISO 8601, UTC)"

CHANNELS: Columns = (
    ("id", "channel id"),
    ("name", "channel name"),
    ("type", "direct, group, broadcast, pubsub, queue..."),
    ("state", "active, paused, draining, closed"),
    ("owner", "the agent that created it"),
    ("delivery", "at_most_once, at_least_once, exactly_once"),
    ("participants", "how many agents are members"),
)

SUBSCRIPTIONS: Columns = (
    ("agent", "the subscriber"),
    ("pattern", "its topic pattern"),
    ("group", "the worker pool it serves (`subscribe --group`; empty: its own copy)"),
)

CONTACTS: Columns = (
    ("contact", "an agent whose direct messages and tasks pass `accept: contacts`"),
    ("added_at", f"when it was added {_TIME}"),
)

MESSAGES: Columns = (
    ("id", "message id"),
    ("channel", "channel name"),
    ("from", "sender"),
    ("type", "text, command, query, response..."),
    ("priority", "low ... critical"),
    ("topic", "topic (pubsub)"),
    ("created_at", f"when it was sent {_TIME}"),
    ("status", "receive: the delivery's state; messages: the message's status"),
    ("content", "the body (tabs and newlines escaped in plain piped lines)"),
)

THREAD: Columns = (
    ("id", "message id"),
    ("from", "sender"),
    ("type", "query, response..."),
    ("created_at", f"when it was sent {_TIME}"),
    ("content", "the body"),
)

DEAD_LETTERS: Columns = (
    ("message_id", "message id"),
    ("recipient", "whose delivery died"),
    ("channel", "channel name"),
    ("reason", "max_retries, expired, dispatch_failed..."),
    ("retry_count", "deliveries tried"),
    ("dead_lettered_at", f"when {_TIME}"),
    ("content", "the body"),
)

STATS: Columns = (
    (
        "kind",
        "agent, channel, queue (inbox files), task (by state), pool (a worker pool: CHANNEL/"
        "GROUP), store, bridge or incidents",
    ),
    (
        "name",
        "the agent, channel, task state, or the fact (store: path, bytes, wal_bytes,"
        " messages; bridge: mirror_backlog, bad_files; incidents: open, resolved)",
    ),
    ("total", "messages (agent); tasks (task); the fact's value (store, bridge, incidents)"),
    ("unread", "unread deliveries"),
    ("awaiting_ack", "read, not yet acknowledged"),
    ("oldest_unread_age_sec", "age of the oldest unread delivery"),
    ("dead_letters", "dead letters"),
    ("in_progress", "acknowledged in_progress"),
    ("lease_expired", "leases run out"),
    ("pending", "deliveries not yet acknowledged (pool: claimed, not finished)"),
    ("queued", "held back by max_pending"),
    ("unclaimed", "work queue or worker pool: not yet claimed"),
    ("pending_files", "mailbox inbox files not yet read"),
    ("oldest_file_age_sec", "age of the oldest of them"),
    ("last_seen_at", "when the agent last acted through acomm (empty: never)"),
)

FINDINGS: Columns = (
    ("check", "the invariant or notice"),
    ("count", "rows that break it"),
    ("detail", "what it means"),
)

CONFIG: Columns = (
    ("key", "setting"),
    ("value", "its value"),
    ("source", "flag, environment, config file or default"),
)

RECEIPTS: Columns = (
    ("run_id", "run id"),
    ("message_id", "message id"),
    ("agent", "the agent run"),
    ("status", "running, succeeded, failed..."),
    ("exit_code", "the command's exit status"),
    ("attempt", "attempt number"),
    ("started_at", f"{_TIME}"),
    ("next_retry_at", f"{_TIME}, when a failed run is tried again"),
    ("reason", "why it failed"),
)

INVITES: Columns = (
    ("invite_id", "invite id"),
    ("state", "open, used, revoked, expired"),
    ("expected_node", "the node it is for, if any"),
    ("expires_at", _TIME),
    ("used_by", "the node that used it"),
)

TASKS: Columns = (
    ("id", "task id"),
    ("from", "creator"),
    ("to", "owner"),
    ("state", "task state"),
    ("progress", "0-100"),
    ("eta_at", _TIME),
    ("capability", "capability id"),
)

TOKENS: Columns = (
    ("token_id", "token id (never the secret)"),
    ("agent", "the agent it acts as"),
    ("scopes", "comma-separated"),
    ("state", "active, revoked, expired"),
    ("expires_at", _TIME),
)

AGENTS: Columns = (
    ("name", "agent name"),
    ("kind", "agent, human, service"),
    ("display_name", "how people call it"),
    ("team", "its team"),
    ("last_seen_at", _TIME + ", empty: never"),
    ("state", "active, retired"),
)

CAPABILITIES: Columns = (
    ("id", "capability id"),
    ("owner", "the agent that published it"),
    ("state", "published, unpublished"),
    ("delegation_skill", "REF@VERSION"),
    ("executor_skill", "REF@VERSION"),
    ("eta_ms", "promised time"),
    ("node", "the node that hosts it"),
)

ATTACHMENTS: Columns = (
    ("name", "the file's name on the message"),
    ("size", "bytes"),
    ("content_type", "guessed from the name"),
    ("sha256", "the hash of its bytes"),
)

SCHEDULES: Columns = (
    ("id", "schedule id"),
    ("channel", "where it sends"),
    ("as", "the sender"),
    ("when", "every DURATION or cron EXPR (UTC)"),
    ("state", "active, paused or finished"),
    ("next_at", "its next occurrence"),
    ("runs", "occurrences sent"),
)

CURSORS: Columns = (
    ("name", "the cursor"),
    ("channel", "the channel whose history it reads"),
    ("position", "the last message id read through it (0: none yet)"),
    ("head", "the channel's newest message id"),
    ("pending", "the channel's messages past the position, before its filter"),
    ("behind_compaction", "compact removed messages it had not read"),
    ("updated_at", "when it last moved"),
)

INCIDENTS: Columns = (
    ("id", "incident id"),
    ("capability_id", "capability"),
    ("failure_class", "the misfire's class"),
    ("state", "open, resolved"),
    ("task_id", "the review task"),
    ("created_at", _TIME),
)

PEERS: Columns = (
    ("node", "node id"),
    ("url", "how it is reached"),
    ("online", "true or false"),
    ("last_seen_at", _TIME),
    ("cursor", "the last event pulled from it"),
    ("head", "its newest event"),
    ("lag", "events not yet pulled"),
)

FED_STATUS: Columns = (
    ("node", "node id"),
    ("state", "ok, peer_unreachable or never_pulled"),
    ("online", "whether the room has heard from it lately"),
    ("cursor", "the last event pulled from it"),
    ("head", "its newest event"),
    ("lag", "events not pulled yet"),
    ("pulled_at", "when this node last tried to pull it"),
    ("error", "why its last pull failed"),
    ("rejected", "events refused from it"),
)

AUDIT: Columns = (
    ("kind", "total, spark, volume, latency_channel, latency_agent, ..."),
    ("subject", "what the row is about (store/channel, agent, node pair...)"),
    ("metric", "the measure (read_p50_ms, messages, ...)"),
    ("value", "its value"),
)
