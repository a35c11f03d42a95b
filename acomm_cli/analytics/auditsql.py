"""The audit's tables as Spark SQL over the views `acomm_cli.analytics.audit` makes:
`messages` (one row per message: a federated one once, by global_id), `store_messages`
(every store's own rows), `deliveries` (with their channel's ack timeout and latencies; the
read latency to the first read), `dead_letters`, `delivery_attempts` (every earlier attempt
of a delivery), `delivery_tries` (each ack-tracked delivery with its attempts), `channels`,
`receipts`, `tasks` (one row per task: a federated one once, by global_id; with
`duration_ms` and `lateness_ms`), `incidents`, `agents` (each store's directory) and
`agent_kinds` (one kind per name across stores), and for federation `fed_sent`
(messages a node emitted, with the peer and the accepted ack), `fed_received` (messages a
node received from a peer) and `audited_nodes`; `traces` reads every store's messages with
their `trace_id`; `attachments` (the files messages name, once each). docs/EXPORT.md
defines every number."""

from __future__ import annotations

ACTIVE_STATES = ("queued", "waiting", "unread", "read")  # a tracked delivery not yet done
STATES = ("queued", "waiting", "unread", "read", "acked", "dead")  # every delivery state

_Q = "array(0.5, 0.95, 0.99)"
_Q90 = "array(0.5, 0.9)"
_FINAL = "('completed', 'failed')"  # a task's final states; every other one is open
_UNKNOWN = "'unknown'"  # the kind of a name no audited directory holds
_LATENCY = f"""
    count(*) AS deliveries,
    count(coalesce(first_read_at, read_at)) AS read,
    percentile_approx(read_latency_ms, {_Q}) AS rq,
    count(acked_at) AS acked,
    percentile_approx(ack_latency_ms, {_Q}) AS aq,
    count_if(read_fallback) AS read_fallback"""
_SPLIT = """
    rq[0] AS read_p50_ms, rq[1] AS read_p95_ms, rq[2] AS read_p99_ms,
    aq[0] AS ack_p50_ms, aq[1] AS ack_p95_ms, aq[2] AS ack_p99_ms, read_fallback"""
_ACTIVE = "state IN ({})".format(", ".join(f"'{s}'" for s in ACTIVE_STATES))
_STATES = ", ".join(f"'{s}'" for s in STATES)

