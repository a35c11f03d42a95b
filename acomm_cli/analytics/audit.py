"""`acomm audit`: the audit pipeline over one or many exports, on Apache Spark (PySpark).

Every number is computed by Spark SQL over the exported datasets (docs/EXPORT.md defines each
one); this module starts Spark quietly, reads the exports the manifests list, runs the
queries, writes each result table as Parquet and returns a summary for `render`.

pyspark is imported only inside these functions: `acomm send` never pays for it.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acomm_cli.analytics.export import read_manifest
from acomm_cli.errors import SparkError, SparkUnavailable, ValidationFailed

if TYPE_CHECKING:  # annotations only: pyspark loads inside the functions that use it
    from pyspark.sql import DataFrame, SparkSession

JAVA_MIN = 17
LOCAL_SHUFFLE_PARTITIONS = 8
ACTIVE_STATES = ("queued", "waiting", "unread", "read")  # a tracked delivery not yet done
STATES = ("queued", "waiting", "unread", "read", "acked", "dead")  # DESIGN.md §4

_TS = "TIMESTAMP"
SCHEMAS = {
    "messages": (
        "id BIGINT, channel_id BIGINT, channel STRING, sender STRING, type STRING, "
        "content STRING, topic STRING, priority TINYINT, priority_name STRING, "
        f"correlation_id STRING, dedupe_key STRING, metadata STRING, created_at {_TS}, "
        f"deliver_at {_TS}, expires_at {_TS}, origin_node STRING, global_id STRING, date DATE"),
    "deliveries": (
        "message_id BIGINT, recipient STRING, channel_id BIGINT, channel STRING, state STRING, "
        f"tracked BOOLEAN, retry_count INT, created_at {_TS}, delivered_at {_TS}, "
        f"read_at {_TS}, ack_status STRING, acked_at {_TS}, ack_note STRING, "
        f"next_timer_at {_TS}, last_error STRING, exported_at {_TS}, date DATE"),
    "dead_letters": (
        "message_id BIGINT, recipient STRING, channel_id BIGINT, channel STRING, "
        f"reason STRING, retry_count INT, last_error STRING, created_at {_TS}, "
        f"dead_lettered_at {_TS}, exported_at {_TS}, date DATE"),
    "channels": (
        "id BIGINT, name STRING, type STRING, owner STRING, state STRING, "
        f"created_at {_TS}, delivery STRING, max_message_size BIGINT, ack_timeout_ms BIGINT, "
        "max_retries INT, retry_backoff_ms BIGINT, retry_jitter DOUBLE, echo BOOLEAN, "
        "priority_ordering BOOLEAN, max_pending BIGINT, dedupe_window_ms BIGINT, "
        f"retention_count BIGINT, retention_age_ms BIGINT, exported_at {_TS}, date DATE"),
}


@dataclass
class AuditResult:
    summary: dict[str, Any]
    tables: dict[str, str]


# ---------------------------------------------------------------- Spark, quietly

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def java_version() -> tuple[str, int]:
    """(path of `java`, major version); SparkUnavailable naming the requirement if there is
    no Java 17 or newer ($JAVA_HOME/bin/java first, then PATH, as Spark itself looks)."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    need = (f"`acomm audit` runs Apache Spark, which needs Java {JAVA_MIN} or newer; "
            "install a JDK (e.g. `apt-get install openjdk-17-jre-headless`) and put `java` on "
            "PATH or set JAVA_HOME")
    if not java or not os.access(java, os.X_OK):
        raise SparkUnavailable(f"no Java found: {need}", field="java")
    try:
        p = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SparkUnavailable(f"{java} -version failed ({exc}): {need}", field="java") from None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', p.stderr + p.stdout)
    if not m:
        raise SparkUnavailable(f"cannot tell the version of {java}: {need}", field="java")
    major = int(m.group(2)) if m.group(1) == "1" else int(m.group(1))  # "1.8.0" is Java 8
    if major < JAVA_MIN:
        raise SparkUnavailable(f"{java} is Java {major}: {need}", field="java", java=major)
    return java, major


