"""NATS servers that require TLS and credentials (real nats-server processes; the CA and the
server's certificate for 127.0.0.1 and localhost made here with `cryptography`): with the
CA ($ACOMM_NATS_CA) and a user and password ($ACOMM_NATS_USER, $ACOMM_NATS_PASSWORD), a
token ($ACOMM_NATS_TOKEN), or a `.creds` file (`node init --nats-creds`, $ACOMM_NATS_CREDS)
the loop runs; with the wrong CA or no credentials the error names the server and why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run
from natsserver import NatsServer, make_ca, make_server_cert, needs_nats, operator_mode
from test_federation_nats import ok, sql
from test_nats_cluster import pair

from acomm_cli.federation import nats_transport as nt
from acomm_cli.store.connection import open_store

pytestmark = [pytest.mark.federation, needs_nats]


def published_all(path: Path) -> bool:
    return sql(path, "SELECT published_seq FROM fed_nats") == sql(
        path, "SELECT max(seq) FROM fed_outbox"
    )


def refused(b: Path, url: str) -> str:
    """`fed pull --peer na` on b: exit 7, the reason naming the server; returns it."""
    r = run("--store", str(b), "--json", "fed", "pull", "--peer", "na")
    assert r.returncode == 7, (r.stdout, r.stderr)
    err = json.loads(r.stderr.splitlines()[-1])["error"]
    assert err["code"] == "peer_unreachable" and url in err["message"]
    return str(err["message"])


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[NatsServer, Path]]:
    ca, ca_cert, ca_key = make_ca(tmp_path / "pki")
    cert, key = make_server_cert(tmp_path / "pki", ca_cert, ca_key)
    flags = ["--tls", "--tlscert", str(cert), "--tlskey", str(key)]
    server = NatsServer(
        tmp_path / "nats", extra=[*flags, "--user", "acomm", "--pass", "s3cret"], scheme="tls"
    )
    server.start()
    try:
        yield server, ca
    finally:
        server.stop()


def test_tls_with_a_user_and_password(tmp_path, tls_server, monkeypatch):
    server, ca = tls_server
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    monkeypatch.setenv(nt.CA_ENV, str(ca))
    monkeypatch.setenv(nt.USER_ENV, "acomm")
    monkeypatch.setenv(nt.PASSWORD_ENV, "s3cret")
    a, b = pair(tmp_path, server.url, owned=("bob",))
    ok(a, "send", "--to", "bob", "over TLS", "--as", "alice")
    assert published_all(a)
    assert ok(b, "fed", "pull")["delivered"] == 1
    assert [m["content"] for m in ok(b, "receive", "--as", "bob")["messages"]] == ["over TLS"]
    # a CA that did not sign the server's certificate
    other, _, _ = make_ca(tmp_path / "other", "another CA")
    monkeypatch.setenv(nt.CA_ENV, str(other))
    r = run("--store", str(a), "send", "--to", "bob", "not yet", "--as", "alice")
    assert r.returncode == 0 and server.url in r.stderr and "not trusted" in r.stderr
    assert "waits in the outbox" in r.stderr and not published_all(a)
    assert "certificate is not trusted" in refused(b, server.url)
    # no CA named: the system's trust does not know ours either
    monkeypatch.delenv(nt.CA_ENV)
    assert "certificate is not trusted" in refused(b, server.url)
    # the right CA, no password: the server refuses us, and says so
    monkeypatch.setenv(nt.CA_ENV, str(ca))
    monkeypatch.delenv(nt.PASSWORD_ENV)
    assert "refused our credentials" in refused(b, server.url)
    # all set again: the row that waited goes out with the next command
    monkeypatch.setenv(nt.PASSWORD_ENV, "s3cret")
    ok(a, "fed", "pull")
    assert published_all(a)
    assert ok(b, "fed", "pull")["delivered"] == 1


def test_a_token(tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    server = NatsServer(tmp_path / "nats", extra=["--auth", "t0ken"])
    server.start()
    try:
        monkeypatch.setenv(nt.TOKEN_ENV, "t0ken")
        a, b = pair(tmp_path, server.url, owned=("bob",))
        ok(a, "send", "--to", "bob", "with a token", "--as", "alice")
        assert ok(b, "fed", "pull")["delivered"] == 1
        monkeypatch.setenv(nt.TOKEN_ENV, "wrong")
        assert "refused our credentials" in refused(b, server.url)
    finally:
        server.stop()


def test_a_creds_file(tmp_path, monkeypatch):
    """Operator mode: the server trusts an operator, its account and the user the `.creds`
    file holds (JWT and seed, made here with nkeys)."""
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")
    config, creds = operator_mode(tmp_path / "op")
    server = NatsServer(tmp_path / "nats", config)
    server.start()
    try:
        monkeypatch.setenv(nt.CREDS_ENV, str(creds))  # for the set-up's first publishes
        a, b = pair(tmp_path, server.url, owned=("bob",))
        ok(a, "send", "--to", "bob", "with creds", "--as", "alice")
        assert published_all(a)
        monkeypatch.delenv(nt.CREDS_ENV)
        # b's node has no credentials: refused, naming the server
        assert "refused our credentials" in refused(b, server.url)
        # a node that recorded its file at init (`--nats-creds`) needs no environment
        c = tmp_path / "nc.acomm"
        doc = ok(
            c, "node", "init", "--id", "nc", "--transport", server.url, "--nats-creds", str(creds)
        )
        assert doc["transport"] == server.url
        assert sql(c, "SELECT creds FROM fed_nats") == [(str(creds),)]
        conn = open_store(c)
        link = nt.link_for(conn)
        try:
            assert link.call(nt.ensure_stream(link.call(link.js()), "nc")) == 0
        finally:
            link.close()
            conn.close()
        monkeypatch.setenv(nt.CREDS_ENV, str(creds))
        assert ok(b, "fed", "pull")["delivered"] == 1
    finally:
        server.stop()
