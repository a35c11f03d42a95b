"""Dispatch configuration: what becomes of messages no trigger rule matches (`unmatched`),
a bad `agents:` section that must not stall the timers, and `run:` paths that resolve against
config.yaml's directory whatever directory `tick` runs in (cron: $HOME). Real shell scripts
as agents, real stores; time moved with freezegun in process and faketime for `tick` as cron
runs it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ACOMM, query, snapshot
from freezegun import freeze_time
from test_dispatch import T0, agent_script, configure, receipts, state

pytestmark = pytest.mark.cli

DISPATCH_DOC = Path(__file__).resolve().parent.parent / "docs" / "DISPATCH.md"


def _faketime() -> None:
    if shutil.which("faketime") is None:
        pytest.skip("faketime is not installed (make test installs it)")


# ---------------------------------------------------------------- unmatched: ignore | keep


def test_unmatched_messages_are_read_with_an_ignored_receipt_by_default(cli, store, tmp_path):
    """`unmatched: ignore` (the default): a message no rule lets through is read, with an
    `ignored` receipt (reason `filtered`) and no run; an ack-tracked one is acknowledged
    `completed`, note `ignored: filtered`, so the channel neither redelivers nor
    dead-letters it and the sender learns why. A matching one runs as before."""
    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--max-retries",
        "0",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    rec = agent_script(tmp_path, "rec.sh", 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"')
    configure(store, bob={"run": rec, "on": {"types": ["command"]}})
    with freeze_time(T0) as clock:
        chat = int(cli.ok("send", "jobs", "chat", "--as", "alice").stdout)
        cmd = int(cli.ok("send", "jobs", "do", "--type", "command", "--as", "alice").stdout)
        doc = cli.ok("tick", "--json").json()
        assert doc["dispatch"]["accepted"] == 1 and doc["dispatch"]["ignored"] == 1
        assert (tmp_path / "ran").read_text().split() == [str(cmd)]
        [r] = receipts(cli, "--message", str(chat))
        assert (r["agent"], r["status"], r["reason"], r["exit_code"]) == (
            "bob",
            "ignored",
            "filtered",
            None,
        )
        assert query(
            store,
            "SELECT state, ack_status FROM deliveries WHERE message_id = ? AND recipient = 'bob'",
            chat,
        ) == [("acked", "completed")]
        acks = cli.ok("receive", "--as", "alice", "--type", "ack", "--json").json()["messages"]
        assert "ignored: filtered" in [a["content"] for a in acks]
        clock.tick(3600)  # long past the ack timeout: nothing redelivered, nothing dead
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 0
        assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 0
        assert len(receipts(cli)) == 2  # settled once: no receipt again at the next pass


def test_unmatched_keep_leaves_them_unread_for_receive(cli, team, tmp_path):
    rec = agent_script(tmp_path, "rec.sh", 'echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"')
    configure(team, bob={"run": rec, "on": {"types": ["command"]}, "unmatched": "keep"})
    chat = int(cli.ok("send", "team", "chat", "--as", "alice").stdout)
    assert cli.ok("tick", "--json").json()["dispatch"]["ignored"] == 0
    assert receipts(cli) == [] and state(team, chat, "bob") == "unread"
    assert [m["id"] for m in cli.ok("receive", "--as", "bob", "--json").json()["messages"]] == [
        chat
    ]


def test_a_message_read_meanwhile_is_not_ignored_again(cli, team, tmp_path):
    """What `receive` took between the selection and the settling is left alone."""
    from acomm_cli.dispatch import dispatcher
    from acomm_cli.dispatch.agents import parse_agents
    from acomm_cli.engine import opening

    rec = agent_script(tmp_path, "rec.sh", "true")
    agents = parse_agents({"bob": {"run": rec, "on": {"types": ["command"]}}}, None)
    chat = int(cli.ok("send", "team", "chat", "--as", "alice").stdout)
    conn = opening.connect(team, create=False)
    try:
        due = dispatcher.select(conn, agents, 0, 100)
        assert [(d.message_id, d.action) for d in due] == [(chat, "ignore")]
        cli.ok("receive", "--as", "bob")
        assert dispatcher.ignore(conn, agents, due, 1) == []
    finally:
        conn.close()
    assert receipts(cli) == []


@pytest.mark.parametrize("value", ["drop", "", ["ignore"], True])
def test_a_bad_unmatched_value_names_the_key(cli, team, tmp_path, value):
    configure(team, bob={"run": "true", "unmatched": value})
    r = cli("dispatch", "--json")
    assert (r.exit_code, r.error["field"]) == (3, "agents.bob.unmatched")
    assert "ignore, keep" in r.error["message"]


# ---------------------------------------------------------------- a bad agents: section


@pytest.mark.process
def test_a_bad_agents_section_stops_dispatch_but_not_the_timers(cli, store, tmp_path):
    """`types: [comand]`: `tick` (run as cron would, at a later time by faketime) still
    dead-letters, delivers scheduled sends and mirrors to the bridge, reports the error in
    its JSON and on stderr, and exits 3 at the end; the agent's command never runs."""
    _faketime()
    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--max-retries",
        "0",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    cli.ok("channel", "create", "news", "--as", "alice")  # not ack-tracked
    cli.ok("channel", "join", "news", "--as", "alice", "bob")
    inbox = tmp_path / "inbox"
    ran = tmp_path / "ran"
    (store.parent / "config.yaml").write_text(f"""
bridge:
  inbox_dir: {inbox}
agents:
  bob:
    run: "touch {ran}"
    on: {{types: [comand]}}
""")
    with freeze_time(T0):
        doomed = int(cli.ok("send", "jobs", "deploy", "--as", "alice").stdout)
        later = int(cli.ok("send", "news", "later", "--as", "alice", "--delay", "1m").stdout)

    def tick(*args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")}
        return subprocess.run(
            ["faketime", "-f", "@2026-01-01 00:10:00", ACOMM, "--store", str(store), "tick", *args],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
            cwd=tmp_path,
        )

    r = tick("--json")
    assert r.returncode == 3, r.stderr
    doc = json.loads(r.stdout)
    assert doc["dead_lettered"] == 1 and doc["scheduled_delivered"] == 1
    assert doc["bridge"]["written"] >= 1 and (inbox / "bob" / f"{later}.json").exists()
    err = doc["dispatch_error"]
    assert (err["code"], err["field"]) == ("validation_failed", "agents.bob.on.types")
    assert "comand" in err["message"] and "dispatch" not in doc
    assert json.loads(r.stderr)["error"]["field"] == "agents.bob.on.types"
    assert state(store, doomed, "bob") == "dead" and not ran.exists()
    # without --json: the counts on stdout, the error on stderr, exit 3; nothing left to do
    before = snapshot(store)
    r = tick()
    assert r.returncode == 3 and r.stdout.startswith("retried=0 ")
    assert "dispatch_error" not in r.stdout
    assert "validation_failed: agents.bob.on.types:" in r.stderr
    assert snapshot(store) == before
    # --no-dispatch does not read the agents at all
    assert tick("--no-dispatch").returncode == 0


@pytest.mark.process
def test_a_tick_worker_with_a_bad_agents_section_says_so_at_once_and_exits_3(cli, store):
    (store.parent / "config.yaml").write_text("agents:\n  bob:\n    on: {types: [command]}\n")
    env = {k: v for k, v in os.environ.items() if k != "ACOMM_STORE"}
    r = subprocess.run(
        [
            ACOMM,
            "--store",
            str(store),
            "tick",
            "--every",
            "100ms",
            "--max-seconds",
            "0.3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 3
    first, *_ = r.stderr.splitlines()
    assert (  # --every's stderr is a log: `TIME LEVEL acomm: text`
        " WARNING acomm: tick: dispatch is off, the timers still run: "
        "validation_failed: agents.bob.run:"
    ) in first
    passes = [json.loads(line) for line in r.stdout.splitlines()]
    assert passes and all(p["dispatch_error"]["field"] == "agents.bob.run" for p in passes)


# ---------------------------------------------------------------- run: and cwd:


def _cron(store: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`acomm --store STORE tick` as cron runs it: in $HOME, with cron's bare environment."""
    env = {
        "HOME": str(home),
        "PATH": f"{Path(ACOMM).parent}:/usr/bin:/bin",
        "SHELL": "/bin/sh",
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [ACOMM, "--store", str(store), "tick", "--json", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=home,
    )


def _readme_agents() -> list[dict]:
    """The `agents:` examples of docs/DISPATCH.md (once the README's), as YAML."""
    blocks = re.findall(r"```yaml\n(agents:\n.*?)```", DISPATCH_DOC.read_text(), re.S)
    assert blocks, "docs/DISPATCH.md has an agents: example"
    return [yaml.safe_load(b)["agents"] for b in blocks]


# what each documented agent needs to be triggered: (setup commands, the triggering send)
_TRIGGERS = {
    "reviewer": (
        [
            ("channel", "create", "code", "--as", "alice"),
            ("channel", "join", "code", "--as", "alice", "reviewer"),
        ],
        (
            "send",
            "code",
            "review PR 7",
            "--type",
            "command",
            "--topic",
            "review.pr",
            "--as",
            "alice",
        ),
    ),
    "responder": (
        [
            ("channel", "create", "forum", "--type", "pubsub", "--as", "web"),
            ("subscribe", "forum", "comment.#", "--as", "responder"),
        ],
        (
            "publish",
            "forum",
            "comment.replied",
            "I agree",
            "--as",
            "web",
            "--meta",
            "event_type=comment.replied",
            "--meta",
            "target_user_type=agent",
        ),
    ),
}


@pytest.mark.process
@pytest.mark.parametrize("example", range(len(_readme_agents())))
def test_the_readme_agents_work_under_cron(cli, tmp_path, example):
    """Each docs/DISPATCH.md example, as it is written, in a project whose store is the default
    `.acomm/store.acomm`: its relative `run:` resolves against config.yaml's directory (or
    `cwd:`, relative to it), not against cron's working directory, $HOME."""
    agents = _readme_agents()[example]
    project, home = tmp_path / "project", tmp_path / "home"
    home.mkdir()
    project.mkdir()
    subprocess.run(
        [ACOMM, "init"],
        cwd=project,
        check=True,
        capture_output=True,
        env={k: v for k, v in os.environ.items() if k != "ACOMM_STORE"},
    )
    store = project / ".acomm" / "store.acomm"
    config_dir = store.parent
    (config_dir / "config.yaml").write_text(yaml.safe_dump({"agents": agents}))
    ran = tmp_path / "ran"
    for name, spec in agents.items():
        where = Path(os.path.normpath(config_dir / spec.get("cwd", ".")))
        script = where / spec["run"]
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f'#!/bin/sh\necho "$ACOMM_AGENT $ACOMM_MESSAGE_ID $(pwd)" >> {ran}\n')
        script.chmod(0o755)
        setup, trigger = _TRIGGERS[name]
        for args in setup:
            cli.ok("--store", str(store), *args)
        mid = int(cli.ok("--store", str(store), *trigger).stdout)
        r = _cron(store, home)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["dispatch"]["accepted"] == 1, r.stderr
        assert ran.read_text().splitlines()[-1] == f"{name} {mid} {where}"


@pytest.mark.process
def test_run_resolves_against_the_config_directory_and_cwd_overrides(cli, store, tmp_path):
    """No `cwd:`: the command runs in config.yaml's directory; `cwd:` (absolute, or relative
    to that directory) overrides it; a list `run:` resolves the same way."""
    home = tmp_path / "home"
    home.mkdir()
    config_dir, ran = store.parent, tmp_path / "ran"
    for d in (config_dir / "bin", tmp_path / "elsewhere" / "bin"):
        d.mkdir(parents=True)
        (d / "rec.sh").write_text(f'#!/bin/sh\necho "$ACOMM_AGENT $(pwd)" >> {ran}\n')
        (d / "rec.sh").chmod(0o755)
    cli.ok("channel", "create", "team", "--as", "alice")
    for who in ("a", "b", "c"):
        cli.ok("channel", "join", "team", "--as", "alice", who)
    configure(
        store,
        a={"run": "./bin/rec.sh"},
        b={"run": ["bin/rec.sh"]},
        c={"run": "bin/rec.sh", "cwd": "../elsewhere"},
    )
    cli.ok("send", "team", "hello", "--as", "alice")
    r = _cron(store, home)
    assert r.returncode == 0 and json.loads(r.stdout)["dispatch"]["accepted"] == 3, r.stderr
    assert sorted(ran.read_text().splitlines()) == [
        f"a {config_dir}",
        f"b {config_dir}",
        f"c {tmp_path / 'elsewhere'}",
    ]
