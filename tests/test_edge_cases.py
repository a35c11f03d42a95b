"""Cases found in review: each failed before its fix."""

from __future__ import annotations

import pytest
from conftest import snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli


def test_members_and_observers_can_ack_broadcasts(cli, store):
    cli.ok(
        "channel",
        "create",
        "bc",
        "--type",
        "broadcast",
        "--as",
        "boss",
        "--delivery",
        "at-least-once",
    )
    cli.ok("channel", "join", "bc", "--as", "boss", "w1")
    cli.ok("channel", "join", "bc", "--as", "boss", "obs", "--role", "observer")
    mid = int(cli.ok("send", "bc", "do it", "--as", "boss").stdout)
    cli.ok("ack", mid, "--as", "w1")
    cli.ok("ack", mid, "--as", "obs")
    assert cli.ok("show", mid, "--json").json()["status"] == "acknowledged"
    corr = cli.ok("query", "bc", "ready?", "--as", "boss").stdout.strip()
    cli.ok("respond", corr, "yes", "--as", "w1")  # a reply to the owner, not a broadcast
    assert cli("respond", corr, "me too", "--as", "obs").exit_code == 5  # observers don't send
    assert cli("send", "bc", "hi all", "--as", "w1").exit_code == 5


def test_leaving_ends_read_but_unacknowledged_deliveries(cli, store):
    cli.ok("channel", "create", "g", "--as", "a", "--delivery", "at-least-once")
    cli.ok("channel", "join", "g", "--as", "a", "b")
    with freeze_time("2026-01-01 00:00:00") as clock:
        mid = int(cli.ok("send", "g", "m1", "--as", "a").stdout)
        cli.ok("receive", "--as", "b")
        cli.ok("channel", "leave", "g", "--as", "a", "b")
        clock.tick(60)
        assert cli.ok("tick", "--json").json()["redelivered"] == 0
    dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
    assert [(d["message_id"], d["reason"]) for d in dl] == [(mid, "recipient_left")]


def test_replies_and_acks_are_never_queued_and_undelivered_messages_not_acked(cli, store):
    cli.ok(
        "channel", "create", "g", "--as", "a", "--max-pending", "1", "--delivery", "at-least-once"
    )
    cli.ok("channel", "join", "g", "--as", "a", "b")
    first = int(cli.ok("send", "g", "m1", "--as", "a").stdout)
    queued = int(cli.ok("send", "g", "m2", "--as", "a").stdout)
    r = cli("ack", queued, "--as", "b", "--json")
    assert r.exit_code == 5 and "not been delivered" in r.error["message"]
    cli.ok("receive", "--as", "b")
    cli.ok("ack", first, "--as", "b")
    acks = cli.ok("messages", "--type", "ack", "--json").json()["messages"]
    assert [m["deliveries"][0]["state"] for m in acks] == ["unread"]


@pytest.mark.parametrize(
    "line",
    [
        '{"channel": "g", "from": "a", "content": "x", "type": 5}',
        '{"channel": "g", "from": "a", "content": "x", "delay": 1.5}',
        '{"channel": "g", "from": "a", "content": "x", "delay": true}',
        '{"channel": "g", "from": "a", "content": "x", "priority": true}',
        '{"channel": "g", "from": "a", "content": "x", "metadata": [1]}',
        '{"to": "a", "from": "a", "content": "x"}',
    ],
)
def test_batch_rejects_wrong_types_with_exit_3(cli, store, line):
    cli.ok("channel", "create", "g", "--as", "a")
    before = snapshot(store)
    r = cli("send", "--batch", "-", "--json", input=line + "\n")
    assert r.exit_code == 3 and r.error["line"] == 1
    assert snapshot(store) == before


def test_sort_direction_defaults_per_command(cli, store):
    cli.ok("channel", "create", "g", "--as", "a")
    cli.ok("channel", "join", "g", "--as", "a", "b")
    ids = [int(cli.ok("send", "g", f"m{i}", "--as", "a").stdout) for i in range(3)]
    got = cli.ok("receive", "--as", "b", "--sort", "created", "--limit", "1", "--json").json()
    assert [m["id"] for m in got["messages"]] == [ids[0]]  # FIFO even with --sort
    hist = cli.ok("messages", "--order", "asc", "--channel", "g", "--json").json()["messages"]
    assert [m["id"] for m in hist] == ids


def test_small_fixes(cli, store):
    cli.ok("channel", "create", "g", "--as", "a")
    assert cli("show", "99999999999999999999", "--json").error["code"] == "validation_failed"
    assert cli("send", "--to", "b,b", "x", "--as", "a").exit_code == 3
    cli.ok("subscribe", "_system", "#", "--as", "mon")
    r = cli("publish", "_system", "_system.message.deadletter", "{}", "--as", "acomm")
    assert r.exit_code == 5
    assert cli("tick", "--every", "0s").exit_code == 3


def test_no_subcommand_shows_help_without_an_empty_error(cli, store):
    r = cli()
    assert r.exit_code == 2 and r.stderr.startswith("Usage: acomm")
    r = cli("deadletter")
    assert r.exit_code == 2 and "acomm: error" not in r.stderr
