"""The mailbox bridge's outbox and directories: any JSON
object an agent writes is forwarded; what is not an object stays in place; the inbox and outbox
directories are made; team inboxes are locked without leaving lock files. Real directories,
through the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import query, snapshot

pytestmark = pytest.mark.cli


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    d = {k: tmp_path / "claude" / k for k in ("inbox", "outbox", "teams")}
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(d["inbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(d["outbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(d["teams"]))
    return d


def _outbox(dirs: dict[str, Path], agent: str, name: str, body: object | str) -> Path:
    d = dirs["outbox"] / agent
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(body if isinstance(body, str) else json.dumps(body))
    return p


def _from(cli, agent: str) -> list[dict]:
    return cli.ok("messages", "--from", agent, "--json").json()["messages"]


# ----------------------------------------------------------------------- any object


def test_any_object_is_a_reply_to_the_agents_latest_message(cli, store, team, dirs):
    """`{"result": "ok"}` no longer waits forever: its JSON text goes back to the sender of
    the latest message bob received, on that message's channel, like `reply_to`."""
    cli.ok("send", "team", "older", "--as", "alice")
    mid = int(cli.ok("send", "team", "build it", "--as", "alice").stdout)
    doc = {"result": "ok", "files": ["a.py", "b.py"], "type": "build-report"}
    f = _outbox(dirs, "bob", "resp-001.json", doc)
    r = cli.ok("tick", "--json")
    assert r.json()["bridge"]["ingested"] == 1 and r.json()["bridge"]["bad_files"] == 0
    assert not f.exists()
    [msg] = _from(cli, "bob")
    assert json.loads(msg["content"]) == doc  # the whole object, as it was written
    assert msg["channel"] == "team" and msg["type"] == "text"
    assert msg["metadata"]["reply_to"] == str(mid)
    assert [d["recipient"] for d in msg["deliveries"]] == ["alice"]
    got = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert [json.loads(m["content"]) for m in got] == [doc]


def test_an_object_answering_a_query_is_its_response(cli, store, team, dirs):
    q = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    _outbox(dirs, "bob", "r.json", {"status": "green"})
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 1
    [msg] = _from(cli, "bob")
    assert msg["type"] == "response" and msg["correlation_id"] == q["correlation_id"]
    assert json.loads(msg["content"]) == {"status": "green"}


def test_the_latest_message_is_not_an_ack_of_the_agents_own(cli, store, dirs, make_channel):
    """An acknowledgment of alice's own message is not something she answers: her object
    replies to carol's direct message, the latest she was sent."""
    make_channel("jobs", "alice", "bob", delivery="at-least-once")
    hello = int(cli.ok("send", "--to", "alice", "hello", "--as", "carol").stdout)
    job = cli.ok("send", "jobs", "build", "--as", "alice").stdout.strip()
    cli.ok("ack", job, "--as", "bob", "--status", "completed")  # an ack message to alice
    _outbox(dirs, "alice", "r.json", {"seen": True})
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 1
    [msg] = [m for m in _from(cli, "alice") if m["content"] == '{"seen": true}']
    assert msg["metadata"]["reply_to"] == str(hello)
    assert msg["channel"] == "_dm:alice:carol"
    assert [d["recipient"] for d in msg["deliveries"]] == ["carol"]


def test_a_default_channel_takes_every_object_naming_no_target(
    cli, store, team, dirs, make_channel, monkeypatch
):
    make_channel("results", "alice", "bob")
    cli.ok("send", "team", "build it", "--as", "alice")
    _outbox(dirs, "bob", "1.json", {"result": "ok"})
    # the flag of `bridge sync`
    assert (
        cli.ok("bridge", "sync", "--default-channel", "results", "--json").json()["ingested"] == 1
    )
    # the setting (environment or config.yaml), for tick
    monkeypatch.setenv("ACOMM_BRIDGE_DEFAULT_CHANNEL", "results")
    _outbox(dirs, "bob", "2.json", {"result": "still ok"})
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 1
    msgs = _from(cli, "bob")
    assert [m["channel"] for m in msgs] == ["results", "results"]
    assert sorted(json.loads(m["content"])["result"] for m in msgs) == ["ok", "still ok"]
    assert all("reply_to" not in (m["metadata"] or {}) for m in msgs)


