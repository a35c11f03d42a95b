"""Two real gateways on loopback pulling each other continuously (`gateway serve --pull`):
`query --to bob --wait` on one node gets the answer bob gives on the other with no `tick` or
`fed pull` anywhere; a peer that goes down is noted and pulled again once it is back; a
gateway with peers in long polls stops promptly. The gateway serving TLS itself (certificates
made here with `cryptography`), reached over https:// with the CA of `federation.ca_file`;
listening beyond loopback without TLS refused; a production node refusing a plain-HTTP
seed."""

from __future__ import annotations

import datetime
import ipaddress
import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import procs
import pytest
from conftest import ACOMM
from test_gateway import Node, free_port, gateway_nodes, invite, wait_until, where

pytestmark = pytest.mark.federation

WAIT_S = 20.0
# a reply is pulled within about a second; on a loaded test machine, allow for more
REPLY_BOUND_S = 8.0


@pytest.fixture
def make(tmp_path: Path):
    with gateway_nodes(tmp_path) as maker:
        yield maker


def pair(make, *extra: str) -> tuple[Node, Node]:
    """na (the seed) and nb (joined), both pulling continuously; nb owns bob and na knows."""
    a, b = make("na"), make("nb")
    a.start("--seed", "--pull", *extra)
    b.start("--join", str(a.url), "--invite", invite(a, "--expect", "nb"), "--pull", *extra)
    b.ok("agent", "own", "bob")
    wait_until("bob's owner on na", lambda: where(a, "bob") == "nb")
    wait_until("nb's url on na", lambda: any(p["url"] for p in a.ok("peers")["peers"]))
    return a, b


