"""Agent dispatch: configured agents' commands run on their messages, with
receipts, retries, dead letters, trigger rules and dedupe keys. The agents are real small
shell scripts; the store is a real file; time moves with freezegun."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from conftest import ACOMM, query, snapshot
from freezegun import freeze_time

from acomm_cli.dispatch import dispatcher as dispatch
from acomm_cli.dispatch.agents import AgentSpec, Rules, parse_agents
from acomm_cli.dispatch.runner import RunOutcome

pytestmark = pytest.mark.cli

T0 = "2026-01-01T00:00:00Z"
T0_MS = 1767225600000


def agent_script(tmp_path: Path, name: str, body: str) -> str:
    """An executable /bin/sh script in tmp_path/agents; `$ACOMM` is the acomm under test."""
    d = tmp_path / "agents"
    d.mkdir(exist_ok=True)
    p = d / name
    p.write_text(f"#!/bin/sh\nACOMM={ACOMM}\nWORK={tmp_path}\n{body}")
    p.chmod(0o755)
    return str(p)


def configure(store: Path, **agents: dict) -> None:
    """config.yaml beside the store (JSON is YAML)."""
    (store.parent / "config.yaml").write_text(json.dumps({"agents": agents}))


def receipts(cli, *args: str) -> list[dict]:
    return cli.ok("receipts", "--json", *args).json()["receipts"]


def state(store: Path, mid: int, who: str) -> str:
    return query(
        store, "SELECT state FROM deliveries WHERE message_id = ? AND recipient = ?", mid, who
    )[0][0]


# ---------------------------------------------------------------- outcomes


def test_success_reads_the_message_and_hands_the_command_everything(cli, team, tmp_path):
    """Exit 0: accepted, read. stdin is what `receive --json` prints for the message; the
    environment names store, agent, message, correlation id, channel and run; the store is
    not locked while the command runs (it sends a message itself)."""
    run = agent_script(
        tmp_path,
        "record.sh",
        """
cat > "$WORK/stdin.json"
env | grep '^ACOMM_' | sort > "$WORK/env.txt"
"$ACOMM" send team "bob is on it" >/dev/null || exit 9
echo "done with $ACOMM_MESSAGE_ID"
""",
    )
    configure(team, bob={"run": run})
    mid = int(
        cli.ok(
            "send", "team", "review PR 7", "--type", "command", "--as", "alice", "--meta", "pr=7"
        ).stdout
    )
    expected = cli.ok("receive", "--as", "bob", "--peek", "--json").json()["messages"][0]
    doc = cli.ok("dispatch", "--json").json()
    assert (doc["accepted"], doc["failed"], doc["dead_lettered"]) == (1, 0, 0)
    [r] = doc["receipts"]
    assert (r["message_id"], r["agent"], r["status"], r["exit_code"], r["attempt"]) == (
        mid,
        "bob",
        "accepted",
        0,
        1,
    )
    assert r["reason"] == f"done with {mid}" and r["next_retry_at"] is None
    assert r["run_id"].startswith("run_") and r["finished_at"] >= r["started_at"]
    assert json.loads((tmp_path / "stdin.json").read_text()) == expected
    env = dict(line.split("=", 1) for line in (tmp_path / "env.txt").read_text().splitlines())
    assert env["ACOMM_STORE"] == str(team.resolve())
    assert (env["ACOMM_AGENT"], env["ACOMM_MESSAGE_ID"], env["ACOMM_CHANNEL"]) == (
        "bob",
        str(mid),
        "team",
    )
    assert env["ACOMM_CORRELATION_ID"] == expected["correlation_id"]
    assert env["ACOMM_RUN_ID"] == r["run_id"]
    assert state(team, mid, "bob") == "read"
    assert cli.ok("receive", "--as", "alice", "--body").stdout == "bob is on it\n"
    assert receipts(cli) == [r]
    # done: the next pass finds nothing
    assert cli.ok("dispatch", "--json").json()["receipts"] == []


def test_exit_3_is_ignored_with_the_reason_from_stdout(cli, team, tmp_path):
    configure(team, bob={"run": agent_script(tmp_path, "no.sh", "echo 'not my area'\nexit 3")})
    mid = int(cli.ok("send", "team", "fix the printer", "--as", "alice").stdout)
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["status"], r["reason"], r["exit_code"]) == ("ignored", "not my area", 3)
    assert state(team, mid, "bob") == "read"


def test_a_run_list_runs_without_a_shell_and_a_missing_program_fails_to_start(cli, team, tmp_path):
    configure(
        team,
        bob={"run": ["/bin/echo", "$HOME; not expanded"]},
        carol={"run": [str(tmp_path / "nowhere")], "max_attempts": 1},
    )
    cli.ok("channel", "join", "team", "--as", "alice", "carol")
    cli.ok("send", "team", "hi", "--as", "alice")
    got = {r["agent"]: r for r in cli.ok("dispatch", "--json").json()["receipts"]}
    assert got["bob"]["reason"] == "$HOME; not expanded"
    assert got["carol"]["status"] == "failed"
    assert got["carol"]["reason"].startswith("could not start: No such file")


def test_failure_then_success_on_retry(cli, team, tmp_path):
    """Exit 1: failed with the end of stderr, due again after backoff x 2^(attempt-1); not
    before; the next run succeeds (attempt 2)."""
    run = agent_script(
        tmp_path,
        "flaky.sh",
        """
