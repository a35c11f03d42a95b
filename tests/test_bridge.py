"""The mailbox bridge: inbox mirror files, Claude Code team inboxes,
response files, read state both ways, queue statistics, and path safety. Real directories."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM, query, sweep_stale_faketime
from freezegun import freeze_time

pytestmark = pytest.mark.cli


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    d = {k: tmp_path / "claude" / k for k in ("inbox", "outbox", "teams")}
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(d["inbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(d["outbox"]))
    monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(d["teams"]))
    return d


def _state(store: Path, mid: int, who: str) -> str:
    return query(
        store, "SELECT state FROM deliveries WHERE message_id = ? AND recipient = ?", mid, who
    )[0][0]


def _outbox(dirs: dict[str, Path], agent: str, name: str, body: object | str) -> Path:
    d = dirs["outbox"] / agent
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_text(body if isinstance(body, str) else json.dumps(body))
    return p


# ---------------------------------------------------------------- inbox mirror


def test_mirror_file_exists_while_unread_and_goes_on_receive(cli, store, team, dirs):
    """Positive path: the file carries the documented fields, is owner-only, and goes
    when acomm marks the delivery read."""
    with freeze_time("2025-01-02T03:04:05.678Z"):
        mid = int(cli.ok("send", "team", "go", "--as", "alice", "--priority", "high").stdout)
    f = dirs["inbox"] / "bob" / f"{mid}.json"
    doc = json.loads(f.read_text())
    assert doc == {
        "type": "message",
        "from": "alice",
        "content": "go",
        "message_type": "text",
        "metadata": {},
        "id": mid,
        "session_id": "bob",
        "timestamp": "2025-01-02T03:04:05.678Z",
        "channel": "team",
        "topic": None,
        "correlation_id": None,
        "priority": "high",
        "event": None,
    }
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(f.parent.stat().st_mode) == 0o700
    assert not (dirs["inbox"] / "alice").exists()  # the sender is not a recipient
    assert [p.name for p in f.parent.iterdir()] == [f.name]  # no temporary file left
    cli.ok("receive", "--as", "bob")
    assert not f.exists()


def test_ack_takes_the_file_away(cli, store, dirs):
    """Acknowledging (acomm marks the delivery done) removes the mirror too."""
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    mid = int(cli.ok("send", "jobs", "build", "--as", "alice").stdout)
    f = dirs["inbox"] / "bob" / f"{mid}.json"
    assert f.exists()
    cli.ok("ack", str(mid), "--as", "bob", "--status", "completed")
    assert not f.exists()
    assert (dirs["inbox"] / "alice").is_dir()  # the ack message is mirrored to alice


def test_deleting_the_file_marks_the_delivery_read(cli, store, team, dirs):
    """Read state the other way: the agent deletes the file, the next tick marks the
    delivery read, so `receive` no longer hands it over."""
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    (dirs["inbox"] / "bob" / f"{mid}.json").unlink()
    doc = cli.ok("tick", "--json").json()
    assert doc["bridge"]["marked_read"] == 1
    assert _state(store, mid, "bob") == "read"
    assert cli.ok("receive", "--as", "bob", "--json").json()["messages"] == []
    assert cli.ok("tick", "--json").json()["bridge"]["marked_read"] == 0  # idempotent


def test_broadcast_to_many_writes_one_file_each(cli, store, dirs):
    """One independent copy per recipient, in the order given."""
    out = cli.ok("send", "--to", "a,b,c", "start", "--as", "lead", "--json").json()
    for r, who in zip(out["results"], "abc", strict=True):
        assert (dirs["inbox"] / who / f"{r['id']}.json").exists()


def test_queue_stats_list_only_agents_with_pending_files(cli, store, team, dirs):
    """Pending inbox files per agent and the oldest one's age; agents with no file
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


