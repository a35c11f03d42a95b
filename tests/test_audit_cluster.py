"""`acomm audit` on a real standalone Spark cluster: a master and one worker started
from the installed pyspark on loopback, shared by this module's tests and killed by PID at
the end; and the ways a cluster fails loudly (a master nobody answers at, a cluster that
cannot host an executor), each within a bound."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import procs
import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pytest
from audit_traffic import DAY1, day1, day2
from conftest import run
from freezegun import freeze_time

from acomm_cli.analytics import sparkrun

pytestmark = pytest.mark.spark

WORKER_MEMORY_MB = 1024
EXECUTOR_MEMORY = "512m"  # what the audits ask for: fits the worker


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status(ui: str) -> dict:
    with urllib.request.urlopen(f"{ui}/json", timeout=5) as r:
        return json.loads(r.read().decode("utf-8"))


def _bound_ports(log: Path, proc: subprocess.Popen, services: tuple[str, ...]) -> dict[str, int]:
    """The port each service bound, as the master logs it ("Successfully started service
    'NAME' on port N")."""
    deadline = time.monotonic() + 120
    while True:
        text = log.read_text(errors="replace") if log.exists() else ""
        found = {
            m.group(1): int(m.group(2))
            for m in re.finditer(r"Successfully started service '(\w+)' on port (\d+)", text)
        }
        if all(name in found for name in services):
            return found
        assert proc.poll() is None, text
        assert time.monotonic() < deadline, f"the Spark master never bound {services}: {text}"
        time.sleep(0.2)


class Cluster:
    def __init__(self, master: str, ui: str, env: dict[str, str]) -> None:
        self.master, self.ui, self.env = master, ui, env


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master and one worker (1 core, 1 GB) on loopback, from pyspark's jars."""
    try:
        java, _ = sparkrun.java_version()
    except sparkrun.SparkUnavailable as exc:
        pytest.skip(f"no Java 17+: {exc.message}")
    import pyspark

    home = Path(pyspark.__file__).parent
    work = tmp_path_factory.mktemp("spark-cluster")
    scala = next(home.glob("jars/spark-core_*.jar")).name.split("_")[1].split("-")[0]
    # SPARK_SCALA_VERSION: the worker's launcher of executors needs it outside a source tree
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SCALA_VERSION": scala,
        "SPARK_WORKER_DIR": str(work / "worker"),
        "SPARK_LOG_DIR": str(work / "logs"),
    }
    cp = ["-cp", f"{home / 'jars'}/*", "-Xmx256m"]
    started: list[subprocess.Popen[bytes]] = []
    try:
        started.append(
            procs.spawn(
                [
                    java,
                    *cp,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(_free_port()),
                    "--webui-port",
                    str(_free_port()),
                ],
                env=env,
                stdout=open(work / "master.log", "w"),
                stderr=subprocess.STDOUT,
            )
        )
        # the ports the master bound, from its log: Spark moves to the next port when one is
        # taken, and nothing connects before the master listens (a loopback connect to a port
        # nobody listens on can connect to itself and take the port)
        ports = _bound_ports(work / "master.log", started[0], ("sparkMaster", "MasterUI"))
        master = f"spark://127.0.0.1:{ports['sparkMaster']}"
        ui = f"http://127.0.0.1:{ports['MasterUI']}"
        started.append(
            procs.spawn(
                [
                    java,
                    *cp,
                    "org.apache.spark.deploy.worker.Worker",
                    master,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    "1",
                    "--memory",
                    f"{WORKER_MEMORY_MB}m",
                    "--webui-port",
                    str(_free_port()),
                    "--work-dir",
                    str(work / "worker"),
                ],
                env=env,
                stdout=open(work / "worker.log", "w"),
                stderr=subprocess.STDOUT,
            )
        )
        deadline = time.monotonic() + 120
        while True:  # the master's JSON status lists the worker once it has registered
            try:
                if _status(ui).get("aliveworkers", 0) >= 1:
                    break
            except (OSError, ValueError, http.client.HTTPException):
                pass  # not up yet; while its pages attach, /json can answer the HTML page
            assert all(p.poll() is None for p in started), (work / "master.log").read_text()
            assert time.monotonic() < deadline, "the Spark worker never registered"
            time.sleep(0.5)
        yield Cluster(
            master,
            ui,
            {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_WEBUI_PORT": str(ports["MasterUI"])},
        )
    finally:
        for p in reversed(started):  # the worker's executors are in its group
            procs.stop(p, timeout=20)


@pytest.fixture
def exported(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        day2(cli, clock, day1(cli, clock))
        cli.ok("export", out)
    return out


def _comparable(doc: dict) -> dict:
    """The summary without where it ran and where it wrote."""
    return {k: v for k, v in doc.items() if k not in ("spark", "out", "tables", "report")}


@pytest.mark.spark
def test_audit_on_a_standalone_cluster_equals_local(cluster, exported, tmp_path):
    p = run(
        "audit",
        exported,
        "--master",
        cluster.master,
        "--out",
        tmp_path / "on-cluster",
        "--conf",
        f"spark.executor.memory={EXECUTOR_MEMORY}",
        "--json",
        env=cluster.env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    on_cluster = json.loads(p.stdout)
    p = run(
        "audit",
        exported,
        "--master",
        "local[1]",
        "--out",
        tmp_path / "local",
        "--json",
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    local = json.loads(p.stdout)
    assert _comparable(on_cluster) == _comparable(local)
    assert on_cluster["checks"] == {
        "exactly_once_violations": 0,
        "unaccounted": 0,
        "federation_unmatched": 0,
    }
    assert on_cluster["spark"]["master"] == cluster.master
    # shuffle partitions come from the executors' cores, not Spark's default of 200
    spark = on_cluster["spark"]
    assert spark["shuffle_partitions"] == sparkrun.PARTITIONS_PER_CORE * spark["executor_cores"]
    assert spark["shuffle_partitions"] <= 8
    assert local["spark"]["shuffle_partitions"] == sparkrun.MIN_SHUFFLE_PARTITIONS


@pytest.mark.spark
def test_a_cluster_that_cannot_host_an_executor_fails_within_the_wait(cluster, exported, tmp_path):
    started = time.monotonic()
    p = run(
        "audit",
        exported,
        "--master",
        cluster.master,
        "--out",
        tmp_path / "a",
        "--conf",
        "spark.executor.memory=4g",
        "--executor-wait",
        "5s",
        "--json",
        env=cluster.env,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert p.returncode == 8, p.stdout
    err = json.loads(p.stderr)["error"]
    assert err["code"] == "spark_unavailable" and err["field"] == "executor_wait"
    assert "within 5 s" in err["message"] and "4g memory" in err["message"]
    assert f"{WORKER_MEMORY_MB} MB memory free" in err["message"]
    assert err["asked"]["spark.executor.memory"] == "4g"
    assert err["offered"][0]["memory_mb"] == WORKER_MEMORY_MB
    assert elapsed < 60  # the wait, plus a JVM's start and stop
    # the cluster is left as it was: an audit that fits still runs
    assert _status(cluster.ui)["aliveworkers"] == 1


@pytest.mark.spark
def test_a_master_nobody_answers_at_fails_at_once_with_the_reason(exported, tmp_path):
    port = _free_port()  # nobody listens there
    started = time.monotonic()
    p = run("audit", exported, "--master", f"spark://127.0.0.1:{port}", "--json", timeout=120)
    assert time.monotonic() - started < 30
    assert p.returncode == 8
    err = json.loads(p.stderr)["error"]
    assert err["code"] == "spark_unavailable" and err["field"] == "master"
    assert f"127.0.0.1:{port}" in err["message"] and "refused" in err["message"].lower()
    assert "Py4J" not in err["message"]
    # a master URL Spark refuses: Spark's own reason, not PySpark's or Py4J's
    p = run("audit", exported, "--master", "nonsense://x", "--json", timeout=120)
    assert p.returncode == 8
    err = json.loads(p.stderr)["error"]
    assert "Master must either be yarn or start with spark" in err["message"], err
    assert "JAVA_GATEWAY_EXITED" not in err["message"]
