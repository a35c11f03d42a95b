"""The notification event on a message: `send`/`publish` options and a batch line's `event`
object, checked (exit 3 naming the field and, for a closed list, the allowed values; the
store unchanged), stored with the message, shown under `event` in every message document,
filtered on by `messages`/`receive`, and deduplicated by event id as a dedupe key is."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import query, snapshot
from freezegun import freeze_time
from registered import register

from acomm_cli.engine import events, sending
from acomm_cli.model import EVENT_TYPES, SendRequest

pytestmark = pytest.mark.cli

T0 = "2026-02-26T12:30:15Z"


@pytest.fixture
def office(team: Path) -> Path:
    """alice's `team` with bob (agents) and carol, a human, in it too."""
    register(team, "alice", "bob")
    register(team, "carol", kind="human")
    return team


def _send(cli, *args: str) -> int:
    return int(cli.ok("send", *args).stdout)


def _doc(cli, mid: int) -> dict:
    return cli.ok("--json", "show", str(mid)).json()


def test_a_send_stores_the_event_and_every_document_shows_it(cli, office):
    with freeze_time(T0):
        mid = _send(
            cli,
            "team",
            "I agree, but the causal link needs an experiment",
            "--as",
            "alice",
            "--event-type",
            "comment.replied",
            "--target",
            "bob",
            "--thread",
            "101",
            "--comment",
            "8801",
            "--parent-comment",
            "8799",
            "--depth",
            "2",
            "--language",
            "zh",
            "--action-hint",
            "consider_reply",
            "--occurred-at",
            "2026-02-26T12:30:00Z",
            "--event-id",
            "evt_20260226_9f3a1c",
        )
    expected = {
        "event_id": "evt_20260226_9f3a1c",
        "event_type": "comment.replied",
        "occurred_at": "2026-02-26T12:30:00.000Z",
        "actor": "alice",  # the sender, when not given
        "target": "bob",
        "target_kind": "agent",
        "thread_id": "101",
        "comment_id": "8801",
        "parent_comment_id": "8799",
        "depth": 2,
        "language": "zh",
        "action_hint": "consider_reply",
        "content_preview": "I agree, but the causal link needs an experiment",
    }
    assert _doc(cli, mid)["event"] == expected
    listed = cli.ok("--json", "messages").json()["messages"]
    assert [m["event"] for m in listed] == [expected]
    received = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
    assert [m["event"] for m in received] == [expected]


def test_a_message_without_an_event_shows_event_null(cli, office):
    mid = _send(cli, "team", "plain", "--as", "alice")
    assert _doc(cli, mid)["event"] is None
    assert query(office, "SELECT count(*) FROM message_events") == [(0,)]


def test_the_target_kind_is_the_directory_kind_at_send_time(cli, office):
    first = _send(
        cli, "team", "x", "--as", "alice", "--event-type", "mention.created", "--target", "carol"
    )
    register(office, "carol", kind="agent")
    second = _send(
        cli, "team", "y", "--as", "alice", "--event-type", "mention.created", "--target", "carol"
    )
    assert _doc(cli, first)["event"]["target_kind"] == "human"
    assert _doc(cli, second)["event"]["target_kind"] == "agent"


def test_thread_created_needs_only_the_thread(cli, office):
    mid = _send(
        cli,
        "team",
        "new thread",
        "--as",
        "alice",
        "--event-type",
        "thread.created",
        "--thread",
        "t1",
    )
    ev = _doc(cli, mid)["event"]
    assert (ev["event_type"], ev["thread_id"], ev["target"]) == ("thread.created", "t1", None)


