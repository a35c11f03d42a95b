"""A real `nats-server -js` for the tests: on a free loopback port with a store
directory under the test's tmp_path, started and killed by PID (also when the test fails),
restartable on the same port and directory (JetStream's streams survive a restart). Tests
that need one are skipped, saying why, only where nats-server is not installed (`make test`
installs it from Debian's packages, like faketime)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
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
    def __init__(self, directory: Path, config: Path | None = None) -> None:
        self.dir, self.port, self.config = directory, free_port(), config
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

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
