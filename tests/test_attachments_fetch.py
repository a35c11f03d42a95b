"""Files across nodes over real gateways: the seed sends a file to nb's agent, nb pulls the
message over a signed HTTP read and fetches the file from the seed's `GET /acomm/blob/SHA256`
on demand. The endpoint answers only a member node's fresh signature, and only for a file a
message sent to that node names; a forged blob is refused by the fetching node; a gateway
that is down is exit 7 naming it, with the message already delivered."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import httpx
import pytest
from test_gateway import free_port, gateway_nodes, invite, wait_until, where

from acomm_cli.federation import blobs, identity
from acomm_cli.federation.http_transport import signed_headers

pytestmark = pytest.mark.federation


def _node_of(path: Path) -> identity.Node:
    conn = sqlite3.connect(path)
    try:
        return identity.require(conn)
    finally:
        conn.close()


def test_files_over_real_gateways(tmp_path: Path):
    with gateway_nodes(tmp_path) as make:
        seed, b = make("seed"), make("nb")
        seed.start("--seed", port=free_port())
        b.start("--join", str(seed.url), "--invite", invite(seed, "--expect", "nb"))
        seed.ok("agent", "own", "alice")
        b.ok("agent", "own", "bob")
        for n in (seed, b):
            wait_until(f"bob on {n.id}", lambda n=n: where(n, "bob") == "nb")
        report, other, kept = (tmp_path / n for n in ("report.bin", "other.bin", "kept.bin"))
        report.write_bytes(bytes(range(256)) * 40)
        other.write_bytes(b"the second file")
        kept.write_bytes(b"never sent to nb")
        sent = seed.ok(
            "send", "--to", "bob", "--attach", str(report), "--attach", str(other), "files",
            "--as", "alice",
        )["results"][0]  # fmt: skip
        assert sent["status"] == "emitted"
        seed.ok("agent", "own", "carol")  # the seed's own agent: a local message
        seed.ok("send", "--to", "carol", "--attach", str(kept), "local only", "--as", "alice")
        got = b.ok("fed", "pull")
        assert got["delivered"] == 1 and got["unreachable"] == []
        [msg] = b.ok("receive", "--as", "bob")["messages"]
        assert [f["name"] for f in msg["attachments"]] == ["other.bin", "report.bin"]

        # the round trip: fetched from the seed's gateway, checked, stored, written
        out = tmp_path / "out.bin"
        b.ok("attachment", "get", str(msg["id"]), "report.bin", "-o", str(out), "--as", "bob")
        assert out.read_bytes() == report.read_bytes()

        # the endpoint: a member's fresh signature, for a file sent to it only
        me = _node_of(b.path)
        sha = hashlib.sha256(report.read_bytes()).hexdigest()
        kept_sha = hashlib.sha256(kept.read_bytes()).hexdigest()

        def ask(digest: str, signer: identity.Node | None = me) -> httpx.Response:
            target = blobs.target_of(digest, "n" + digest[:8] + str(id(signer)))
            headers = {} if signer is None else signed_headers(signer, target)
            return httpx.get(str(seed.url) + target, headers=headers, timeout=10)

        r = ask(sha)
        assert r.status_code == 200 and r.content == report.read_bytes()
        assert ask(sha, None).status_code == 401  # unsigned
        stranger = identity.Node("nz", me.public_key, me.private_key, me.created_at)
        assert ask(sha, stranger).status_code == 401  # not a member: no key to check by
        for digest in (kept_sha, "0" * 64):  # held but never sent to nb; not held at all
            r = ask(digest)
            assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"

        # a forged blob on the origin: refused by nb, recorded, nothing stored
        with sqlite3.connect(seed.path) as c:
            c.execute(
                "UPDATE attachments SET data = ? WHERE sha256 = ?",
                (b"forged", hashlib.sha256(b"the second file").hexdigest()),
            )
        r = b.run(
            "attachment", "get", str(msg["id"]), "other.bin", "-o", str(tmp_path / "o2"),
            "--as", "bob",
        )  # fmt: skip
        assert r.returncode == 7, r.stderr
        err = json.loads(r.stderr)["error"]
        assert (err["code"], err["peer"]) == ("attachment_corrupt", "seed")
        assert not (tmp_path / "o2").exists()
        with sqlite3.connect(b.path) as c:
            assert c.execute("SELECT count(*) FROM attachments").fetchone() == (1,)
            assert c.execute("SELECT kind FROM fed_rejected").fetchall() == [("attachment",)]

        # the seed's gateway down: exit 7 naming it; what was fetched still reads
        seed.stop()
        r = b.run(
            "attachment", "get", str(msg["id"]), "other.bin", "-o", str(tmp_path / "o3"),
            "--as", "bob",
        )  # fmt: skip
        assert r.returncode == 7, r.stderr
        err = json.loads(r.stderr)["error"]
        assert (err["code"], err["value"]) == ("peer_unreachable", "seed")
        assert str(seed.url) in err["message"]
        out.unlink()
        b.ok("attachment", "get", str(msg["id"]), "report.bin", "-o", str(out), "--as", "bob")
        assert out.read_bytes() == report.read_bytes()
