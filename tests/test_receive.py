"""Reading: `receive` (FIFO, marks read, filters, pagination), `messages` and `show` (read-only
history), the JSON contract (keys and their order), and plain output for pipes."""

from __future__ import annotations

import json
import re

import pytest
from conftest import query, run, snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
T0 = "2024-05-01T12:00:00.000Z"
T0_MS = 1714564800000


@pytest.fixture
def team(make_channel):
    return make_channel("team", "alice", "bob", "carol")


def _send(cli, channel, body, sender="alice", *extra) -> int:
    return int(cli.ok("send", channel, body, "--as", sender, *extra).stdout)


def _recv(cli, *args, agent="bob"):
    return cli.ok("receive", "--as", agent, *args, "--json").json()


def _contents(doc) -> list[str]:
    return [m["content"] for m in doc["messages"]]


# ---------------------------------------------------------------- basics


def test_receive_is_oldest_first_and_marks_read(cli, team):
    ids = [_send(cli, "team", f"m{i}") for i in range(3)]
    got = _recv(cli)
    assert [m["id"] for m in got["messages"]] == ids
    assert (got["total_count"], got["has_more"]) == (3, False)
    assert {m["delivery"]["state"] for m in got["messages"]} == {"read"}
    assert all(ISO_MS.match(m["delivery"]["read_at"]) for m in got["messages"])
    assert query(team, "SELECT DISTINCT state FROM deliveries WHERE recipient = 'bob'") == [
        ("read",)
    ]
    assert _recv(cli) == {"messages": [], "total_count": 0, "has_more": False}
    # carol's copies are her own
    assert _contents(_recv(cli, agent="carol")) == ["m0", "m1", "m2"]


def test_peek_leaves_messages_unread(cli, team):
    _send(cli, "team", "hello")
    before = snapshot(team)
    got = _recv(cli, "--peek")
    assert _contents(got) == ["hello"]
    assert got["messages"][0]["delivery"]["state"] == "unread"
    assert snapshot(team) == before
    assert _contents(_recv(cli)) == ["hello"]


def test_body_prints_only_the_contents(cli, team):
    _send(cli, "team", "first")
    _send(cli, "team", "two\nlines")
    _send(cli, "team", "ends in newline\n")
    r = cli.ok("receive", "--as", "bob", "--body")
    assert r.stdout == "first\ntwo\nlines\nends in newline\n"


def test_jsonl_is_one_object_per_line(cli, team):
    ids = [_send(cli, "team", f"m{i}") for i in range(3)]
    lines = cli.ok("receive", "--as", "bob", "--jsonl").stdout.splitlines()
    docs = [json.loads(line) for line in lines]
    assert [d["id"] for d in docs] == ids
    assert all(d["delivery"]["recipient"] == "bob" for d in docs)


def test_receive_nothing_prints_nothing(cli, team):
    assert cli.ok("receive", "--as", "bob").stdout == ""
    assert cli.ok("receive", "--as", "bob", "--body").stdout == ""


# ---------------------------------------------------------------- filters


def test_channel_filter_option_and_positional(cli, team):
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "--as", "alice", "bob")
    _send(cli, "team", "in team")
    _send(cli, "other", "in other")
    assert _contents(_recv(cli, "--peek", "--channel", "other")) == ["in other"]
    assert _contents(_recv(cli, "--peek", "-c", "team")) == ["in team"]
    assert _contents(_recv(cli, "other")) == ["in other"]
    assert _contents(_recv(cli)) == ["in team"]


def test_since_and_until(cli, team):
    with freeze_time(T0) as clock:
        for i in range(4):
            _send(cli, "team", f"h{i}")  # at T0, T0+1h, T0+2h, T0+3h
            clock.tick(3600)
        got = _recv(
            cli, "--peek", "--since", "2024-05-01T12:30:00Z", "--until", "2024-05-01T14:30:00.000Z"
        )
        assert _contents(got) == ["h1", "h2"]
        # now = T0+4h: the last 90 minutes hold only h3
        assert _contents(_recv(cli, "--peek", "--since", "-90m")) == ["h3"]
        assert _contents(_recv(cli, "--peek", "--until", "-150m")) == ["h0", "h1"]
        assert _contents(_recv(cli, "--peek", "--since", str(T0_MS + 3600_000 * 2))) == ["h2", "h3"]
        # since is inclusive, to the millisecond
        assert _contents(
            _recv(
                cli,
                "--peek",
                "--since",
                "2024-05-01T13:00:00.000Z",
                "--until",
                "2024-05-01T13:00:00.000Z",
            )
        ) == ["h1"]


