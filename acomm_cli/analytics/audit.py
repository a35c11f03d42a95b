"""`acomm audit`: the audit pipeline over one or many exports, on Apache Spark (PySpark).

Every number is computed by Spark SQL over the exported datasets (docs/EXPORT.md defines each
one; the queries are in `auditsql`); this module reads the manifests, refuses an export given
twice, reads exactly the files the manifests list, runs the queries, writes each result table
as Parquet, draws report.html beside them (`report`) and returns a summary (`auditsummary`)
for `render`.

Manifests on a local path are read before Spark starts; a URI (file://, hdfs://, s3a://, ...)
is read through Spark's own Hadoop filesystem layer, so that the one URI serves the manifest
and the data alike, on the driver and on every executor.

pyspark is imported only inside these functions: `acomm send` never pays for it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acomm_cli.analytics import report
from acomm_cli.analytics.auditsql import ACTIVE_STATES, QUERIES, STATES
from acomm_cli.analytics.auditsummary import AuditResult, require_clean, summarize
from acomm_cli.analytics.datasets import DATASET_TABLE, TYPES, spark_schema
from acomm_cli.analytics.export import MANIFEST, parse_manifest, read_manifest
from acomm_cli.analytics.sparkrun import (
    EXECUTOR_WAIT_S,
    executor_cores,
    java_reason,
    java_version,
    start_spark,
)
from acomm_cli.errors import NotFound, SparkError, SparkUnavailable, ValidationFailed

if TYPE_CHECKING:  # annotations only: pyspark loads inside the functions that use it
    from pyspark.sql import DataFrame, SparkSession

__all__ = [
    "ACTIVE_STATES",
    "QUERIES",
    "STATES",
    "AuditResult",
    "SparkError",
    "SparkUnavailable",
    "default_out",
    "java_version",
    "require_clean",
    "run",
    "start_spark",
]

Loaded = list[tuple[str, dict[str, Any]]]  # (location, manifest) per export


# ---------------------------------------------------------------- the manifests


def _read_with_spark(spark: SparkSession, base: str) -> dict[str, Any]:
    """A manifest at a URI, through Spark's Hadoop filesystem layer (the one that will read
    the data); a URI Spark cannot read is refused (exit 3) with what the cluster needs."""
    where = f"{base}/{MANIFEST}"
    try:
        rows = spark.read.text(where, wholetext=True).collect()
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        reason = java_reason(exc)
        if any(s in reason for s in ("PATH_NOT_FOUND", "FileNotFoundException", "does not exist")):
            raise NotFound(
                f"{base} is not an acomm export (no {MANIFEST}); make one with `acomm export`",
                field="export",
                value=base,
            ) from None
        raise ValidationFailed(
            f"export: Spark cannot read {where} ({reason[:300]}); {uri_hint(base)}",
            field="export",
            value=base,
        ) from None
    if not rows:
        raise NotFound(f"{base}/{MANIFEST} is empty", field="export", value=base)
    return parse_manifest(base, rows[0][0])


def uri_hint(uri: str) -> str:
    """What a cluster needs to read `uri` (docs/EXPORT.md, "On a cluster")."""
    scheme = uri.partition("://")[0].lower()
    common = "the same URI must be readable on the driver and on every executor"
    if scheme == "s3a":
        return (
            "Spark reads s3a:// with the hadoop-aws jars of its Hadoop version (e.g. "
            "--conf spark.jars.packages=org.apache.hadoop:hadoop-aws:<version>) and "
            f"credentials (--conf spark.hadoop.fs.s3a.*); {common}"
        )
    if scheme in ("s3", "s3n"):
        return f"give Spark the bucket as s3a://bucket/prefix (pyarrow writes s3://); {common}"
    if scheme == "hdfs":
        return (
            "the namenode must answer the driver and every executor (HADOOP_CONF_DIR or "
            f"--conf spark.hadoop.fs.defaultFS); {common}"
        )
    return f"Spark has no filesystem for {scheme}:// without its jars; {common}"


def _overlap(a: list[list[int]], b: list[list[int]]) -> list[int] | None:
    for lo, hi in a:
        for lo2, hi2 in b:
            if lo <= hi2 and lo2 <= hi:
                return [max(lo, lo2), min(hi, hi2)]
    return None


def refuse_repeats(loaded: Loaded) -> None:
    """Exit 3 when one store's export is given twice (the same directory, a copy of it, or two
    exports holding some of the same message ids): every row would be counted twice."""
    seen: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for base, man in loaded:
        store_id = man.get("store", {}).get("store_id")
        for other_base, other in seen.get(store_id, []):
            both = _overlap(man.get("ranges") or [], other.get("ranges") or [])
            if base == other_base:
                raise ValidationFailed(
                    f"export: {base} is given twice (the same directory): the audit would "
                    "count it twice; give each export once",
                    field="export",
                    value=base,
                    store_id=store_id,
                )
            if both:
                raise ValidationFailed(
                    f"export: {other_base} and {base} are exports of the same store "
                    f"({store_id}) both holding messages {both[0]}..{both[1]}: the audit "
                    "would count them twice; give each export once",
                    field="export",
                    value=base,
                    store_id=store_id,
                )
        seen.setdefault(store_id, []).append((base, man))


# ---------------------------------------------------------------- reading the exports


def _empty(spark: SparkSession, dataset: str) -> DataFrame:
    """No rows, the dataset's columns (built in the JVM: executors need no Python)."""
    d = next(d for d in DATASET_TABLE if d.name == dataset)
    cols = [f"CAST(NULL AS {TYPES[t]}) AS {n}" for n, t in d.columns]
    return spark.range(0).selectExpr(*cols, "CAST(NULL AS DATE) AS date")