def test_a_bad_default_channel_is_refused_naming_it(cli, store, team, dirs, monkeypatch):
    before = snapshot(store)
    r = cli("bridge", "sync", "--default-channel", "no such!", "--json")
    assert r.exit_code == 3 and "'no such!'" in r.error["message"]
    monkeypatch.setenv("ACOMM_BRIDGE_DEFAULT_CHANNEL", "no such!")
    r = cli("tick", "--json")
    assert r.exit_code == 3 and r.error["field"] == "bridge.default_channel"
    assert snapshot(store) == before


def test_an_object_with_nothing_to_answer_stays_until_it_can_go(
    cli, store, team, dirs, monkeypatch
):
    """bob has received nothing and no default channel is set: the file stays, reported once
    with the way out; it is never taken as an answer to a message that arrives later."""
    f = _outbox(dirs, "bob", "r.json", {"result": "ok"})
    r = cli.ok("tick")
    assert "left in place" in r.stderr and "bridge.default_channel" in r.stderr
    cli.ok("send", "team", "later", "--as", "alice")
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 0 and f.exists()
    assert _from(cli, "bob") == []
    monkeypatch.setenv("ACOMM_BRIDGE_DEFAULT_CHANNEL", "team")
    os.utime(f, ns=(1, 1))  # touched: taken as a new file
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 1 and not f.exists()
    [msg] = _from(cli, "bob")
    assert msg["channel"] == "team" and "reply_to" not in (msg["metadata"] or {})


@pytest.mark.parametrize("body", ["[1, 2]", '"ok"', "42", "null", "{not json", ""])
def test_what_is_not_a_json_object_stays_where_bad_files_stay(cli, store, team, dirs, body):
    """Negative path: left in place, reported once on stderr, counted in stats and
    listed by doctor; no message is made."""
    cli.ok("send", "team", "build it", "--as", "alice")
    f = _outbox(dirs, "bob", "r.json", body)
    r = cli.ok("tick", "--json")
    assert r.json()["bridge"]["bad_files"] == 1 and r.json()["bridge"]["ingested"] == 0
    assert str(f) in r.stderr and "left in place" in r.stderr
    assert f.read_text() == body
    assert _from(cli, "bob") == []
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 1
    notices = cli.ok("doctor", "--json").json()["notices"]
    assert notices[0]["check"] == "bridge_bad_files"


def test_acomms_schema_stays_strict_once_a_target_is_named(cli, store, team, dirs):
    """A target means acomm's fields: a stray field is a mistake to report, not an object to
    forward."""
    f = _outbox(dirs, "bob", "r.json", {"to": "carol", "content": "x", "result": "ok"})
    r = cli.ok("tick")
    assert "unknown field 'result'" in r.stderr and f.exists()
    assert _from(cli, "bob") == []


# ---------------------------------------------------------- directories and lock files


def test_the_inbox_and_outbox_directories_are_made(cli, store, dirs):
    """By any command that syncs, so an agent's first response file has a place to
    go before acomm ever wrote it a message; the team directory is Claude Code's."""
    assert not dirs["inbox"].exists() and not dirs["outbox"].exists()
    cli.ok("channel", "create", "team", "--as", "alice")  # a writing command
    assert dirs["inbox"].is_dir() and dirs["outbox"].is_dir()
    assert not dirs["teams"].exists()
    for d in (dirs["inbox"], dirs["outbox"]):
        d.rmdir()
    cli.ok("tick")
    assert dirs["inbox"].is_dir() and dirs["outbox"].is_dir()


def test_team_inboxes_leave_no_lock_files(cli, store, dirs, make_channel):
    """The team inbox writer locks the inboxes directory itself; the empty `NAME.lock` files
    earlier versions left are removed, anything else of that name is not ours and stays."""
    inboxes = dirs["teams"] / "crew" / "inboxes"
    inboxes.mkdir(parents=True)
    (inboxes / "worker.lock").write_bytes(b"")  # left by an earlier acomm
    (inboxes / "other.lock").write_text("someone else's")
    mid = cli.ok("send", "--to", "worker@crew", "go", "--as", "lead").stdout.strip()
    cli.ok("receive", "--as", "worker@crew")
    cli.ok("tick")
    assert sorted(p.name for p in inboxes.iterdir()) == ["other.lock", "worker.json"]
    [entry] = json.loads((inboxes / "worker.json").read_text())
    assert entry["messageId"] == mid and entry["read"] is True
    assert query(store, "SELECT state FROM deliveries WHERE recipient = 'worker@crew'") == [
        ("read",)
    ]
