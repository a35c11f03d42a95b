"""Routing per channel type, leaving, `send --to`, `send --batch` and dedupe
keys: the pipeline driven directly for the fine cases, the command line for the rest."""

from __future__ import annotations

import json

import pytest
from conftest import query, snapshot
from freezegun import freeze_time

from acomm_cli.engine import channels, inbox, sending
from acomm_cli.errors import Forbidden, InvalidState, NotParticipant, ValidationFailed
from acomm_cli.model import DEADLETTER_TOPIC, MessageFilter, SendRequest

pytestmark = pytest.mark.unit

NOW = 1_700_000_000_000


def _channel(conn, name, type_, owner="alice", members=(), observers=(), **cfg):
    channels.create_channel(conn, name, type_, owner, channels.channel_config(**cfg), NOW)
    for m in members:
        channels.join_channel(conn, name, m, "member", NOW, by=owner)
    for o in observers:
        channels.join_channel(conn, name, o, "observer", NOW, by=owner)


def _send(conn, channel, sender, content="hello", **kw):
    return sending.send(
        conn, SendRequest(sender=sender, content=content, channel=channel, **kw), NOW
    )


def _states(conn, message_id) -> dict[str, str]:
    return {d.recipient: d.state.value for d in inbox.show(conn, message_id).deliveries}


def _count(conn) -> int:
    return conn.execute("SELECT count(*) FROM messages").fetchone()[0]


def _inbox(conn, agent, **kw) -> list[str]:
    res = inbox.receive(conn, agent, MessageFilter(**kw), NOW + 1)
    return [m.content for m in res.messages]


# ---------------------------------------------------------------- per channel type


def test_direct_goes_to_the_other_participant_only(conn):
    _channel(conn, "dm", "direct", members=("bob",))
    a = _send(conn, "dm", "alice")
    b = _send(conn, "dm", "bob", "back")
    assert (a.recipients, b.recipients) == (("bob",), ("alice",))
    assert _states(conn, a.id) == {"bob": "unread"}
    assert _states(conn, b.id) == {"alice": "unread"}
    assert a.status == "delivered"


def test_direct_refuses_a_third_participant(conn):
    _channel(conn, "dm", "direct", members=("bob",))
    with pytest.raises(InvalidState):
        channels.join_channel(conn, "dm", "carol", "member", NOW, by="alice")
    channels.join_channel(conn, "dm", "bob", "member", NOW, by="alice")  # already in: a no-op
    assert [p.agent for p in channels.get_channel(conn, "dm").participants] == ["alice", "bob"]


def test_group_goes_to_everyone_but_the_sender(conn):
    _channel(conn, "team", "group", members=("bob", "carol"), observers=("olga",))
    r = _send(conn, "team", "bob")
    assert r.recipients == ("alice", "carol", "olga")
    assert set(_states(conn, r.id)) == {"alice", "carol", "olga"}


def test_group_with_echo_includes_the_sender(conn):
    _channel(conn, "team", "group", members=("bob",), echo=True)
    r = _send(conn, "team", "alice", "mine too")
    assert r.recipients == ("alice", "bob")
    assert _inbox(conn, "alice") == ["mine too"]


def test_broadcast_owner_sends_members_and_observers_receive(conn):
    _channel(conn, "news", "broadcast", members=("bob", "carol"), observers=("olga",))
    r = _send(conn, "news", "alice")
    assert r.recipients == ("bob", "carol", "olga")
    assert _inbox(conn, "olga") == ["hello"]
    assert _inbox(conn, "alice") == []


@pytest.mark.parametrize("sender", ["bob", "olga"])
def test_broadcast_refuses_everyone_but_the_owner(conn, sender):
    _channel(conn, "news", "broadcast", members=("bob",), observers=("olga",))
    with pytest.raises(Forbidden) as exc:
        _send(conn, "news", sender)
    assert exc.value.field == "sender"
    assert _count(conn) == 0
    assert conn.execute("SELECT count(*) FROM deliveries").fetchone()[0] == 0


@pytest.mark.parametrize("type_", ["group", "direct"])
def test_observers_cannot_send(conn, type_):
    _channel(conn, "ch", type_, observers=("olga",))
    with pytest.raises(Forbidden):
        _send(conn, "ch", "olga")
    assert _count(conn) == 0


def test_strangers_cannot_send(conn):
    _channel(conn, "team", "group", members=("bob",))
    with pytest.raises(NotParticipant):
        _send(conn, "team", "mallory")
    assert _count(conn) == 0


