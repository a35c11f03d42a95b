"""A real `nats-server -js` for the tests: on a free loopback port with a store
directory under the test's tmp_path, started and killed by PID (also when the test fails),
restartable on the same port and directory (JetStream's streams survive a restart). Tests
that need one are skipped, saying why, only where nats-server is not installed (`make test`
installs it from Debian's packages, like faketime).

`nats_cluster` starts three (or more) of them as one JetStream cluster: each with its server
name, its store directory, a cluster port and a monitoring port, all free loopback ports, the
routes naming every member; ready when every member's /healthz says JetStream is current.
`extra` flags add TLS or authentication to a server (`--tls --tlscert ...`, `--user ...`)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path

import procs
import pytest

NATS_SERVER = shutil.which("nats-server") or (
    "/usr/sbin/nats-server" if os.access("/usr/sbin/nats-server", os.X_OK) else None
)
needs_nats = pytest.mark.skipif(
    NATS_SERVER is None,
    reason="nats-server is not installed (make test installs it from Debian's package nats-server)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _readiness(log: Path) -> int:
    """How many starts this log shows ready ("Server is ready")."""
    try:
        return log.read_text(errors="replace").count("Server is ready")
    except FileNotFoundError:
        return 0


class NatsServer:
    def __init__(
        self,
        directory: Path,
        config: Path | None = None,
        name: str | None = None,
        extra: Sequence[str] = (),
        scheme: str = "nats",
    ) -> None:
        self.dir, self.port, self.config = directory, free_port(), config
        self.name, self.extra, self.scheme = name, list(extra), scheme
        self.http_port = free_port()  # the monitoring endpoints (/varz, /jsz, /healthz)
        self.cluster_port: int | None = None
        self.routes: list[str] = []
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def _cluster_args(self) -> list[str]:
        if self.cluster_port is None:
            return []
        return [
            "--cluster_name",
            "acomm",
            "--cluster",
            f"nats://127.0.0.1:{self.cluster_port}",
            "--routes",
            ",".join(self.routes),
        ]

    def monitor(self, endpoint: str) -> dict:  # type: ignore[type-arg]
        """A monitoring endpoint's JSON (/varz, /jsz, /healthz)."""
        url = f"http://127.0.0.1:{self.http_port}/{endpoint}"
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())  # type: ignore[no-any-return]
        except urllib.error.HTTPError as exc:  # /healthz answers 503 with its reason
            return json.loads(exc.read() or b"{}")  # type: ignore[no-any-return]

    def start(self) -> None:
        assert NATS_SERVER is not None
        self.dir.mkdir(parents=True, exist_ok=True)
        log_path = self.dir / "server.log"
        ready_before = _readiness(log_path)
        log = open(log_path, "ab")
        self.proc = procs.spawn(
            [
                NATS_SERVER,
                *(["-c", str(self.config)] if self.config is not None else []),
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-sd",
                str(self.dir / "js"),
                "-m",
                str(self.http_port),
                *(["-n", self.name] if self.name else []),
                *self._cluster_args(),
                *self.extra,
            ],
            stdout=log,
            stderr=log,
        )
        log.close()
        deadline = time.monotonic() + 20
        # bounded: until this start logs that it is ready. The log, not a connect: a loopback
        # connect to a port nobody listens on yet can connect to itself and take the port.
        while _readiness(log_path) <= ready_before:
            if self.proc.poll() is not None:
                raise AssertionError("nats-server exited: " + log_path.read_text()[-2000:])
            if time.monotonic() > deadline:
                raise AssertionError("nats-server was not ready in 20 s")
            time.sleep(0.05)

    def stop(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None:
            procs.stop(self.proc, sig, timeout=10)
        self.proc = None


@contextlib.contextmanager
def nats_server(directory: Path, config: Path | None = None) -> Iterator[NatsServer]:
    """A started server (with `config`: a nats-server configuration file, its users say)."""
    server = NatsServer(directory, config)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def healthy(server: NatsServer) -> bool:
    """Its JetStream is current with the cluster (a meta leader, its streams caught up)."""
    try:
        if server.monitor("healthz").get("status") != "ok":
            return False
        return server.cluster_port is None or bool(
            (server.monitor("jsz").get("meta_cluster") or {}).get("leader")
        )
    except OSError:
        return False


def wait_healthy(servers: Sequence[NatsServer], within: float = 60) -> None:
    """Bounded: until every running server's /healthz says ok."""
    deadline = time.monotonic() + within
    while not all(healthy(s) for s in servers if s.proc is not None):
        if time.monotonic() > deadline:
            states = {s.name: s.monitor("healthz") for s in servers if s.proc is not None}
            raise AssertionError(f"the NATS cluster was not healthy in {within:g} s: {states}")
        time.sleep(0.1)


@contextlib.contextmanager
def nats_cluster(
    directory: Path, size: int = 3, extra: Sequence[str] = ()
) -> Iterator[list[NatsServer]]:
    """`size` servers n1..nN as one JetStream cluster on loopback, started and healthy."""
    members = [
        NatsServer(directory / f"n{i + 1}", name=f"n{i + 1}", extra=extra) for i in range(size)
    ]
    for m in members:
        m.cluster_port = free_port()
    for m in members:
        m.routes = [f"nats-route://127.0.0.1:{o.cluster_port}" for o in members if o is not m]
    try:
        for m in members:
            m.start()
        wait_healthy(members)
        yield members
    finally:
        for m in members:
            m.stop()


def cluster_url(members: Sequence[NatsServer]) -> str:
    return ",".join(m.url for m in members)
