"""Rich parts between nodes. A format and a subject travel in the message event and the
remote copy keeps them. Files travel by reference (name, sha256, size, content type, never
the bytes): the receiving node names them as held by the origin node, and `attachment get`
fetches the bytes from it, stores them only when they hash and measure as named, and says
which node it could not reach. The message itself is delivered whatever becomes of its
files."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from test_federation_routing import linked_pair

from acomm_cli.engine import envelope
from acomm_cli.errors import EventRejected

pytestmark = pytest.mark.federation

REPORT = b"line one\nline two\n" * 50


def test_a_format_and_a_subject_reach_the_other_node(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    b.ok("agent", "update", "bob", "--kind", "human")
    sent = a.ok(
        "send", "--to", "bob", "--format", "markdown", "--subject", "Plan", "**go**",
        "--as", "alice",
    )["results"][0]  # fmt: skip
    assert sent["status"] == "emitted"
    assert b.ok("fed", "pull")["delivered"] == 1
    [got] = b.ok("receive", "--as", "bob")["messages"]
    assert (got["content"], got["format"], got["subject"]) == ("**go**", "markdown", "Plan")
    assert got["direction"] == "A2U"  # alice is not in b's directory: an agent
    mine = a.ok("show", str(sent["id"]))
    assert (mine["format"], mine["subject"]) == ("markdown", "Plan")


def _send_report(a, tmp_path, *to: str) -> dict:
    (tmp_path / "report.txt").write_bytes(REPORT)
    r = a.ok(
        "send", "--to", ",".join(to or ("bob",)), "--attach", str(tmp_path / "report.txt"),
        "see the file", "--as", "alice",
    )  # fmt: skip
    return r["results"][0] if "results" in r else r


def _outbox_payload(node) -> dict:
    [(env,)] = node.sql("SELECT envelope FROM fed_outbox WHERE kind = 'message'")
    return json.loads(env)["payload"]


def test_a_file_crosses_by_reference_and_is_fetched_on_demand(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    sent = _send_report(a, tmp_path)
    assert sent["status"] == "emitted"
    sha = hashlib.sha256(REPORT).hexdigest()
    payload = _outbox_payload(a)
    assert payload["attachments"] == [
        {"name": "report.txt", "sha256": sha, "size": len(REPORT), "contentType": "text/plain"}
    ]
    [(env,)] = a.sql("SELECT envelope FROM fed_outbox WHERE kind = 'message'")
    assert "line one" not in env  # the reference only: never the bytes
    assert b.ok("fed", "pull")["delivered"] == 1
    [got] = b.ok("receive", "--as", "bob")["messages"]
    assert got["content"] == "see the file"
    assert [(f["name"], f["sha256"], f["size"]) for f in got["attachments"]] == [
        ("report.txt", sha, len(REPORT))
    ]
    # named, held by na, no blob yet
    assert b.sql("SELECT origin_node FROM message_attachments") == [("na",)]
    assert b.sql("SELECT count(*) FROM attachments") == [(0,)]
    out = tmp_path / "got.txt"
    doc = b.ok("attachment", "get", str(got["id"]), "report.txt", "-o", str(out), "--as", "bob")
    assert out.read_bytes() == REPORT and doc["sha256"] == sha
    assert b.sql("SELECT sha256, size FROM attachments") == [(sha, len(REPORT))]
    # the second get reads the stored copy: the origin is not needed any more
    a.path.rename(tmp_path / "gone.acomm")
    out.unlink()
    b.ok("attachment", "get", str(got["id"]), "report.txt", "-o", str(out), "--as", "bob")
    assert out.read_bytes() == REPORT


def test_the_origin_down_fails_the_get_not_the_message(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    a.path.rename(tmp_path / "moved.acomm")  # na's store is gone: unreachable
    [got] = b.ok("receive", "--as", "bob")["messages"]  # the message is there all the same
    r = b(
        "attachment", "get", str(got["id"]), "report.txt", "-o", str(tmp_path / "x"), "--as", "bob"
    )
    assert r.exit_code == 7
    err = json.loads(r.stderr)["error"]
    assert (err["code"], err["field"], err["value"]) == ("peer_unreachable", "peer", "na")
    assert "node 'na'" in err["message"] and "no store at" in err["message"]
    assert not (tmp_path / "x").exists()
    assert b.sql("SELECT count(*) FROM attachments") == [(0,)]


def test_a_forged_blob_is_refused_recorded_and_not_stored(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    [got] = b.ok("receive", "--as", "bob")["messages"]
    forged = b"not the report"
    for data in (forged, REPORT[:-1] + b"X"):  # other bytes; the same size, one byte changed
        with sqlite3.connect(a.path) as c:
            c.execute("UPDATE attachments SET data = ?", (data,))
        out = tmp_path / "out"
        r = b("attachment", "get", str(got["id"]), "report.txt", "-o", str(out), "--as", "bob")
        assert r.exit_code == 7, r.stderr
        err = json.loads(r.stderr)["error"]
        assert err["code"] == "attachment_corrupt" and err["peer"] == "na"
        assert "nothing was stored" in err["message"]
        assert not out.exists()
        assert b.sql("SELECT count(*) FROM attachments") == [(0,)]
    rows = b.sql("SELECT source_node, event_id, kind FROM fed_rejected")
    assert rows == [("na", got["global_id"], "attachment")] * 2
    assert b.ok("fed", "status")["peers"][0]["rejected"] == 2


def test_a_file_past_this_nodes_limit_is_not_fetched(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    [got] = b.ok("receive", "--as", "bob")["messages"]
    r = b.cli(
        "--store", str(b.path), "--json", "attachment", "get", str(got["id"]), "report.txt",
        "-o", str(tmp_path / "o"), "--as", "bob", env={"ACOMM_MAX_ATTACHMENT_BYTES": "100"},
    )  # fmt: skip
    assert r.exit_code == 6
    assert json.loads(r.stderr)["error"]["code"] == "attachment_too_large"
    assert b.sql("SELECT count(*) FROM attachments") == [(0,)]


def test_the_origin_serves_a_blob_only_to_a_node_it_sent_it_to(cli, tmp_path):
    """nc is a member that no message of na's names the file for: it gets nothing, though
    it knows the hash; nb, the recipient, gets it."""
    from test_federation_routing import three_nodes

    from acomm_cli.engine import remoteblobs

    a, b, c = three_nodes(cli, tmp_path)
    b.ok("agent", "own", "bob")
    c.ok("agent", "own", "carol")
    for n in (b, c, a):  # na pulls last: it sees nb online
        n.ok("fed", "pull")
    _send_report(a, tmp_path)
    sha = hashlib.sha256(REPORT).hexdigest()
    conn = sqlite3.connect(a.path)
    try:
        assert remoteblobs.servable(conn, "nb", sha) == REPORT
        assert remoteblobs.servable(conn, "nc", sha) is None
        assert remoteblobs.servable(conn, "nb", "0" * 64) is None  # not here at all
    finally:
        conn.close()
    # nc forges an inbound message naming the hash, then asks na for the bytes: refused
    c.ok("send", "--to", "carol", "hi", "--as", "dave")
    with sqlite3.connect(c.path) as cc:
        mid = cc.execute("SELECT max(id) FROM messages").fetchone()[0]
        cc.execute(
            "INSERT INTO message_attachments (message_id, name, sha256, size, content_type,"
            " origin_node) VALUES (?, 'report.txt', ?, ?, 'text/plain', 'na')",
            (mid, sha, len(REPORT)),
        )
    r = c("attachment", "get", str(mid), "report.txt", "-o", str(tmp_path / "o"), "--as", "carol")
    assert r.exit_code == 7
    assert "holds no such file for this node" in json.loads(r.stderr)["error"]["message"]
    assert c.sql("SELECT count(*) FROM attachments") == [(0,)]


def test_compact_removes_a_fetched_blob_once_no_message_names_it(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    [(mid,)] = b.sql("SELECT message_id FROM message_attachments")
    b.ok("attachment", "get", str(mid), "report.txt", "-o", str(tmp_path / "o"), "--as", "bob")
    assert b.sql("SELECT count(*) FROM attachments") == [(1,)]
    assert b.ok("compact")["removed_attachments"] == 0  # its message is unread: kept
    b.ok("receive", "--as", "bob")
    assert b.ok("compact")["removed_attachments"] == 1  # the message went, and its file
    assert b.sql("SELECT count(*) FROM attachments") == [(0,)]
    assert b.sql("SELECT count(*) FROM message_attachments") == [(0,)]


def test_the_bridge_lists_a_file_not_fetched_yet_without_holding_the_message(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    inbox = tmp_path / "inbox"
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    r = b.cli(
        "--store", str(b.path), "--json", "bridge", "sync",
        env={"ACOMM_BRIDGE_INBOX_DIR": str(inbox)},
    )  # fmt: skip
    assert r.exit_code == 0, r.stderr
    [file] = (inbox / "bob").glob("*.json")
    doc = json.loads(file.read_text())
    assert doc["content"] == "see the file"
    assert [(f["name"], f["path"]) for f in doc["attachments"]] == [("report.txt", None)]


@pytest.mark.parametrize(
    "refs",
    [
        "report.txt",
        [{"name": "../x", "sha256": "a" * 64, "size": 1}],
        [{"name": "x", "sha256": "A" * 64, "size": 1}],
        [{"name": "x", "sha256": "a" * 63, "size": 1}],
        [{"name": "x", "sha256": "a" * 64, "size": -1}],
        [{"name": "x", "sha256": "a" * 64, "size": "1"}],
        [{"name": "x", "sha256": "a" * 64, "size": 1}] * 2,
        [{"name": "x", "sha256": "a" * 64, "size": 1, "contentType": 5}],
    ],
)
def test_a_peer_event_with_a_bad_file_reference_is_rejected(refs):
    env = _env({"attachments": refs})
    with pytest.raises(EventRejected, match="payload.attachments"):
        envelope.check(env)
    envelope.check(_env({"attachments": [{"name": "x", "sha256": "a" * 64, "size": 1}]}))


def _env(payload: dict) -> dict:
    return {
        "v": 1,
        "kind": "message",
        "eventId": "e1",
        "seq": 1,
        "sourceNodeId": "na",
        "toNodeId": "nb",
        "sourceAgentId": "alice",
        "toAgentId": "bob",
        "createdAt": "2026-01-01T00:00:00Z",
        "payload": {"type": "text", "content": "x", **payload},
    }


@pytest.mark.parametrize(
    "payload",
    [{"format": "html"}, {"subject": ""}, {"subject": "two\nlines"}, {"subject": "s" * 257}],
)
def test_a_peer_event_with_a_bad_format_or_subject_is_rejected(payload):
    ok = _env({"format": "markdown"})
    envelope.check(ok)
    with pytest.raises(EventRejected):
        envelope.check(_env(payload))


def test_a_fetch_from_a_slow_drip_origin_ends_at_the_peer_deadline(cli, tmp_path, monkeypatch):
    import time

    from test_federation_deadline import BOUND_S, SlowDrip

    a, b = linked_pair(cli, tmp_path)
    _send_report(a, tmp_path)
    b.ok("fed", "pull")
    [(mid,)] = b.sql("SELECT message_id FROM message_attachments")
    server = SlowDrip()
    server.thread.start()
    try:
        b.ok("peers", "add", "na", "--url", f"http://127.0.0.1:{server.port}")
        monkeypatch.setenv("ACOMM_FED_PEER_DEADLINE", "1500ms")
        started = time.monotonic()
        r = b("attachment", "get", str(mid), "report.txt", "-o", str(tmp_path / "o"), "--as", "bob")
        assert time.monotonic() - started < BOUND_S
    finally:
        server.stop()
    assert r.exit_code == 7, r.stderr
    err = json.loads(r.stderr)["error"]
    assert err["value"] == "na" and "federation.peer_deadline" in err["message"]
    assert b.sql("SELECT count(*) FROM attachments") == [(0,)]