def test_pubsub_goes_to_matching_subscriptions_only(conn):
    _channel(conn, "ci", "pubsub", owner="ci", members=("carol",))  # carol: no subscription
    channels.subscribe(conn, "ci", "build.#", "bob", NOW)
    channels.subscribe(conn, "ci", "deploy.#", "dave", NOW)
    channels.subscribe(conn, "ci", "*.frontend.*", "erin", NOW)
    r = _send(conn, "ci", "ci", topic="build.frontend.ok")
    assert r.recipients == ("bob", "erin")
    assert set(_states(conn, r.id)) == {"bob", "erin"}
    roles = {p.agent: p.role.value for p in channels.get_channel(conn, "ci").participants}
    assert roles == {
        "ci": "owner",
        "carol": "member",
        "bob": "member",
        "dave": "member",
        "erin": "member",
    }  # subscribing made them participants


def test_pubsub_needs_a_topic(conn):
    _channel(conn, "ci", "pubsub", owner="ci")
    channels.subscribe(conn, "ci", "#", "bob", NOW)
    with pytest.raises(ValidationFailed) as exc:
        _send(conn, "ci", "ci")
    assert exc.value.field == "topic"
    assert _count(conn) == 0


@pytest.mark.parametrize(("echo", "expected"), [(False, ("bob",)), (True, ("bob", "ci"))])
def test_pubsub_sender_receives_its_own_only_with_echo(conn, echo, expected):
    _channel(conn, "ci", "pubsub", owner="ci", echo=echo)
    channels.subscribe(conn, "ci", "build.#", "ci", NOW)
    channels.subscribe(conn, "ci", "build.#", "bob", NOW)
    assert _send(conn, "ci", "ci", topic="build.x").recipients == expected


def test_pubsub_once_per_subscriber(conn):
    _channel(conn, "ci", "pubsub", owner="ci")
    for p in ("build.#", "build.*.success", "#", "build.frontend.success"):
        channels.subscribe(conn, "ci", p, "bob", NOW)
    r = _send(conn, "ci", "ci", topic="build.frontend.success")
    assert r.recipients == ("bob",)
    assert _inbox(conn, "bob") == ["hello"]


def test_send_without_recipients_is_stored_as_sent(conn):
    _channel(conn, "ci", "pubsub", owner="ci")
    r = _send(conn, "ci", "ci", topic="nobody.listens")
    assert (r.recipients, r.status) == ((), "sent")
    assert inbox.show(conn, r.id).status == "sent"


# ---------------------------------------------------------------- leaving


def test_leaving_dead_letters_pending_deliveries_and_announces_them(conn):
    _channel(conn, "team", "group", members=("bob", "carol"))
    channels.subscribe(conn, "_system", DEADLETTER_TOPIC, "watcher", NOW)
    channels.subscribe(conn, "_system", "_system.#", "auditor", NOW)
    first = _send(conn, "team", "alice", "read before leaving")
    assert _inbox(conn, "bob", limit=1) == ["read before leaving"]
    second = _send(conn, "team", "alice", "never read")

    channels.leave_channel(conn, "team", "bob", NOW + 5, by="bob")

    assert _states(conn, first.id) == {"bob": "read", "carol": "unread"}
    assert _states(conn, second.id) == {"bob": "dead", "carol": "unread"}
    assert inbox.show(conn, second.id).status == "dead_letter"
    assert conn.execute(
        "SELECT message_id, recipient, reason, retry_count, dead_lettered_at FROM dead_letters"
    ).fetchall() == [(second.id, "bob", "recipient_left", 0, NOW + 5)]
    assert "bob" not in {p.agent for p in channels.get_channel(conn, "team").participants}

    for agent in ("watcher", "auditor"):
        got = inbox.receive(conn, agent, MessageFilter(), NOW + 6).messages
        assert len(got) == 1, agent
        note = got[0]
        assert (note.channel, note.sender, note.type.value, note.topic) == (
            "_system",
            "acomm",
            "notification",
            DEADLETTER_TOPIC,
        )
        assert json.loads(note.content) == {
            "message_id": second.id,
            "recipient": "bob",
            "channel": "team",
            "reason": "recipient_left",
            "retry_count": 0,
        }


