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
            states = {s.name: _health(s) for s in servers if s.proc is not None}
            raise AssertionError(f"the NATS cluster was not healthy in {within:g} s: {states}")
        time.sleep(0.1)


def _health(server: NatsServer) -> object:
    try:
        return server.monitor("healthz")
    except OSError as exc:  # its monitoring port does not answer: the server is not up
        return f"no answer: {exc}"


@contextlib.contextmanager
def nats_cluster(
    directory: Path, size: int = 3, extra: Sequence[str] = ()
) -> Iterator[list[NatsServer]]:
    """`size` servers n1..nN as one JetStream cluster on loopback, started and healthy. The
    free ports are picked before the servers bind them, and a parallel test may take one
    meanwhile: a cluster that does not come up healthy is started once more on new ports."""
    for attempt in (1, 2):
        members = [
            NatsServer(directory / f"try{attempt}" / f"n{i + 1}", name=f"n{i + 1}", extra=extra)
            for i in range(size)
        ]
        for m in members:
            m.cluster_port = free_port()
        for m in members:
            m.routes = [f"nats-route://127.0.0.1:{o.cluster_port}" for o in members if o is not m]
        try:
            for m in members:
                m.start()
            wait_healthy(members)
        except (AssertionError, OSError):
            for m in members:
                m.stop()
            if attempt == 2:
                raise
            continue
        break
    try:
        yield members
    finally:
        for m in members:
            m.stop()


def cluster_url(members: Sequence[NatsServer]) -> str:
    return ",".join(m.url for m in members)


# ---------------------------------------------------------------- TLS and credentials


def make_ca(directory: Path, name: str = "acomm test CA") -> tuple[Path, object, object]:
    """A CA made here: (its certificate file, its certificate, its key)."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), True
        )
        .sign(key, hashes.SHA256())
    )
    path = directory / "ca.pem"
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path, cert, key


def make_server_cert(directory: Path, ca_cert: object, ca_key: object) -> tuple[Path, Path]:
    """A server certificate for 127.0.0.1 and localhost signed by the CA: (cert, key) files."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_cert.subject)  # type: ignore[attr-defined]
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())  # type: ignore[arg-type]
    )
    cert_path, key_path = directory / "server.pem", directory / "server-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _nkey(prefix: int) -> object:
    import nkeys

    return nkeys.from_seed(nkeys.encode_seed(os.urandom(32), prefix))


def _jwt(issuer: object, subject: str, name: str, nats: dict) -> str:  # type: ignore[type-arg]
    """A NATS JWT (v2) signed by the issuer's nkey."""
    import base64
    import hashlib

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    claims = {
        "jti": "",
        "iat": int(time.time()),
        "iss": issuer.public_key.decode(),  # type: ignore[attr-defined]
        "name": name,
        "sub": subject,
        "nats": {**nats, "version": 2},
    }
    digest = hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest()
    claims["jti"] = base64.b32encode(digest).decode().rstrip("=")
    head = b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64(json.dumps(claims).encode())
    sig = issuer.sign(f"{head}.{body}".encode())  # type: ignore[attr-defined]
    return f"{head}.{body}.{b64(sig)}"


def operator_mode(directory: Path) -> tuple[Path, Path]:
    """nats-server in operator mode (an operator, one account with JetStream, one user):
    (the server's config file, the user's .creds file)."""
    import nkeys

    directory.mkdir(parents=True, exist_ok=True)
    operator = _nkey(nkeys.PREFIX_BYTE_OPERATOR)
    account = _nkey(nkeys.PREFIX_BYTE_ACCOUNT)
    user = _nkey(nkeys.PREFIX_BYTE_USER)
    op_pub = operator.public_key.decode()  # type: ignore[attr-defined]
    acct_pub = account.public_key.decode()  # type: ignore[attr-defined]
    unlimited = {"subs": -1, "data": -1, "payload": -1, "conn": -1, "leaf": -1}
    op_jwt = _jwt(operator, op_pub, "acomm-op", {"type": "operator"})
    acct_jwt = _jwt(
        operator,
        acct_pub,
        "acomm",
        {
            "type": "account",
            "limits": {
                **unlimited,
                "imports": -1,
                "exports": -1,
                "wildcards": True,
                "mem_storage": -1,
                "disk_storage": -1,
                "streams": -1,
                "consumer": -1,
            },
        },
    )
    user_jwt = _jwt(
        account,
        user.public_key.decode(),  # type: ignore[attr-defined]
        "node",
        {"type": "user", "pub": {}, "sub": {}, **unlimited},
    )
    config = directory / "operator.conf"
    system = _nkey(nkeys.PREFIX_BYTE_ACCOUNT)  # JetStream needs a system account
    sys_pub = system.public_key.decode()  # type: ignore[attr-defined]
    sys_jwt = _jwt(operator, sys_pub, "SYS", {"type": "account", "limits": unlimited})
    preload = f"resolver_preload: {{\n  {acct_pub}: {acct_jwt}\n  {sys_pub}: {sys_jwt}\n}}\n"
    config.write_text(f"operator: {op_jwt}\nsystem_account: {sys_pub}\nresolver: MEMORY\n{preload}")
    creds = directory / "node.creds"
    seed = user.seed.decode()  # type: ignore[attr-defined]
    creds.write_text(
        f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed}\n------END USER NKEY SEED------\n"
    )
    return config, creds