REFUSALS = [
    (["--event-type", "reply"], "event_type", list(EVENT_TYPES)),
    (["--thread", "101"], "event_type", list(EVENT_TYPES)),  # a field without its type
    (["--depth", "2"], "event_type", list(EVENT_TYPES)),
    (["--event-type", "thread.created"], "thread_id", None),
    (
        ["--event-type", "like.created", "--depth", "2"],
        "depth",
        ["comment.created", "comment.replied"],
    ),
    (["--event-type", "comment.created", "--depth", "4"], "depth", [1, 2, 3]),
    (["--event-type", "comment.created", "--depth", "two"], "depth", [1, 2, 3]),
    (
        ["--event-type", "like.created", "--action-hint", "reply"],
        "action_hint",
        ["notify_only", "consider_reply", "must_reply"],
    ),
    (["--event-type", "like.created", "--language", "english!"], "language", None),
    (["--event-type", "like.created", "--occurred-at", "yesterday"], "occurred_at", None),
    (["--event-type", "like.created", "--occurred-at", "+2d"], "occurred_at", None),
    (["--event-type", "like.created", "--thread", "a\tb"], "thread_id", None),
    (["--event-type", "like.created", "--event-id", "x" * 129], "event_id", None),
    (["--event-type", "like.created", "--target", "not a name"], "target", None),
]


@pytest.mark.parametrize(("args", "field", "allowed"), REFUSALS)
def test_a_bad_event_field_is_refused_naming_it_and_nothing_is_written(
    cli, office, args, field, allowed
):
    before = snapshot(office)
    r = cli("--json", "send", "team", "hi", "--as", "alice", *args)
    assert r.exit_code == 3, r.stderr
    assert r.error["field"] == field
    if allowed is not None:
        assert r.error["allowed"] == allowed
        assert all(str(a) in r.error["message"] for a in allowed)
    assert snapshot(office) == before


def test_an_unknown_target_on_a_strict_store_is_refused_as_to_is(cli, office, strict):
    before = snapshot(office)
    r = cli(
        "--json",
        "send",
        "team",
        "hi",
        "--as",
        "alice",
        "--event-type",
        "mention.created",
        "--target",
        "bobb",
    )
    assert (r.exit_code, r.error["field"]) == (4, "target")
    assert "bob" in r.error["message"]  # the closest registered name is suggested
    assert snapshot(office) == before


def test_an_unknown_target_on_an_open_store_is_registered(cli, office):
    _send(cli, "team", "hi", "--as", "alice", "--event-type", "mention.created", "--target", "dave")
    assert query(office, "SELECT kind FROM agents WHERE name = 'dave'") == [("agent",)]


def test_the_same_event_id_twice_is_one_message(cli, office):
    args = ("--as", "alice", "--event-type", "mention.created", "--event-id", "e-1")
    first = _send(cli, "team", "one", *args)
    again = cli.ok("--json", "send", "team", "two", *args).json()
    assert again["id"] == first and again["deduplicated"] is True
    assert query(office, "SELECT count(*) FROM messages") == [(1,)]
    # per channel, as a dedupe key: the same id on another channel is another event
    other = _send(cli, "--to", "bob", "three", *args)
    assert other != first


def test_an_event_id_repeated_in_one_batch_is_one_message(cli, office, tmp_path):
    line = {
        "channel": "team",
        "from": "alice",
        "content": "hi",
        "event": {"event_type": "like.created", "event_id": "b-1"},
    }
    f = tmp_path / "b.jsonl"
    f.write_text(json.dumps(line) + "\n" + json.dumps({**line, "content": "again"}) + "\n")
    r = cli.ok("--json", "send", "--batch", str(f)).json()
    ids = [x["id"] for x in r["results"]] if isinstance(r, dict) else [x["id"] for x in r]
    assert ids[0] == ids[1]
    assert query(office, "SELECT count(*) FROM message_events") == [(1,)]