if [ ! -e "$WORK/failed-once" ]; then
  touch "$WORK/failed-once"; echo "lots of noise" >&2; echo "database is down" >&2; exit 1
fi
echo fine""",
    )
    configure(team, bob={"run": run, "backoff": "30s", "jitter": 0, "max_attempts": 3})
    with freeze_time(T0) as frozen:
        mid = int(cli.ok("send", "team", "migrate", "--type", "command", "--as", "alice").stdout)
        r = cli.ok("tick")
        assert "dispatch_failed=1" in r.stdout
        assert f"bob failed on message {mid} (attempt 1" in r.stderr
        assert "retry at 2026-01-01T00:00:30.000Z" in r.stderr
        [first] = receipts(cli)
        assert (first["status"], first["exit_code"], first["attempt"]) == ("failed", 1, 1)
        assert first["reason"] == "exit 1: lots of noise\ndatabase is down"
        assert first["next_retry_at"] == "2026-01-01T00:00:30.000Z"
        assert state(team, mid, "bob") == "unread"  # still waiting for its agent
        frozen.move_to("2026-01-01T00:00:29.999Z")
        assert "dispatch_accepted=0 dispatch_ignored=0 dispatch_failed=0" in cli.ok("tick").stdout
        frozen.move_to("2026-01-01T00:00:30Z")
        assert cli.ok("dispatch", "--dry-run", "--json").json()["due"] == [
            {
                "message_id": mid,
                "agent": "bob",
                "channel": "team",
                "type": "command",
                "priority": "normal",
                "attempt": 2,
                "action": "run",
            }
        ]
        assert "dispatch_accepted=1" in cli.ok("tick").stdout
    second, _ = receipts(cli)
    assert (second["status"], second["attempt"], second["reason"]) == ("accepted", 2, "fine")
    assert receipts(cli, "--message", str(mid), "--status", "failed") == [first]
    assert state(team, mid, "bob") == "read"


def test_backoff_doubles_with_jitter_on_top():
    spec = AgentSpec("a", "true", backoff_ms=30_000, jitter=0.1)
    assert [dispatch.retry_delay_ms(spec, n, 0.0) for n in (1, 2, 3, 4)] == [
        30_000,
        60_000,
        120_000,
        240_000,
    ]
    assert dispatch.retry_delay_ms(spec, 2, 0.5) == 63_000
    assert dispatch.retry_delay_ms(spec, 2, 0.999999) < 66_000


@pytest.mark.parametrize(
    "outcome,expected",
    [
        (RunOutcome(0, " ok \n", "", 5), ("accepted", "ok")),
        (RunOutcome(0, "", "warning", 5), ("accepted", None)),
        (RunOutcome(3, "", "", 5), ("ignored", "ignored")),
        (RunOutcome(2, "", "bad input", 5), ("failed", "exit 2: bad input")),
        (RunOutcome(-9, "", "", 5), ("failed", "killed by signal 9")),
        (RunOutcome(None, "", "", 5, timed_out=True), ("failed", "timed out after 1.5s")),
        (
            RunOutcome(None, "", "", 0, start_error="Permission denied"),
            ("failed", "could not start: Permission denied"),
        ),
    ],
)
def test_exit_status_to_receipt(outcome, expected):
    assert dispatch.classify(outcome, 1500) == expected


def test_dead_letter_after_max_attempts_then_replay_gets_a_fresh_budget(cli, team, tmp_path):
    run = agent_script(
        tmp_path,
        "broken.sh",
        """
if [ -e "$WORK/fixed" ]; then echo repaired; exit 0; fi
echo "cannot reach the API" >&2; exit 2""",
    )
    configure(team, bob={"run": run, "max_attempts": 2, "backoff": "0s"})
    cli.ok("subscribe", "_system", "_system.message.#", "--as", "ops")
    mid = int(cli.ok("send", "team", "sync", "--as", "alice").stdout)
    assert cli.ok("dispatch", "--json").json()["failed"] == 1
    doc = cli.ok("dispatch", "--json").json()
    assert (doc["failed"], doc["dead_lettered"]) == (1, 1)
    last = doc["receipts"][0]
    assert (last["attempt"], last["next_retry_at"]) == (2, None)
    assert last["reason"] == "exit 2: cannot reach the API; dead-lettered (dispatch_failed)"
    [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
    assert (dl["message_id"], dl["recipient"], dl["reason"], dl["retry_count"]) == (
        mid,
        "bob",
        "dispatch_failed",
        1,
    )
    assert "cannot reach the API" in dl["last_error"]
    [note] = cli.ok("receive", "--as", "ops", "--json").json()["messages"]
    assert json.loads(note["content"]) == {
        "message_id": mid,
        "recipient": "bob",
        "channel": "team",
        "reason": "dispatch_failed",
        "retry_count": 1,
    }
    assert state(team, mid, "bob") == "dead"
    assert cli.ok("dispatch", "--json").json()["receipts"] == []  # dead: nothing runs
    (tmp_path / "fixed").touch()
    cli.ok("deadletter", "replay", str(mid), "--recipient", "bob")
    [again] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (again["status"], again["attempt"]) == ("accepted", 1)
    assert [r["status"] for r in receipts(cli, "--agent", "bob")] == [
        "accepted",
        "failed",
        "failed",
    ]


# ---------------------------------------------------------------- queries and acks


def test_a_query_is_answered_by_stdout(cli, team, tmp_path):
    run = agent_script(
        tmp_path,
        "oracle.sh",
        """
