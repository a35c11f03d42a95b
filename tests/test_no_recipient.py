"""A send that reaches nobody is an error, not a message stored for no one: `send` and
`query` to a channel with no other member, or on a `_fed:` channel used directly, exit 5
(`no_recipient`) and store nothing; a `publish` that no subscription matches is pub/sub as
meant (exit 0, a note, no recipients) unless `--require-recipient`; a batch refuses the
whole batch at the line; MCP tools get the same refusal from the same engine call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import query, snapshot

from acomm_cli import clock
from acomm_cli.engine import opening, remote, sending
from acomm_cli.errors import NoRecipient
from acomm_cli.mcpserver import tools
from acomm_cli.model import SendRequest
from acomm_cli.output import (
    render_acks,
    render_channels,
    render_deadletters,
    render_messages,
    render_operations,
)
from acomm_cli.store import write

pytestmark = pytest.mark.cli


def _refused(r, field: str, value: str, way: str) -> None:
    assert r.exit_code == 5, r.stderr
    assert r.error["code"] == "no_recipient"
    assert r.error["field"] == field and r.error["value"] == value
    assert way in r.error["message"], r.error["message"]


def test_a_send_to_a_channel_with_no_other_member_is_refused(cli, store):
    cli.ok("channel", "create", "solo", "--as", "alice")
    before = snapshot(store)
    r = cli("send", "solo", "hello", "--as", "alice", "--json")
    _refused(r, "channel", "solo", "acomm channel join solo AGENT --as alice")
    assert "would reach nobody" in r.error["message"]
    assert snapshot(store) == before
    plain = cli("send", "solo", "hello", "--as", "alice")
    assert plain.stderr.startswith("acomm: error: no_recipient: channel: a text on 'solo' would")
    assert plain.stdout == ""
    # once someone is there, the same send goes through
    cli.ok("channel", "join", "solo", "bob", "--as", "alice")
    sent = cli.ok("send", "solo", "hello", "--as", "alice", "--json").json()
    assert sent["recipients"] == ["bob"]


def test_a_broadcast_with_only_its_owner_is_refused(cli, store):
    cli.ok("channel", "create", "news", "--type", "broadcast", "--as", "alice")
    before = snapshot(store)
    r = cli("send", "news", "extra!", "--as", "alice", "--json")
    _refused(r, "channel", "news", "channel join news")
    assert snapshot(store) == before


def test_a_send_whose_members_are_all_retired_is_refused(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    cli.ok("agent", "retire", "bob")
    before = snapshot(store)
    _refused(cli("send", "team", "hi", "--as", "alice", "--json"), "channel", "team", "join")
    assert snapshot(store) == before


def test_an_echo_channel_reaches_its_sender_and_is_not_refused(cli, store):
    cli.ok("channel", "create", "notes", "--echo", "--as", "alice")
    assert cli.ok("send", "notes", "memo", "--as", "alice", "--json").json()["recipients"] == [
        "alice"
    ]


def test_a_queue_with_no_worker_yet_keeps_its_job(cli, store):
    cli.ok("channel", "create", "jobs", "--type", "queue", "--as", "boss")
    assert cli.ok("send", "jobs", "resize", "--as", "boss", "--json").json()["recipients"] == ["*"]


def test_a_query_to_nobody_fails_at_once_even_with_wait(cli, store):
    cli.ok("channel", "create", "solo", "--as", "alice")
    before = snapshot(store)
    # without the rule this would sit out its 600 s wait and exit 124
    r = cli("query", "solo", "anyone?", "--as", "alice", "--wait", "600", "--json")
    _refused(r, "channel", "solo", "channel join solo")
    assert "a query on 'solo'" in r.error["message"]
    assert snapshot(store) == before


def test_a_query_on_a_pubsub_channel_no_subscription_matches_is_refused(cli, store):
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    before = snapshot(store)
    r = cli("query", "ci", "who builds?", "--topic", "build.x", "--as", "ci", "--json")
    _refused(r, "channel", "ci", "acomm subscribe ci PATTERN")
    assert snapshot(store) == before


def test_a_fed_channel_used_directly_is_refused(cli, store):
    conn = opening.connect(store, create=False)
    try:
        with write(conn):
            name = remote.fed_channel(conn, {}, "alice", "bob", clock.now_ms())
    finally:
        conn.close()
    assert name == "_fed:alice:bob"
    before = snapshot(store)
    r = cli("send", name, "hi", "--as", "alice", "--json")
    _refused(r, "channel", name, "--to bob")
    assert r.error["reason"] == "federation_channel"
    assert snapshot(store) == before


def test_a_publish_no_subscription_matches_is_stored_with_a_note(cli, store):
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    r = cli("publish", "ci", "build.ok", "green", "--as", "ci", "--json")
    assert r.exit_code == 0, r.stderr
    doc = r.json()
    assert doc["recipients"] == [] and doc["status"] == "sent"
    assert r.stderr == (
        "acomm: note: no subscription on 'ci' matches topic 'build.ok': the message reaches "
        "nobody (--require-recipient refuses such a publish)\n"
    )
    assert query(store, "SELECT id FROM messages") == [(doc["id"],)]
    # a matching subscription: no note
    cli.ok("subscribe", "ci", "build.#", "--as", "bob")
    again = cli("publish", "ci", "build.ok", "green", "--as", "ci")
    assert again.exit_code == 0 and again.stderr == ""


def test_a_publish_that_requires_a_recipient_is_refused_when_none_matches(cli, store):
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    cli.ok("subscribe", "ci", "deploy.#", "--as", "bob")
    before = snapshot(store)
    r = cli("publish", "ci", "build.ok", "green", "--as", "ci", "--require-recipient", "--json")
    _refused(r, "topic", "build.ok", "acomm subscribe ci PATTERN")
    assert snapshot(store) == before
    # a match passes
    ok = cli.ok("publish", "ci", "deploy.prod", "done", "--as", "ci", "--require-recipient")
    assert ok.stderr == ""


def test_a_batch_line_that_reaches_nobody_refuses_the_batch_at_its_line(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    cli.ok("channel", "create", "solo", "--as", "alice")
    lines = [
        {"channel": "team", "from": "alice", "content": "one"},
        {"channel": "solo", "from": "alice", "content": "two"},
    ]
    before = snapshot(store)
    r = cli("send", "--batch", "-", "--json", input="".join(json.dumps(x) + "\n" for x in lines))
    _refused(r, "channel", "solo", "channel join solo")
    assert r.error["line"] == 2 and r.error["message"].startswith("line 2: ")
    assert snapshot(store) == before  # all or none


def test_the_engine_refuses_it_for_every_caller(cli, store):
    cli.ok("channel", "create", "solo", "--as", "alice")
    before = snapshot(store)
    conn = opening.connect(store, create=False)
    try:
        with pytest.raises(NoRecipient) as err:
            req = SendRequest(sender="alice", content="x", channel="solo")
            sending.send(conn, req, clock.now_ms())
    finally:
        conn.close()
    assert err.value.exit_status == 5 and err.value.field == "channel"
    assert snapshot(store) == before


def test_the_mcp_send_tool_gets_the_same_refusal(cli, store: Path):
    cli.ok("channel", "create", "solo", "--as", "alice")
    box = tools.Toolbox(
        tools.StoreOptions(path=store),
        "alice",
        tools.Encoders(
            message=render_messages.message_doc,
            send=render_messages.send_doc,
            channel=render_channels.channel_doc,
            dead_letter=render_deadletters.dead_letter_doc,
            stats=render_operations.stats_doc,
            ack=render_acks.ack_doc,
            nack=render_acks.nack_doc,
        ),
    )
    before = snapshot(store)
    with pytest.raises(NoRecipient) as err:
        box.send(channel="solo", body="hello")
    assert err.value.to_dict()["code"] == "no_recipient"
    with pytest.raises(NoRecipient):
        box.query(channel="solo", body="anyone?", wait_seconds=60)
    assert snapshot(store) == before
    # the publish tool: stored to nobody, or refused when a recipient is required
    cli.ok("channel", "create", "feed", "--type", "pubsub", "--as", "alice")
    before = snapshot(store)
    with pytest.raises(NoRecipient):
        box.publish(channel="feed", topic="a.b", body="x", require_recipient=True)
    assert snapshot(store) == before
    assert box.publish(channel="feed", topic="a.b", body="x")["recipients"] == []