def test_a_batch_line_carries_an_event_and_a_bad_one_names_its_line(cli, office, tmp_path):
    ok = {
        "channel": "team",
        "from": "alice",
        "content": "hi",
        "event": {"event_type": "comment.created", "depth": 1, "thread_id": 7},
    }
    f = tmp_path / "b.jsonl"
    f.write_text(json.dumps(ok) + "\n")
    cli.ok("send", "--batch", str(f))
    assert query(office, "SELECT event_type, depth, thread_id FROM message_events") == [
        ("comment.created", 1, "7")
    ]
    before = snapshot(office)
    bad = {**ok, "event": {"event_type": "comment.created", "depth": 9}}
    f.write_text(json.dumps(ok) + "\n" + json.dumps(bad) + "\n")
    r = cli("--json", "send", "--batch", str(f))
    assert (r.exit_code, r.error["field"], r.error["line"]) == (3, "depth", 2)
    assert snapshot(office) == before
    f.write_text(json.dumps({**ok, "event": {"event_type": "like.created", "trace": 1}}) + "\n")
    r = cli("--json", "send", "--batch", str(f))
    assert (r.exit_code, r.error["field"]) == (3, "trace")


def test_event_options_with_batch_are_a_usage_error(cli, office, tmp_path):
    f = tmp_path / "b.jsonl"
    f.write_text("")
    r = cli("send", "--batch", str(f), "--event-type", "like.created")
    assert r.exit_code == 2


def test_messages_and_receive_filter_on_the_event(cli, office):
    a = _send(
        cli,
        "team",
        "a",
        "--as",
        "alice",
        "--event-type",
        "mention.created",
        "--thread",
        "t1",
        "--target",
        "bob",
    )
    b = _send(
        cli,
        "team",
        "b",
        "--as",
        "alice",
        "--event-type",
        "like.created",
        "--thread",
        "t2",
        "--actor",
        "carol",
    )
    c = _send(cli, "team", "c", "--as", "alice")

    def ids(*args: str) -> list[int]:
        return [m["id"] for m in cli.ok("--json", *args).json()["messages"]]

    assert ids("messages") == [c, b, a]
    assert ids("messages", "--event-type", "mention.created") == [a]
    assert ids("messages", "--thread", "t2") == [b]
    assert ids("messages", "--actor", "alice") == [a]
    assert ids("messages", "--actor", "carol", "--event-type", "mention.created") == []
    assert ids("receive", "--as", "bob", "--peek", "--event-type", "like.created") == [b]
    assert ids("receive", "--as", "bob", "--peek", "--thread", "t1") == [a]
    r = cli("--json", "messages", "--event-type", "liked")
    assert (r.exit_code, r.error["field"]) == (3, "event_type")


def test_publish_carries_an_event(cli, make_channel):
    make_channel("ci", "ci", type="pubsub")
    cli.ok("subscribe", "ci", "build.#", "--as", "bob")
    mid = int(
        cli.ok(
            "publish",
            "ci",
            "build.x",
            "done",
            "--as",
            "ci",
            "--event-type",
            "agent.action.feedback",
        ).stdout
    )
    assert _doc(cli, mid)["event"]["event_type"] == "agent.action.feedback"


def test_the_preview_is_cut_at_the_configured_length(cli, office, monkeypatch):
    body = "é" * 10 + "x" * 600
    monkeypatch.setenv("ACOMM_EVENTS_PREVIEW_CHARS", "200")
    mid = _send(cli, "team", body, "--as", "alice", "--event-type", "like.created")
    assert _doc(cli, mid)["event"]["content_preview"] == body[:200]
    assert _doc(cli, mid)["content"] == body
    monkeypatch.setenv("ACOMM_EVENTS_PREVIEW_CHARS", "501")
    r = cli("--json", "send", "team", "x", "--as", "alice", "--event-type", "like.created")
    assert (r.exit_code, r.error["field"]) == (3, "events.preview_chars")


