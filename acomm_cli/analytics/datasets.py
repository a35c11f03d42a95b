"""The one table of exported datasets: what `acomm export` writes and `acomm audit` reads.

To add a dataset: a row in DATASET_TABLE here, and its SELECT (by message id range, or the
whole table for a snapshot; columns in the same order) in acomm_cli.store.export. The export
writes it with every chunk (or whole, every time), the manifest lists it, and the audit
makes a view `raw_<name>` of it (an empty one for an older export that does not have it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dataset:
    """One exported dataset: its columns in file order, as (name, type) with the type one of
    TYPES. Every column but COMPUTED comes from the store, in the order of its SELECT in
    acomm_cli.store.export; every file also gets the `date` partition (the UTC day of its
    `created_at`, or of `partition_by` where a table has no creation time of that name).
    `snapshot`: written whole by every export (channels, incidents, agents) instead of by
    message id range with the messages."""

    name: str
    columns: tuple[tuple[str, str], ...]
    snapshot: bool = False
    partition_by: str = "created_at"


_ID, _S, _TS = "int64", "string", "timestamp"

# What the datasets' columns are, in the manifest (`dataset_version`, and per file): 1 (or
# absent: every export made before the number existed), 2 = + deliveries.lease_expired,
# channels.lease_ms / message_ttl_ms / retry_failed, federation.to_agent / route_decision /
# incident_at, and the delivery_attempts dataset; 3 = + the agents dataset; 4 = +
# messages.trace_id; 5 = + the events dataset (the notification event a message carries);
# 6 = + messages.format / subject, the attachments dataset (the files messages name) and the
#     notifications dataset (the first notice of each recipient, and how); 7 = +
#     channels.ack_clock / ack_notify (when an ack deadline starts, which acks notify).
# Versions only
# ever add columns and datasets, so every reader reads every version: a column a file lacks
# reads as null, a dataset a manifest lacks is empty (docs/EXPORT.md).
DATASET_VERSION = 7
COMPUTED = ("priority_name", "exported_at")  # made by the export, not read from the store

# Every dataset an export writes and an audit reads: to add one, add a row here and its
# SELECT (and column names) in acomm_cli.store.export; `acomm audit` picks it up as a view.
DATASET_TABLE: tuple[Dataset, ...] = (
    Dataset(
        "messages",
        (
            ("id", _ID),
            ("channel_id", _ID),
            ("channel", _S),
            ("sender", _S),
            ("type", _S),
            ("content", _S),
            ("topic", _S),
            ("priority", "int8"),
            ("priority_name", _S),
            ("correlation_id", _S),
            ("dedupe_key", _S),
            ("metadata", _S),
            ("created_at", _TS),
            ("deliver_at", _TS),
            ("expires_at", _TS),
            ("origin_node", _S),
            ("global_id", _S),
            ("trace_id", _S),
            ("format", _S),
            ("subject", _S),
        ),
    ),
    Dataset(
        "deliveries",
        (
            ("message_id", _ID),
            ("recipient", _S),
            ("channel_id", _ID),
            ("channel", _S),
            ("state", _S),
            ("tracked", "bool"),
            ("retry_count", "int32"),
            ("created_at", _TS),
            ("delivered_at", _TS),
            ("read_at", _TS),
            ("ack_status", _S),
            ("acked_at", _TS),
            ("ack_note", _S),
            ("next_timer_at", _TS),
            ("last_error", _S),
            ("first_read_at", _TS),
            ("lease_expired", "int32"),
            ("exported_at", _TS),
        ),
    ),
    Dataset(
        "dead_letters",
        (
            ("message_id", _ID),
            ("recipient", _S),
            ("channel_id", _ID),
            ("channel", _S),
            ("reason", _S),
            ("retry_count", "int32"),
            ("last_error", _S),
            ("created_at", _TS),
            ("dead_lettered_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    # every earlier attempt of a delivery (m012's trigger: one row each time retry_count
    # moved), with its message's channel and creation time (the partition)
    Dataset(
        "delivery_attempts",
        (
            ("seq", _ID),
            ("message_id", _ID),
            ("recipient", _S),
            ("channel_id", _ID),
            ("channel", _S),
            ("attempt", "int32"),
            ("delivered_at", _TS),
            ("read_at", _TS),
            ("ack_status", _S),
            ("created_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    Dataset(
        "receipts",
        (
            ("seq", _ID),
            ("run_id", _S),
            ("message_id", _ID),
            ("agent", _S),
            ("status", _S),
            ("reason", _S),
            ("exit_code", "int32"),
            ("attempt", "int32"),
            ("created_at", _TS),
            ("started_at", _TS),
            ("finished_at", _TS),
            ("next_retry_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    Dataset(
        "federation",
        (
            ("message_id", _ID),
            ("global_id", _S),
            ("kind", _S),
            ("to_node", _S),
            ("state", _S),
            ("attempt", "int32"),
            ("created_at", _TS),
            ("accepted_at", _TS),
            ("processed_at", _TS),
            ("to_agent", _S),
            ("route_decision", _S),
            ("incident_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    # tasks ride with the message that carries them (tasks.id is its id on this store): the
    # task's current state, and its history partitioned with it (created_at: the task's)
    Dataset(
        "tasks",
        (
            ("id", _ID),
            ("correlation_id", _S),
            ("channel_id", _ID),
            ("channel", _S),
            ("task_type", _S),
            ("capability_id", _S),
            ("creator", _S),
            ("owner", _S),
            ("state", _S),
            ("eta_required", "bool"),
            ("eta_at", _TS),
            ("progress", "int32"),
            ("plan", _S),
            ("note", _S),
            ("result_message_id", _ID),
            ("created_at", _TS),
            ("accepted_at", _TS),
            ("updated_at", _TS),
            ("finished_at", _TS),
            ("global_id", _S),
            ("origin_node", _S),
            ("peer_node", _S),
            ("exported_at", _TS),
        ),
    ),
    Dataset(
        "task_events",
        (
            ("seq", _ID),
            ("event_id", _S),
            ("task_id", _ID),
            ("event", _S),
            ("agent", _S),
            ("at", _TS),
            ("progress", "int32"),
            ("note", _S),
            ("eta_at", _TS),
            ("message_id", _ID),
            ("origin_node", _S),
            ("detail", _S),
            ("created_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    Dataset(
        "channels",
        (
            ("id", _ID),
            ("name", _S),
            ("type", _S),
            ("owner", _S),
            ("state", _S),
            ("created_at", _TS),
            ("delivery", _S),
            ("max_message_size", _ID),
            ("ack_timeout_ms", _ID),
            ("max_retries", "int32"),
            ("retry_backoff_ms", _ID),
            ("retry_jitter", "float64"),
            ("echo", "bool"),
            ("priority_ordering", "bool"),
            ("max_pending", _ID),
            ("dedupe_window_ms", _ID),
            ("retention_count", _ID),
            ("retention_age_ms", _ID),
            ("lease_ms", _ID),
            ("message_ttl_ms", _ID),
            ("retry_failed", "bool"),
            ("ack_clock", _S),
            ("ack_notify", _S),
            ("exported_at", _TS),
        ),
        snapshot=True,
    ),
    # review incidents have ids of their own and change when resolved: a snapshot, like
    # channels (docs/DECISIONS.md)
    Dataset(
        "incidents",
        (
            ("id", _ID),
            ("capability_id", _S),
            ("delegation_skill", _S),
            ("executor_skill", _S),
            ("failure_class", _S),
            ("sample_corr_ids", _S),
            ("samples", _S),
            ("task_id", _ID),
            ("task_global_id", _S),
            ("occurrence", _S),
            ("created_at", _TS),
            ("state", _S),
            ("resolved_at", _TS),
            ("resolved_by", _S),
            ("note", _S),
            ("message_id", _ID),
            ("exported_at", _TS),
        ),
        snapshot=True,
    ),
    # the agent directory, whole (kinds, teams, retirements and last-seen times change in
    # place): a snapshot partitioned by the day each name was registered. Credentials are
    # never part of it: the SELECT names its columns.
    Dataset(
        "agents",
        (
            ("name", _S),
            ("kind", _S),
            ("display_name", _S),
            ("description", _S),
            ("team", _S),
            ("accept", _S),
            ("is_admin", "bool"),
            ("registered_at", _TS),
            ("updated_at", _TS),
            ("retired_at", _TS),
            ("last_seen_at", _TS),
            ("exported_at", _TS),
        ),
        snapshot=True,
        partition_by="registered_at",
    ),
    # the notification event a message carries (message_events), one row per such message,
    # with its message's channel and creation time (the partition)
    Dataset(
        "events",
        (
            ("message_id", _ID),
            ("channel_id", _ID),
            ("channel", _S),
            ("event_id", _S),
            ("event_type", _S),
            ("occurred_at", _TS),
            ("actor", _S),
            ("target", _S),
            ("target_kind", _S),
            ("thread_id", _S),
            ("comment_id", _S),
            ("parent_comment_id", _S),
            ("depth", "int8"),
            ("language", _S),
            ("action_hint", _S),
            ("content_preview", _S),
            ("created_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    # the files messages name (message_attachments), one row per message and name, with
    # the message's channel and creation time (the partition); never the bytes
    Dataset(
        "attachments",
        (
            ("message_id", _ID),
            ("channel_id", _ID),
            ("channel", _S),
            ("name", _S),
            ("sha256", _S),
            ("size", _ID),
            ("content_type", _S),
            ("created_at", _TS),
            ("exported_at", _TS),
        ),
    ),
    # the first notice of each recipient of a message (notifications): when, and how (bridge,
    # team_inbox, mcp, dispatch), with its message's creation time (the partition)
    Dataset(
        "notifications",
        (
            ("message_id", _ID),
            ("recipient", _S),
            ("how", _S),
            ("notified_at", _TS),
            ("created_at", _TS),
            ("exported_at", _TS),
        ),
    ),
)
DATASETS = tuple(d.name for d in DATASET_TABLE)
CHUNKED = tuple(d.name for d in DATASET_TABLE if not d.snapshot)
SNAPSHOTS = tuple(d.name for d in DATASET_TABLE if d.snapshot)
TYPES = {
    "int64": "BIGINT",
    "int32": "INT",
    "int8": "TINYINT",
    "string": "STRING",
    "bool": "BOOLEAN",
    "float64": "DOUBLE",
    "timestamp": "TIMESTAMP",
}  # -> Spark SQL


def spark_schema(dataset: str) -> str:
    """The Spark DDL schema of a dataset's files, `date` (the partition) included."""
    d = next(d for d in DATASET_TABLE if d.name == dataset)
    return ", ".join(f"{n} {TYPES[t]}" for n, t in d.columns) + ", date DATE"