python3 -c 'import json, sys; print("answer to: " + json.load(sys.stdin)["content"])'
""",
    )
    configure(team, bob={"run": run, "on": {"types": ["query"]}})
    corr = cli.ok("query", "team", "what is 6 x 7?", "--as", "alice").stdout.strip()
    cli.ok("dispatch")
    thread = cli.ok("thread", corr, "--json").json()["messages"]
    assert [(m["sender"], m["type"], m["content"]) for m in thread] == [
        ("alice", "query", "what is 6 x 7?"),
        ("bob", "response", "answer to: what is 6 x 7?"),
    ]
    [answer] = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert answer["correlation_id"] == corr


def test_a_query_with_empty_stdout_gets_no_answer(cli, team, tmp_path):
    configure(team, bob={"run": agent_script(tmp_path, "quiet.sh", "cat >/dev/null")})
    corr = cli.ok("query", "team", "anyone?", "--as", "alice").stdout.strip()
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert r["status"] == "accepted"
    assert [m["type"] for m in cli.ok("thread", corr, "--json").json()["messages"]] == ["query"]


def test_an_ack_tracked_message_is_acknowledged_with_stdout_as_note(cli, store, tmp_path):
    cli.ok("channel", "create", "jobs", "--as", "alice", "--delivery", "at-least-once")
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    cli.ok("channel", "join", "jobs", "--as", "alice", "carol")
    configure(
        store,
        bob={"run": agent_script(tmp_path, "ok.sh", "printf '  deployed 1.4 \\n\\n'")},
        carol={"run": agent_script(tmp_path, "meh.sh", "echo 'not mine'; exit 3")},
    )
    mid = int(cli.ok("send", "jobs", "deploy", "--type", "command", "--as", "alice").stdout)
    cli.ok("dispatch")
    acks = {m["sender"]: m for m in cli.ok("receive", "--as", "alice", "--json").json()["messages"]}
    assert acks["bob"]["type"] == "acknowledgment"
    assert acks["bob"]["content"] == "deployed 1.4"
    assert acks["bob"]["metadata"] == {"ack_for": str(mid), "status": "completed"}
    assert acks["carol"]["content"] == "ignored: not mine"
    doc = cli.ok("show", str(mid), "--json").json()
    assert {d["recipient"]: (d["state"], d["ack_status"]) for d in doc["deliveries"]} == {
        "bob": ("acked", "completed"),
        "carol": ("acked", "completed"),
    }
    assert doc["status"] == "acknowledged"  # no redelivery: the ack timer is stopped


def test_a_response_too_large_for_the_channel_is_a_failure(cli, store, tmp_path):
    cli.ok("channel", "create", "small", "--as", "alice", "--max-message-size", "10")
    cli.ok("channel", "join", "small", "--as", "alice", "bob")
    configure(
        store,
        bob={
            "run": agent_script(tmp_path, "long.sh", "echo 'far too long an answer'"),
            "max_attempts": 1,
        },
    )
    corr = cli.ok("query", "small", "hm?", "--as", "alice").stdout.strip()
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert r["status"] == "failed" and r["exit_code"] == 0
    assert r["reason"].startswith("accepted, but content")
    assert [m["type"] for m in cli.ok("thread", corr, "--json").json()["messages"]] == ["query"]
    assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 1


# ---------------------------------------------------------------- rules


def test_trigger_rules_let_replies_and_mentions_through_never_likes(cli, store, tmp_path):
    """Events as messages with metadata (no event of their own: the agent's rules alone
    decide); the rules let replies and mentions to agents through, never likes, never humans
    as targets."""
    cli.ok("channel", "create", "forum", "--type", "pubsub", "--as", "web")
    cli.ok("subscribe", "forum", "comment.#", "--as", "responder")
    cli.ok("subscribe", "forum", "mention.#", "--as", "responder")
    cli.ok("subscribe", "forum", "like.#", "--as", "responder")
    (store.parent / "config.yaml").write_text(f"""
agents:
  responder:
    run: "{agent_script(tmp_path, "respond.sh", 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"')}"
    on:
      channels: [forum]
      metadata:
        event_type: [comment.replied, mention.created]
        target_user_type: agent
