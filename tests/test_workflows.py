"""Pub/sub event notification: a CI agent publishes build events, agents subscribed by topic
pattern get those that match; run from the shell as a user would."""

from __future__ import annotations

import pytest
from conftest import query, run

pytestmark = pytest.mark.cli

BODY = "Frontend build completed: 847 tests passed, bundle size 2.1 MB"


def _setup_ci_events(cli) -> None:
    cli.ok("channel", "create", "ci-events", "--type", "pubsub", "--as", "ci-agent")
    cli.ok("subscribe", "ci-events", "build.*.success", "--as", "deploy-agent")
    cli.ok("subscribe", "ci-events", "deploy.#", "--as", "monitor-agent")
    cli.ok("subscribe", "ci-events", "*.failure", "--as", "alert-agent")


def test_pubsub_event_notification(cli, store):
    _setup_ci_events(cli)
    sent = cli.ok(
        "publish", "ci-events", "build.frontend.success", BODY, "--as", "ci-agent", "--json"
    ).json()
    assert sent["recipients"] == ["deploy-agent"]

    # deploy-agent receives (matches build.*.success)
    got = cli.ok("receive", "ci-events", "--as", "deploy-agent", "--json").json()
    assert got["total_count"] == 1
    [msg] = got["messages"]
    assert (msg["id"], msg["sender"], msg["topic"], msg["content"], msg["channel"]) == (
        sent["id"],
        "ci-agent",
        "build.frontend.success",
        BODY,
        "ci-events",
    )

    # monitor-agent (deploy.#) and alert-agent (*.failure) do not
    for agent in ("monitor-agent", "alert-agent"):
        none = cli.ok("receive", "ci-events", "--as", agent, "--json").json()
        assert none == {"messages": [], "total_count": 0, "has_more": False}, agent

    # and the store holds exactly one delivery for it
    assert query(store, "SELECT recipient FROM deliveries WHERE message_id = ?", sent["id"]) == [
        ("deploy-agent",)
    ]


def test_pubsub_workflow_continues_to_the_other_subscribers(cli, store):
    _setup_ci_events(cli)
    cli.ok("publish", "ci-events", "build.frontend.success", BODY, "--as", "ci-agent")
    deploy = cli.ok(
        "publish",
        "ci-events",
        "deploy.staging.started",
        "rolling out",
        "--as",
        "ci-agent",
        "--json",
    ).json()
    fail = cli.ok(
        "publish", "ci-events", "build.failure", "backend broke", "--as", "ci-agent", "--json"
    ).json()
    assert deploy["recipients"] == ["monitor-agent"]
    assert fail["recipients"] == ["alert-agent"]
    assert cli.ok("receive", "--as", "monitor-agent", "--body").stdout == "rolling out\n"
    assert cli.ok("receive", "--as", "alert-agent", "--body").stdout == "backend broke\n"
    assert cli.ok("receive", "--as", "deploy-agent", "--body").stdout == BODY + "\n"


@pytest.mark.process
def test_pubsub_workflow_as_separate_processes(store):
    """The same workflow as a shell script runs it: every step its own process."""
    steps = [
        ("channel", "create", "ci-events", "--type", "pubsub", "--as", "ci-agent"),
        ("subscribe", "ci-events", "build.*.success", "--as", "deploy-agent"),
        ("subscribe", "ci-events", "deploy.#", "--as", "monitor-agent"),
        ("subscribe", "ci-events", "*.failure", "--as", "alert-agent"),
    ]
    for step in steps:
        r = run(*step)
        assert r.returncode == 0, (step, r.stderr)
    pub = run("publish", "ci-events", "build.frontend.success", "--as", "ci-agent", input=BODY)
    assert pub.returncode == 0, pub.stderr
    assert pub.stdout.strip().isdigit()
    got = run("receive", "ci-events", "--as", "deploy-agent", "--body")
    assert (got.returncode, got.stdout) == (0, BODY + "\n")
    for agent in ("monitor-agent", "alert-agent"):
        r = run("receive", "ci-events", "--as", agent, "--body")
        assert (r.returncode, r.stdout) == (0, ""), agent


def test_several_matching_patterns_give_one_delivery(cli, store):
    cli.ok("channel", "create", "ci-events", "--type", "pubsub", "--as", "ci-agent")
    for pattern in (
        "build.#",
        "build.*.success",
        "*.frontend.*",
        "build.frontend.success",
        "#",
        "*.*.success",
    ):
        cli.ok("subscribe", "ci-events", pattern, "--as", "eager")
    cli.ok("subscribe", "ci-events", "build.#", "--as", "other")
    sent = cli.ok(
        "publish", "ci-events", "build.frontend.success", BODY, "--as", "ci-agent", "--json"
    ).json()
    assert sent["recipients"] == ["eager", "other"]
    got = cli.ok("receive", "--as", "eager", "--json").json()
    assert [m["id"] for m in got["messages"]] == [sent["id"]]
    shown = cli.ok("show", str(sent["id"]), "--json").json()
    assert sorted(d["recipient"] for d in shown["deliveries"]) == ["eager", "other"]
    assert query(store, "SELECT count(*) FROM deliveries WHERE recipient = 'eager'") == [(1,)]


def test_unsubscribing_one_of_several_patterns_keeps_the_others(cli, store):
    cli.ok("channel", "create", "ci-events", "--type", "pubsub", "--as", "ci-agent")
    cli.ok("subscribe", "ci-events", "build.#", "--as", "eager")
    cli.ok("subscribe", "ci-events", "*.failure", "--as", "eager")
    cli.ok("unsubscribe", "ci-events", "build.#", "--as", "eager")
    a = cli.ok(
        "publish", "ci-events", "build.frontend.success", "x", "--as", "ci-agent", "--json"
    ).json()
    b = cli.ok("publish", "ci-events", "build.failure", "y", "--as", "ci-agent", "--json").json()
    assert (a["recipients"], b["recipients"]) == ([], ["eager"])
    subs = cli.ok("subscriptions", "ci-events", "--json").json()["subscriptions"]
    assert subs == [{"agent": "eager", "pattern": "*.failure"}]