def test_type_filter_is_repeatable(cli, team):
    _send(cli, "team", "t")
    _send(cli, "team", "c", "alice", "--type", "command")
    _send(cli, "team", "q", "alice", "--type", "query")
    _send(cli, "team", "n", "alice", "--type", "notification")
    assert _contents(_recv(cli, "--peek", "--type", "command", "--type", "query")) == ["c", "q"]
    assert _contents(_recv(cli, "--peek", "-t", "notification")) == ["n"]


def test_from_filter(cli, team):
    _send(cli, "team", "from alice")
    _send(cli, "team", "from carol", "carol")
    assert _contents(_recv(cli, "--peek", "--from", "carol")) == ["from carol"]
    assert _contents(_recv(cli, "--peek", "--from", "nobody")) == []


def test_topic_filter(cli, team):
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    cli.ok("subscribe", "ci", "#", "--as", "bob")
    for t in ("build.frontend.success", "build.backend.failure", "deploy.staging", "build"):
        cli.ok("publish", "ci", t, t, "--as", "ci")
    _send(cli, "team", "no topic")
    assert _contents(_recv(cli, "--peek", "--topic", "build.#")) == [
        "build.frontend.success",
        "build.backend.failure",
        "build",
    ]
    assert _contents(_recv(cli, "--peek", "--topic", "*.*.failure")) == ["build.backend.failure"]
    assert _contents(_recv(cli, "--peek", "--topic", "deploy.staging")) == ["deploy.staging"]


def test_grep_filter_is_a_regex(cli, team):
    for body in ("error 42", "all fine", "Error 7", "errors: none"):
        _send(cli, "team", body)
    assert _contents(_recv(cli, "--peek", "--grep", r"^error \d+$")) == ["error 42"]
    assert _contents(_recv(cli, "--peek", "--grep", "(?i)^error ")) == ["error 42", "Error 7"]


def test_priority_min(cli, team):
    for p in ("low", "normal", "high", "urgent", "critical"):
        _send(cli, "team", p, "alice", "--priority", p)
    assert _contents(_recv(cli, "--peek", "--priority-min", "high")) == [
        "high",
        "urgent",
        "critical",
    ]
    assert _contents(_recv(cli, "--peek", "--priority-min", "3")) == ["urgent", "critical"]


def test_sort_and_order(cli, team):
    for p in ("normal", "critical", "low", "high"):
        _send(cli, "team", p, "alice", "--priority", p)
    by_prio = _recv(cli, "--peek", "--sort", "priority", "--order", "desc")
    assert _contents(by_prio) == ["critical", "high", "normal", "low"]
    assert _contents(_recv(cli, "--peek", "--sort", "priority", "--order", "asc")) == [
        "low",
        "normal",
        "high",
        "critical",
    ]
    assert _contents(_recv(cli, "--peek", "--sort", "id", "--order", "desc")) == [
        "high",
        "low",
        "critical",
        "normal",
    ]
    assert _contents(_recv(cli, "--peek", "--order", "desc")) == [
        "high",
        "low",
        "critical",
        "normal",
    ]
    assert _contents(_recv(cli, "--peek", "--sort", "created", "--order", "asc")) == [
        "normal",
        "critical",
        "low",
        "high",
    ]


def test_limit_offset_total_and_has_more(cli, team):
    for i in range(5):
        _send(cli, "team", f"m{i}")
    page = _recv(cli, "--peek", "--limit", "2")
    assert (_contents(page), page["total_count"], page["has_more"]) == (["m0", "m1"], 5, True)
    page = _recv(cli, "--peek", "--limit", "2", "--offset", "2")
    assert (_contents(page), page["total_count"], page["has_more"]) == (["m2", "m3"], 5, True)
    page = _recv(cli, "--peek", "--limit", "2", "--offset", "4")
    assert (_contents(page), page["total_count"], page["has_more"]) == (["m4"], 5, False)
    page = _recv(cli, "--peek", "--limit", "5")
    assert (page["total_count"], page["has_more"]) == (5, False)
    # without --peek only the returned page is marked read
    assert _contents(_recv(cli, "--limit", "2")) == ["m0", "m1"]
    rest = _recv(cli, "--peek")
    assert (_contents(rest), rest["total_count"]) == (["m2", "m3", "m4"], 3)