def _dataset(spark: SparkSession, base: str, manifest: dict[str, Any], dataset: str) -> DataFrame:
    """One dataset of one export: exactly the files its manifest lists, tagged with the
    store id and node id (empty for a dataset an older export does not have)."""
    from pyspark.sql import functions as F

    files = [
        f"{base}/{f['path']}" for f in manifest["files"] if f["dataset"] == dataset and f["rows"]
    ]
    if not files:
        df = _empty(spark, dataset)
    else:
        reader = spark.read.schema(spark_schema(dataset)).option("basePath", f"{base}/{dataset}")
        df = reader.parquet(*files) if manifest["format"] == "parquet" else reader.json(files)
    store = manifest["store"]
    return df.withColumn("store_id", F.lit(store["store_id"])).withColumn(
        "node", F.lit(store.get("node_id")).cast("string")
    )


def _load(spark: SparkSession, exports: Loaded) -> None:
    """Temp views over every export (union): see acomm_cli.analytics.auditsql."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    for ds in DATASET_TABLE:
        frames = [_dataset(spark, base, man, ds.name) for base, man in exports]
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other)
        df.createOrReplaceTempView(f"raw_{ds.name}")
    sm = spark.table("raw_messages")
    sm.createOrReplaceTempView("store_messages")
    # a federated message lives in the sender's and the receiver's export under one
    # global_id: counted once, as the sender's copy when its export is there
    first = Window.partitionBy("global_id").orderBy(
        F.when(F.col("node") == F.col("origin_node"), 0).otherwise(1), "store_id"
    )
    federated = (
        sm.where("global_id IS NOT NULL")
        .withColumn("rn", F.row_number().over(first))
        .where("rn = 1")
        .drop("rn")
    )
    sm.where("global_id IS NULL").unionByName(federated).createOrReplaceTempView("messages")
    spark.sql("CREATE OR REPLACE TEMP VIEW dead_letters AS SELECT * FROM raw_dead_letters")
    spark.sql("CREATE OR REPLACE TEMP VIEW receipts AS SELECT * FROM raw_receipts")
    # channels: a snapshot per export; the newest one of each store wins
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, id ORDER BY exported_at DESC) AS rn
        FROM raw_channels""").where("rn = 1").drop("rn").createOrReplaceTempView("channels")
    # tasks: a federated task lives on both nodes under one global_id: counted once, as the
    # copy that knows most (a final state first, then the latest change, then the owner's
    # node's copy: origin_node set); durations against creation and against the ETA (ms)
    spark.sql("""
        SELECT *, unix_millis(finished_at) - unix_millis(created_at) AS duration_ms,
               unix_millis(finished_at) - unix_millis(eta_at) AS lateness_ms
        FROM (SELECT *, row_number() OVER (
                  PARTITION BY coalesce(global_id, concat_ws(':', store_id, CAST(id AS STRING)))
                  ORDER BY CASE WHEN state IN ('completed', 'failed') THEN 0 ELSE 1 END,
                           updated_at DESC, CASE WHEN origin_node IS NULL THEN 1 ELSE 0 END,
                           store_id) AS rn
              FROM raw_tasks)
        WHERE rn = 1""").drop("rn").createOrReplaceTempView("tasks")
    # incidents: a snapshot per export, like channels (each store's own: no global id)
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, id ORDER BY exported_at DESC) AS rn
        FROM raw_incidents""").where("rn = 1").drop("rn").createOrReplaceTempView("incidents")
    # agents: a snapshot per export, the newest of each store's names wins; an agent is
    # one name across stores (as in latency_by_agent), its kind the most recently updated
    # store's copy: `agent_kinds` (name, kind)
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, name ORDER BY exported_at DESC)
                      AS rn
        FROM raw_agents""").where("rn = 1").drop("rn").createOrReplaceTempView("agents")
    spark.sql("""
        SELECT name, kind FROM (
            SELECT name, kind, row_number() OVER (
                       PARTITION BY name ORDER BY updated_at DESC, store_id) AS rn
            FROM agents)
        WHERE rn = 1""").createOrReplaceTempView("agent_kinds")
    # events: the notification event of a message, once (a range exported again while
    # unsettled holds it twice: the newest copy wins)
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, message_id ORDER BY exported_at DESC)
                      AS rn
        FROM raw_events""").where("rn = 1").drop("rn").createOrReplaceTempView("events")
    # attachments: the files a message names, once per message and name (as events)
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, message_id, name
                                     ORDER BY exported_at DESC) AS rn
        FROM raw_attachments""").where("rn = 1").drop("rn").createOrReplaceTempView("attachments")
    # deliveries with their channel's ack timeout, delivery mode and type, and both
    # latencies (ms): the read one to the FIRST read (read_at is the latest read: a
    # redelivery read again moves it); a file exported before first_read_at existed has
    # only read_at, and says so in `read_fallback`
    d = spark.sql("""
        SELECT d.*, c.ack_timeout_ms, c.delivery AS delivery_mode, c.type AS channel_type,
               unix_millis(coalesce(d.first_read_at, d.read_at)) - unix_millis(d.created_at)
                   AS read_latency_ms,
               d.first_read_at IS NULL AND d.read_at IS NOT NULL AS read_fallback,
               unix_millis(d.acked_at) - unix_millis(d.delivered_at) AS ack_latency_ms
        FROM raw_deliveries d
        LEFT JOIN channels c ON c.store_id = d.store_id AND c.id = d.channel_id""")
    d.cache().createOrReplaceTempView("deliveries")
    spark.sql(
        "CREATE OR REPLACE TEMP VIEW delivery_attempts AS SELECT * FROM raw_delivery_attempts"
    )
    # every ack-tracked delivery with its attempts: the times it was handed out, i.e. the
    # distinct delivered_at of its earlier attempts (m012's rows; on a work queue any
    # worker's, whose recipient is not the delivery row's) and of the row itself. Distinct:
    # a retry that never went out (dead while waiting, an exactly-once ack timer restarted)
    # records an attempt whose delivered_at the row still carries.
    spark.sql("""
        WITH tracked AS (SELECT * FROM deliveries WHERE tracked),
        tries AS (
            SELECT d.store_id, d.message_id, d.recipient, a.delivered_at, a.read_at,
                   true AS earlier
            FROM delivery_attempts a JOIN tracked d ON d.store_id = a.store_id
                 AND d.message_id = a.message_id
                 AND (a.recipient = d.recipient OR d.channel_type = 'queue')
            UNION ALL
            SELECT store_id, message_id, recipient, delivered_at, NULL, false FROM tracked),
        per AS (
            SELECT store_id, message_id, recipient, count(DISTINCT delivered_at) AS attempts,
                   count_if(earlier) AS earlier,
                   count_if(earlier AND read_at IS NOT NULL) AS earlier_read,
                   min(delivered_at) AS first_delivered_at
            FROM tries GROUP BY store_id, message_id, recipient)
        SELECT d.store_id, d.channel, d.message_id, d.recipient, d.state, d.retry_count,
               d.delivered_at, d.acked_at, d.ack_status,
               coalesce(d.lease_expired, 0) AS lease_expired, p.attempts, p.earlier,
               p.earlier_read, p.first_delivered_at
        FROM tracked d JOIN per p ON p.store_id = d.store_id AND p.message_id = d.message_id
             AND p.recipient = d.recipient""").createOrReplaceTempView("delivery_tries")
    # federation: what each node emitted to a peer, and what it received from one
    spark.sql("""
        CREATE OR REPLACE TEMP VIEW fed_sent AS
        SELECT f.store_id, m.global_id, coalesce(m.origin_node, f.node) AS from_node,
               f.to_node, f.kind, f.state, unix_millis(m.created_at) AS sent_ms,
               unix_millis(f.accepted_at) AS accepted_ms
        FROM raw_federation f JOIN store_messages m
             ON m.store_id = f.store_id AND m.id = f.message_id""")
    spark.sql("""
        CREATE OR REPLACE TEMP VIEW fed_received AS
        SELECT store_id, id, global_id, origin_node AS from_node, node AS to_node,
               unix_millis(created_at) AS received_ms
        FROM store_messages
        WHERE global_id IS NOT NULL AND node IS NOT NULL AND origin_node != node""")
    nodes = sorted({m["store"].get("node_id") for _, m in exports} - {None})
    listed = ", ".join("'" + n.replace("'", "''") + "'" for n in nodes)
    spark.sql(
        "CREATE OR REPLACE TEMP VIEW audited_nodes AS "
        + (
            f"SELECT explode(array({listed})) AS node"
            if nodes
            else "SELECT CAST(NULL AS STRING) AS node WHERE false"
        )
    )