@pytest.mark.process
def test_team_inbox_concurrent_writers_keep_everything(cli, store, dirs, monkeypatch):
    """Several processes sending to worker@crew at once lose no entry; foreign entries
    and unknown fields stay as they were."""
    monkeypatch.delenv("ACOMM_BRIDGE_INBOX_DIR")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    foreign = [
        {
            "from": "team-lead",
            "text": "hello",
            "timestamp": "2025-01-01T00:00:00Z",
            "read": False,
            "color": "blue",
            "extra": {"nested": [1, 2.5, None]},
        },
        {
            "from": "x",
            "text": "older",
            "timestamp": "2025-01-01T00:00:00Z",
            "read": True,
            "summary": "kept",
        },
    ]
    (inbox / "worker.json").write_text(json.dumps(foreign))
    env = {**os.environ}
    procs = [
        subprocess.Popen(
            [ACOMM, "send", "--to", "worker@crew", f"m{i}", "--as", f"sender{i}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(8)
    ]
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
    """Read state both ways: `read: true` in the native file marks the delivery read on
    the next tick; acomm reading a delivery sets its entry `read: true`."""
    cli.ok("channel", "join", "team", "--as", "alice", "w1@crew")
    cli.ok("channel", "join", "team", "--as", "alice", "w2@crew")
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    f1 = dirs["teams"] / "crew" / "inboxes" / "w1.json"
    entries = json.loads(f1.read_text())
    assert entries == [
        {
            "from": "alice",
            "text": "go",
            "timestamp": entries[0]["timestamp"],
            "read": False,
            "messageId": str(mid),
        }
    ]
    entries[0]["read"] = True
    f1.write_text(json.dumps(entries))
    assert cli.ok("tick", "--json").json()["bridge"]["marked_read"] == 1
    assert _state(store, mid, "w1@crew") == "read"
    cli.ok("receive", "--as", "w2@crew")
    assert (
        json.loads((dirs["teams"] / "crew" / "inboxes" / "w2.json").read_text())[0]["read"] is True
    )


def test_malformed_team_inbox_is_never_overwritten_and_is_retried(cli, store, team, dirs):
    """Negative path: a native inbox that is not a JSON array stays byte for byte;
    the send still succeeds, the failure is recorded, and a later tick appends once fixed."""
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    bad = b'[{"from": "x", "text": "half'
    (inbox / "w.json").write_bytes(bad)
    cli.ok("channel", "join", "team", "--as", "alice", "w@crew")
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
    """Read entries older than bridge.read_ttl (24 h) go; unread ones stay whatever
    their age; younger read ones stay."""
    cli.ok("channel", "join", "team", "--as", "alice", "w@crew")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    (inbox / "w.json").write_text(
        json.dumps(
            [
                {
                    "from": "x",
                    "text": "old read",
                    "timestamp": "2024-12-31T23:00:00Z",
                    "read": True,
                },
                {
                    "from": "x",
                    "text": "old unread",
                    "timestamp": "2024-01-01T00:00:00Z",
                    "read": False,
                },
            ]
        )
    )
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
    """Positive path: each response file goes through the pipeline (as the agent of
    its directory) and is deleted once its message is committed."""
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    job = int(cli.ok("send", "jobs", "build it", "--as", "alice").stdout)
    qid = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    files = [
        _outbox(dirs, "bob", "1.json", {"to": "carol", "content": "direct", "priority": "high"}),
        _outbox(
            dirs, "bob", "2.json", {"channel": "team", "content": "to all", "type": "notification"}
        ),
        _outbox(dirs, "bob", "3.json", {"reply_to": job, "content": "on it"}),
        _outbox(dirs, "bob", "4.json", {"ack": job, "status": "completed", "note": "done"}),
        _outbox(
            dirs, "bob", "5.json", {"correlation_id": qid["correlation_id"], "content": "green"}
        ),
    ]
    doc = cli.ok("tick", "--json").json()
    assert doc["bridge"]["ingested"] == 5 and doc["bridge"]["bad_files"] == 0
    assert not any(f.exists() for f in files)
    msgs = {
        m["content"]: m for m in cli.ok("messages", "--from", "bob", "--json").json()["messages"]
    }
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
    """Negative path: not JSON, or not valid, the file stays in place, is reported once
    (stderr, stats, doctor) and again only after it changes; fixed, it is ingested."""
    cli.ok("agent", "register", "carol")  # else the open directory notes registering her
    bad = _outbox(dirs, "bob", "r.json", "{not json")
    invalid = _outbox(dirs, "bob", "s.json", {"to": "carol"})  # no content
    r = cli("tick")
    assert r.exit_code == 0
    assert r.stderr.count("left in place") == 2 and str(bad) in r.stderr
    assert bad.read_text() == "{not json" and invalid.exists()
    for _ in range(2):  # unchanged: not reported again, by any later tick
        r = cli("tick", "--json")
        assert r.exit_code == 0 and r.stderr == "" and r.json()["bridge"]["bad_files"] == 0
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 2
    doc = cli.ok("doctor", "--json").json()
    assert doc["healthy"] is True and doc["notices"][0]["check"] == "bridge_bad_files"
    assert cli("doctor").exit_code == 0
    # changed but still bad: reported again, once, with the new reason
    invalid.write_text(json.dumps({"to": "carol", "content": "x", "colour": "red"}))
    r = cli("tick")
    assert r.stderr.count("left in place") == 1 and str(invalid) in r.stderr
    assert "unknown field 'colour'" in r.stderr
    assert "left in place" not in cli("tick").stderr
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
    cli.ok("channel", "join", "team", "--as", "alice", "w@crew")
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
    """Negative path: a mirror write that fails never fails the send; it is
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
    """With retries: an unacknowledged delivery made unread again by a retry gets its
    file back (and its team entry unread again, not a second entry)."""
    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--retry-backoff",
        "1s",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "w@crew")
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
        f"bridge:\n  inbox_dir: {tmp_path / 'in'}\n  read_ttl: 1h\n"
    )
    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    assert (tmp_path / "in" / "bob" / f"{mid}.json").exists()
    shown = {e["key"]: e for e in cli.ok("config", "show", "--json").json()["settings"]}
    assert shown["bridge.read_ttl"]["value"] == 3_600_000
    assert shown["bridge.teams_dir"]["value"] is None


def test_a_team_name_that_is_not_a_plain_name_is_never_a_path(cli, store, team, dirs):
    """Agent ids are validated before they become paths: a team part such as `.x` (a hidden
    directory) is refused on entry, and one already in a store from before that
    rule is refused as a path component: the mirror fails, the send does not."""
    r = cli("channel", "join", "team", "w@.x", "--as", "alice", "--json")
    assert r.exit_code == 3 and r.error["value"] == "w@.x"
    with sqlite3.connect(store) as db:  # written by an older acomm
        db.execute(
            "INSERT INTO participants (channel_id, agent, role, joined_at)"
            " SELECT id, 'w@.x', 'member', 0 FROM channels WHERE name = 'team'"
        )
    db.close()
    r = cli("send", "team", "go", "--as", "alice")
    assert r.exit_code == 0 and "failed" in r.stderr
    assert not (dirs["teams"] / ".x").exists()
    # both of its mirrors (inbox file and team entry) fail: the id is no longer valid at all
    assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 2


def test_a_deleted_inbox_directory_is_rewritten_not_taken_as_read(cli, store, team, dirs):
    """Only a missing file is a read: a missing directory brings the mirrors back."""
    import shutil

    mid = int(cli.ok("send", "team", "go", "--as", "alice").stdout)
    shutil.rmtree(dirs["inbox"])
    doc = cli.ok("tick", "--json").json()["bridge"]
    assert (doc["marked_read"], doc["written"]) == (0, 1)
    assert (dirs["inbox"] / "bob" / f"{mid}.json").exists()
    assert _state(store, mid, "bob") == "unread"


# ---------------------------------------------------------------- every way of sending


def test_every_way_of_sending_is_mirrored(cli, store, team, dirs):
    """Positive path: every command that sends (`send --batch`, `publish`, `query`,
    `respond`, as well as `send`) goes through the one pipeline, and its deliveries get their
    inbox files. Negative path: no way of sending skips the mirror, so an agent polling its
    directory never misses an unread delivery (one copy per recipient)."""
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    cli.ok("subscribe", "ci", "build.*", "--as", "bob")
    batch = cli.ok(
        "send",
        "--batch",
        "-",
        input=(
            '{"channel": "team", "from": "alice", "content": "b1"}\n'
            '{"to": "carol", "from": "alice", "content": "b2"}\n'
        ),
    ).stdout.split()
    pub = cli.ok("publish", "ci", "build.ok", "green", "--as", "ci").stdout.strip()
    asked = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    answer = cli.ok("respond", asked["correlation_id"], "fine", "--as", "bob").stdout.strip()
    for who, mid in (("bob", batch[0]), ("carol", batch[1]), ("bob", pub), ("alice", answer)):
        assert (dirs["inbox"] / who / f"{mid}.json").exists(), (who, mid)
    assert json.loads((dirs["inbox"] / "bob" / f"{pub}.json").read_text())["topic"] == "build.ok"
    _assert_files_match_unread(store, dirs)


def _assert_files_match_unread(store: Path, dirs: dict[str, Path]) -> None:
    """The invariant: an inbox file exists exactly while its delivery is unread."""
    unread = set(
        query(store, "SELECT recipient, message_id FROM deliveries WHERE state = 'unread'")
    )
    files = {(p.parent.name, int(p.stem)) for p in dirs["inbox"].glob("*/*.json")}
    assert files == unread


def test_the_record_carries_read_false_and_default_metadata(cli, store, team, dirs):
    """Positive path: each mirrored record has its id, sender, recipient (session_id),
    content, type, an ISO 8601 timestamp, metadata defaulting to {} (or as given) and, in a
    native inbox, `read: false`. Negative path: a record is never mirrored read while its
    delivery is unread, and unread ones are never pruned."""
    cli.ok("channel", "join", "team", "--as", "alice", "w@crew")
    plain = int(cli.ok("send", "team", "go", "--as", "alice", "--type", "command").stdout)
    meta = int(cli.ok("send", "team", "again", "--as", "alice", "--meta", "k=v").stdout)
    docs = [json.loads((dirs["inbox"] / "w@crew" / f"{m}.json").read_text()) for m in (plain, meta)]
    assert [
        (d["id"], d["from"], d["session_id"], d["message_type"], d["metadata"]) for d in docs
    ] == [(plain, "alice", "w@crew", "command", {}), (meta, "alice", "w@crew", "text", {"k": "v"})]
    assert all(d["timestamp"].endswith("Z") and "T" in d["timestamp"] for d in docs)
    with freeze_time("2030-01-01T00:00:00Z"):  # years later, still unread: nothing pruned
        cli.ok("tick")
    entries = json.loads((dirs["teams"] / "crew" / "inboxes" / "w.json").read_text())
    assert [(e["messageId"], e["read"]) for e in entries] == [
        (str(plain), False),
        (str(meta), False),
    ]


def test_mailbox_statistics_per_agent(cli, store, team, dirs):
    """Positive path: `stats` gives per agent the total, the unread count and the
    oldest unread message's age (0 with nothing unread). Negative path: reading them does not
    queue behind writers: `stats` answers while another process holds the write lock."""
    import sqlite3

    with freeze_time("2025-01-01T00:00:00Z"):
        cli.ok("send", "team", "one", "--as", "alice")
        cli.ok("send", "team", "two", "--as", "alice")
        cli.ok("send", "--to", "carol", "three", "--as", "alice")
    with freeze_time("2025-01-01T00:02:22Z"):
        cli.ok("receive", "--as", "carol")
        writer = sqlite3.connect(store)
        try:
            writer.execute("BEGIN IMMEDIATE")  # a writer in the middle of its transaction
            agents = {a["agent"]: a for a in cli.ok("stats", "--json").json()["agents"]}
        finally:
            writer.rollback()
            writer.close()
    assert {k: agents["bob"][k] for k in ("total", "unread", "oldest_unread_age_sec")} == {
        "total": 2,
        "unread": 2,
        "oldest_unread_age_sec": 142,
    }
    assert {k: agents["carol"][k] for k in ("total", "unread", "oldest_unread_age_sec")} == {
        "total": 1,
        "unread": 0,
        "oldest_unread_age_sec": 0,
    }


# ---------------------------------------------------------------- unread again


def test_deliveries_made_unread_by_other_commands_get_their_files_at_once(cli, store, dirs):
    """A delivery made unread by a command other than a new send (a queue released
    by `receive` or `ack`, a redelivery applied by `receive`, `deadletter replay`) has its
    inbox file right after that command, without waiting for a tick."""
    cli.ok("channel", "create", "q", "--as", "alice", "--max-pending", "1")
    cli.ok("channel", "join", "q", "--as", "alice", "bob")
    first = int(cli.ok("send", "q", "one", "--as", "alice").stdout)
    queued = int(cli.ok("send", "q", "two", "--as", "alice").stdout)
    assert _state(store, queued, "bob") == "queued"
    assert not (dirs["inbox"] / "bob" / f"{queued}.json").exists()
    cli.ok("receive", "--as", "bob", "--limit", "1")  # reads one, releases the other
    assert not (dirs["inbox"] / "bob" / f"{first}.json").exists()
    assert (dirs["inbox"] / "bob" / f"{queued}.json").exists()
    _assert_files_match_unread(store, dirs)

    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--max-pending",
        "1",
        "--ack-timeout",
        "10s",
        "--retry-backoff",
        "1s",
        "--max-retries",
        "1",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "carol")
    with freeze_time("2025-01-01T00:00:00Z"):
        job = int(cli.ok("send", "jobs", "build", "--as", "alice").stdout)
        held = int(cli.ok("send", "jobs", "test", "--as", "alice").stdout)
        cli.ok("receive", "--as", "carol")
        cli.ok("ack", str(job), "--as", "carol", "--status", "completed")  # releases `held`
        assert (dirs["inbox"] / "carol" / f"{held}.json").exists()
        _assert_files_match_unread(store, dirs)
        cli.ok("receive", "--as", "carol")
    with freeze_time("2025-01-01T00:00:12Z"):  # ack deadline and back-off passed
        cli.ok("receive", "--as", "carol", "--peek")  # applies the redelivery, reads nothing
        assert _state(store, held, "carol") == "unread"
        assert (dirs["inbox"] / "carol" / f"{held}.json").exists()
        _assert_files_match_unread(store, dirs)
        cli.ok("receive", "--as", "carol")
    with freeze_time("2025-01-01T00:00:30Z"):
        cli.ok("tick")  # no retry left: dead-lettered
        assert _state(store, held, "carol") == "dead"
        _assert_files_match_unread(store, dirs)
        cli.ok("deadletter", "replay", str(held), "--recipient", "carol")
        assert (dirs["inbox"] / "carol" / f"{held}.json").exists()
        _assert_files_match_unread(store, dirs)
    assert query(store, "SELECT count(*) FROM bridge_unread") == [(0,)]


def test_the_unread_queue_stays_bounded_without_a_bridge_process(cli, store, dirs, monkeypatch):
    """Commands run without the bridge configured (its triggers exist in the store) queue
    deliveries made unread, but a queued row leaves once its delivery is read: the table
    never holds more rows than there are unread deliveries; a configured sync drains it."""
    cli.ok("channel", "create", "q", "--as", "alice", "--max-pending", "1")
    cli.ok("channel", "join", "q", "--as", "alice", "bob")
    cli.ok("send", "q", "first", "--as", "alice")  # creates the bridge's triggers
    for name in ("INBOX", "OUTBOX", "TEAMS"):
        monkeypatch.delenv(f"ACOMM_BRIDGE_{name}_DIR")
    for i in range(5):
        cli.ok("send", "q", f"m{i}", "--as", "alice")
    for _ in range(5):
        cli.ok("receive", "--as", "bob", "--limit", "1")  # each releases the next one
        unread = query(store, "SELECT count(*) FROM deliveries WHERE state = 'unread'")[0][0]
        queued = query(store, "SELECT count(*) FROM bridge_unread")[0][0]
        assert queued <= unread == 1
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(dirs["inbox"]))
    cli.ok("tick")
    assert query(store, "SELECT count(*) FROM bridge_unread") == [(0,)]
    _assert_files_match_unread(store, dirs)


# ---------------------------------------------------------------- response files, more kinds


def test_reply_to_a_query_and_a_topic_on_a_pubsub_channel(cli, store, team, dirs):
    """`reply_to` a query becomes its response (to the asker, with its correlation id,
    acknowledging the query); a response file with a `topic` publishes on a pubsub channel to
    the matching subscriptions."""
    asked = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    cli.ok("subscribe", "ci", "build.#", "--as", "carol")
    cli.ok("subscribe", "ci", "deploy.#", "--as", "dave")
    cli.ok("subscribe", "ci", "alerts.#", "--as", "bob")  # a participant may publish
    _outbox(dirs, "bob", "a.json", {"reply_to": asked["id"], "content": "all green"})
    _outbox(dirs, "bob", "b.json", {"channel": "ci", "topic": "build.bob.ok", "content": "built"})
    assert cli.ok("tick", "--json").json()["bridge"]["ingested"] == 2
    msgs = {
        m["content"]: m for m in cli.ok("messages", "--from", "bob", "--json").json()["messages"]
    }
    answer = msgs["all green"]
    assert (answer["type"], answer["correlation_id"]) == ("response", asked["correlation_id"])
    assert [d["recipient"] for d in answer["deliveries"]] == ["alice"]
    built = msgs["built"]
    assert built["topic"] == "build.bob.ok"
    assert [d["recipient"] for d in built["deliveries"]] == ["carol"]
    assert (dirs["inbox"] / "carol" / f"{built['id']}.json").exists()
    assert not (dirs["inbox"] / "bob" / f"{asked['id']}.json").exists()  # answered: acked
    _assert_files_match_unread(store, dirs)


@pytest.mark.parametrize("refusal", ["paused channel", "not a participant"])
def test_a_response_file_refused_for_now_is_retried_until_it_goes_through(
    cli, store, team, dirs, refusal
):
    """A file refused because of the store's state (a paused channel, a sender not
    yet in the channel) is not bad: it stays, is reported once with that reason, and every
    tick tries it again; once the state changes it is ingested and the report goes."""
    if refusal == "paused channel":
        cli.ok("channel", "pause", "team", "--as", "alice")
        agent, fix = "bob", ("channel", "resume", "team", "--as", "alice")
    else:
        agent, fix = "carol", ("channel", "join", "team", "--as", "alice", "carol")
    f = _outbox(dirs, agent, "r.json", {"channel": "team", "content": "later"})
    r = cli("tick", "--json")
    assert r.exit_code == 0 and r.json()["bridge"]["deferred_files"] == 1
    assert r.stderr.count("not ingested yet") == 1 and str(f) in r.stderr
    assert "retried by every sync" in r.stderr and "left in place" not in r.stderr
    for _ in range(2):
        r = cli("tick", "--json")
        assert r.stderr == "" and r.json()["bridge"]["deferred_files"] == 0 and f.exists()
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 1
    notice = cli.ok("doctor", "--json").json()["notices"][0]
    assert notice["check"] == "bridge_bad_files" and "retried by every sync" in notice["detail"]
    cli.ok(*fix)
    r = cli("tick", "--json")
    assert r.json()["bridge"]["ingested"] == 1 and r.stderr == "" and not f.exists()
    assert cli.ok("stats", "--json").json()["bridge"]["bad_files"] == 0
    assert [
        m["content"] for m in cli.ok("messages", "--from", agent, "--json").json()["messages"]
    ] == ["later"]


# ---------------------------------------------------------------- permissions (real ones)


class Unprivileged:
    """`acomm` run as the unprivileged user `nobody`, on a store and bridge directories of
    its own: the tests run as root, for whom directory permissions block nothing, so a
    read-only directory only means something to another user (setpriv drops the privileges).
    `at` runs a command at a fixed time (faketime), as in tests/test_waiting.py."""

    def __init__(self, base: Path, prefix: list[str]) -> None:
        self.base, self.prefix = base, prefix
        self.dirs = {k: base / k for k in ("inbox", "outbox", "teams")}
        self.store = base / "store" / "store.acomm"
        self.env = {
            **os.environ,
            "ACOMM_STORE": str(self.store),
            **{f"ACOMM_BRIDGE_{k.upper()}_DIR": str(v) for k, v in self.dirs.items()},
        }

    def at(self, when: str, *args: str) -> subprocess.CompletedProcess[str]:
        clock = ["faketime", "-f", f"@2026-01-01 {when}"]
        for _ in range(3):
            r = subprocess.run(
                [*clock, *self.prefix, ACOMM, *map(str, args)],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=self.base,
                env={**self.env, "FAKETIME_DONT_RESET": "1"},
            )
            # libfaketime's constructor exits before acomm starts when the unprivileged child
            # cannot open the semaphore root's wrapper made (seen once in a few full runs: a
            # stale name reused), and the wrapper itself stops when a killed wrapper of the
            # same pid left its semaphore ("sem_open: File exists"): nothing ran, so running
            # it again, stale entries swept, is the same command
            if (
                "libfaketime: In ft_shm_init" not in r.stderr
                and "faketime: sem_open" not in r.stderr
            ):
                break
            sweep_stale_faketime()
        return r

    def ok(self, when: str, *args: str) -> subprocess.CompletedProcess[str]:
        r = self.at(when, *args)
        assert r.returncode == 0, (args, r.stderr)
        return r

    def own(self, path: Path) -> None:
        """Hand a path made by the test (as root) over to the unprivileged user."""
        if self.prefix:
            os.chown(path, 65534, 65534)


@pytest.fixture
def nobody():
    import shutil
    import tempfile

    if shutil.which("faketime") is None:
        pytest.skip("faketime is not installed (make test installs it)")
    prefix: list[str] = []
    if os.geteuid() == 0:  # permissions would not apply: drop to nobody
        if shutil.which("setpriv") is None:
            pytest.skip(
                "running as root without setpriv: a read-only directory blocks "
                "nothing for root, and privileges cannot be dropped"
            )
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    base = Path(tempfile.mkdtemp(prefix="acomm-nobody-"))  # not under root's private tmp
    try:
        os.chmod(base, 0o755)
        u = Unprivileged(base, prefix)
        u.own(base)
        probe = u.at("00:00:00", "init")
        if probe.returncode != 0:
            pytest.skip(f"acomm cannot run as an unprivileged user here: {probe.stderr}")
        yield u
    finally:
        for d in base.rglob("*"):
            if d.is_dir() and not d.is_symlink():
                os.chmod(d, 0o755)
        shutil.rmtree(base)


def _mkdirs(u: Unprivileged, *paths: Path) -> None:
    for p in paths:
        p.mkdir(parents=True, exist_ok=True)
        for level in [p, *p.parents]:
            if level == u.base:
                break
            u.own(level)


@pytest.mark.process
def test_a_read_only_inbox_directory_fails_the_mirror_until_writable(nobody):
    """Negative path with a real permission error: the inbox directory is
    read-only, so the mirror write fails; the send succeeds, the failure is recorded and
    shown as backlog, and a tick after the directory became writable writes the file."""
    u = nobody
    _mkdirs(u, u.dirs["inbox"])
    os.chmod(u.dirs["inbox"], 0o555)
    u.ok("00:00:00", "channel", "create", "team", "--as", "alice")
    u.ok("00:00:00", "channel", "join", "team", "--as", "alice", "bob")
    r = u.ok("00:00:00", "send", "team", "go", "--as", "alice")
    mid = int(r.stdout)
    assert "mirror write(s) failed" in r.stderr
    assert list(u.dirs["inbox"].iterdir()) == []
    assert json.loads(u.ok("00:00:01", "stats", "--json").stdout)["bridge"]["mirror_backlog"] == 1
    notice = json.loads(u.ok("00:00:01", "doctor", "--json").stdout)["notices"][0]
    assert notice["check"] == "bridge_mirrors" and "Permission" in notice["detail"]
    u.ok("00:00:05", "tick")  # still read-only: still failing, still recorded
    assert list(u.dirs["inbox"].iterdir()) == []
    os.chmod(u.dirs["inbox"], 0o755)
    assert json.loads(u.ok("00:02:00", "tick", "--json").stdout)["bridge"]["written"] == 1
    assert (u.dirs["inbox"] / "bob" / f"{mid}.json").exists()
    assert json.loads(u.ok("00:02:01", "stats", "--json").stdout)["bridge"]["mirror_backlog"] == 0


@pytest.mark.process
@pytest.mark.parametrize("kind", ["inbox", "team"])
def test_a_failed_mirror_removal_is_kept_and_retried(nobody, kind):
    """A mirror that cannot be taken away (its directory became read-only) stays tracked:
    reported, shown as backlog, and taken away by a later tick once possible, so the file
    does not outlive its unread delivery for good."""
    u = nobody
    agent = "bob" if kind == "inbox" else "w@crew"
    u.ok("00:00:00", "channel", "create", "team", "--as", "alice")
    u.ok("00:00:00", "channel", "join", "team", "--as", "alice", agent)
    mid = int(u.ok("00:00:00", "send", "team", "go", "--as", "alice").stdout)
    inbox_file = u.dirs["inbox"] / agent / f"{mid}.json"
    team_file = u.dirs["teams"] / "crew" / "inboxes" / "w.json"
    locked = inbox_file.parent if kind == "inbox" else team_file.parent
    assert inbox_file.exists() and (kind == "inbox" or team_file.exists())
    os.chmod(locked, 0o555)
    r = u.ok("00:00:10", "receive", "--as", agent)
    assert "mirror removal(s) failed" in r.stderr

    def still_there() -> bool:
        if kind == "inbox":
            return inbox_file.exists()
        return json.loads(team_file.read_text())[0]["read"] is False

    assert still_there()
    assert json.loads(u.ok("00:00:11", "stats", "--json").stdout)["bridge"]["mirror_backlog"] == 1
    detail = json.loads(u.ok("00:00:11", "doctor", "--json").stdout)["notices"][0]["detail"]
    assert ("removing: " if kind == "inbox" else "setting read: ") in detail
    u.ok("00:00:20", "tick")
    assert still_there()
    os.chmod(locked, 0o755)
    doc = json.loads(u.ok("00:02:00", "tick", "--json").stdout)["bridge"]
    assert doc["removed"] >= 1 and doc["remove_failed"] == 0
    assert not still_there()
    assert json.loads(u.ok("00:02:01", "stats", "--json").stdout)["bridge"]["mirror_backlog"] == 0


@pytest.mark.process
def test_a_response_file_that_cannot_be_deleted_is_never_sent_twice(nobody):
    """Every kind of response file (send, channel, reply, respond, ack) is committed
    with the record that it was ingested; its directory being read-only, the deletion fails:
    `tick` (and `tick --every`) carries on, reports it once, and later ticks only retry the
    deletion, never the send (as after a crash between the commit and the deletion)."""
    u = nobody
    u.ok("00:00:00", "channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    u.ok("00:00:00", "channel", "join", "jobs", "--as", "alice", "bob")
    job = int(u.ok("00:00:00", "send", "jobs", "build", "--as", "alice").stdout)
    chat = int(
        u.ok("00:00:00", "send", "jobs", "hello", "--type", "notification", "--as", "alice").stdout
    )
    asked = json.loads(
        u.ok("00:00:00", "query", "jobs", "status?", "--as", "alice", "--json").stdout
    )
    outbox = u.dirs["outbox"] / "bob"
    _mkdirs(u, outbox)
    files = {
        "1.json": {"to": "carol", "content": "direct"},
        "2.json": {"channel": "jobs", "content": "to all"},
        "3.json": {"reply_to": chat, "content": "hi back"},
        "4.json": {"correlation_id": asked["correlation_id"], "content": "green"},
        "5.json": {"ack": job, "status": "completed", "note": "done"},
    }
    for name, body in files.items():
        (outbox / name).write_text(json.dumps(body))
    os.chmod(outbox, 0o555)

    def sent() -> list[str]:
        out = json.loads(u.ok("00:00:30", "messages", "--from", "bob", "--json").stdout)
        return sorted(m["content"] for m in out["messages"])

    r = u.at("00:00:10", "tick", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["bridge"]["ingested"] == 5
    assert r.stderr.count("but not deleted") == 5
    assert sent() == ["direct", "done", "green", "hi back", "to all"]
    assert json.loads(u.ok("00:00:30", "stats", "--json").stdout)["bridge"]["bad_files"] == 5
    r = u.at("00:00:20", "tick", "--every", "100ms", "--max-seconds", "0.5", "--json")
    assert r.returncode == 0 and r.stderr == ""
    assert sent() == ["direct", "done", "green", "hi back", "to all"]  # nothing sent again
    assert sorted(p.name for p in outbox.iterdir()) == sorted(files)
    os.chmod(outbox, 0o755)
    doc = json.loads(u.ok("00:00:40", "tick", "--json").stdout)["bridge"]
    assert doc["ingested"] == 0 and list(outbox.iterdir()) == []
    assert sent() == ["direct", "done", "green", "hi back", "to all"]
    assert json.loads(u.ok("00:00:50", "stats", "--json").stdout)["bridge"]["bad_files"] == 0


# ------------------------------------ fsync before os.replace: a crash keeps old or new


def test_mirror_files_and_team_inboxes_are_synced_before_they_are_renamed(
    cli, store, team, dirs, monkeypatch
):
    """A power loss right after os.replace must not leave an empty file: the temporary file
    is fsynced before the rename and its directory after it. The store stays real; only the
    two system calls are watched (their order is the point)."""
    cli.ok("channel", "join", "team", "--as", "alice", "carol@crew")
    calls: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(src: str | Path, dst: str | Path) -> None:
        calls.append(("replace", os.path.realpath(src)))
        calls.append(("replaced", os.path.realpath(dst)))
        real_replace(src, dst)

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", fsync)
        m.setattr(os, "replace", replace)
        mid = int(cli.ok("send", "team", "hello", "--as", "alice").stdout)
    renamed = [(i, calls[i][1], calls[i + 1][1]) for i, c in enumerate(calls) if c[0] == "replace"]
    finals = {Path(dst) for _, _, dst in renamed}
    assert dirs["inbox"].resolve() / "bob" / f"{mid}.json" in finals
    assert dirs["teams"].resolve() / "crew" / "inboxes" / "carol.json" in finals
    for i, src, dst in renamed:
        assert ("fsync", src) in calls[:i], f"{src} renamed to {dst} before it was synced"
        assert ("fsync", str(Path(dst).parent)) in calls[i:], f"{Path(dst).parent} not synced"