def test_filters_combine(cli, team):
    _send(cli, "team", "alice high", "alice", "--priority", "high")
    _send(cli, "team", "carol high", "carol", "--priority", "high")
    _send(cli, "team", "carol low", "carol", "--priority", "low")
    got = _recv(cli, "--peek", "--from", "carol", "--priority-min", "high")
    assert _contents(got) == ["carol high"]


def test_filtered_out_messages_stay_unread(cli, team):
    _send(cli, "team", "keep", "alice", "--type", "command")
    _send(cli, "team", "take")
    assert _contents(_recv(cli, "--type", "text")) == ["take"]
    assert _contents(_recv(cli)) == ["keep"]


def test_priority_ordering_channel_returns_higher_priority_first(cli, team):
    cli.ok("channel", "create", "ops", "--as", "alice", "--priority-ordering")
    cli.ok("channel", "join", "ops", "--as", "alice", "bob")
    for body, p in (
        ("low", "low"),
        ("crit-1", "critical"),
        ("normal", "normal"),
        ("crit-2", "critical"),
        ("high", "high"),
    ):
        _send(cli, "ops", body, "alice", "--priority", p)
    assert _contents(_recv(cli, "ops")) == ["crit-1", "crit-2", "high", "normal", "low"]


def test_plain_channel_is_fifo_whatever_the_priority(cli, team):
    for p in ("low", "critical", "normal"):
        _send(cli, "team", p, "alice", "--priority", p)
    assert _contents(_recv(cli)) == ["low", "critical", "normal"]


# ---------------------------------------------------------------- history


def test_messages_is_newest_first_and_read_only(cli, team):
    ids = [_send(cli, "team", f"m{i}") for i in range(3)]
    before = snapshot(team)
    got = cli.ok("messages", "--json").json()
    assert [m["id"] for m in got["messages"]] == ids[::-1]
    assert (got["total_count"], got["has_more"]) == (3, False)
    assert all("deliveries" in m and "delivery" not in m for m in got["messages"])
    cli.ok("messages")
    cli.ok("messages", "--jsonl")
    cli.ok("show", str(ids[0]))
    cli.ok("show", str(ids[0]), "--json")
    cli.ok("channel", "show", "team", "--json")
    cli.ok("channel", "list")
    assert snapshot(team) == before
    assert _contents(_recv(cli, "--peek")) == ["m0", "m1", "m2"]


def test_messages_filters_and_pages(cli, team):
    for i in range(5):
        _send(cli, "team", f"m{i}", "carol" if i % 2 else "alice")
    got = cli.ok("messages", "--from", "alice", "--limit", "2", "--json").json()
    assert (_contents(got), got["total_count"], got["has_more"]) == (["m4", "m2"], 3, True)
    got = cli.ok(
        "messages",
        "--channel",
        "team",
        "--sort",
        "id",
        "--order",
        "asc",
        "--limit",
        "1",
        "--offset",
        "1",
        "--json",
    ).json()
    assert _contents(got) == ["m1"]
    got = cli.ok("messages", "--status", "delivered", "--grep", "m[34]", "--json").json()
    assert _contents(got) == ["m4", "m3"]


# ---------------------------------------------------------------- the JSON contract

MESSAGE_FIELDS = {
    "id",
    "channel",
    "channel_id",
    "sender",
    "type",
    "content",
    "topic",
    "priority",
    "correlation_id",
    "dedupe_key",
    "metadata",
    "status",
    "created_at",
    "deliver_at",
}
DELIVERY_FIELDS = {
    "recipient",
    "state",
    "retry_count",
    "delivered_at",
    "read_at",
    "ack_status",
    "acked_at",
    "next_timer_at",
}
SEND_FIELDS = {
    "id",
    "channel",
    "channel_id",
    "recipients",
    "status",
    "created_at",
    "correlation_id",
    "deduplicated",
    "suppressed",
}
CONFIG_FIELDS = {
    "delivery",
    "max_message_size",
    "ack_timeout_ms",
    "max_retries",
    "retry_backoff_ms",
    "retry_jitter",
    "echo",
    "priority_ordering",
    "max_pending",
    "dedupe_window_ms",
}