""")
    events = [
        ("comment.replied", "comment.replied", "agent"),
        ("comment.replied", "comment.replied", "human"),
        ("mention.created", "mention.created", "agent"),
        ("like.created", "like.created", "agent"),
    ]
    ids = [
        int(
            cli.ok(
                "publish",
                "forum",
                topic,
                "event",
                "--as",
                "web",
                "--meta",
                f"event_type={etype}",
                "--meta",
                f"target_user_type={target}",
            ).stdout
        )
        for topic, etype, target in events
    ]
    cli.ok("tick")
    assert (tmp_path / "ran").read_text().split() == [str(ids[0]), str(ids[2])]
    # the others are read with an `ignored` receipt, reason `filtered` (`unmatched: ignore`,
    # the default; test_dispatch_unmatched.py has `keep`)
    assert cli.ok("receive", "--as", "responder", "--json").json()["messages"] == []
    ignored = receipts(cli, "--status", "ignored")
    assert sorted((r["message_id"], r["reason"]) for r in ignored) == [
        (ids[1], "filtered"),
        (ids[3], "filtered"),
    ]


def _msg(**kw):
    base = {"type_": "text", "topic": None, "channel": "team", "sender": "alice", "metadata": {}}
    return {**base, **kw}


@pytest.mark.parametrize(
    "on,message,hit",
    [
        ({}, _msg(), True),
        ({"types": ["command", "query"]}, _msg(type_="command"), True),
        ({"types": ["command", "query"]}, _msg(type_="text"), False),
        ({"types": "ack"}, _msg(type_="acknowledgment"), True),
        ({"topics": ["review.#"]}, _msg(topic="review.code.py"), True),
        ({"topics": ["review.#"]}, _msg(topic="build.done"), False),
        ({"topics": ["review.#"]}, _msg(topic=None), False),
        ({"topics": ["*.failure", "deploy"]}, _msg(topic="lint.failure"), True),
        ({"channels": ["code"]}, _msg(channel="team"), False),
        ({"from": ["alice"]}, _msg(), True),
        ({"from": ["carol"]}, _msg(), False),
        ({"metadata": {"n": 5, "ok": True}}, _msg(metadata={"n": "5", "ok": "true"}), True),
        ({"metadata": {"n": [5, 6]}}, _msg(metadata={"n": 7}), False),
        ({"metadata": {"n": 5}}, _msg(metadata={}), False),
        ({"types": ["command"], "channels": ["team"]}, _msg(type_="command"), True),
        ({"types": ["command"], "channels": ["code"]}, _msg(type_="command"), False),
    ],
)
def test_rules_every_condition_must_hold_any_value_will_do(on, message, hit):
    spec = parse_agents({"a": {"run": "true", "on": on}}, None)["a"]
    assert spec.rules.match(**message) is hit


def test_rules_pick_per_agent_and_with_keep_non_matching_messages_stay_unread(cli, team, tmp_path):
    cli.ok("channel", "join", "team", "--as", "alice", "carol")
    rec = agent_script(tmp_path, "rec.sh", 'echo "$ACOMM_AGENT $ACOMM_MESSAGE_ID" >> "$WORK/ran"')
    configure(
        team,
        bob={"run": rec, "on": {"types": ["command"]}, "unmatched": "keep"},
        carol={"run": rec, "on": {"types": ["query"]}, "unmatched": "keep"},
    )
    text = int(cli.ok("send", "team", "chat", "--as", "alice").stdout)
    cmd = int(cli.ok("send", "team", "do", "--type", "command", "--as", "alice").stdout)
    cli.ok("dispatch")
    assert (tmp_path / "ran").read_text().splitlines() == [f"bob {cmd}"]
    assert state(team, text, "bob") == "unread" and state(team, cmd, "carol") == "unread"
    (tmp_path / "ran").unlink()
    assert cli.ok("dispatch", "--agent", "bob", "--json").json()["receipts"] == []


def test_a_message_from_the_agent_itself_never_triggers_it(cli, store, tmp_path):
    cli.ok("channel", "create", "loud", "--as", "bob", "--echo")
    cli.ok("channel", "join", "loud", "--as", "bob", "alice")
    configure(store, bob={"run": agent_script(tmp_path, "x.sh", 'touch "$WORK/ran"')})
    mid = int(cli.ok("send", "loud", "note to self", "--as", "bob").stdout)
    assert state(store, mid, "bob") == "unread"  # echo: bob has a delivery of his own
    # `unmatched: ignore` (the default): read with an ignored receipt, the command never runs
    [due] = cli.ok("dispatch", "--dry-run", "--json").json()["due"]
    assert (due["message_id"], due["action"]) == (mid, "ignore")
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["status"], r["reason"], r["exit_code"]) == (
        mid,
        "ignored",
        "filtered",
        None,
    )
    assert not (tmp_path / "ran").exists() and state(store, mid, "bob") == "read"
    # `unmatched: keep`: left unread, for `receive`
    configure(
        store, bob={"run": agent_script(tmp_path, "x.sh", 'touch "$WORK/ran"'), "unmatched": "keep"}
    )
    mid = int(cli.ok("send", "loud", "another", "--as", "bob").stdout)
    assert cli.ok("dispatch", "--dry-run", "--json").json()["due"] == []
    assert cli.ok("dispatch", "--json").json()["receipts"] == []
    assert not (tmp_path / "ran").exists() and state(store, mid, "bob") == "unread"


def test_most_urgent_first_then_oldest_and_max(cli, team, tmp_path):
    configure(
        team, bob={"run": agent_script(tmp_path, "r.sh", 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"')}
    )
    low = int(cli.ok("send", "team", "a", "--as", "alice", "--priority", "low").stdout)
    n1 = int(cli.ok("send", "team", "b", "--as", "alice").stdout)
    urgent = int(cli.ok("send", "team", "c", "--as", "alice", "--priority", "urgent").stdout)
    n2 = int(cli.ok("send", "team", "d", "--as", "alice").stdout)
    due = cli.ok("dispatch", "--dry-run", "--json").json()["due"]
    assert [d["message_id"] for d in due] == [urgent, n1, n2, low]
    assert len(cli.ok("dispatch", "--max", "3", "--json").json()["receipts"]) == 3
    assert cli.ok("dispatch", "--max", "3", "--json").json()["receipts"][0]["message_id"] == low
    assert (tmp_path / "ran").read_text().split() == [str(urgent), str(n1), str(n2), str(low)]


# ---------------------------------------------------------------- dedupe keys


def test_a_dedupe_key_already_handled_is_ignored_as_duplicate(cli, team, tmp_path):
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "--as", "alice", "bob")
    configure(
        team, bob={"run": agent_script(tmp_path, "r.sh", 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"')}
    )
    with freeze_time(T0) as frozen:
        first = int(
            cli.ok(
                "send", "team", "reply 8801", "--as", "alice", "--dedupe-key", "reply:8801:5"
            ).stdout
        )
        cli.ok("dispatch")
        # the same event through another channel: the send is not deduplicated, the agent is
        second = int(
            cli.ok(
                "send", "other", "reply 8801", "--as", "alice", "--dedupe-key", "reply:8801:5"
            ).stdout
        )
        [dup] = cli.ok("dispatch", "--json").json()["receipts"]
        assert (dup["message_id"], dup["status"], dup["reason"], dup["exit_code"]) == (
            second,
            "ignored",
            "duplicate",
            None,
        )
        assert state(team, second, "bob") == "read"
        # outside the channel's dedupe window (24 h) the key counts as new
        frozen.tick(24 * 3600 + 1)
        third = int(
            cli.ok(
                "send", "other", "reply 8801", "--as", "alice", "--dedupe-key", "reply:8801:5"
            ).stdout
        )
        [new] = cli.ok("dispatch", "--json").json()["receipts"]
        assert (new["message_id"], new["status"]) == (third, "accepted")
    assert (tmp_path / "ran").read_text().split() == [str(first), str(third)]


# ---------------------------------------------------------------- the commands


def test_tick_dispatches_when_agents_are_configured_and_not_with_no_dispatch(cli, team, tmp_path):
    assert "dispatch" not in cli.ok("tick", "--json").json()  # no agents: nothing to say
    configure(team, bob={"run": agent_script(tmp_path, "ok.sh", "true")})
    cli.ok("send", "team", "x", "--as", "alice")
    assert "dispatch" not in cli.ok("tick", "--no-dispatch", "--json").json()
    assert receipts(cli) == []
    assert cli.ok("tick", "--json").json()["dispatch"] == {
        "accepted": 1,
        "ignored": 0,
        "failed": 0,
        "dead_lettered": 0,
    }
    for n in range(3):
        cli.ok("send", "team", f"m{n}", "--as", "alice")
    before = snapshot(team)
    assert cli("tick", "--max", "-1", "--json").exit_code == 3
    assert snapshot(team) == before
    assert cli.ok("tick", "--max", "2", "--json").json()["dispatch"]["accepted"] == 2
    assert cli.ok("tick", "--max", "2", "--json").json()["dispatch"]["accepted"] == 1


def test_dispatch_needs_agents_and_a_known_agent(cli, team, tmp_path):
    r = cli("dispatch", "--json")
    assert r.exit_code == 2 and r.error["field"] == "agents"
    configure(team, bob={"run": "true"})
    r = cli("dispatch", "--agent", "zed", "--json")
    assert r.exit_code == 4 and r.error["field"] == "agent"
    assert cli("dispatch", "--max", "-1").exit_code == 3
    assert cli("receipts", "--status", "weird").exit_code == 3


def test_dry_run_changes_nothing(cli, team, tmp_path):
    configure(team, bob={"run": agent_script(tmp_path, "x.sh", 'touch "$WORK/ran"')})
    mid = cli.ok("send", "team", "x", "--as", "alice").stdout.strip()
    before = snapshot(team)
    assert cli.ok("dispatch", "--dry-run").stdout == f"{mid}\tbob\tteam\ttext\tnormal\t1\trun\n"
    assert snapshot(team) == before
    assert not (tmp_path / "ran").exists()


def test_receipts_plain_lines_and_filters(cli, team, tmp_path):
    cli.ok("channel", "join", "team", "--as", "alice", "carol")
    configure(team, bob={"run": "echo yes"}, carol={"run": "echo no; exit 3"})
    mid = int(cli.ok("send", "team", "x", "--as", "alice").stdout)
    cli.ok("dispatch")
    lines = [line.split("\t") for line in cli.ok("receipts").stdout.splitlines()]
    assert sorted((c[1], c[2], c[3], c[4], c[5], c[8]) for c in lines) == [
        (str(mid), "bob", "accepted", "0", "1", "yes"),
        (str(mid), "carol", "ignored", "3", "1", "no"),
    ]
    assert [r["agent"] for r in receipts(cli, "--agent", "carol")] == ["carol"]
    assert receipts(cli, "--message", str(mid + 1)) == []
    doc = cli.ok("receipts", "--json", "--limit", "1").json()
    assert (len(doc["receipts"]), doc["total_count"]) == (1, 2)


def test_compaction_takes_receipts_with_their_messages(cli, team, tmp_path):
    configure(team, bob={"run": "true"})
    cli.ok("send", "team", "x", "--as", "alice")
    cli.ok("dispatch")
    assert len(receipts(cli)) == 1
    cli.ok("compact")
    assert receipts(cli) == []
    assert query(team, "SELECT count(*) FROM dispatch_claims") == [(0,)]


# ---------------------------------------------------------------- configuration


def test_config_show_lists_agents(cli, store, tmp_path):
    (store.parent / "config.yaml").write_text("""
