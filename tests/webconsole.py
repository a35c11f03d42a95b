"""Helpers for the console's tests: its application on a test store (Starlette's TestClient)
and the console as a process (`acomm web`) for the browser tier."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from acomm_cli import model
from acomm_cli.engine import opening

ACOMM = str(Path(sys.executable).with_name("acomm"))
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def config(path: Path, **options: Any) -> Any:
    """The console's configuration for the store at `path`, as `acomm web` builds it."""
    from acomm_cli.web.app import Config

    def connect() -> contextlib.closing[Any]:
        return contextlib.closing(opening.connect(path, create=False))

    options.setdefault("read_only", False)
    options.setdefault("acting", "op")
    options.setdefault("login", False)
    options.setdefault("stale_after_ms", 300_000)
    return Config(
        connect=connect, title=str(path), limits=model.Limits(), offline_after_ms=60_000, **options
    )


@contextlib.contextmanager
def client(path: Path, https: bool = False, **options: Any) -> Iterator[Any]:
    """A TestClient on the console, its lifespan (the live poll) running."""
    from starlette.testclient import TestClient

    from acomm_cli.web.app import build

    base = "https://127.0.0.1" if https else "http://127.0.0.1"
    with TestClient(build(config(path, **options)), base_url=base) as c:
        yield c


def csrf(html: str) -> str:
    found = CSRF.search(html)
    assert found, "no form with a CSRF token on the page"
    return found.group(1)


def serve(store: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Any, str]:
    """`acomm web --listen 127.0.0.1:0 ARGS` as a process (its own group, for procs.stop):
    the process and its URL, read from the line it prints once it listens."""
    from procs import spawn

    proc = spawn(
        [ACOMM, "--store", str(store), "web", "--listen", "127.0.0.1:0", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env or dict(os.environ),
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], deadline - time.monotonic())
        if not ready:
            break
        line = proc.stderr.readline()
        if not line:
            break
        seen += line
        found = re.search(rb"serving (https?://\S+/)", line)
        if found:
            return proc, found.group(1).decode()
    raise AssertionError(f"acomm web did not start: {seen.decode(errors='replace')}")


CHROMIUM = "/usr/bin/chromium"
# without the background-networking flags chromium stalls on a closed network
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, made with `cryptography`."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """What the actions change, without times: two stores that ran the same commands in the
    same order are equal here."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return {
            "messages": list(
                conn.execute(
                    "SELECT id, channel_id, sender, type, content, topic, correlation_id"
                    " FROM messages ORDER BY id"
                )
            ),
            "deliveries": list(
                conn.execute(
                    "SELECT message_id, recipient, state, ack_status, retry_count"
                    " FROM deliveries ORDER BY message_id, recipient"
                )
            ),
            "dead_letters": list(
                conn.execute(
                    "SELECT message_id, recipient, reason FROM dead_letters"
                    " ORDER BY message_id, recipient"
                )
            ),
            "channels": list(conn.execute("SELECT name, type, state FROM channels ORDER BY name")),
        }
    finally:
        conn.close()