def test_leaving_pubsub_drops_the_subscriptions(conn):
    _channel(conn, "ci", "pubsub", owner="ci")
    channels.subscribe(conn, "ci", "build.#", "bob", NOW)
    channels.leave_channel(conn, "ci", "bob", NOW, by="bob")
    assert channels.list_subscriptions(conn, "ci") == []
    assert _send(conn, "ci", "ci", topic="build.x").recipients == ()


def test_leaving_through_the_cli_notifies_system_subscribers(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("subscribe", "_system", "_system.message.deadletter", "--as", "watcher")
    mid = int(cli.ok("send", "team", "pending", "--as", "alice").stdout)
    cli.ok("channel", "leave", "team", "--as", "alice", "bob")
    got = cli.ok("receive", "--as", "watcher", "--json").json()["messages"]
    assert [m["topic"] for m in got] == ["_system.message.deadletter"]
    assert json.loads(got[0]["content"])["message_id"] == mid
    shown = cli.ok("show", str(mid), "--json").json()
    assert shown["status"] == "dead_letter"
    assert shown["deliveries"][0]["state"] == "dead"


# ---------------------------------------------------------------- send --to


def test_send_to_several_gives_one_result_each_in_order(cli, store):
    r = cli.ok("send", "--to", "carol,bob", "hi", "--as", "alice", "--json").json()
    results = r["results"]
    assert [x["recipients"] for x in results] == [["carol"], ["bob"]]
    assert results[0]["id"] < results[1]["id"]
    assert results[0]["channel_id"] != results[1]["channel_id"]
    by_agent = {x["recipients"][0]: x["channel_id"] for x in results}

    # the implicit direct channel of each pair is reused, whichever side sends
    again = cli.ok("send", "--to", "bob,carol", "again", "--as", "alice", "--json").json()
    assert [x["channel_id"] for x in again["results"]] == [by_agent["bob"], by_agent["carol"]]
    back = cli.ok("send", "--to", "alice", "reply", "--as", "bob", "--json").json()
    assert back["results"][0]["channel_id"] == by_agent["bob"]
    direct = [
        c for c in cli.ok("channel", "list", "--json").json()["channels"] if c["type"] == "direct"
    ]
    assert len(direct) == 2
    assert cli.ok("receive", "--as", "bob", "--body").stdout == "hi\nagain\n"
    assert cli.ok("receive", "--as", "alice", "--body").stdout == "reply\n"


def test_send_to_prints_one_id_per_line(cli, store):
    out = cli.ok("send", "--to", "bob,carol,dave", "hi", "--as", "alice").stdout
    ids = [int(x) for x in out.splitlines()]
    assert len(ids) == 3 and ids == sorted(ids)


def test_send_to_reads_the_body_from_stdin(cli, store):
    cli.ok("send", "--to", "bob", "--as", "alice", input="piped body")
    assert cli.ok("receive", "--as", "bob", "--body").stdout == "piped body\n"


def test_send_to_reports_each_failure_in_place(cli, store, conn):
    cli.ok("send", "--to", "bob", "first", "--as", "alice")
    channels.change_channel_state(conn, sending.direct_pair("alice", "bob")[0], "close", by="alice")
    r = cli("send", "--to", "bob,carol", "second", "--as", "alice", "--json")
    assert r.exit_code == 5, r.stderr
    bad, good = r.json()["results"]
    assert bad["error"]["code"] == "invalid_state"
    assert good["recipients"] == ["carol"]
    contents = [c for (c,) in query(store, "SELECT content FROM messages ORDER BY id")]
    assert contents == ["first", "second"]


def test_send_to_with_a_bad_recipient_sends_nothing(cli, store):
    before = snapshot(store)
    r = cli("send", "--to", "bob,..x", "hi", "--as", "alice", "--json")
    assert r.exit_code == 3
    assert r.error["field"] == "to"
    assert snapshot(store) == before


# ---------------------------------------------------------------- send --batch


@pytest.fixture
def team(cli, make_channel):
    """alice's `team` with bob, and a pubsub `ci` on which bob follows build.#."""
    make_channel("team", "alice", "bob")
    store = make_channel("ci", "ci", type="pubsub")
    cli.ok("subscribe", "ci", "build.#", "--as", "bob")
    return store


GOOD_BATCH = [
    {"channel": "team", "from": "alice", "content": "one"},
    {"to": "carol", "from": "alice", "content": "two", "priority": "high"},
    {"channel": "ci", "from": "ci", "content": "three", "topic": "build.x", "type": "notification"},
    {
        "channel": "team",
        "from": "alice",
        "content": "four",
        "type": "query",
        "correlation_id": "q9",
        "metadata": {"k": "v"},
    },
    {
        "channel": "team",
        "from": "bob",
        "content": "five",
        "type": "response",
        "correlation_id": "q9",
    },
]


def _jsonl(items, blank_after: int | None = None) -> str:
    lines = [json.dumps(i) for i in items]
    if blank_after is not None:
        lines.insert(blank_after, "")
    return "\n".join(lines) + "\n"


def _check_good_batch(store, out: str) -> None:
    ids = [int(x) for x in out.splitlines()]
    assert len(ids) == 5 and ids == sorted(ids)
    rows = query(
        store,
        "SELECT m.id, c.name, m.sender, m.content, m.priority, m.topic,"
        " m.metadata FROM messages m JOIN channels c ON c.id = m.channel_id"
        " ORDER BY m.id",
    )
    assert [r[0] for r in rows] == ids
    assert [r[3] for r in rows] == ["one", "two", "three", "four", "five"]
    assert rows[1][4] == 2 and rows[2][5] == "build.x"
    assert json.loads(rows[3][6]) == {"k": "v"}
    assert query(store, "SELECT recipient FROM deliveries WHERE message_id = ?", ids[1]) == [
        ("carol",)
    ]
    assert query(store, "SELECT recipient FROM deliveries WHERE message_id = ?", ids[2]) == [
        ("bob",)
    ]


def test_batch_from_file(cli, team, tmp_path):
    f = tmp_path / "batch.jsonl"
    f.write_text(_jsonl(GOOD_BATCH, blank_after=2))
    r = cli.ok("send", "--batch", str(f))
    _check_good_batch(team, r.stdout)


def test_batch_from_stdin(cli, team):
    r = cli.ok("send", "--batch", "-", input=_jsonl(GOOD_BATCH))
    _check_good_batch(team, r.stdout)


def test_batch_json_results(cli, team):
    r = cli.ok("send", "--batch", "-", "--json", input=_jsonl(GOOD_BATCH[:2])).json()
    assert [x["recipients"] for x in r["results"]] == [["bob"], ["carol"]]


BAD_LINES = {
    "not-json": ("{oops", 3),
    "not-an-object": ("[1, 2]", 3),
    "bad-priority": ({"channel": "team", "from": "alice", "content": "x", "priority": 7}, 3),
    "bad-type": ({"channel": "team", "from": "alice", "content": "x", "type": "chat"}, 3),
    "no-from": ({"channel": "team", "content": "x"}, 3),
    "channel-and-to": ({"channel": "team", "to": "bob", "from": "alice", "content": "x"}, 3),
    "unknown-field": ({"channel": "team", "from": "alice", "content": "x", "colour": 1}, 3),
    "empty-content": ({"channel": "team", "from": "alice", "content": ""}, 3),
    "bad-sender": ({"channel": "team", "from": ".alice", "content": "x"}, 3),
    "bad-to": ({"to": "bo..b", "from": "alice", "content": "x"}, 3),
    "no-topic": ({"channel": "ci", "from": "ci", "content": "x"}, 3),
    "bad-topic": ({"channel": "ci", "from": "ci", "content": "x", "topic": "a..b"}, 3),
    "orphan-response": (
        {
            "channel": "team",
            "from": "bob",
            "content": "x",
            "type": "response",
            "correlation_id": "nope",
        },
        3,
    ),
    "bad-delay": ({"channel": "team", "from": "alice", "content": "x", "delay": "soon"}, 3),
    "stranger": ({"channel": "team", "from": "mallory", "content": "x"}, 5),
    "no-channel": ({"channel": "nope", "from": "alice", "content": "x"}, 4),
}


@pytest.mark.parametrize("kind", list(BAD_LINES))
def test_batch_is_all_or_nothing(cli, team, kind):
    bad, status = BAD_LINES[kind]
    text = _jsonl(GOOD_BATCH[:2]) + (bad if isinstance(bad, str) else json.dumps(bad)) + "\n"
    text += _jsonl(GOOD_BATCH[2:])
    before = snapshot(team)
    r = cli("send", "--batch", "-", "--json", input=text)
    assert r.exit_code == status, r.stderr
    assert r.stdout == ""
    if status == 3:
        assert r.error["code"] == "validation_failed"
        assert r.error["line"] == 3
        assert "line 3" in r.error["message"]
    plain = cli("send", "--batch", "-", input=text)
    assert plain.exit_code == status
    if status == 3:
        assert plain.stderr.startswith("acomm: error: validation_failed: line 3")
    assert snapshot(team) == before


@pytest.mark.parametrize(
    "bad",
    [
        {"channel": "team", "content": "x"},  # refused while parsing
        {"channel": "team", "from": "alice", "content": ""},  # refused while planning
        {"channel": "team", "from": "alice", "content": "x", "priority": "9"},
    ],
)
def test_batch_error_names_the_physical_line(cli, team, bad):
    text = _jsonl(GOOD_BATCH[:1]) + "\n\n" + json.dumps(bad)
    r = cli("send", "--batch", "-", "--json", input=text + "\n")
    assert r.exit_code == 3
    assert r.error["line"] == 4


def test_batch_permission_error_names_the_line(cli, team):
    text = _jsonl([GOOD_BATCH[0], {"channel": "team", "from": "mallory", "content": "x"}])
    r = cli("send", "--batch", "-", "--json", input=text)
    assert r.exit_code == 5
    assert "line 2" in r.error["message"]


def test_batch_with_other_arguments_is_a_usage_error(cli, team):
    r = cli("send", "team", "--batch", "-", input=_jsonl(GOOD_BATCH))
    assert r.exit_code == 2
    assert query(team, "SELECT count(*) FROM messages") == [(0,)]


# ---------------------------------------------------------------- dedupe keys


def test_dedupe_key_returns_the_first_id(cli, team):
    first = cli.ok("send", "team", "first", "--dedupe-key", "k1", "--as", "alice", "--json").json()
    assert first["deduplicated"] is False
    again = cli("send", "team", "second", "--dedupe-key", "k1", "--as", "alice", "--json")
    assert again.exit_code == 0
    doc = again.json()
    assert (doc["id"], doc["deduplicated"]) == (first["id"], True)
    plain = cli.ok("send", "team", "third", "--dedupe-key", "k1", "--as", "alice")
    assert int(plain.stdout) == first["id"]
    assert query(team, "SELECT content FROM messages") == [("first",)]
    assert query(team, "SELECT count(*) FROM deliveries") == [(1,)]


def test_dedupe_key_is_per_channel(cli, team):
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "bob", "--as", "alice")
    a = cli.ok("send", "team", "x", "--dedupe-key", "k", "--as", "alice", "--json").json()
    b = cli.ok("send", "other", "x", "--dedupe-key", "k", "--as", "alice", "--json").json()
    assert a["id"] != b["id"] and not b["deduplicated"]