agents:
  reviewer:
    run: "./agents/review.sh"
    on: {types: [command, query], topics: ["review.#"], channels: [code]}
    timeout: 10m
    max_attempts: 5
    backoff: 30s
    cwd: work
""")
    doc = cli.ok("config", "show", "--json").json()
    src = f"file ({store.parent / 'config.yaml'})"
    assert doc["agents"] == {
        "reviewer": {
            "run": "./agents/review.sh",
            "on": {"types": ["command", "query"], "topics": ["review.#"], "channels": ["code"]},
            "timeout_ms": 600_000,
            "max_attempts": 5,
            "backoff_ms": 30_000,
            "jitter": 0.1,
            "cwd": str(store.parent / "work"),
            "unmatched": "ignore",
            "source": src,
        }
    }
    plain = cli.ok("config", "show").stdout
    assert "agents.reviewer.run\t./agents/review.sh\t" in plain
    assert 'agents.reviewer.on\t{"types": ["command", "query"]' in plain


@pytest.mark.parametrize(
    "agents,key",
    [
        ({"bob": {"run": "x", "tiemout": "1s"}}, "agents.bob.tiemout"),
        ({"bob": {"on": {}}}, "agents.bob.run"),
        ({"bob": {"run": ""}}, "agents.bob.run"),
        ({"bob": {"run": []}}, "agents.bob.run"),
        ({"bob": {"run": "x", "timeout": "soon"}}, "agents.bob.timeout"),
        ({"bob": {"run": "x", "timeout": "0s"}}, "agents.bob.timeout"),
        ({"bob": {"run": "x", "max_attempts": 0}}, "agents.bob.max_attempts"),
        ({"bob": {"run": "x", "backoff": True}}, "agents.bob.backoff"),
        ({"bob": {"run": "x", "jitter": 2}}, "agents.bob.jitter"),
        ({"bob": {"run": "x", "on": {"type": ["command"]}}}, "agents.bob.on.type"),
        ({"bob": {"run": "x", "on": {"types": ["commands"]}}}, "agents.bob.on.types"),
        ({"bob": {"run": "x", "on": {"topics": ["a..b"]}}}, "agents.bob.on.topics"),
        ({"bob": {"run": "x", "on": {"channels": ["no spaces"]}}}, "agents.bob.on.channels"),
        ({"bob": {"run": "x", "on": {"metadata": {"k": {"x": 1}}}}}, "agents.bob.on.metadata.k"),
        ({"bob": {"run": "x", "on": ["command"]}}, "agents.bob.on"),
        ({"-bob": {"run": "x"}}, "agents.-bob"),
        ({"bob": "x"}, "agents.bob"),
    ],
)
def test_a_bad_agent_setting_is_exit_3_naming_the_key(cli, store, agents, key):
    """Refused by the commands that use agents; the others do not even read them."""
    cli.ok("channel", "create", "x", "--as", "a")
    cli.ok("channel", "join", "x", "b", "--as", "a")
    configure(store, **agents)
    for args in (("config", "show"), ("dispatch",), ("tick",)):
        r = cli(*args, "--json")
        assert r.exit_code == 3, (args, r.stderr)
        assert r.error["field"] == key, r.error
        assert key in r.error["message"]
        assert f"{key}: {key}" not in r.error["message"]  # the key is said once
    cli.ok("send", "x", "y", "--as", "a")


@pytest.mark.parametrize(
    "agents,message",
    [
        ({"-bob": {"run": "x"}}, "agents.-bob: '-bob' is not a valid agent id"),
        (
            {"bob": {"run": "x", "on": {"types": ["commands"]}}},
            "agents.bob.on.types: 'commands' is not one of text,",
        ),
        ({"bob": {"run": "x", "on": {"topics": ["a..b"]}}}, "agents.bob.on.topics: 'a..b' must be"),
    ],
)
def test_a_bad_agent_setting_names_its_key_once(agents, message):
    from acomm_cli.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as got:
        parse_agents(agents, None)
    assert got.value.message.startswith(message), got.value.message


def test_yaml_reads_a_bare_on_key(cli, store):
    (store.parent / "config.yaml").write_text(
        "agents:\n  bob:\n    run: x\n    on:\n      types: [query]\n"
    )
    assert cli.ok("config", "show", "--json").json()["agents"]["bob"]["on"] == {"types": ["query"]}


def test_rules_default_to_everything():
    spec = parse_agents({"a": {"run": "x"}}, None)["a"]
    assert spec.rules == Rules()
    assert (spec.timeout_ms, spec.max_attempts, spec.backoff_ms, spec.jitter) == (
        600_000,
        3,
        30_000,
        0.1,
    )


AGENTS_ONLY = """# agents, and nothing else
agents:
  bob:
    run: ./agents/review.sh   # a comment
    on: {types: [command]}
