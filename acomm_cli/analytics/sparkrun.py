"""Starting Spark for `acomm audit`, quietly and loudly at once: nothing on the terminal while
it works, and a one-line reason when it cannot (no Java, a master nobody answers at, a cluster
that gives no executor).

pyspark is imported only inside these functions: `acomm send` never pays for it.
"""

from __future__ import annotations

import atexit
import http.client
import json
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acomm_cli.errors import SparkUnavailable

if TYPE_CHECKING:  # annotations only: pyspark loads inside the functions that use it
    from pyspark.sql import SparkSession

JAVA_MIN = 17
EXECUTOR_WAIT_S = 60.0  # --executor-wait's default
PARTITIONS_PER_CORE = 4  # shuffle partitions per executor core (AQE coalesces the rest)
MIN_SHUFFLE_PARTITIONS = 4
MASTER_PROBE_S = 5.0  # how long a spark:// master may take to accept a connection

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
    need = (
        f"`acomm audit` runs Apache Spark, which needs Java {JAVA_MIN} or newer; "
        "install a JDK (e.g. `apt-get install openjdk-17-jre-headless`) and put `java` on "
        "PATH or set JAVA_HOME"
    )
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


def standalone_hosts(master: str) -> list[tuple[str, int]]:
    """(host, port) of each master of a `spark://h1:p1,h2:p2` URL; [] for other masters."""
    if not master.startswith("spark://"):
        return []
    hosts = []
    for part in master[len("spark://") :].split(","):
        host, _, port = part.strip().rstrip("/").rpartition(":")
        if host and port.isdigit():
            hosts.append((host.strip("[]"), int(port)))
    return hosts


def probe_master(master: str, timeout: float = MASTER_PROBE_S) -> None:
    """Refuse a standalone master that no host of its URL answers at, at once: Spark itself
    retries its registration for a minute and more, then says why only in its log."""
    hosts = standalone_hosts(master)
    errors = []
    for host, port in hosts:
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc.strerror or exc}")
    if hosts:
        raise SparkUnavailable(
            f"the Spark master {master} does not answer ({'; '.join(errors)})"
            "; start it, or check --master",
            field="master",
            value=master,
        )


def java_reason(exc: BaseException) -> str:
    """The first line of the Java exception behind a Py4J error (Spark's own reason), else
    the first line of the error itself."""
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def log_reason(log: Path) -> str | None:
    """Why Spark gave up, from its log: the reason of the first ERROR line that gives one
    (e.g. "All masters are unresponsive! Giving up.", "Master removed our application:
    FAILED"), else the exception the JVM died of, else the first ERROR line's message."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    errors = [
        m.group(1).strip() for line in lines if (m := re.match(r"^\S+ \S+ ERROR \S+: (.+)$", line))
    ]
    for message in errors:
        if "Reason: " in message:
            return message.split("Reason: ", 1)[1]
    for line in lines:  # the JVM died before logging (spark-submit refused its arguments)
        if m := re.match(r'^Exception in thread "[^"]*" \S+?: (.+)$', line):
            return m.group(1).strip()
    return errors[0] if errors else None


def start_spark(
    master: str, conf: dict[str, str] | None = None, *, executor_wait: float = EXECUTOR_WAIT_S
) -> SparkSession:
    """A SparkSession with the UI and console progress off, log level ERROR, and every line
    the JVM prints on its own (start-up notices, warnings) sent to a log file instead of the
    user's terminal; on a cluster, once an executor has registered (within `executor_wait`
    seconds); shuffle partitions sized from the executors' cores. Raises SparkUnavailable,
    with Spark's reason, when Java is missing, the master does not answer, the JVM fails or
    no executor comes."""
    java_version()
    probe_master(master)
    logging.getLogger("py4j").setLevel(logging.ERROR)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    logdir = Path(tempfile.mkdtemp(prefix="acomm-spark-"))
    props = logdir / "log4j2.properties"
    props.write_text(_LOG4J)
    log = logdir / "spark.log"
    conf = dict(conf or {})
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName("acomm-audit")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.adaptive.coalescePartitions.enabled", "true")
        .config(
            "spark.driver.extraJavaOptions",
            f"-Dlog4j2.configurationFile=file:{props} -Dlog4j.configuration=file:{props}",
        )
    )
    for key, value in conf.items():
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
        reason = log_reason(log) or java_reason(exc)
        raise SparkUnavailable(
            f"Spark did not start on {master}: {reason[:500]} (its log is {log})",
            field="master",
            value=master,
            log=str(log),
        ) from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
    spark.sparkContext.setLogLevel("ERROR")
    try:
        wait_for_executors(spark, master, executor_wait, log)
    except BaseException:
        spark.stop()
        raise
    if "spark.sql.shuffle.partitions" not in conf:
        spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions(spark)))
    atexit.register(shutil.rmtree, logdir, True)  # kept only when the start failed
    return spark


def executor_cores(spark: SparkSession) -> int:
    """Cores the job can use: local[N]'s N, or the cores of the registered executors."""
    return max(1, int(spark.sparkContext.defaultParallelism))