def background(n: Node, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ACOMM, "--store", str(n.path), "--json", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(p: subprocess.Popen[str], timeout: float = WAIT_S) -> tuple[int, str, str]:
    try:
        out, err = p.communicate(timeout=timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=5)
    return p.returncode, out, err


def test_query_wait_gets_the_remote_answer_with_no_tick_or_pull(make):
    a, b = pair(make)
    asking = background(
        a, "query", "--to", "bob", "how big is the pool?", "--as", "alice", "--wait", "60s"
    )
    try:
        # bob's receive --wait sees the question: nb's gateway pulled it from na
        code, out, err = finished(
            background(b, "receive", "--as", "bob", "--wait", "30s"), timeout=40
        )
        assert code == 0, err
        (asked,) = json.loads(out)["messages"]
        assert asked["type"] == "query" and asked["origin_node"] == "na"
        answered = time.monotonic()
        b.ok("respond", asked["correlation_id"], "20 connections", "--as", "bob")
        code, out, err = finished(asking, timeout=40)
    finally:
        if asking.poll() is None:
            asking.kill()
            asking.wait(timeout=5)
    took = time.monotonic() - answered
    assert code == 0, err
    assert json.loads(out)["content"] == "20 connections"
    assert took < REPLY_BOUND_S, took
    # the sender's copy went all the way: the reply, with no pull run by hand
    status = a.ok("fed", "status")
    assert {p["node"]: p["state"] for p in status["peers"]} == {"nb": "ok"}
    # a task the same way: nb's gateway brings it, na's brings the acceptance back
    gid = a.ok("task", "create", "--to", "bob", "rotate the keys", "--as", "alice")["global_id"]
    wait_until("the task on nb", lambda: b.run("task", "show", gid).returncode == 0)
    b.ok("task", "accept", gid, "--eta", "10m", "--as", "bob")
    wait_until("accepted on na", lambda: a.ok("task", "show", gid)["state"] == "accepted")
    # the state file is rewritten with each heartbeat (every 5 s): the pull's peers show there
    doc = wait_until(
        "nb in na's gateway status",
        lambda: (d := a.ok("gateway", "status"))["pull"].get("peers", {}).get("nb") and d,
    )
    assert doc["pull"]["mode"] == "continuous" and doc["pull"]["peers"]["nb"]["state"] == "ok"


def test_a_peer_down_is_noted_and_pulled_again_when_back_and_the_gateway_stops_promptly(
    make,
):
    a, b = pair(make)
    port_b = int(str(b.url).rsplit(":", 1)[1])
    assert b.stop() in (0, -signal.SIGTERM)
    wait_until("na notes nb down", lambda: "peer_unreachable" in a.log() and "nb" in a.log())
    a.ok("send", "--to", "bob", "while you were out", "--as", "alice")
    # nb comes back (rejoin by its proof) and its gateway pulls what waited
    b.start("--join", str(a.url), "--pull", port=port_b)
    code, out, err = finished(background(b, "receive", "--as", "bob", "--wait", "30s"), 40)
    assert code == 0, err
    assert [m["content"] for m in json.loads(out)["messages"]] == ["while you were out"]
    wait_until("na pulls nb again", lambda: "pulling node nb again" in a.log())
    assert "Traceback" not in a.log() and "Traceback" not in b.log()
    # nb holds a long poll open on na's outbox: na still stops at once
    started = time.monotonic()
    assert a.stop() in (0, -signal.SIGTERM)
    assert time.monotonic() - started < 4.5
    assert b.stop() in (0, -signal.SIGTERM)


def test_a_locked_store_is_noted_and_the_page_applied_once_it_is_free(make):
    a, b = pair(make)
    lock = sqlite3.connect(b.path, timeout=5, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")  # nb's gateway cannot apply what it pulls now
        a.ok("send", "--to", "bob", "held up", "--as", "alice")
        wait_until("nb notes its locked store", lambda: "pulling node na: " in b.log(), 40)
        assert b.proc is not None and b.proc.poll() is None
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    code, out, err = finished(background(b, "receive", "--as", "bob", "--wait", "30s"), 40)
    assert code == 0, err
    assert [m["content"] for m in json.loads(out)["messages"]] == ["held up"]
    assert "Traceback" not in b.log()


def test_a_gateway_without_pull_pulls_nothing(make):
    a, b = make("na"), make("nb")
    a.start("--seed", "--no-pull")
    b.start("--join", str(a.url), "--invite", invite(a, "--expect", "nb"), "--no-pull")
    b.ok("agent", "own", "bob")
    wait_until("bob's owner on na", lambda: where(a, "bob") == "nb")
    a.ok("send", "--to", "bob", "hello", "--as", "alice")
    assert b.ok("gateway", "status")["pull"] == {"mode": "off"}
    assert b.ok("fed", "pull")["delivered"] == 1  # nothing pulled it before


# ---------------------------------------------------------------- TLS


def _certs(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate it signed for 127.0.0.1 / localhost: (ca, cert, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "acomm test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = tmp_path / "ca.pem", tmp_path / "gw.pem", tmp_path / "gw.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


def test_gateways_over_tls_with_the_configured_ca(make, tmp_path, monkeypatch):
    ca, cert, key = _certs(tmp_path)
    monkeypatch.setenv("ACOMM_FED_CA_FILE", str(ca))  # every acomm the test runs trusts it
    a, b = make("na"), make("nb")
    tls = ("--tls-cert", str(cert), "--tls-key", str(key))
    a.start("--seed", *tls)
    a.url = str(a.url).replace("http://", "https://")
    assert a.ok("gateway", "status")["tls"] is True
    b.start("--join", str(a.url), "--invite", invite(a, "--expect", "nb"), *tls)
    b.url = str(b.url).replace("http://", "https://")
    b.ok("agent", "own", "bob")
    wait_until("bob's owner on na, over wss", lambda: where(a, "bob") == "nb")
    peers = {p["node"]: p["url"] for p in a.ok("peers")["peers"]}
    assert peers == {"nb": b.url}  # the room advertises the https url
    a.ok("send", "--to", "bob", "over tls", "--as", "alice")
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["unreachable"]) == (1, [])
    # without the CA, the certificate is not trusted: the peer is unreachable, and why
    monkeypatch.delenv("ACOMM_FED_CA_FILE")
    r = b.run("fed", "pull", "--peer", "na")
    assert r.returncode == 7 and "CERTIFICATE_VERIFY_FAILED" in r.stderr, r.stderr
    # the config key does the same as the variable
    (b.path.parent / "config.yaml").write_text(f"federation:\n  ca_file: {ca}\n")
    assert b.ok("fed", "pull", "--peer", "na")["unreachable"] == []


def _serve(n: Node, *args: str) -> subprocess.CompletedProcess[str]:
    """A `gateway serve` expected to refuse before it listens (killed if it does not)."""
    p = procs.spawn(
        [ACOMM, "--store", str(n.path), "--json", "gateway", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        procs.stop(p, signal.SIGKILL)
        raise AssertionError("gateway serve did not refuse") from None
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_listening_beyond_loopback_needs_tls_or_insecure_listen(make, tmp_path):
    n = make("na")
    r = _serve(n, "--listen", f"0.0.0.0:{free_port()}", "--seed")
    assert r.returncode == 3, r.stderr
    err = json.loads(r.stderr)["error"]
    assert err["field"] == "insecure_listen" and "--insecure-listen" in err["message"]
    half = _serve(n, "--listen", "127.0.0.1:0", "--seed", "--tls-cert", str(tmp_path / "x"))
    assert half.returncode == 3 and "--tls-key" in half.stderr
    n.start("--seed", "--insecure-listen")  # said explicitly (here on loopback anyway)
    assert n.ok("gateway", "status")["running"] is True


def test_a_production_node_refuses_a_plain_http_seed(make):
    n = make("nb")
    n.ok("node", "init", "--id", "nb", "--production")
    url = f"http://127.0.0.1:{free_port()}"
    r = _serve(n, "--listen", "127.0.0.1:0", "--join", url, "--invite", "x")
    assert r.returncode == 5, r.stderr
    err = json.loads(r.stderr)["error"]
    assert (err["code"], err["value"]) == ("insecure_peer", url)