"""


@pytest.mark.process
@pytest.mark.parametrize(
    "text,parsed",
    [
        (AGENTS_ONLY, False),
        # a mistake in an agent: only the commands that use agents see it
        (AGENTS_ONLY.replace("on:", "tiemout: 1s\n    on:"), False),
        # other settings too: the file is parsed (YAML), the agents still are not
        ("store:\n  busy_timeout: 4s\n" + AGENTS_ONLY.replace("on:", "tiemout: 1s\n    on:"), True),
        # JSON is YAML: parsed
        (json.dumps({"agents": {"bob": {"run": "true"}}}), True),
    ],
)
def test_sending_with_agents_configured_loads_neither_agents_nor_dispatch(team, text, parsed):
    """`send` pays nothing for agents: no dispatch code, no agent validation, and no YAML
    parser at all when the file holds nothing but `agents:`."""
    (team.parent / "config.yaml").write_text(text)
    import subprocess
    import sys

    probe = (
        "import sys\nsys.argv = ['acomm', 'send', 'team', 'hi', '--as', 'alice']\n"
        "from acomm_cli.cli.app import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m in ('acomm_cli.dispatch.dispatcher',"
        " 'yaml', 'acomm_cli.dispatch.agents', 'acomm_cli.dispatch.runner',"
        " 'acomm_cli.store.dispatch')),"
        " file=sys.stderr)"
    )
    p = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert p.stdout.strip().isdigit(), p.stderr
    assert p.stderr.strip().splitlines()[-1] == ("['yaml']" if parsed else "[]")


def test_a_file_of_agents_alone_still_gives_every_other_setting_its_default(cli, store):
    (store.parent / "config.yaml").write_text(AGENTS_ONLY)
    doc = cli.ok("config", "show", "--json").json()
    assert {s["key"]: s["source"] for s in doc["settings"]}["store.busy_timeout"] == "default"
    assert doc["agents"]["bob"]["on"] == {"types": ["command"]}


@pytest.mark.parametrize(
    "text",
    [
        "agents:\n  bob: {run: x}\nstore:\n  busy_timeout: 1s\n",  # another section after
        "  store:\n    busy_timeout: 1s\n",  # an indented document
        "agents: {}\nstore: {busy_timeout: 1s}\n",
    ],
)
def test_a_file_with_more_than_agents_is_read_whole(cli, store, text):
    (store.parent / "config.yaml").write_text(text)
    doc = cli.ok("config", "show", "--json").json()
    assert {s["key"]: s["value"] for s in doc["settings"]}["store.busy_timeout"] == 1000


def test_a_store_from_before_dispatch_is_upgraded(cli, isolated_env, tmp_path, monkeypatch):
    """A store written before m004 (made with the older migrations) gains the dispatch tables
    on open, keeps its messages, and ends with the same schema as a fresh store."""
    from acomm_cli.engine import opening
    from acomm_cli.store import connection
    from acomm_cli.store.migrations import MIGRATIONS

    old = MIGRATIONS[
        : MIGRATIONS.index(next(m for m in MIGRATIONS if m.__name__ == "m004_dispatch"))
    ]
    with monkeypatch.context() as m:
        m.setattr(connection, "MIGRATIONS", old)
        opening.init_store(isolated_env, 0)
    # the channel as the code of that time wrote it (today's also writes later columns)
    with sqlite3.connect(isolated_env) as conn:
        conn.execute(
            "INSERT INTO channels (name, type, owner, state, created_at, delivery,"
            " max_message_size, ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter,"
            " echo, priority_ordering, max_pending, dedupe_window_ms) VALUES ('team', 'group',"
            " 'alice', 'active', 0, 'at-most-once', 1048576, 30000, 3, 1000, 0, 0, 0, 0,"
            " 86400000)"
        )
        conn.executemany(
            "INSERT INTO participants SELECT id, ?, ?, 0 FROM channels WHERE name = 'team'",
            [("alice", "owner"), ("bob", "member")],
        )
    conn.close()
    assert query(isolated_env, "PRAGMA user_version") == [(len(old),)]
    mid = int(cli.ok("send", "team", "from the old days", "--as", "alice").stdout)
    configure(isolated_env, bob={"run": "true"})
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["status"]) == (mid, "accepted")
    fresh = tmp_path / "fresh.acomm"
    opening.init_store(fresh, 0)
    schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
    assert query(isolated_env, schema) == query(fresh, schema)


# ---------------------------------------------------------------- smaller things


def test_dry_run_says_what_a_run_would_do_with_each_delivery(cli, team, tmp_path):
    """A duplicate is settled without a run; a delivery out of attempts is dead-lettered."""
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "--as", "alice", "bob")
    configure(team, bob={"run": agent_script(tmp_path, "ok.sh", "true")})
    with freeze_time(T0):
        cli.ok("send", "team", "first", "--as", "alice", "--dedupe-key", "k1")
        cli.ok("dispatch")
        dup = int(cli.ok("send", "other", "again", "--as", "alice", "--dedupe-key", "k1").stdout)
        failing = agent_script(tmp_path, "no.sh", "exit 1")
        configure(
            team,
            bob={
                "run": failing,
                "max_attempts": 2,
                "backoff": "0s",
                "on": {"channels": ["team"]},
                "unmatched": "keep",
            },
        )
        bad = int(cli.ok("send", "team", "doomed", "--as", "alice").stdout)
        cli.ok("dispatch")
        configure(team, bob={"run": failing, "max_attempts": 1, "backoff": "0s"})
        due = cli.ok("dispatch", "--dry-run", "--json").json()["due"]
        assert [(d["message_id"], d["action"], d["attempt"]) for d in due] == [
            (dup, "duplicate", 1),
            (bad, "dead_letter", 1),
        ]
        doc = cli.ok("dispatch", "--json").json()
    assert [(r["message_id"], r["status"], r["reason"]) for r in doc["receipts"]] == [
        (dup, "ignored", "duplicate")
    ]
    assert doc["dead_lettered"] == 1


def test_receipts_json_says_whether_there_are_more(cli, team):
    configure(team, bob={"run": "true"})
    for n in range(3):
        cli.ok("send", "team", f"m{n}", "--as", "alice")
    cli.ok("dispatch")
    doc = cli.ok("receipts", "--json", "--limit", "2").json()
    assert (len(doc["receipts"]), doc["total_count"], doc["has_more"]) == (2, 3, True)
    doc = cli.ok("receipts", "--json", "--limit", "2", "--offset", "1").json()
    assert (len(doc["receipts"]), doc["has_more"]) == (2, False)


def test_no_agents_is_the_pipelines_usage_error(conn):
    from acomm_cli.errors import UsageError

    with pytest.raises(UsageError) as got:
        dispatch.dispatch(conn, {}, 0, store_path="x", encode=str)
    assert got.value.field == "agents"


def test_receipt_times_come_from_the_clock(cli, team, conn):
    """Times after the pass's start are read from acomm_cli.clock (freezegun here), never
    before the start the caller gave."""
    cli.ok("send", "team", "x", "--as", "alice")
    agents = parse_agents({"bob": {"run": "true"}}, None)
    with freeze_time(T0):
        result = dispatch.dispatch(
            conn, agents, T0_MS - 5000, store_path=str(team), encode=lambda m: "{}"
        )
    [r] = result.receipts
    assert (r.started_at, r.finished_at) == (T0_MS, T0_MS)


def test_the_candidate_query_leaves_out_what_the_rules_exclude(cli, team, conn):
    """Types, channels and senders are matched in SQL (a large backlog of messages no rule
    wants costs little); self-messages never come back."""
    from acomm_cli.store import dispatch as store

    cli.ok("channel", "join", "team", "--as", "alice", "carol")
    text = int(cli.ok("send", "team", "chat", "--as", "alice").stdout)
    cmd = int(cli.ok("send", "team", "do", "--type", "command", "--as", "alice").stdout)
    by_carol = int(cli.ok("send", "team", "do", "--type", "command", "--as", "carol").stdout)
    rows = store.candidates(conn, [("bob", ("command",), ("team",), ("alice",), False)], T0_MS)
    assert [(r[0], r[1]) for r in rows] == [(cmd, "bob")]
    rows = store.candidates(
        conn, [("bob", (), (), (), False), ("carol", ("command",), (), (), False)], T0_MS
    )
    assert sorted((r[0], r[1]) for r in rows) == [
        (text, "bob"),
        (cmd, "bob"),
        (cmd, "carol"),
        (by_carol, "bob"),
    ]
    # `unmatched: ignore`: every message to the agent is a candidate (to be settled)
    rows = store.candidates(conn, [("carol", ("command",), (), (), True)], T0_MS)
    assert sorted((r[0], r[1]) for r in rows) == [(text, "carol"), (cmd, "carol")]