def test_show_json_contract(cli, team):
    team_id = cli.ok("channel", "show", "team", "--json").json()["id"]
    with freeze_time("2024-05-01T12:00:00.123Z"):
        sent = cli.ok(
            "send",
            "team",
            "what's up?",
            "--as",
            "alice",
            "--type",
            "query",
            "--priority",
            "urgent",
            "--meta",
            "k=v",
            "--meta",
            "n=1=2",
            "--dedupe-key",
            "dk",
            "--json",
        ).json()
    doc = cli.ok("show", str(sent["id"]), "--json").json()
    assert MESSAGE_FIELDS | {"deliveries"} <= set(doc)
    assert "delivery" not in doc
    assert doc["id"] == sent["id"]
    assert (doc["channel"], doc["channel_id"], doc["sender"]) == ("team", team_id, "alice")
    assert (doc["type"], doc["content"], doc["topic"]) == ("query", "what's up?", None)
    assert doc["priority"] == "urgent"
    assert doc["correlation_id"] == sent["correlation_id"] and doc["correlation_id"]
    assert doc["dedupe_key"] == "dk"
    assert doc["metadata"] == {"k": "v", "n": "1=2"}
    assert doc["status"] == "delivered"
    assert doc["created_at"] == "2024-05-01T12:00:00.123Z"
    assert doc["deliver_at"] is None
    assert [d["recipient"] for d in doc["deliveries"]] == ["bob", "carol"]
    for d in doc["deliveries"]:
        assert DELIVERY_FIELDS <= set(d)
        assert (d["state"], d["retry_count"], d["read_at"], d["ack_status"], d["acked_at"]) == (
            "unread",
            0,
            None,
            None,
            None,
        )
        assert d["delivered_at"] == "2024-05-01T12:00:00.123Z"


def test_show_json_of_a_plain_text_message(cli, team):
    mid = _send(cli, "team", "hi")
    doc = cli.ok("show", str(mid), "--json").json()
    assert (
        doc["type"],
        doc["priority"],
        doc["metadata"],
        doc["correlation_id"],
        doc["dedupe_key"],
        doc["topic"],
    ) == ("text", "normal", {}, None, None, None)
    assert ISO_MS.match(doc["created_at"])


def test_show_json_of_a_scheduled_message(cli, team):
    with freeze_time(T0):
        mid = _send(cli, "team", "later", "alice", "--delay", "30s")
    doc = cli.ok("show", str(mid), "--json").json()
    assert doc["deliver_at"] == "2024-05-01T12:00:30.000Z"
    assert doc["status"] == "sent"
    assert {d["state"] for d in doc["deliveries"]} == {"waiting"}


def test_receive_json_contract(cli, team):
    mid = _send(cli, "team", "hi")
    got = _recv(cli)
    assert set(got) >= {"messages", "total_count", "has_more"}
    [m] = got["messages"]
    assert MESSAGE_FIELDS | {"delivery"} <= set(m)
    assert "deliveries" not in m
    assert m["id"] == mid
    assert DELIVERY_FIELDS <= set(m["delivery"])
    assert m["delivery"]["recipient"] == "bob"


def test_send_json_contract(cli, team):
    team_id = cli.ok("channel", "show", "team", "--json").json()["id"]
    with freeze_time("2024-05-01T12:00:00.007Z"):
        doc = cli.ok("send", "team", "hi", "--as", "alice", "--json").json()
    assert SEND_FIELDS <= set(doc)
    assert isinstance(doc["id"], int)
    assert (doc["channel"], doc["channel_id"], doc["recipients"]) == (
        "team",
        team_id,
        ["bob", "carol"],
    )
    assert (doc["status"], doc["created_at"]) == ("delivered", "2024-05-01T12:00:00.007Z")
    assert (doc["correlation_id"], doc["deduplicated"]) == (None, False)
    cmd = cli.ok(
        "send",
        "team",
        "do it",
        "--as",
        "alice",
        "--type",
        "command",
        "--correlation-id",
        "job-7",
        "--json",
    ).json()
    assert cmd["correlation_id"] == "job-7"
    pub_channel = cli.ok(
        "channel", "create", "ci", "--type", "pubsub", "--as", "ci", "--json"
    ).json()
    pub = cli.ok("publish", "ci", "a.b", "x", "--as", "ci", "--json").json()
    assert SEND_FIELDS <= set(pub)
    assert (pub["channel_id"], pub["recipients"], pub["status"]) == (pub_channel["id"], [], "sent")


