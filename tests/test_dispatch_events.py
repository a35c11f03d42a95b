"""The default trigger rules: for an agent without `on:` rules, a message carrying an event
triggers it only as the agent target of a reply or a mention; each line of the decision
table, self-actions, an event id's dedupe, rules on event fields, `dispatch rules`.

This branch's `send` has no event options yet: `with_event` writes the message_events row
(migration m021's table) straight into the store, as the send path will."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import query
from freezegun import freeze_time
from test_dispatch import T0, agent_script, configure, receipts, state

from acomm_cli.engine import eventrules

pytestmark = pytest.mark.cli

RECORD = 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"'


def with_event(
    store: Path,
    mid: int,
    event_type: str,
    *,
    actor: str | None = "alice",
    target: str | None = "bob",
    target_kind: str | None = "agent",
    event_id: str | None = None,
) -> None:
    """The event a message carries, written as the send path writes it (one row per message)."""
    c = sqlite3.connect(store)
    try:
        (channel_id,) = c.execute("SELECT channel_id FROM messages WHERE id = ?", (mid,)).fetchone()
        c.execute(
            "INSERT INTO message_events (message_id, channel_id, event_id, event_type, actor,"
            " target, target_kind) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (mid, channel_id, event_id, event_type, actor, target, target_kind),
        )
        c.commit()
    finally:
        c.close()


def send_event(cli, store: Path, event_type: str, channel: str = "team", **event) -> int:
    mid = int(cli.ok("send", channel, f"{event_type} happened", "--as", "alice").stdout)
    with_event(store, mid, event_type, **event)
    return mid


def ran(tmp_path: Path) -> list[int]:
    f = tmp_path / "ran"
    return [int(x) for x in f.read_text().split()] if f.exists() else []


# ---------------------------------------------------------------- the decision table

# each line of the table: the event as sent to bob, whether it runs bob's command, and
# whether it is left in bob's inbox as a notification (bob keeps what he is not run on)
LINES = [
    pytest.param("comment.replied", "agent", "bob", True, False, id="comment.replied-agent"),
    pytest.param("comment.replied", "human", "bob", False, True, id="comment.replied-human"),
    pytest.param("comment.created", "thread author", "bob", False, True, id="comment.created"),
    pytest.param("mention.created", "agent", "bob", True, False, id="mention.created-agent"),
    pytest.param("mention.created", "human", "bob", False, True, id="mention.created-human"),
    pytest.param("like.created", None, "bob", False, True, id="like.created"),
    pytest.param("thread.created", "broadcast", None, False, False, id="thread.created"),
    pytest.param("agent.action.feedback", None, "bob", False, True, id="agent.action.feedback"),
]


def test_the_lines_are_the_decision_table():
    """One test line per line of the table, no more, no fewer."""
    assert [(p.values[0], p.values[1]) for p in LINES] == [
        (r.event_type, r.target) for r in eventrules.TABLE
    ]


@pytest.mark.parametrize(("event_type", "line_target", "target", "runs", "notifies"), LINES)
def test_each_line_of_the_decision_table(
    cli, team, tmp_path, event_type, line_target, target, runs, notifies
):
    """bob has no `on:` rules and keeps what he is not run on (`unmatched: keep`): a line
    that triggers runs his command; one that notifies without triggering is left unread in
    his inbox; one that writes no notification (a broadcast) is read with an `ignored`
    receipt, nothing run."""
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD), "unmatched": "keep"})
    kind = line_target if line_target in ("agent", "human") else "agent"
    mid = send_event(cli, team, event_type, target=target, target_kind=kind if target else None)
    doc = cli.ok("dispatch", "--json").json()
    assert ran(tmp_path) == ([mid] if runs else [])
    if runs:
        [r] = doc["receipts"]
        assert (r["message_id"], r["status"]) == (mid, "accepted")
        assert state(team, mid, "bob") == "read"
    elif notifies:
        assert doc["receipts"] == []
        assert state(team, mid, "bob") == "unread"
        [m] = cli.ok("receive", "--as", "bob", "--json").json()["messages"]
        assert m["id"] == mid
    else:
        [r] = doc["receipts"]
        assert (r["message_id"], r["status"], r["exit_code"]) == (mid, "ignored", None)
        assert r["reason"] == "not_target: it has no target"
        assert state(team, mid, "bob") == "read"


def test_what_does_not_trigger_is_read_with_the_rule_as_reason_by_default(cli, team, tmp_path):
    """`unmatched: ignore` (the default): a like to bob is read with an `ignored` receipt
    naming the default rule, a reply to him runs him, a reply to carol (not his) does not."""
    cli.ok("channel", "join", "team", "carol", "--as", "alice")
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    like = send_event(cli, team, "like.created")
    reply = send_event(cli, team, "comment.replied")
    other = send_event(cli, team, "comment.replied", target="carol")
    got = {r["message_id"]: r for r in cli.ok("dispatch", "--json").json()["receipts"]}
    assert ran(tmp_path) == [reply]
    assert got[reply]["status"] == "accepted"
    assert (got[like]["status"], got[like]["reason"]) == (
        "ignored",
        "default_rules: like.created to a target of kind agent does not trigger",
    )
    assert (got[other]["status"], got[other]["reason"]) == (
        "ignored",
        "not_target: its target is carol",
    )
    assert {state(team, m, "bob") for m in (like, reply, other)} == {"read"}


def test_a_reply_to_a_human_target_never_triggers_even_one_registered_as_an_agent(
    cli, team, tmp_path
):
    """The kind the event says its target had when it was sent decides."""
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    mid = send_event(cli, team, "mention.created", target_kind="human")
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["status"]) == (mid, "ignored")
    assert r["reason"].startswith("default_rules: mention.created to a target of kind human")
    assert ran(tmp_path) == []


def test_tick_applies_the_defaults_too(cli, team, tmp_path):
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    like = send_event(cli, team, "like.created")
    mention = send_event(cli, team, "mention.created")
    cli.ok("tick")
    assert ran(tmp_path) == [mention]
    assert [r["status"] for r in receipts(cli, "--message", str(like))] == ["ignored"]


# ---------------------------------------------------------------- self-action


@pytest.mark.parametrize("rules", [None, {"channels": ["team"]}], ids=["defaults", "own-rules"])
def test_a_self_action_neither_notifies_nor_triggers(cli, team, tmp_path, rules):
    """bob replying to his own comment: no run, and no notification left in his inbox even
    though he keeps what he is not run on; an agent's own rules do not change it."""
    spec = {"run": agent_script(tmp_path, "r.sh", RECORD), "unmatched": "keep"}
    if rules:
        spec["on"] = rules
    configure(team, bob=spec)
    mid = send_event(cli, team, "comment.replied", actor="bob")
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["status"], r["reason"]) == (mid, "ignored", "self_action")
    assert state(team, mid, "bob") == "read"
    assert ran(tmp_path) == []


