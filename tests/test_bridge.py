"""The mailbox bridge (issue 6, spec 003): inbox mirror files, Claude Code team inboxes,
response files, read state both ways, queue statistics, and path safety. Real directories."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM, query
from freezegun import freeze_time


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    d = {k: tmp_path / "claude" / k for k in ("inbox", "outbox", "teams")}
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(d["inbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(d["outbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(d["teams"]))
    return d


@pytest.fixture
def team(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob")


def _state(store: Path, mid: int, who: str) -> str:
    return query(store, "SELECT state FROM deliveries WHERE message_id = ? AND recipient = ?",
                 mid, who)[0][0]


def _outbox(dirs: dict[str, Path], agent: str, name: str, body: object | str) -> Path:
    d = dirs["outbox"] / agent
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(body if isinstance(body, str) else json.dumps(body))
    return p


# ---------------------------------------------------------------- inbox mirror


def test_mirror_file_exists_while_unread_and_goes_on_receive(cli, store, team, dirs):
    """FR-3.3 positive path: the file carries the spec's fields, is owner-only, and goes
    when acomm marks the delivery read."""
    with freeze_time("2025-01-02T03:04:05.678Z"):
        mid = int(cli.ok("send", "team", "go", "--as", "alice", "--priority", "high").stdout)
    f = dirs["inbox"] / "bob" / f"{mid}.json"
    doc = json.loads(f.read_text())
    assert doc == {"type": "message", "from": "alice", "content": "go", "message_type": "text",
                   "metadata": {}, "id": mid, "session_id": "bob",
                   "timestamp": "2025-01-02T03:04:05.678Z", "channel": "team", "topic": None,
                   "correlation_id": None, "priority": "high"}
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(f.parent.stat().st_mode) == 0o700
    assert not (dirs["inbox"] / "alice").exists()  # the sender is not a recipient
    assert [p.name for p in f.parent.iterdir()] == [f.name]  # no temporary file left
    cli.ok("receive", "--as", "bob")
    assert not f.exists()


def test_ack_takes_the_file_away(cli, store, dirs):
    """FR-3.3: acknowledging (acomm marks the delivery done) removes the mirror too."""
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    cli.ok("channel", "join", "jobs", "bob")
    mid = int(cli.ok("send", "jobs", "build", "--as", "alice").stdout)
    f = dirs["inbox"] / "bob" / f"{mid}.json"
    assert f.exists()
    cli.ok("ack", str(mid), "--as", "bob", "--status", "completed")
    assert not f.exists()
    assert (dirs["inbox"] / "alice").is_dir()  # the ack message is mirrored to alice


def test_deleting_the_file_marks_the_delivery_read(cli, store, team, dirs):
    """FR-3.3 read state the other way: the agent deletes the file, the next tick marks the
    delivery read, so `receive` no longer hands it over."""
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    (dirs["inbox"] / "bob" / f"{mid}.json").unlink()
    doc = cli.ok("tick", "--json").json()
    assert doc["bridge"]["marked_read"] == 1
    assert _state(store, mid, "bob") == "read"
    assert cli.ok("receive", "--as", "bob", "--json").json()["messages"] == []
    assert cli.ok("tick", "--json").json()["bridge"]["marked_read"] == 0  # idempotent


def test_broadcast_to_many_writes_one_file_each(cli, store, dirs):
    """FR-3.13: one independent copy per recipient, in the order given."""
    out = cli.ok("send", "--to", "a,b,c", "start", "--as", "lead", "--json").json()
    for r, who in zip(out["results"], "abc", strict=True):
        assert (dirs["inbox"] / who / f"{r['id']}.json").exists()


def test_queue_stats_list_only_agents_with_pending_files(cli, store, team, dirs):
    """FR-3.12: pending inbox files per agent and the oldest one's age; agents with no file
    pending are left out."""
    with freeze_time("2025-01-01T00:00:00Z"):
        cli.ok("send", "team", "one", "--as", "alice")
    with freeze_time("2025-01-01T00:00:30Z"):
        cli.ok("send", "team", "two", "--as", "alice")
        cli.ok("send", "--to", "carol", "x", "--as", "alice")
    with freeze_time("2025-01-01T00:01:40Z"):
        cli.ok("receive", "--as", "carol")
        doc = cli.ok("stats", "--json").json()
    assert doc["queues"] == [{"agent": "bob", "pending_files": 2, "oldest_file_age_sec": 100}]
    assert doc["bridge"] == {"mirror_backlog": 0, "bad_files": 0}
    plain = cli.ok("stats").stdout
    assert "queue\tbob\t2\t" in plain


def test_without_a_bridge_nothing_changes(cli, store, team, tmp_path):
    """Off until configured: no directory appears and tick's document is unchanged."""
    cli.ok("send", "team", "go", "--as", "alice")
    assert "bridge" not in cli.ok("tick", "--json").json()
    assert not (tmp_path / "claude").exists()
    r = cli("bridge", "sync")
    assert r.exit_code == 2 and "not configured" in r.stderr