def test_dedupe_key_expires_with_the_window(cli, team):
    cli.ok("channel", "create", "brief", "--as", "alice", "--dedupe-window", "1m")
    cli.ok("channel", "join", "brief", "bob", "--as", "alice")
    with freeze_time("2024-05-01T12:00:00Z") as clock:
        a = cli.ok("send", "brief", "x", "--dedupe-key", "k", "--as", "alice", "--json").json()
        clock.tick(30)
        b = cli.ok("send", "brief", "x", "--dedupe-key", "k", "--as", "alice", "--json").json()
        clock.tick(61)
        c = cli.ok("send", "brief", "x", "--dedupe-key", "k", "--as", "alice", "--json").json()
    assert b["id"] == a["id"] and b["deduplicated"]
    assert c["id"] != a["id"] and not c["deduplicated"]


def test_dedupe_key_inside_a_batch(cli, team):
    line = {"channel": "team", "from": "alice", "content": "x", "dedupe_key": "b1"}
    r = cli.ok("send", "--batch", "-", "--json", input=_jsonl([line, line])).json()
    ids = [x["id"] for x in r["results"]]
    assert ids[0] == ids[1]
    assert [x["deduplicated"] for x in r["results"]] == [False, True]
    again = cli.ok("send", "--batch", "-", input=_jsonl([line])).stdout
    assert int(again) == ids[0]
    assert query(team, "SELECT count(*) FROM messages") == [(1,)]


def test_dedupe_through_the_pipeline(conn):
    _channel(conn, "team", "group", members=("bob",))
    a = _send(conn, "team", "alice", "x", dedupe_key="k")
    b = _send(conn, "team", "alice", "y", dedupe_key="k")
    assert (b.id, b.deduplicated, a.deduplicated) == (a.id, True, False)
    assert _count(conn) == 1