def start_spark(master: str, conf: dict[str, str] | None = None) -> SparkSession:
    """A SparkSession with the UI and console progress off, log level ERROR, and every line
    the JVM prints on its own (start-up notices, warnings) sent to a log file instead of the
    user's terminal. Raises SparkUnavailable when Java is missing or the JVM fails."""
    java_version()
    logging.getLogger("py4j").setLevel(logging.ERROR)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    logdir = Path(tempfile.mkdtemp(prefix="acomm-spark-"))
    props = logdir / "log4j2.properties"
    props.write_text(_LOG4J)
    log = logdir / "spark.log"
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(master).appName("acomm-audit")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.extraJavaOptions",
                       f"-Dlog4j2.configurationFile=file:{props} -Dlog4j.configuration="
                       f"file:{props}"))
    if master.startswith("local"):
        builder = builder.config("spark.sql.shuffle.partitions",
                                 str(LOCAL_SHUFFLE_PARTITIONS))
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    # The JVM inherits file descriptor 2 when it starts: point it at the log file for that
    # moment, so whatever Java prints for the rest of its life lands there.
    sys.stderr.flush()
    saved = os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        spark = builder.getOrCreate()
    except Exception as exc:
        raise SparkUnavailable(f"Spark did not start ({type(exc).__name__}: "
                               f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''});"
                               f" its log is {log}", field="master", value=master,
                               log=str(log)) from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
    spark.sparkContext.setLogLevel("ERROR")
    atexit.register(shutil.rmtree, logdir, True)  # kept only when the start failed
    return spark


def _active_session() -> SparkSession | None:
    """The session already running in this process (an embedding program's, or a test's)."""
    java_version()
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


# ---------------------------------------------------------------- reading the exports


def _spark_path(base: str, rel: str) -> str:
    return f"{base}/{rel}"


def _dataset(spark: SparkSession, base: str, manifest: dict[str, Any],
             dataset: str) -> DataFrame:
    """One dataset of one export: exactly the files its manifest lists, tagged with the
    store id."""
    from pyspark.sql import functions as F

    files = [_spark_path(base, f["path"]) for f in manifest["files"]
             if f["dataset"] == dataset and f["rows"]]
    schema = SCHEMAS[dataset]
    if not files:
        df = spark.createDataFrame([], schema)
    else:
        reader = spark.read.schema(schema).option("basePath", _spark_path(base, dataset))
        df = reader.parquet(*files) if manifest["format"] == "parquet" else reader.json(files)
    return df.withColumn("store_id", F.lit(manifest["store"]["store_id"]))


def _load(spark: SparkSession, exports: list[tuple[str, dict[str, Any]]]) -> None:
    """Temp views messages, deliveries, dead_letters, channels over every export (union)."""
    for dataset in SCHEMAS:
        frames = [_dataset(spark, base, man, dataset) for base, man in exports]
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other)
        df.createOrReplaceTempView(f"raw_{dataset}")
    spark.sql("CREATE OR REPLACE TEMP VIEW messages AS SELECT * FROM raw_messages")
    spark.sql("CREATE OR REPLACE TEMP VIEW dead_letters AS SELECT * FROM raw_dead_letters")
    # channels: a snapshot per export; the newest one of each store wins
    spark.sql("""
        SELECT *, row_number() OVER (PARTITION BY store_id, id ORDER BY exported_at DESC) AS rn
        FROM raw_channels""").where("rn = 1").drop("rn").createOrReplaceTempView("channels")
    # deliveries with their channel's ack timeout and delivery mode, and both latencies (ms)
    d = spark.sql("""
        SELECT d.*, c.ack_timeout_ms, c.delivery AS delivery_mode,
               unix_millis(d.read_at) - unix_millis(d.created_at) AS read_latency_ms,
               unix_millis(d.acked_at) - unix_millis(d.delivered_at) AS ack_latency_ms
        FROM raw_deliveries d
        LEFT JOIN channels c ON c.store_id = d.store_id AND c.id = d.channel_id""")
    d.cache().createOrReplaceTempView("deliveries")


