"""Files across nodes whose outboxes travel on NATS JetStream: the file's reference rides in
the envelope exactly as over HTTP, but a node reached over NATS has no gateway url in the
room (its url is the NATS server's), so its files cannot be fetched from it: `attachment
get` is exit 7 saying so, and the message itself is delivered all the same. Given a url it
can be fetched from, the same reference is fetched and checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run
from natsserver import needs_nats
from test_federation_nats import ok, pair, server  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.federation, needs_nats]


def test_a_file_from_a_node_on_nats(tmp_path: Path, server):  # noqa: F811
    a, b = pair(tmp_path, server.url)
    f = tmp_path / "notes.txt"
    f.write_text("over nats")
    sent = ok(a, "send", "--to", "carl", "--attach", str(f), "see notes", "--as", "alice")
    assert sent["results"][0]["status"] == "emitted"
    ok(a, "fed", "pull")  # publishes na's outbox on its stream
    assert ok(b, "fed", "pull")["delivered"] == 1
    [msg] = ok(b, "receive", "--as", "carl")["messages"]
    assert msg["content"] == "see notes"
    assert [x["name"] for x in msg["attachments"]] == ["notes.txt"]
    out = tmp_path / "out.txt"
    r = run(
        "--store", str(b), "--json", "attachment", "get", str(msg["id"]), "notes.txt",
        "-o", str(out), "--as", "carl",
    )  # fmt: skip
    assert r.returncode == 7, r.stderr
    err = json.loads(r.stderr)["error"]
    assert (err["code"], err["value"]) == ("peer_unreachable", "na")
    assert "reached over NATS" in err["message"] and "no gateway url" in err["message"]
    assert not out.exists()
    # a url files can be fetched from (a gateway's, or here the store file): the same reference
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    ok(b, "attachment", "get", str(msg["id"]), "notes.txt", "-o", str(out), "--as", "carl")
    assert out.read_text() == "over nats"
