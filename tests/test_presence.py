"""Presence: every command acting as an agent records when (`agents.last_seen_at`), in the
transaction it already opens; reading history records nothing, nor does a refusal. The
commands run as users run them, on a real store, the clock moved by freezegun."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from freezegun import freeze_time
from registered import last_seen, register

from acomm_cli import clock as acomm_clock

pytestmark = pytest.mark.cli

T0 = "2026-03-01T09:00:00Z"


@pytest.fixture
def office(make_channel) -> Path:
    """alice's group `team` with bob; an at-least-once `work` channel from boss to w; every
    one of them registered (kind agent)."""
    make_channel("team", "alice", "bob")
    store = make_channel("work", "boss", "w", delivery="at-least-once", lease="2m")
    register(store, "alice", "bob", "boss", "w")
    return store


class Steps:
    """The frozen clock, moved a minute before each command: each command's time is its
    own, so the time recorded says which command recorded it."""

    def __init__(self, frozen) -> None:
        self.frozen = frozen

    def next(self) -> int:
        self.frozen.tick(60)
        return acomm_clock.now_ms()


@pytest.fixture
def steps():
    with freeze_time(T0) as frozen:
        yield Steps(frozen)


def test_sending_records_the_sender_and_no_one_else(cli, office, steps):
    assert last_seen(office, "alice") is None  # registered, never seen
    t = steps.next()
    cli.ok("send", "team", "hello", "--as", "alice")
    assert last_seen(office, "alice") == t
    assert last_seen(office, "bob") is None  # a recipient has not acted
    t = steps.next()
    cli.ok("send", "--to", "bob", "a word", "--as", "alice")
    assert last_seen(office, "alice") == t
    t = steps.next()
    cli.ok("query", "team", "status?", "--as", "alice")
    assert last_seen(office, "alice") == t


def test_a_batch_records_each_of_its_senders(cli, office, steps, tmp_path):
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        json.dumps({"from": "alice", "channel": "team", "content": "one"})
        + "\n"
        + json.dumps({"from": "bob", "channel": "team", "content": "two"})
        + "\n"
    )
    t = steps.next()
    cli.ok("send", "--batch", str(batch))
    assert (last_seen(office, "alice"), last_seen(office, "bob")) == (t, t)


def test_reading_the_inbox_and_acknowledging_record_the_reader(cli, office, steps):
    cli.ok("send", "work", "job 1", "--as", "boss")
    cli.ok("send", "work", "job 2", "--as", "boss")
    cli.ok("send", "work", "job 3", "--as", "boss")
    t = steps.next()
    cli.ok("receive", "--as", "w", "--peek")  # a peek writes nothing, presence included
    assert last_seen(office, "w") is None
    got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
    assert last_seen(office, "w") == t
    first, second, third = (m["id"] for m in got)
    t = steps.next()
    cli.ok("ack", str(first), "--status", "in_progress", "--as", "w")
    assert last_seen(office, "w") == t
    t = steps.next()
    cli.ok("extend", str(first), "--by", "5m", "--as", "w")
    assert last_seen(office, "w") == t
    t = steps.next()
    cli.ok("ack", str(first), str(second), "--as", "w")
    assert last_seen(office, "w") == t
    t = steps.next()
    cli.ok("nack", str(third), "--requeue", "--as", "w")
    assert last_seen(office, "w") == t
    t = steps.next()
    cli.ok("receive", "--as", "w", "--ack", "completed")
    assert last_seen(office, "w") == t
    assert last_seen(office, "boss") < t  # the acks went back to boss: boss did nothing


def test_answering_a_query_records_the_responder(cli, office, steps):
    corr = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()["correlation_id"]
    t = steps.next()
    cli.ok("respond", corr, "all green", "--as", "bob")
    assert last_seen(office, "bob") == t


def test_every_task_verb_records_its_agent(cli, office, steps):
    t = steps.next()
    tid = cli.ok("task", "create", "--to", "bob", "run the tests", "--as", "alice").stdout.strip()
    assert last_seen(office, "alice") == t
    for verb in (
        ["accept", tid, "--eta", "10m"],
        ["update", tid, "--progress", "50"],
        ["complete", tid, "all pass"],
    ):
        t = steps.next()
        cli.ok("task", *verb, "--as", "bob")
        assert last_seen(office, "bob") == t, verb[0]
    other = cli.ok("task", "create", "--to", "bob", "again", "--as", "alice").stdout.strip()
    t = steps.next()
    cli.ok("task", "fail", other, "--reason", "no", "--as", "bob")
    assert last_seen(office, "bob") == t


def test_reading_history_records_nothing(cli, office, steps):
    sent = cli.ok("query", "team", "status?", "--as", "alice", "--json").json()
    cli.ok("receive", "--as", "bob")
    before = {a: last_seen(office, a) for a in ("alice", "bob")}
    steps.next()
    cli.ok("messages", "--channel", "team")
    cli.ok("show", str(sent["id"]))
    cli.ok("thread", sent["correlation_id"])
    cli.ok("stats", "--as", "bob")
    cli.ok("task", "list", "--as", "bob")
    assert {a: last_seen(office, a) for a in ("alice", "bob")} == before


def test_a_refused_command_records_nothing(cli, office, steps):
    steps.next()
    assert cli("ack", "999", "--as", "w").exit_code == 4
    assert cli("send", "team", "", "--as", "alice").exit_code == 3
    assert cli("send", "--to", "alice", "me?", "--as", "alice").exit_code == 3
    assert cli("task", "accept", "999", "--as", "bob").exit_code == 4
    assert {a: last_seen(office, a) for a in ("alice", "bob", "w")} == dict.fromkeys(
        ("alice", "bob", "w")
    )


def test_a_name_the_open_directory_registers_is_seen_from_its_first_act(cli, office, steps):
    """On an open store the directory registers a name at its first use; presence records
    that same act (the registration and the time in one transaction)."""
    t = steps.next()
    cli.ok("send", "--to", "alice", "hi", "--as", "dave")
    assert last_seen(office, "dave") == t


def test_presence_never_goes_back_and_is_kept_to_the_second(cli, office, steps):
    t = steps.next()
    cli.ok("send", "team", "one", "--as", "alice")
    steps.frozen.tick(0.5)  # within the second: the time recorded stays
    cli.ok("send", "team", "two", "--as", "alice")
    assert last_seen(office, "alice") == t
    steps.frozen.tick(0.5)
    cli.ok("send", "team", "three", "--as", "alice")
    assert last_seen(office, "alice") == t + 1000
    steps.frozen.tick(-120)  # a command that read an earlier clock leaves the later time
    cli.ok("send", "team", "four", "--as", "alice")
    assert last_seen(office, "alice") == t + 1000


def test_stats_shows_each_agents_last_seen(cli, office, steps):
    cli.ok("send", "team", "hello", "--as", "alice")
    cli.ok("send", "work", "job", "--as", "boss")
    t = steps.next()
    cli.ok("receive", "--as", "bob")
    doc = cli.ok("stats", "--json").json()
    seen = {a["agent"]: a["last_seen_at"] for a in doc["agents"]}
    assert seen["bob"] == acomm_clock.iso(t) == "2026-03-01T09:01:00.000Z"
    assert seen["w"] is None  # registered, has mail, never acted
    mine = cli.ok("stats", "--as", "bob", "--json").json()["agents"]
    assert [a["last_seen_at"] for a in mine] == [acomm_clock.iso(t)]
    # piped: one more field at the end of each agent line; --csv: a last_seen_at column
    [line] = [x for x in cli.ok("stats").stdout.splitlines() if x.startswith("agent\tbob\t")]
    assert line.split("\t")[-1] == "2026-03-01T09:01:00.000Z"
    rows = cli.ok("stats", "--csv").stdout.splitlines()
    header = rows[0].split(",")
    bob = next(r.split(",") for r in rows if r.startswith("agent,bob,"))
    assert bob[header.index("last_seen_at")] == "2026-03-01T09:01:00.000Z"


def test_a_dispatch_run_records_its_agent(cli, office, steps, tmp_path):
    script = tmp_path / "ok.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
    script.chmod(0o755)
    (office.parent / "config.yaml").write_text(
        json.dumps({"agents": {"bob": {"run": str(script)}}})
    )
    cli.ok("send", "team", "do it", "--as", "alice")
    t = steps.next()
    assert cli.ok("tick", "--json").json()["dispatch"]["accepted"] == 1
    assert last_seen(office, "bob") == t


def test_mcp_tool_calls_record_the_servers_agent(office, steps):
    """The MCP server's tools act as its agent (`acomm mcp --as bob`) through the same
    engine calls: what they write records presence; what they only read does not."""
    from acomm_cli.cli.commands.mcp_run import _encoders
    from acomm_cli.mcpserver.tools import StoreOptions, Toolbox

    box = Toolbox(StoreOptions(path=office), "bob", _encoders())
    t = steps.next()
    box.send(channel="team", body="from mcp")
    assert last_seen(office, "bob") == t
    steps.next()
    box.messages()
    assert last_seen(office, "bob") == t
    t = steps.next()
    box.receive()
    assert last_seen(office, "bob") == t


def test_gateway_agent_api_calls_record_the_tokens_agent(cli, isolated_env, steps):
    """The gateway's `/agent/v1` endpoints act as the session token's agent, through the
    same engine calls (driven here in process, on this test's node store)."""
    from acomm_cli.federation.agentapi import AgentApi, Encoders
    from acomm_cli.output import render_messages

    cli.ok("node", "init", "--id", "na")
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "bob", "--as", "alice")
    store = isolated_env  # the store this test runs on
    register(store, "alice", "bob")
    token = cli.ok("--json", "token", "create", "--agent", "bob").json()["token"]
    api = AgentApi(
        store,
        "na",
        5000,
        None,
        Encoders(message=render_messages.message_doc, send=render_messages.send_doc),
    )
    t = steps.next()
    body = json.dumps({"channel": "team", "body": "via the gateway"}).encode()
    status, _ = api._call(token, "send", body, api._send)
    assert status == 200 and last_seen(store, "bob") == t