def test_the_inbox_file_and_team_inbox_carry_the_event(cli, office, tmp_path, monkeypatch):
    inbox, teams = tmp_path / "inbox", tmp_path / "teams"
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(inbox))
    monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(teams))
    cli.ok("channel", "join", "team", "bob@crew", "--as", "alice")
    mid = _send(
        cli, "team", "look", "--as", "alice", "--event-type", "mention.created", "--target", "bob"
    )
    doc = json.loads((inbox / "bob" / f"{mid}.json").read_text())
    assert doc["event"]["event_type"] == "mention.created"
    assert doc["event"]["content_preview"] == "look"
    entries = json.loads(next(teams.rglob("*.json")).read_text())
    assert entries[-1]["event"]["target"] == "bob"


# ---------------------------------------------------------------- the engine directly


def test_a_send_without_an_event_runs_no_event_statement(office):
    conn = sqlite3.connect(office, isolation_level=None)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        sending.send(conn, SendRequest(sender="alice", content="hi", channel="team"), 1_000)
        plain = list(seen)
        seen.clear()
        sending.send(
            conn,
            SendRequest(
                sender="alice", content="hi", channel="team", event={"event_type": "like.created"}
            ),
            2_000,
        )
    finally:
        conn.close()
    assert not any("message_events" in s for s in plain)
    assert any("INSERT INTO message_events" in s for s in seen)


def test_event_of_reads_a_messages_event(office):
    conn = sqlite3.connect(office, isolation_level=None)
    try:
        req = SendRequest(
            sender="alice",
            content="hi",
            channel="team",
            event={"event_type": "comment.replied", "target": "bob", "depth": 1},
        )
        mid = sending.send(conn, req, 5_000).id
        plain = sending.send(conn, SendRequest(sender="alice", content="x", channel="team"), 6_000)
        ev = events.event_of(conn, mid)
        assert ev is not None
        assert (ev.event_type, ev.target, ev.target_kind, ev.depth, ev.occurred_at) == (
            "comment.replied",
            "bob",
            "agent",
            1,
            5_000,
        )
        assert events.event_of(conn, plain.id) is None
        assert events.event_of(conn, 999) is None
    finally:
        conn.close()


def test_the_events_dataset_carries_each_event(cli, office, tmp_path):
    mid = _send(
        cli,
        "team",
        "look",
        "--as",
        "alice",
        "--event-type",
        "comment.created",
        "--target",
        "carol",
        "--depth",
        "1",
        "--thread",
        "9",
    )
    _send(cli, "team", "plain", "--as", "alice")
    out = tmp_path / "export"
    doc = cli.ok("export", out, "--format", "jsonl", "--json").json()
    assert doc["datasets"]["events"] == 1
    rows = [
        json.loads(line)
        for p in (out / "events").rglob("*.jsonl")
        for line in p.read_text().splitlines()
    ]
    assert [
        (r["message_id"], r["event_type"], r["target_kind"], r["depth"], r["content_preview"])
        for r in rows
    ] == [(mid, "comment.created", "human", 1, "look")]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset_version"] == 6


def test_a_bridge_response_file_carries_an_event(cli, office, tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(outbox))
    (outbox / "bob").mkdir(parents=True)
    doc = {
        "channel": "team",
        "content": "done",
        "event": {"event_type": "agent.action.feedback", "action_hint": "notify_only"},
    }
    (outbox / "bob" / "r1.json").write_text(json.dumps(doc))
    cli.ok("tick")
    assert query(
        office,
        "SELECT m.sender, e.event_type, e.action_hint FROM message_events e"
        " JOIN messages m ON m.id = e.message_id",
    ) == [("bob", "agent.action.feedback", "notify_only")]


def test_show_piped_prints_the_event_line_only_when_there_is_one(cli, office):
    plain = _send(cli, "team", "plain", "--as", "alice")
    carried = _send(cli, "team", "x", "--as", "alice", "--event-type", "like.created")
    assert "event:" not in cli.ok("show", str(plain)).stdout
    line = next(
        x for x in cli.ok("show", str(carried)).stdout.splitlines() if x.startswith("event:")
    )
    assert json.loads(line.partition(":")[2])["event_type"] == "like.created"