QUERIES: dict[str, str] = {
    # messages per channel and UTC day, by type and priority
    "volume": """
        SELECT store_id, channel, to_date(created_at) AS date, type, priority_name AS priority,
               count(*) AS messages
        FROM messages GROUP BY store_id, channel, to_date(created_at), type, priority_name""",
    # created -> first read and delivered -> acked, per channel and per agent (recipient);
    # read_fallback: reads measured to the latest read (files without first_read_at)
    "latency_by_channel": f"""
        SELECT store_id, channel, deliveries, read, acked, {_SPLIT} FROM (
            SELECT store_id, channel, {_LATENCY} FROM deliveries GROUP BY store_id, channel)""",
    "latency_by_agent": f"""
        SELECT agent, deliveries, read, acked, {_SPLIT} FROM (
            SELECT recipient AS agent, {_LATENCY} FROM deliveries GROUP BY recipient)""",
    # ack-tracked deliveries per channel: retries, late acks, the unacknowledged backlog
    "reliability": f"""
        SELECT store_id, channel, first(ack_timeout_ms) AS ack_timeout_ms,
               count(*) AS tracked,
               count_if(retry_count > 0) AS retried,
               CAST(sum(retry_count) AS BIGINT) AS retries,
               count_if(retry_count > 0) / count(*) AS retry_rate,
               count(acked_at) AS acked,
               count_if(ack_latency_ms > ack_timeout_ms) AS late_acks,
               count_if({_ACTIVE}) AS backlog,
               max(CASE WHEN {_ACTIVE} THEN unix_millis(exported_at) - unix_millis(created_at)
                   END) AS backlog_oldest_age_ms,
               avg(CASE WHEN {_ACTIVE} THEN unix_millis(exported_at) - unix_millis(created_at)
                   END) AS backlog_mean_age_ms
        FROM deliveries WHERE tracked GROUP BY store_id, channel""",
    # how many deliveries were retried how often
    "retries": """
        SELECT store_id, channel, retry_count, count(*) AS deliveries
        FROM deliveries WHERE tracked GROUP BY store_id, channel, retry_count""",
    # ack-tracked deliveries by their attempts (the times each was handed out: m012's
    # delivery_attempts plus the current one): how many needed more than one and how those
    # ended; earlier attempts that had been read (seen, then not acked in time, or given back)
    "attempts": """
        SELECT store_id, channel, count(*) AS deliveries,
               CAST(sum(attempts) AS BIGINT) AS attempts,
               count_if(attempts > 1) AS retried,
               max(attempts) AS max_attempts,
               count_if(state = 'acked') AS acked,
               CAST(coalesce(sum(CASE WHEN state = 'acked' THEN attempts END), 0) AS BIGINT)
                   AS acked_attempts,
               count_if(state = 'acked' AND attempts > 1) AS acked_after_retry,
               count_if(state = 'dead') AS dead,
               count_if(state = 'dead' AND attempts > 1) AS dead_after_retry,
               CAST(sum(earlier_read) AS BIGINT) AS earlier_read,
               CAST(sum(lease_expired) AS BIGINT) AS leases_expired
        FROM delivery_tries GROUP BY store_id, channel""",
    # one row per ack-tracked delivery handed out more than once
    "retried_deliveries": """
        SELECT store_id, channel, message_id, recipient, state, attempts, retry_count,
               earlier_read, lease_expired, first_delivered_at,
               delivered_at AS last_delivered_at, acked_at, ack_status
        FROM delivery_tries WHERE attempts > 1""",
    "dead_letters": """
        SELECT store_id, channel, reason, count(*) AS dead_letters,
               CAST(sum(retry_count) AS BIGINT) AS retries
        FROM dead_letters GROUP BY store_id, channel, reason""",
    # every ack later than its channel's ack timeout after the (last) delivery
    "late_acks": """
        SELECT store_id, channel, message_id, recipient, delivered_at, acked_at, ack_status,
               ack_latency_ms, ack_timeout_ms, retry_count
        FROM deliveries WHERE tracked AND ack_latency_ms > ack_timeout_ms""",
    # ack-tracked deliveries not yet acked nor dead, with their age at export time
    "backlog": f"""
        SELECT store_id, channel, recipient, state, count(*) AS deliveries,
               max(unix_millis(exported_at) - unix_millis(created_at)) AS oldest_age_ms
        FROM deliveries WHERE tracked AND {_ACTIVE}
        GROUP BY store_id, channel, recipient, state""",
    # must be empty (docs/EXPORT.md): on exactly-once channels, the same message twice to a
    # recipient; a second message of the same sender, type and correlation id delivered to
    # the same recipient within 2 x ack_timeout; or a read message handed out again
    "exactly_once_violations": """
        WITH once AS (
            SELECT d.store_id, d.channel, d.message_id, d.recipient, d.read_at,
                   d.delivered_at, d.ack_timeout_ms, m.correlation_id, m.sender, m.type,
                   m.created_at
            FROM deliveries d
            JOIN store_messages m ON m.store_id = d.store_id AND m.id = d.message_id
            WHERE d.delivery_mode = 'exactly-once')
        SELECT store_id, channel, message_id, recipient, 'duplicate_delivery' AS kind,
               CAST(NULL AS BIGINT) AS first_message_id
        FROM deliveries WHERE delivery_mode = 'exactly-once'
        GROUP BY store_id, channel, message_id, recipient HAVING count(*) > 1
        UNION ALL
        SELECT b.store_id, b.channel, b.message_id, b.recipient, 'repeated_correlation',
               a.message_id
        FROM once a JOIN once b ON a.store_id = b.store_id AND a.recipient = b.recipient
             AND a.correlation_id = b.correlation_id AND a.sender = b.sender
             AND a.type = b.type AND a.message_id < b.message_id
        WHERE unix_millis(b.created_at) - unix_millis(a.created_at) < 2 * a.ack_timeout_ms
        UNION ALL
        SELECT store_id, channel, message_id, recipient, 'redelivered_after_read', NULL
        FROM once WHERE read_at IS NOT NULL AND delivered_at > read_at""",
    # must be empty: deliveries in no documented state, deliveries or dead letters whose
    # message is missing, dead letters whose delivery is missing or not dead
    "unaccounted": f"""
        SELECT store_id, message_id, recipient, 'unknown_state' AS problem, state AS detail
        FROM deliveries WHERE state IS NULL OR state NOT IN ({_STATES})
        UNION ALL
        SELECT d.store_id, d.message_id, d.recipient, 'delivery_without_message', NULL
        FROM deliveries d LEFT ANTI JOIN store_messages m
             ON m.store_id = d.store_id AND m.id = d.message_id
        UNION ALL
        SELECT x.store_id, x.message_id, x.recipient, 'dead_letter_without_message', NULL
        FROM dead_letters x LEFT ANTI JOIN store_messages m
             ON m.store_id = x.store_id AND m.id = x.message_id
        UNION ALL
        SELECT x.store_id, x.message_id, x.recipient, 'dead_letter_without_dead_delivery',
               d.state
        FROM dead_letters x LEFT JOIN deliveries d ON d.store_id = x.store_id
             AND d.message_id = x.message_id AND d.recipient = x.recipient
        WHERE d.state IS NULL OR d.state != 'dead'""",
    # dispatch runs (receipts) per agent and status, with how long they ran
    "receipts": f"""
        SELECT store_id, agent, status, runs, retried_runs, dq[0] AS run_p50_ms,
               dq[1] AS run_p95_ms, dq[2] AS run_p99_ms FROM (
            SELECT store_id, agent, status, count(*) AS runs,
                   count_if(attempt > 1) AS retried_runs,
                   percentile_approx(unix_millis(finished_at) - unix_millis(started_at), {_Q})
                       AS dq
            FROM receipts GROUP BY store_id, agent, status)""",
    # tasks by capability (and type: a capability's skill_distribution tasks apart): how
    # many ended how, how many missed their ETA (it passed before they ended, or before the
    # export while open: what tick marks overdue), and how long the finished ones took,
    # from creation and against their ETA (negative: early)
    "task_latency": f"""
        SELECT capability, task_type, tasks, open, completed, failed, overdue,
               dq[0] AS duration_p50_ms, dq[1] AS duration_p90_ms,
               lq[0] AS lateness_p50_ms, lq[1] AS lateness_p90_ms FROM (
            SELECT capability_id AS capability, task_type, count(*) AS tasks,
                   count_if(state NOT IN {_FINAL}) AS open,
                   count_if(state = 'completed') AS completed,
                   count_if(state = 'failed') AS failed,
                   count_if(eta_at <= coalesce(finished_at, exported_at)) AS overdue,
                   percentile_approx(duration_ms, {_Q90}) AS dq,
                   percentile_approx(lateness_ms, {_Q90}) AS lq
            FROM tasks GROUP BY capability_id, task_type)""",
    # review incidents by failure class and capability: open, resolved, time to resolve
    "incidents": """
        SELECT failure_class, capability_id AS capability, count(*) AS incidents,
               count_if(state = 'open') AS open, count_if(state = 'resolved') AS resolved,
               percentile_approx(unix_millis(resolved_at) - unix_millis(created_at), 0.5)
                   AS resolve_p50_ms
        FROM incidents GROUP BY failure_class, capability_id""",
    # the events messages carried, per event type: how many, with a target (of which of
    # kind agent and human), self-actions (actor = target), distinct threads
    "events_by_type": """
        SELECT event_type, count(*) AS events, count(target) AS targeted,
               count_if(target_kind = 'agent') AS to_agents,
               count_if(target_kind = 'human') AS to_humans,
               count_if(actor = target) AS self_actions,
               count(DISTINCT thread_id) AS threads
        FROM events GROUP BY event_type""",
    # files sent, per store, channel and content type: how many, their bytes, the messages
    # naming them and the distinct blobs (a file named twice is stored once)
    "attachment_volume": """
        SELECT store_id, channel, coalesce(content_type, 'unknown') AS content_type,
               count(*) AS files, CAST(sum(size) AS BIGINT) AS bytes,
               count(DISTINCT message_id) AS messages, count(DISTINCT sha256) AS blobs
        FROM attachments GROUP BY store_id, channel, coalesce(content_type, 'unknown')""",
    # messages per store and format (`text` for a file exported before formats were): how
    # many, with a subject, with files
    "formats": """
        WITH files AS (SELECT DISTINCT store_id, message_id FROM attachments)
        SELECT m.store_id, coalesce(m.format, 'text') AS format, count(*) AS messages,
               count(m.subject) AS with_subject, count(f.message_id) AS with_files
        FROM store_messages m
        LEFT JOIN files f ON f.store_id = m.store_id AND f.message_id = m.id
        GROUP BY m.store_id, coalesce(m.format, 'text')""",
    # the engagement funnel per store, channel and event type (`none`: a message without
    # one): deliveries routed, notified (a first notice kept: an inbox file, a team inbox
    # entry, an MCP client told, a dispatch run; or, exported before notices were kept, a
    # dispatch run of the recipient) and engaged (read or acked; replies not counted)
    "engagement_funnel": """
        WITH told AS (
            SELECT store_id, message_id, agent FROM receipts
            WHERE NOT (status = 'ignored' AND exit_code IS NULL)
            UNION SELECT store_id, message_id, recipient FROM raw_notifications)
        SELECT d.store_id, d.channel, coalesce(e.event_type, 'none') AS event_type,
               count(*) AS routed, count(r.agent) AS notified,
               count(coalesce(d.first_read_at, d.read_at, d.acked_at)) AS engaged
        FROM deliveries d
        LEFT JOIN events e ON e.store_id = d.store_id AND e.message_id = d.message_id
        LEFT JOIN told r ON r.store_id = d.store_id AND r.message_id = d.message_id
                         AND r.agent = d.recipient
        GROUP BY d.store_id, d.channel, coalesce(e.event_type, 'none')""",
    # traffic between kinds of agent (agent, human, service; a name in no audited directory,
    # acomm's own system sender among them, is `unknown`): per sender kind and recipient
    # kind, the messages (a federated one once) and their deliveries, read and acked
    "traffic_by_kind": f"""
        SELECT coalesce(sk.kind, {_UNKNOWN}) AS sender_kind,
               coalesce(rk.kind, {_UNKNOWN}) AS recipient_kind,
               count(DISTINCT coalesce(m.global_id, concat_ws(':', d.store_id,
                                                              CAST(d.message_id AS STRING))))
                   AS messages,
               count(*) AS deliveries,
               count(coalesce(d.first_read_at, d.read_at)) AS read,
               count(d.acked_at) AS acked
        FROM deliveries d
        LEFT JOIN store_messages m ON m.store_id = d.store_id AND m.id = d.message_id
        LEFT JOIN agent_kinds sk ON sk.name = m.sender
        LEFT JOIN agent_kinds rk ON rk.name = d.recipient
        GROUP BY 1, 2""",
    # messages sent per sender kind (each message once, delivered or not) and deliveries
    # received per recipient kind
    "traffic_kinds": f"""
        WITH sent AS (
            SELECT coalesce(k.kind, {_UNKNOWN}) AS kind, count(*) AS sent
            FROM messages m LEFT JOIN agent_kinds k ON k.name = m.sender GROUP BY 1),
        received AS (
            SELECT coalesce(k.kind, {_UNKNOWN}) AS kind, count(*) AS received
            FROM deliveries d LEFT JOIN agent_kinds k ON k.name = d.recipient GROUP BY 1),
        registered AS (SELECT kind, count(*) AS agents FROM agent_kinds GROUP BY kind),
        kinds AS (SELECT kind FROM sent UNION SELECT kind FROM received
                  UNION SELECT kind FROM registered)
        SELECT k.kind, coalesce(g.agents, 0) AS agents, coalesce(s.sent, 0) AS sent,
               coalesce(r.received, 0) AS received
        FROM kinds k LEFT JOIN registered g ON g.kind = k.kind
             LEFT JOIN sent s ON s.kind = k.kind LEFT JOIN received r ON r.kind = k.kind""",
    # per node pair, a federated message's latency: the receiver's (first) read time minus the
    # sender's creation time (two clocks); the `accepted` ack bounds how far apart they are
    "federation_latency": f"""
        WITH pairs AS (
            SELECT s.from_node, r.to_node, s.global_id, s.sent_ms, s.accepted_ms,
                   r.received_ms, unix_millis(coalesce(d.first_read_at, d.read_at)) AS read_ms
            FROM fed_sent s JOIN fed_received r ON r.global_id = s.global_id
            LEFT JOIN deliveries d ON d.store_id = r.store_id AND d.message_id = r.id
            WHERE s.kind = 'message')
        SELECT from_node, to_node, messages, read, lq[0] AS latency_p50_ms,
               lq[1] AS latency_p95_ms, lq[2] AS latency_p99_ms, clock_offset_min_ms,
               clock_offset_max_ms, clock_offset_max_ms - clock_offset_min_ms AS skew_bound_ms
        FROM (
            SELECT from_node, to_node, count(DISTINCT global_id) AS messages,
                   count(read_ms) AS read,
                   percentile_approx(read_ms - sent_ms, {_Q}) AS lq,
                   max(received_ms - accepted_ms) AS clock_offset_min_ms,
                   min(received_ms - sent_ms) AS clock_offset_max_ms
            FROM pairs GROUP BY from_node, to_node)""",
    # one row per trace: its messages (a federated one once), hops (every store's copy and
    # every dispatch run), nodes, agents, first and last moment (a run's end included), the
    # end-to-end time and where it went: in dispatch runs, or between hops (waiting)
    "traces": """
        WITH hops AS (
            SELECT trace_id, store_id, id, global_id, sender AS agent, created_at,
                   coalesce(origin_node, node, store_id) AS node
            FROM store_messages WHERE trace_id IS NOT NULL),
        runs AS (
            SELECT m.trace_id, count(*) AS runs, max(r.finished_at) AS finished_at,
                   CAST(coalesce(sum(unix_millis(r.finished_at) - unix_millis(r.started_at)),
                                 0) AS BIGINT) AS run_ms
            FROM receipts r JOIN store_messages m
                 ON m.store_id = r.store_id AND m.id = r.message_id
            WHERE m.trace_id IS NOT NULL GROUP BY m.trace_id),
        per AS (
            SELECT h.trace_id,
                   count(DISTINCT coalesce(h.global_id, concat_ws(':', h.store_id,
                                                                  CAST(h.id AS STRING))))
                       AS messages,
                   count(*) AS message_hops, count(DISTINCT h.node) AS nodes,
                   count(DISTINCT h.agent) AS agents, min(h.created_at) AS started_at,
                   max(h.created_at) AS last_message_at
            FROM hops h GROUP BY h.trace_id)
        SELECT p.trace_id, p.messages, p.message_hops + coalesce(r.runs, 0) AS hops,
               coalesce(r.runs, 0) AS runs, p.nodes, p.agents, p.started_at,
               greatest(p.last_message_at, r.finished_at) AS ended_at,
               unix_millis(greatest(p.last_message_at, r.finished_at))
                   - unix_millis(p.started_at) AS end_to_end_ms,
               coalesce(r.run_ms, 0) AS run_ms,
               unix_millis(greatest(p.last_message_at, r.finished_at))
                   - unix_millis(p.started_at) - coalesce(r.run_ms, 0) AS wait_ms
        FROM per p LEFT JOIN runs r ON r.trace_id = p.trace_id""",
    # must be empty: a federated message (or reply) on one side only, between two nodes
    # whose exports are both audited (a sent one dead-lettered never arrives: not counted)
    "federation_unmatched": """
        SELECT s.store_id, s.global_id, s.from_node, s.to_node, 'not_received' AS problem
        FROM fed_sent s LEFT ANTI JOIN fed_received r ON r.global_id = s.global_id
        WHERE s.to_node IN (SELECT node FROM audited_nodes)
              AND coalesce(s.state, '') != 'dead_letter' AND s.kind IN ('message', 'reply')
        UNION ALL
        SELECT r.store_id, r.global_id, r.from_node, r.to_node, 'not_sent'
        FROM fed_received r LEFT ANTI JOIN fed_sent s ON s.global_id = r.global_id
        WHERE r.from_node IN (SELECT node FROM audited_nodes)""",
}