def shuffle_partitions(spark: SparkSession) -> int:
    """Spark's default of 200 shuffle partitions is thousands of tiny tasks for an audit's
    aggregates; a few per core keeps every core busy, and adaptive execution coalesces
    what turns out small."""
    return max(MIN_SHUFFLE_PARTITIONS, PARTITIONS_PER_CORE * executor_cores(spark))


def _executors(spark: SparkSession) -> int:
    """Executors registered with the driver (the driver itself not counted)."""
    infos = spark.sparkContext._jsc.sc().statusTracker().getExecutorInfos()
    return max(0, len(infos) - 1)


def wait_for_executors(spark: SparkSession, master: str, wait_s: float, log: Path) -> None:
    """On a cluster, wait (bounded) until an executor has registered: a cluster that cannot
    host one (more memory or cores asked for than any worker offers) otherwise leaves every
    job waiting forever without a word."""
    if master.startswith("local"):
        return
    deadline = time.monotonic() + wait_s
    while _executors(spark) == 0:
        if time.monotonic() >= deadline:
            asked = _asked(spark)
            offered = _offered(master)
            reason = log_reason(log)
            raise SparkUnavailable(
                f"no Spark executor started within {wait_s:g} s on {master}: asked for "
                f"{asked['text']}; {offered['text']}"
                + (f"; Spark says: {reason}" if reason else "")
                + ". Lower --conf spark.executor.memory or spark.executor.cores, give the "
                "workers more, or wait longer (--executor-wait)",
                field="executor_wait",
                value=wait_s,
                asked=asked["conf"],
                offered=offered["workers"],
                log=str(log),
            )
        time.sleep(0.25)


def _asked(spark: SparkSession) -> dict[str, Any]:
    get = spark.sparkContext.getConf().get
    memory = get("spark.executor.memory", "1g")
    cores = get("spark.executor.cores", None)
    cores_max = get("spark.cores.max", None)
    text = (
        f"executors of {memory} memory (spark.executor.memory) and "
        + (
            f"{cores} cores each (spark.executor.cores)"
            if cores
            else "all of a worker's free cores (spark.executor.cores unset)"
        )
        + (f", at most {cores_max} cores in all (spark.cores.max)" if cores_max else "")
    )
    return {
        "text": text,
        "conf": {
            "spark.executor.memory": memory,
            "spark.executor.cores": cores,
            "spark.cores.max": cores_max,
        },
    }


def master_ui(master: str) -> str | None:
    """The standalone master's web UI (its JSON status is at /json): the master's host on
    $SPARK_MASTER_WEBUI_PORT, else Spark's default port 8080."""
    hosts = standalone_hosts(master)
    if not hosts:
        return None
    port = os.environ.get("SPARK_MASTER_WEBUI_PORT", "8080")
    return f"http://{hosts[0][0]}:{port}"


def _offered(master: str) -> dict[str, Any]:
    """What the alive workers offer, from the master's JSON status (when it can be read)."""
    ui = master_ui(master)
    if ui is None:
        return {
            "text": "what the cluster offers is unknown (not a spark:// master)",
            "workers": None,
        }
    try:
        with urllib.request.urlopen(f"{ui}/json", timeout=5) as r:
            doc = json.loads(r.read().decode("utf-8"))
    except (OSError, ValueError, http.client.HTTPException) as exc:
        # ValueError: not JSON (a UI still attaching its pages answers /json with HTML)
        return {
            "text": f"what the workers offer is unknown ({ui}/json: {exc}; set "
            "SPARK_MASTER_WEBUI_PORT if the master's UI is not on 8080)",
            "workers": None,
        }
    workers = [
        {
            "id": w.get("id"),
            "cores": w.get("cores"),
            "cores_free": w.get("coresfree"),
            "memory_mb": w.get("memory"),
            "memory_free_mb": w.get("memoryfree"),
        }
        for w in doc.get("workers", [])
        if w.get("state") == "ALIVE"
    ]
    if not workers:
        return {"text": "the master has no alive worker", "workers": []}
    text = "the alive workers offer " + "; ".join(
        f"{w['id']}: {w['cores_free']} of {w['cores']} cores free, {w['memory_free_mb']} MB of "
        f"{w['memory_mb']} MB memory free"
        for w in workers
    )
    return {"text": text, "workers": workers}