# ---------------------------------------------------------------- the audit queries

_Q = "array(0.5, 0.95, 0.99)"
_LATENCY = f"""
    count(*) AS deliveries,
    count(read_at) AS read,
    percentile_approx(read_latency_ms, {_Q}) AS rq,
    count(acked_at) AS acked,
    percentile_approx(ack_latency_ms, {_Q}) AS aq"""
_SPLIT = """
    rq[0] AS read_p50_ms, rq[1] AS read_p95_ms, rq[2] AS read_p99_ms,
    aq[0] AS ack_p50_ms, aq[1] AS ack_p95_ms, aq[2] AS ack_p99_ms"""
_ACTIVE = "state IN ({})".format(", ".join(f"'{s}'" for s in ACTIVE_STATES))
_STATES = ", ".join(f"'{s}'" for s in STATES)

QUERIES: dict[str, str] = {
    # messages per channel and UTC day, by type and priority
    "volume": """
        SELECT store_id, channel, to_date(created_at) AS date, type, priority_name AS priority,
               count(*) AS messages
        FROM messages GROUP BY store_id, channel, to_date(created_at), type, priority_name""",
    # created -> read and delivered -> acked, per channel and per agent (recipient)
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
            FROM deliveries d JOIN messages m ON m.store_id = d.store_id AND m.id = d.message_id
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
        FROM deliveries d LEFT ANTI JOIN messages m
             ON m.store_id = d.store_id AND m.id = d.message_id
        UNION ALL
        SELECT x.store_id, x.message_id, x.recipient, 'dead_letter_without_message', NULL
        FROM dead_letters x LEFT ANTI JOIN messages m
             ON m.store_id = x.store_id AND m.id = x.message_id
        UNION ALL
        SELECT x.store_id, x.message_id, x.recipient, 'dead_letter_without_dead_delivery',
               d.state
        FROM dead_letters x LEFT JOIN deliveries d ON d.store_id = x.store_id
             AND d.message_id = x.message_id AND d.recipient = x.recipient
        WHERE d.state IS NULL OR d.state != 'dead'""",
}


def default_out(first_export: str) -> str:
    """`audit/` next to the first export."""
    if "://" in first_export:
        return first_export.rstrip("/").rpartition("/")[0] + "/audit"
    return str(Path(first_export).expanduser().resolve().parent / "audit")


def run(exports: list[str], *, out: str | None = None, master: str = "local[*]",
        conf: dict[str, str] | None = None, spark: SparkSession | None = None) -> AuditResult:
    """Audit `exports` (read together) and write every table under `out` as Parquet.

    With `spark`, that session is used (and left running); else one is started on `master`
    and stopped at the end."""
    if not exports:
        raise ValidationFailed("export: name at least one export directory", field="export")
    loaded = [read_manifest(e) for e in exports]
    out = out or default_out(loaded[0][0])
    if "://" not in out:
        out = str(Path(out).expanduser().resolve())
    t0 = time.perf_counter()
    if spark is None:
        spark = _active_session()
    own = spark is None
    if spark is None:
        spark = start_spark(master, conf)
    t1 = time.perf_counter()
    try:
        _load(spark, loaded)
        tables, frames = {}, {}
        for name, query in QUERIES.items():
            df = spark.sql(query).cache()
            path = f"{out}/{name}"
            df.coalesce(1).write.mode("overwrite").parquet(path)
            tables[name], frames[name] = path, df
        summary = _summary(spark, frames, loaded, out)
        summary["tables"] = tables
        t2 = time.perf_counter()
        summary["spark"] = {"master": spark.sparkContext.master, "version": spark.version,
                            "startup_s": round(t1 - t0, 3), "work_s": round(t2 - t1, 3)}
        for df in frames.values():
            df.unpersist()
        spark.catalog.clearCache()
        return AuditResult(summary, tables)
    except Exception as exc:
        if type(exc).__module__.split(".")[0] not in ("pyspark", "py4j"):
            raise
        java = getattr(exc, "java_exception", None)  # py4j: the Java exception itself
        text = str(java.toString()) if java is not None else str(exc)
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        raise SparkError(f"the Spark job failed: {type(exc).__name__}: {first[:500]}",
                         master=master) from None
    finally:
        if own:
            spark.stop()


def _rows(df: DataFrame, order: str | None = None) -> list[dict[str, Any]]:
    if order:
        df = df.orderBy(*order.split(","))
    return [r.asDict(recursive=True) for r in df.collect()]


def _summary(spark: SparkSession, frames: dict[str, DataFrame],
             loaded: list[tuple[str, dict[str, Any]]], out: str) -> dict[str, Any]:
    totals = spark.sql("""
        SELECT (SELECT count(*) FROM messages) AS messages,
               (SELECT count(*) FROM deliveries) AS deliveries,
               (SELECT count(*) FROM dead_letters) AS dead_letters,
               (SELECT count(*) FROM channels) AS channels""").collect()[0].asDict()
    volume: dict[tuple[str, str], dict[str, Any]] = {}
    days: dict[tuple[str, str], set[Any]] = {}
    for r in _rows(frames["volume"]):
        key = (r["store_id"], r["channel"])
        v = volume.setdefault(key, {"store_id": r["store_id"], "channel": r["channel"],
                                    "messages": 0, "by_type": {}, "by_priority": {}})
        v["messages"] += r["messages"]
        v["by_type"][r["type"]] = v["by_type"].get(r["type"], 0) + r["messages"]
        v["by_priority"][r["priority"]] = v["by_priority"].get(r["priority"], 0) + r["messages"]
        days.setdefault(key, set()).add(r["date"])
    for key, v in volume.items():
        v["days"] = len(days[key])
    reliability = _rows(frames["reliability"], "store_id,channel")
    by_reason: dict[str, int] = {}
    for r in _rows(frames["dead_letters"]):
        by_reason[r["reason"]] = by_reason.get(r["reason"], 0) + r["dead_letters"]
    tracked = sum(r["tracked"] for r in reliability)
    retried = sum(r["retried"] for r in reliability)
    ages = [r["backlog_oldest_age_ms"] for r in reliability
            if r["backlog_oldest_age_ms"] is not None]
    return {
        "exports": [{"path": base, "store_id": m["store"]["store_id"], "format": m["format"],
                     "exported_at": m["exported_at"], "rows": m["rows"],
                     "id_range": m["id_range"]} for base, m in loaded],
        "out": out,
        "totals": totals,
        "volume": sorted(volume.values(), key=lambda v: (v["store_id"], v["channel"] or "")),
        "latency": {"channels": _rows(frames["latency_by_channel"], "store_id,channel"),
                    "agents": _rows(frames["latency_by_agent"], "agent")},
        "reliability": reliability,
        "retries": {"tracked": tracked, "retried": retried,
                    "retries": sum(r["retries"] or 0 for r in reliability),
                    "retry_rate": retried / tracked if tracked else 0.0},
        "dead_letters_by_reason": by_reason,
        "late_acks": sum(r["late_acks"] for r in reliability),
        "backlog": {"deliveries": sum(r["backlog"] for r in reliability),
                    "oldest_age_ms": max(ages) if ages else None},
        "checks": {"exactly_once_violations": frames["exactly_once_violations"].count(),
                   "unaccounted": frames["unaccounted"].count()},
    }


def require_clean(result: AuditResult) -> None:
    """Exit 5 (`invalid_state`) naming the checks that are not 0."""
    failed = {k: v for k, v in result.summary["checks"].items() if v}
    if failed:
        from acomm_cli.errors import InvalidState

        raise InvalidState("audit checks failed: " + ", ".join(f"{k}={v}" for k, v in
                                                                failed.items())
                           + f" (rows in {result.summary['out']})", field="audit", **failed)
