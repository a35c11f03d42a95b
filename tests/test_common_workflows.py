"""The common workflows (delegating a task, a threaded conversation, a response as the
responder's ack, reading history), each through the command line as a script would run it."""

from __future__ import annotations

import pytest
from conftest import assert_invariants
from freezegun import freeze_time

pytestmark = pytest.mark.cli


def test_one_to_one_task_delegation(cli, store):
    cli.ok(
        "channel",
        "create",
        "planner-executor",
        "--type",
        "direct",
        "--as",
        "agent-planner",
        "--delivery",
        "at-least-once",
    )
    cli.ok("channel", "join", "planner-executor", "--as", "agent-planner", "agent-executor")
    mid = int(
        cli.ok(
            "send",
            "planner-executor",
            "Deploy the authentication service to staging",
            "--type",
            "command",
            "--as",
            "agent-planner",
        ).stdout
    )
    got = cli.ok("receive", "planner-executor", "--as", "agent-executor", "--json").json()
    assert [m["id"] for m in got["messages"]] == [mid]
    cli.ok("ack", mid, "--as", "agent-executor", "--status", "received")
    cli.ok(
        "ack",
        mid,
        "--as",
        "agent-executor",
        "--status",
        "completed",
        "--note",
        "Deployed successfully. Health check passing.",
    )
    shown = cli.ok("show", mid, "--json").json()
    assert shown["status"] == "acknowledged"
    assert shown["deliveries"][0]["ack_status"] == "completed"
    acks = cli.ok("receive", "--as", "agent-planner", "--type", "ack", "--json").json()
    assert [m["content"] for m in acks["messages"]] == [
        "received",
        "Deployed successfully. Health check passing.",
    ]
    assert_invariants(store, {mid})


def test_threaded_conversation(cli, store):
    cli.ok("channel", "create", "discussion", "--type", "group", "--as", "agent-lead")
    cli.ok("channel", "join", "discussion", "--as", "agent-lead", "agent-researcher")
    cli.ok("channel", "join", "discussion", "--as", "agent-lead", "agent-reviewer")
    corr = cli.ok(
        "query",
        "discussion",
        "What is the recommended connection pool size for 10K concurrent users?",
        "--as",
        "agent-lead",
        "--timeout",
        "30s",
    ).stdout.strip()
    cli.ok(
        "respond",
        corr,
        "pool_size = num_cores * 2 + disk_spindles: 20 connections.",
        "--as",
        "agent-researcher",
    )
    cli.ok("respond", corr, "Agreed, but consider PgBouncer for bursts.", "--as", "agent-reviewer")
    thread = cli.ok("thread", corr, "--json").json()
    assert thread["correlation_id"] == corr
    assert [m["type"] for m in thread["messages"]] == ["query", "response", "response"]
    assert [m["sender"] for m in thread["messages"]] == [
        "agent-lead",
        "agent-researcher",
        "agent-reviewer",
    ]
    # responses go back to the asker only
    assert len(cli.ok("receive", "--as", "agent-lead", "--json").json()["messages"]) == 2
    # ...and answering acknowledged the query for each responder, so no inbox holds it
    assert cli.ok("receive", "--as", "agent-researcher", "--json").json()["messages"] == []
    query = cli.ok("show", thread["messages"][0]["id"], "--json").json()
    assert {d["recipient"]: d["ack_status"] for d in query["deliveries"]} == {
        "agent-researcher": "completed",
        "agent-reviewer": "completed",
    }


def test_response_counts_as_the_responders_ack(cli, store):
    cli.ok("channel", "create", "ask", "--as", "lead", "--delivery", "at-least-once")
    cli.ok("channel", "join", "ask", "--as", "lead", "helper")
    with freeze_time("2026-01-01 00:00:00") as clock:
        corr = cli.ok("query", "ask", "status?", "--as", "lead").stdout.strip()
        qid = cli.ok("thread", corr, "--json").json()["messages"][0]["id"]
        cli.ok("respond", corr, "all green", "--as", "helper")
        clock.tick(1000)
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 0
    d = cli.ok("show", qid, "--json").json()["deliveries"][0]
    assert (d["state"], d["ack_status"]) == ("acked", "completed")


def test_respond_and_thread_errors(cli, store):
    assert cli("respond", "nope", "x", "--as", "a").exit_code == 4
    assert cli("thread", "nope").exit_code == 4
    r = cli(
        "send",
        "x",
        "--to",
        "b",
        "--type",
        "response",
        "--correlation-id",
        "nope",
        "--as",
        "a",
        "--json",
    )
    assert r.exit_code == 3


def test_querying_message_history(cli, store):
    cli.ok(
        "channel",
        "create",
        "ops",
        "--as",
        "boss",
        "--delivery",
        "at-least-once",
        "--max-retries",
        "0",
        "--ack-timeout",
        "5s",
    )
    cli.ok("channel", "join", "ops", "--as", "boss", "worker")
    with freeze_time("2026-01-01 00:00:00") as clock:
        old = int(cli.ok("send", "ops", "old command", "--type", "command", "--as", "boss").stdout)
        clock.tick(7200)
        new = int(cli.ok("send", "ops", "new command", "--type", "command", "--as", "boss").stdout)
        chatter = int(cli.ok("send", "ops", "chatter", "--as", "boss").stdout)
        found = cli.ok(
            "messages", "--type", "command", "--since", "-1h", "--limit", "50", "--json"
        ).json()
        assert found["total_count"] == 1 and found["messages"][0]["id"] == new
        clock.tick(6)
        cli.ok("tick")
        dead = cli.ok("messages", "--status", "dead_letter", "--json").json()
        # every message but responses and acks is ack-tracked on an at-least-once channel
        assert {m["id"] for m in dead["messages"]} == {old, new, chatter}
        assert cli.ok("messages", "--status", "delivered", "--json").json()["total_count"] == 0