def test_a_self_action_of_another_agent_is_no_notification_to_anyone(cli, team, tmp_path):
    """carol liking her own comment, seen by bob: not his, and not a notification at all."""
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD), "unmatched": "keep"})
    mid = send_event(cli, team, "comment.replied", actor="carol", target="carol")
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["reason"]) == (mid, "self_action")
    assert ran(tmp_path) == []


# ---------------------------------------------------------------- dedupe


def test_the_same_event_id_triggers_once_within_the_window(cli, team, tmp_path):
    """The same event through two channels (each message its own row, the id unique per
    channel): the second is a duplicate; past the channel's dedupe window (24 h) it runs."""
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "bob", "--as", "alice")
    cli.ok("channel", "create", "third", "--as", "alice")
    cli.ok("channel", "join", "third", "bob", "--as", "alice")
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    with freeze_time(T0) as frozen:
        first = send_event(cli, team, "comment.replied", event_id="evt_9f3a1c")
        cli.ok("dispatch")
        second = send_event(cli, team, "comment.replied", "other", event_id="evt_9f3a1c")
        [dup] = cli.ok("dispatch", "--json").json()["receipts"]
        assert (dup["message_id"], dup["status"], dup["reason"]) == (second, "ignored", "duplicate")
        assert state(team, second, "bob") == "read"
        frozen.tick(24 * 3600 + 1)
        third = send_event(cli, team, "comment.replied", "third", event_id="evt_9f3a1c")
        [new] = cli.ok("dispatch", "--json").json()["receipts"]
        assert (new["message_id"], new["status"]) == (third, "accepted")
    assert ran(tmp_path) == [first, third]


def test_a_dedupe_key_on_an_event_message_triggers_once(cli, team, tmp_path):
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "bob", "--as", "alice")
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    mids = []
    for channel in ("team", "other"):
        mid = int(
            cli.ok("send", channel, "reply", "--as", "alice", "--dedupe-key", "reply:8801:5").stdout
        )
        with_event(team, mid, "comment.replied")
        mids.append(mid)
        cli.ok("dispatch")
    assert ran(tmp_path) == mids[:1]
    [dup] = receipts(cli, "--message", str(mids[1]))
    assert dup["reason"] == "duplicate"


# ---------------------------------------------------------------- without an event, own rules


def test_a_message_without_an_event_keeps_todays_rule(cli, team, tmp_path):
    """No `on:` rules: every message without an event runs the agent, as before; with
    rules, the rules alone decide."""
    configure(
        team,
        bob={"run": agent_script(tmp_path, "r.sh", RECORD)},
        carol={"run": agent_script(tmp_path, "c.sh", "exit 0"), "on": {"types": ["command"]}},
    )
    cli.ok("channel", "join", "team", "carol", "--as", "alice")
    mid = int(cli.ok("send", "team", "plain news", "--as", "alice").stdout)
    got = {r["agent"]: r for r in cli.ok("dispatch", "--json").json()["receipts"]}
    assert ran(tmp_path) == [mid]
    assert (got["bob"]["status"], got["carol"]["status"], got["carol"]["reason"]) == (
        "accepted",
        "ignored",
        "filtered",
    )