def test_send_prints_the_bare_id(cli, team):
    r = cli.ok("send", "team", "hi", "--as", "alice")
    assert re.fullmatch(r"\d+\n", r.stdout)
    assert r.stderr == ""


def test_channel_show_json_contract(cli, store):
    cid = int(
        cli.ok(
            "channel",
            "create",
            "ops",
            "--as",
            "alice",
            "--type",
            "broadcast",
            "--delivery",
            "at-least-once",
            "--echo",
            "--max-pending",
            "3",
        ).stdout
    )
    cli.ok("channel", "join", "ops", "--as", "alice", "bob")
    cli.ok("channel", "join", "ops", "--as", "alice", "olga", "--role", "observer")
    doc = cli.ok("channel", "show", "ops", "--json").json()
    assert {"id", "name", "type", "owner", "state", "config", "participants"} <= set(doc)
    assert (doc["id"], doc["name"], doc["type"], doc["owner"], doc["state"]) == (
        cid,
        "ops",
        "broadcast",
        "alice",
        "active",
    )
    assert set(doc["config"]) >= CONFIG_FIELDS
    assert doc["config"] == {
        **doc["config"],
        "delivery": "at-least-once",
        "max_message_size": 1048576,
        "ack_timeout_ms": 30000,
        "max_retries": 3,
        "retry_backoff_ms": 1000,
        "retry_jitter": 0,
        "echo": True,
        "priority_ordering": False,
        "max_pending": 3,
        "dedupe_window_ms": 86_400_000,
    }
    assert sorted(doc["participants"], key=lambda p: p["agent"]) == [
        {"agent": "alice", "role": "owner", "admin": False},
        {"agent": "bob", "role": "member", "admin": False},
        {"agent": "olga", "role": "observer", "admin": False},
    ]
    listed = cli.ok("channel", "list", "--json").json()
    assert set(listed) >= {"channels"}
    assert {c["name"] for c in listed["channels"]} >= {"_system", "ops"}
    # show adds the channel's indexed metadata keys, which a listing leaves out
    assert doc.pop("indexed_meta") == []
    assert next(c for c in listed["channels"] if c["name"] == "ops") == doc


def test_create_with_json_prints_the_channel(cli, store):
    doc = cli.ok("channel", "create", "t", "--as", "alice", "--json").json()
    assert doc["name"] == "t" and isinstance(doc["id"], int)


# ---------------------------------------------------------------- pipes


@pytest.mark.process
def test_pipes_get_tab_separated_lines_without_colour(team):
    for args in (
        ("send", "team", "tab\there\nand a newline", "--as", "alice"),
        ("send", "team", "second", "--as", "carol", "--priority", "high"),
    ):
        assert run(*args).returncode == 0
    env = {"FORCE_COLOR": "1", "TERM": "xterm-256color"}
    for args in (
        ("messages",),
        ("receive", "--as", "bob", "--peek"),
        ("channel", "list"),
        ("subscriptions", "_system"),
    ):
        r = run(*args, env=env)
        assert r.returncode == 0, r.stderr
        assert "\x1b[" not in r.stdout, args
        assert "\x1b[" not in r.stderr, args
    lines = run("messages", env=env).stdout.splitlines()
    assert len(lines) == 2  # one line per message, no header, no box drawing
    fields = [line.split("\t") for line in lines]
    assert {len(f) for f in fields} == {len(fields[0])} and len(fields[0]) >= 5
    assert "carol" in fields[0] and "high" in fields[0] and "second" in fields[0]
    assert "tab here\\nand a newline" in fields[1]
    chans = [line.split("\t") for line in run("channel", "list").stdout.splitlines()]
    assert {"team", "_system"} <= {f[1] for f in chans}


def test_no_color_in_process(cli, team):
    _send(cli, "team", "hi")
    for env in ({"NO_COLOR": "1"}, {}):
        r = cli("messages", env=env)
        assert r.exit_code == 0
        assert "\x1b[" not in r.stdout
    assert "\x1b[" not in cli("messages", "--no-color").stdout