def test_bridge_sync_flags(cli, store, team, tmp_path):
    """Each setting is also a flag of `acomm bridge sync`."""
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    doc = cli.ok("bridge", "sync", "--inbox-dir", str(tmp_path / "in"), "--json").json()
    assert doc["written"] == 1
    assert (tmp_path / "in" / "bob" / f"{mid}.json").exists()


# ---------------------------------------------------------------- team inboxes


def test_team_inbox_concurrent_writers_keep_everything(cli, store, dirs, monkeypatch):
    """FR-3.4: several processes sending to worker@crew at once lose no entry; foreign entries
    and unknown fields stay as they were."""
    monkeypatch.delenv("ACOMM_BRIDGE_INBOX_DIR")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    foreign = [{"from": "team-lead", "text": "hello", "timestamp": "2025-01-01T00:00:00Z",
                "read": False, "color": "blue", "extra": {"nested": [1, 2.5, None]}},
               {"from": "x", "text": "older", "timestamp": "2025-01-01T00:00:00Z",
                "read": True, "summary": "kept"}]
    (inbox / "worker.json").write_text(json.dumps(foreign))
    env = {**os.environ}
    procs = [subprocess.Popen([ACOMM, "send", "--to", "worker@crew", f"m{i}", "--as",
                               f"sender{i}"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(8)]
    ids = set()
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        ids.add(out.strip())
    entries = json.loads((inbox / "worker.json").read_text())
    assert entries[:2] == foreign
    ours = entries[2:]
    assert {e["messageId"] for e in ours} == ids and len(ours) == 8
    assert all(e["read"] is False and e["text"].startswith("m") for e in ours)
    assert {e["from"] for e in ours} == {f"sender{i}" for i in range(8)}


def test_team_entry_read_true_marks_read_and_receive_sets_it(cli, store, team, dirs):
    """FR-3.4 read state both ways: `read: true` in the native file marks the delivery read on
    the next tick; acomm reading a delivery sets its entry `read: true`."""
    cli.ok("channel", "join", "team", "w1@crew")
    cli.ok("channel", "join", "team", "w2@crew")
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    f1 = dirs["teams"] / "crew" / "inboxes" / "w1.json"
    entries = json.loads(f1.read_text())
    assert entries == [{"from": "alice", "text": "go", "timestamp": entries[0]["timestamp"],
                        "read": False, "messageId": str(mid)}]
    entries[0]["read"] = True
    f1.write_text(json.dumps(entries))
    assert cli.ok("tick", "--json").json()["bridge"]["marked_read"] == 1
    assert _state(store, mid, "w1@crew") == "read"
    cli.ok("receive", "--as", "w2@crew")
    assert json.loads((dirs["teams"] / "crew" / "inboxes" / "w2.json").read_text())[0][
        "read"] is True


def test_malformed_team_inbox_is_never_overwritten_and_is_retried(cli, store, team, dirs):
    """FR-3.4 negative path: a native inbox that is not a JSON array stays byte for byte;
    the send still succeeds, the failure is recorded, and a later tick appends once fixed."""
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    bad = b'[{"from": "x", "text": "half'
    (inbox / "w.json").write_bytes(bad)
    cli.ok("channel", "join", "team", "w@crew")
    with freeze_time("2025-01-01T00:00:00Z"):
        r = cli("send", "team", "go", "--as", "alice")
        assert r.exit_code == 0 and "mirror write(s) failed" in r.stderr
        mid = int(r.stdout)
        assert (inbox / "w.json").read_bytes() == bad
        assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 1
        doc = cli.ok("doctor", "--json").json()
        assert doc["healthy"] is True
        assert [n["check"] for n in doc["notices"]] == ["bridge_mirrors"]
    with freeze_time("2025-01-01T00:00:05Z"):
        cli.ok("tick")
        assert (inbox / "w.json").read_bytes() == bad  # still broken: still untouched
        (inbox / "w.json").write_text('[{"from": "x", "text": "fixed"}]')
    with freeze_time("2025-01-01T00:01:30Z"):
        assert cli.ok("tick", "--json").json()["bridge"]["written"] == 1
        entries = json.loads((inbox / "w.json").read_text())
        assert entries[0] == {"from": "x", "text": "fixed"}
        assert [e["messageId"] for e in entries[1:]] == [str(mid)]
        assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 0
        cli.ok("tick")
        assert len(json.loads((inbox / "w.json").read_text())) == 2  # never written twice


def test_read_entries_past_the_ttl_are_pruned_unread_never(cli, store, team, dirs):
    """FR-3.8: read entries older than bridge.read_ttl (24 h) go; unread ones stay whatever
    their age; younger read ones stay."""
    cli.ok("channel", "join", "team", "w@crew")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    (inbox / "w.json").write_text(json.dumps([
        {"from": "x", "text": "old read", "timestamp": "2024-12-31T23:00:00Z", "read": True},
        {"from": "x", "text": "old unread", "timestamp": "2024-01-01T00:00:00Z",
         "read": False},
    ]))
    with freeze_time("2025-01-02T00:00:00Z"):
        mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
        cli.ok("receive", "--as", "w@crew")  # our entry becomes read
        assert cli.ok("tick", "--json").json()["bridge"]["pruned"] == 1
    texts = [e["text"] for e in json.loads((inbox / "w.json").read_text())]
    assert texts == ["old unread", "go"]
    with freeze_time("2025-01-03T00:00:01Z"):
        assert cli.ok("tick", "--json").json()["bridge"]["pruned"] == 1
    entries = json.loads((inbox / "w.json").read_text())
    assert [e["text"] for e in entries] == ["old unread"]
    assert str(mid) not in {e.get("messageId") for e in entries}


# ---------------------------------------------------------------- response files


def test_response_files_become_messages_replies_and_acks(cli, store, team, dirs):
    """FR-3.9 positive path: each response file goes through the pipeline (as the agent of
    its directory) and is deleted once its message is committed."""
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    cli.ok("channel", "join", "jobs", "bob")
    job = int(cli.ok("send", "jobs", "build it", "--as", "alice").stdout)
    qid = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    files = [
        _outbox(dirs, "bob", "1.json", {"to": "carol", "content": "direct", "priority": "high"}),
        _outbox(dirs, "bob", "2.json", {"channel": "team", "content": "to all",
                                        "type": "notification"}),
        _outbox(dirs, "bob", "3.json", {"reply_to": job, "content": "on it"}),
        _outbox(dirs, "bob", "4.json", {"ack": job, "status": "completed", "note": "done"}),
        _outbox(dirs, "bob", "5.json", {"correlation_id": qid["correlation_id"],
                                        "content": "green"}),
    ]
    doc = cli.ok("tick", "--json").json()
    assert doc["bridge"]["ingested"] == 5 and doc["bridge"]["bad_files"] == 0
    assert not any(f.exists() for f in files)
    msgs = {m["content"]: m for m in cli.ok("messages", "--from", "bob", "--json").json()[
        "messages"]}
    assert msgs["direct"]["channel"] == "_dm:bob:carol" and msgs["direct"]["priority"] == "high"
    assert msgs["to all"]["type"] == "notification"
    assert msgs["on it"]["metadata"]["reply_to"] == str(job)
    assert [d["recipient"] for d in msgs["on it"]["deliveries"]] == ["alice"]
    assert msgs["done"]["type"] == "acknowledgment"
    assert msgs["green"]["type"] == "response"
    assert msgs["green"]["correlation_id"] == qid["correlation_id"]
    shown = cli.ok("show", str(job), "--json").json()
    assert shown["deliveries"][0]["ack_status"] == "completed"
    # and the new messages were mirrored in the same tick
    assert (dirs["inbox"] / "carol" / f"{msgs['direct']['id']}.json").exists()


def test_a_bad_response_file_stays_and_is_reported_once(cli, store, team, dirs):
    """FR-3.9 negative path: not JSON, or not valid, the file stays in place, is reported once
    (stderr, stats, doctor) and again only after it changes; fixed, it is ingested."""
    bad = _outbox(dirs, "bob", "r.json", "{not json")
    invalid = _outbox(dirs, "bob", "s.json", {"to": "carol"})  # no content
    r = cli("tick")
    assert r.exit_code == 0
    assert r.stderr.count("left in place") == 2 and str(bad) in r.stderr
    assert bad.read_text() == "{not json" and invalid.exists()
    assert "left in place" not in cli.ok("tick").stdout + cli("tick").stderr
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 2
    doc = cli.ok("doctor", "--json").json()
    assert doc["healthy"] is True and doc["notices"][0]["check"] == "bridge_bad_files"
    assert cli("doctor").exit_code == 0
    bad.write_text('{"to": "carol", "content": "fixed now"}')
    os.utime(bad, ns=(1, 1))
    r = cli("tick", "--json")
    assert r.json()["bridge"]["ingested"] == 1 and not bad.exists()
    assert r.stderr == ""
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 1


# ---------------------------------------------------------------- safety and failures


def test_symlinks_and_dotdot_are_refused(cli, store, team, dirs, tmp_path):
    """Never follow a symbolic link out of a bridge directory; `..` never becomes a path."""
    outside = tmp_path / "outside"
    outside.mkdir()
    dirs["inbox"].mkdir(parents=True)
    (dirs["inbox"] / "bob").symlink_to(outside)
    r = cli("send", "team", "go", "--as", "alice")
    assert r.exit_code == 0
    assert list(outside.iterdir()) == []
    assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 1
    # a team inbox file that is a link to a file elsewhere is neither read nor replaced
    secret = outside / "secret.json"
    secret.write_text("[]")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    (inbox / "w.json").symlink_to(secret)
    cli.ok("channel", "join", "team", "w@crew")
    cli.ok("send", "team", "again", "--as", "alice")
    assert secret.read_text() == "[]" and (inbox / "w.json").is_symlink()
    # a response file that is a link is not ingested, and its target stays
    target = outside / "resp.json"
    target.write_text(json.dumps({"to": "carol", "content": "smuggled"}))
    (dirs["outbox"] / "bob").mkdir(parents=True)
    (dirs["outbox"] / "bob" / "x.json").symlink_to(target)
    r = cli("tick", "--json")
    assert r.json()["bridge"]["ingested"] == 0 and "left in place" in r.stderr
    assert target.exists()
    # agent ids with a path in them never get that far
    assert cli("send", "--to", "../etc", "x", "--as", "alice").exit_code == 3
    assert cli("send", "--to", "a/b", "x", "--as", "alice").exit_code == 3
    assert not (dirs["inbox"].parent / "etc").exists()


def test_a_failing_mirror_is_retried_until_it_succeeds(cli, store, team, dirs):
    """FR-3.3/FR-3.10 negative path: a mirror write that fails never fails the send; it is
    recorded, shown as backlog, and written by a later tick once the path is usable (tests
    run as root, so the blocked path is a regular file where the agent's directory goes)."""
    dirs["inbox"].mkdir(parents=True)
    (dirs["inbox"] / "bob").write_text("in the way")
    with freeze_time("2025-01-01T00:00:00Z"):
        r = cli("send", "team", "go", "--as", "alice")
        assert r.exit_code == 0
        mid = int(r.stdout)
        assert _state(store, mid, "bob") == "unread"
        assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 1
    (dirs["inbox"] / "bob").unlink()
    with freeze_time("2025-01-01T00:02:00Z"):
        doc = cli.ok("tick", "--json").json()
    assert doc["bridge"]["written"] == 1
    assert (dirs["inbox"] / "bob" / f"{mid}.json").exists()
    assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 0
    assert query(store, "SELECT state, attempts FROM bridge_mirrors") == [("written", 0)]


def test_a_redelivered_message_is_mirrored_again(cli, store, dirs):
    """FR-3.3 with retries: an unacknowledged delivery made unread again by a retry gets its
    file back (and its team entry unread again, not a second entry)."""
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once",
           "--ack-timeout", "10s", "--retry-backoff", "1s")
    cli.ok("channel", "join", "jobs", "w@crew")
    with freeze_time("2025-01-01T00:00:00Z"):
        mid = int(cli.ok("send", "jobs", "build", "--as", "alice").stdout)
        cli.ok("receive", "--as", "w@crew")
    f = dirs["inbox"] / "w@crew" / f"{mid}.json"
    team = dirs["teams"] / "crew" / "inboxes" / "w.json"
    assert not f.exists() and json.loads(team.read_text())[0]["read"] is True
    with freeze_time("2025-01-01T00:00:12Z"):
        r = cli.ok("tick")
    assert "redelivered=1" in r.stdout and "bridge_written=2" in r.stdout
    assert f.exists()
    entries = json.loads(team.read_text())
    assert len(entries) == 1 and entries[0]["read"] is False


def test_bridge_settings_from_the_config_file(cli, store, team, tmp_path):
    """`bridge:` in config.yaml turns the bridge on (flag > environment > file > default)."""
    (store.parent / "config.yaml").write_text(
        f"bridge:\n  inbox_dir: {tmp_path / 'in'}\n  read_ttl: 1h\n")
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    assert (tmp_path / "in" / "bob" / f"{mid}.json").exists()
    shown = {e["key"]: e for e in cli.ok("config", "show", "--json").json()["settings"]}
    assert shown["bridge.read_ttl"]["value"] == 3_600_000
    assert shown["bridge.teams_dir"]["value"] is None


def test_a_team_name_that_is_not_a_plain_name_is_never_a_path(cli, store, team, dirs):
    """Agent ids are validated before they become paths; a team part such as `.x` (a hidden
    directory) is refused as a path component: the mirror fails, the send does not."""
    cli.ok("channel", "join", "team", "w@.x")
    r = cli("send", "team", "go", "--as", "alice")
    assert r.exit_code == 0 and "failed" in r.stderr
    assert not (dirs["teams"] / ".x").exists()
    assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 1


def test_a_deleted_inbox_directory_is_rewritten_not_taken_as_read(cli, store, team, dirs):
    """Only a missing file is a read: a missing directory brings the mirrors back."""
    import shutil

    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    shutil.rmtree(dirs["inbox"])
    doc = cli.ok("tick", "--json").json()["bridge"]
    assert (doc["marked_read"], doc["written"]) == (0, 1)
    assert (dirs["inbox"] / "bob" / f"{mid}.json").exists()
    assert _state(store, mid, "bob") == "unread"