# ---------------------------------------------------------------- the run


def default_out(exports: list[str]) -> str:
    """Where the tables go without --out: beside the first export, a directory named after
    every export audited, in order: `./export` -> `./export.audit`, `a b` -> `a+b.audit`.
    A fixed `audit/` beside the export would make two exports in one folder overwrite
    each other's tables; only the same exports audited again share a directory
    (a re-run). A name past 100 characters keeps the first export's name and a hash of all."""
    names = [
        e.rstrip("/").rpartition("/")[2] if "://" in e else Path(e).expanduser().resolve().name
        for e in exports
    ]
    name = "+".join(names)
    if len(name) > 100:
        import hashlib

        digest = hashlib.sha256("\0".join(exports).encode()).hexdigest()[:12]
        name = f"{names[0][:60]}+{len(names) - 1}-more-{digest}"
    first = exports[0]
    if "://" in first:
        return first.rstrip("/").rpartition("/")[0] + f"/{name}.audit"
    return str(Path(first).expanduser().resolve().parent / f"{name}.audit")


def _active_session() -> SparkSession | None:
    """The session already running in this process (an embedding program's, or a test's)."""
    java_version()
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


def run(
    exports: list[str],
    *,
    out: str | None = None,
    master: str = "local[*]",
    conf: dict[str, str] | None = None,
    spark: SparkSession | None = None,
    executor_wait: float = EXECUTOR_WAIT_S,
) -> AuditResult:
    """Audit `exports` (read together) and write every table under `out` as Parquet.

    With `spark`, that session is used (and left running); else one is started on `master`
    (waiting at most `executor_wait` seconds for a cluster's first executor) and stopped at
    the end."""
    if not exports:
        raise ValidationFailed("export: name at least one export directory", field="export")
    if executor_wait <= 0:
        raise ValidationFailed(
            f"executor_wait: {executor_wait:g} is not a positive number of seconds",
            field="executor_wait",
            value=executor_wait,
        )
    # local manifests first: a wrong path or a repeat is refused before Spark starts
    local: dict[str, tuple[str, dict[str, Any]]] = {}
    for e in exports:
        if "://" not in e:
            local[e] = read_manifest(e)
    refuse_repeats([local[e] for e in exports if e in local])
    out = out or default_out([local[e][0] if e in local else e for e in exports])
    if "://" not in out:
        out = str(Path(out).expanduser().resolve())
    t0 = time.perf_counter()
    if spark is None:
        spark = _active_session()
    own = spark is None
    if spark is None:
        spark = start_spark(master, conf, executor_wait=executor_wait)
    t1 = time.perf_counter()
    try:
        loaded = [
            local[e] if e in local else (e.rstrip("/"), _read_with_spark(spark, e.rstrip("/")))
            for e in exports
        ]
        refuse_repeats(loaded)
        _load(spark, loaded)
        tables, frames = {}, {}
        for name, query in QUERIES.items():
            df = spark.sql(query).cache()
            path = f"{out}/{name}"
            df.coalesce(1).write.mode("overwrite").parquet(path)
            tables[name], frames[name] = path, df
        summary = summarize(spark, frames, loaded, out)
        summary["tables"] = tables
        extra = report.collect(spark)
        t2 = time.perf_counter()
        summary["spark"] = {
            "master": spark.sparkContext.master,
            "version": spark.version,
            "startup_s": round(t1 - t0, 3),
            "work_s": round(t2 - t1, 3),
            "executor_cores": executor_cores(spark),
            "shuffle_partitions": int(spark.conf.get("spark.sql.shuffle.partitions") or 0),
        }
        # the page beside the tables, on every audit (its charts drawn here, to SVG)
        summary["report"] = report.write(out, report.render(summary, extra), spark)
        for df in frames.values():
            df.unpersist()
        spark.catalog.clearCache()
        return AuditResult(summary, tables)
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        raise SparkError(
            f"the Spark job failed: {type(exc).__name__}: {java_reason(exc)[:500]}", master=master
        ) from None
    finally:
        if own:
            spark.stop()