def test_own_rules_replace_the_defaults_and_can_name_event_fields(cli, team, tmp_path):
    """bob's rules ask for likes to him (which the defaults never run) and nothing else: a
    like runs him, a reply to him (which the defaults would run) does not, nor does a message
    without an event."""
    configure(
        team,
        bob={
            "run": agent_script(tmp_path, "r.sh", RECORD),
            "on": {"event_type": "like.created", "target": "bob", "target_kind": ["agent"]},
        },
    )
    like = send_event(cli, team, "like.created")
    reply = send_event(cli, team, "comment.replied")
    plain = int(cli.ok("send", "team", "no event", "--as", "alice").stdout)
    other = send_event(cli, team, "like.created", actor="carol", target="dave")
    got = {r["message_id"]: r for r in cli.ok("dispatch", "--json").json()["receipts"]}
    assert ran(tmp_path) == [like]
    assert {m: got[m]["reason"] for m in (reply, plain, other)} == dict.fromkeys(
        (reply, plain, other), "filtered"
    )


def test_a_rule_on_the_actor_and_the_broadcast(cli, team, tmp_path):
    """`polling decides`: an agent whose rules name thread.created runs on the broadcast."""
    configure(
        team,
        bob={
            "run": agent_script(tmp_path, "r.sh", RECORD),
            "on": {"event_type": ["thread.created"], "actor": "alice"},
        },
    )
    mine = send_event(cli, team, "thread.created", target=None, target_kind=None)
    theirs = send_event(cli, team, "thread.created", actor="carol", target=None, target_kind=None)
    cli.ok("dispatch")
    assert ran(tmp_path) == [mine]
    assert receipts(cli, "--message", str(theirs))[0]["reason"] == "filtered"


@pytest.mark.parametrize(
    ("on", "field", "value"),
    [
        ({"event_type": "comment.deleted"}, "agents.bob.on.event_type", "comment.deleted"),
        ({"target_kind": ["robot"]}, "agents.bob.on.target_kind", "robot"),
        ({"actor": "no spaces allowed"}, "agents.bob.on.actor", None),
        ({"target": []}, "agents.bob.on.target", None),
    ],
)
def test_a_bad_event_rule_is_refused_naming_it(cli, team, tmp_path, on, field, value):
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD), "on": on})
    r = cli("dispatch", "--json")
    assert r.exit_code == 3
    err = r.error
    assert err["field"] == field
    if value is not None:
        assert value in err["message"]
    assert query(team, "SELECT count(*) FROM dispatch_receipts") == [(0,)]


# ---------------------------------------------------------------- dispatch rules


def test_dispatch_rules_lists_the_defaults_and_each_agents_rules(cli, team, tmp_path):
    configure(
        team,
        bob={"run": "true"},
        carol={"run": "true", "on": {"event_type": ["like.created"], "channels": "team"}},
    )
    doc = cli.ok("dispatch", "rules", "--json").json()
    assert set(doc) == {"defaults", "agents"}
    assert [(r["event_type"], r["target"], r["notify"], r["trigger"]) for r in doc["defaults"]] == [
        ("comment.replied", "agent", "yes", "yes"),
        ("comment.replied", "human", "yes", "no"),
        ("comment.created", "thread author", "yes", "no"),
        ("mention.created", "agent", "yes", "optional (default yes)"),
        ("mention.created", "human", "yes", "no"),
        ("like.created", None, "yes", "no"),
        ("thread.created", "broadcast", "no", "yes (polling decides)"),
        ("agent.action.feedback", None, "optional", "no"),
    ]
    assert {r["source"] for r in doc["defaults"]} == {"default"}
    assert all(r["scenario"] and r["note"] for r in doc["defaults"])
    config = str((team.parent / "config.yaml").resolve())
    bob, carol = doc["agents"]
    assert bob == {
        "agent": "bob",
        "rules": "defaults",
        "on": None,
        "unmatched": "ignore",
        "source": "default",
    }
    assert carol["rules"] == "own" and carol["on"] == {
        "channels": ["team"],
        "event_type": ["like.created"],
    }
    assert Path(carol["source"].rsplit(": ", 1)[0]).resolve() == Path(config)
    assert carol["source"].endswith(": agents.carol.on")


def test_dispatch_rules_without_agents_lists_the_defaults_and_prints_a_table(cli, store):
    doc = cli.ok("dispatch", "rules", "--json").json()
    assert len(doc["defaults"]) == len(eventrules.TABLE) and doc["agents"] == []
    lines = cli.ok("dispatch", "rules").stdout.splitlines()
    assert lines[0].split("\t") == [
        "(default)",
        "comment.replied (target=agent)",
        "yes",
        "yes",
        "default",
    ]
    assert len(lines) == len(eventrules.TABLE)


def test_dispatch_alone_still_makes_a_pass(cli, team, tmp_path):
    """`dispatch` is a group now (`dispatch rules`); its options still run a pass."""
    configure(team, bob={"run": agent_script(tmp_path, "r.sh", RECORD)})
    mid = int(cli.ok("send", "team", "hi", "--as", "alice").stdout)
    doc = cli.ok("dispatch", "--agent", "bob", "--max", "5", "--json").json()
    assert [r["message_id"] for r in doc["receipts"]] == [mid]
    assert json.loads(json.dumps(doc))["accepted"] == 1
