"""A standalone Spark master and one worker on loopback, from the installed pyspark's jars, for
bench/export.py's audit on a cluster (tests/test_audit_cluster.py starts its own the same way).
Both are killed by PID when the block ends, whatever happened."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def cluster(cores: int = 2, memory_mb: int = 2048) -> Iterator[tuple[str, dict[str, str]]]:
    """Yields (master URL, environment for `acomm audit`)."""
    import pyspark

    home = Path(pyspark.__file__).parent
    scala = next(home.glob("jars/spark-core_*.jar")).name.split("_")[1].split("-")[0]
    work = Path(tempfile.mkdtemp(prefix="acomm-bench-spark-"))
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SCALA_VERSION": scala,
        "SPARK_WORKER_DIR": str(work / "worker"),
    }
    java = (
        str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if "JAVA_HOME" in os.environ else "java"
    )
    cp = ["-cp", f"{home / 'jars'}/*", "-Xmx256m"]
    master, ui = f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(
            subprocess.Popen(
                [
                    java,
                    *cp,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--webui-port",
                    str(ui_port),
                ],
                env=env,
                stdout=open(work / "master.log", "w"),
                stderr=subprocess.STDOUT,
            )
        )
        procs.append(
            subprocess.Popen(
                [
                    java,
                    *cp,
                    "org.apache.spark.deploy.worker.Worker",
                    master,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    f"{memory_mb}m",
                    "--webui-port",
                    str(worker_ui),
                    "--work-dir",
                    str(work / "worker"),
                ],
                env=env,
                stdout=open(work / "worker.log", "w"),
                stderr=subprocess.STDOUT,
            )
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{ui}/json", timeout=5) as r:
                    if json.loads(r.read()).get("aliveworkers", 0) >= 1:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"the Spark cluster did not come up; logs in {work}")
            time.sleep(0.5)
        yield master, {"SPARK_LOCAL_IP": "127.0.0.1", "SPARK_MASTER_WEBUI_PORT": str(ui_port)}
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=20)
