"""Kinds drive delivery: dispatch never runs a command for a human (its messages wait in the
inbox), and a `run:` configured for an agent registered as a human is a configuration error,
exit 3 naming the agent and its kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import query
from freezegun import freeze_time
from registered import register

from acomm_cli import clock
from acomm_cli.dispatch import dispatcher
from acomm_cli.dispatch.agents import parse_agents
from acomm_cli.engine import opening

pytestmark = pytest.mark.cli


def _script(tmp_path: Path) -> str:
    """An agent command that leaves a mark each time it runs."""
    p = tmp_path / "agent.sh"
    p.write_text(f"#!/bin/sh\ncat >/dev/null\necho ran >> {tmp_path}/runs\nexit 0\n")
    p.chmod(0o755)
    return str(p)


def _configure(store: Path, **agents: dict) -> None:
    (store.parent / "config.yaml").write_text(json.dumps({"agents": agents}))


@pytest.fixture
def desk(make_channel, tmp_path) -> Path:
    """`team`: alice with bob (a human) and carol (an agent); both have a run: configured."""
    store = make_channel("team", "alice", "bob", "carol")
    register(store, "alice", "carol")
    register(store, "bob", kind="human")
    run = _script(tmp_path)
    _configure(store, bob={"run": run}, carol={"run": run})
    return store


def _unread(store: Path, who: str) -> int:
    return query(
        store, "SELECT count(*) FROM deliveries WHERE recipient = ? AND state = 'unread'", who
    )[0][0]


def test_dispatch_refuses_a_run_configured_for_a_human(cli, desk, tmp_path):
    cli.ok("send", "team", "hello", "--as", "alice")
    r = cli("dispatch", "--json")
    assert r.exit_code == 3
    assert r.error["field"] == "agents.bob.run" and r.error["kind"] == "human"
    assert "'bob' is registered as kind human" in r.error["message"]
    # nothing ran, for anyone, and nothing was read
    assert not (tmp_path / "runs").exists()
    assert (_unread(desk, "bob"), _unread(desk, "carol")) == (1, 1)
    assert query(desk, "SELECT count(*) FROM dispatch_receipts") == [(0,)]


def test_tick_runs_the_timers_but_no_agent_and_exits_3(cli, desk, tmp_path):
    cli.ok("send", "team", "later", "--delay", "1s", "--as", "alice")
    with freeze_time(clock.iso(clock.now_ms() + 5_000)):
        r = cli("tick", "--json")
    assert r.exit_code == 3
    doc = json.loads(r.stdout)
    assert doc["scheduled_delivered"] == 2  # the timers ran
    assert doc["dispatch_error"]["field"] == "agents.bob.run"
    assert doc["dispatch_error"]["kind"] == "human"
    assert "dispatch" not in doc and not (tmp_path / "runs").exists()
    assert _unread(desk, "bob") == 1  # it waits in bob's inbox, for bob to read
    assert cli.ok("receive", "--as", "bob", "--json").json()["total_count"] == 1


def test_config_show_says_so_too(cli, desk):
    r = cli("config", "show", "--json")
    assert r.exit_code == 3 and r.error["field"] == "agents.bob.run"


def test_without_the_humans_run_the_others_are_dispatched(cli, desk, tmp_path):
    _configure(desk, carol={"run": _script(tmp_path)})
    cli.ok("send", "team", "hello", "--as", "alice")
    assert cli.ok("tick", "--json").json()["dispatch"]["accepted"] == 1
    assert (tmp_path / "runs").read_text() == "ran\n"  # carol's, once
    assert (_unread(desk, "bob"), _unread(desk, "carol")) == (1, 0)


def test_agents_and_services_are_dispatched(cli, desk, tmp_path):
    register(desk, "bob", kind="service")
    cli.ok("send", "team", "hello", "--as", "alice")
    assert cli.ok("dispatch", "--json").json()["accepted"] == 2


def test_a_pass_never_runs_a_human_even_one_registered_while_it_runs(cli, desk, tmp_path):
    """A `tick --every` worker checked the kinds when it started; one registered as a human
    since is still never dispatched: its messages wait in the inbox."""
    cli.ok("send", "team", "hello", "--as", "alice")
    agents = parse_agents({"bob": {"run": _script(tmp_path)}}, None)
    conn = opening.connect(desk, create=False)
    try:
        result = dispatcher.dispatch(
            conn, agents, clock.now_ms(), store_path=str(desk), encode=lambda m: "{}"
        )
        dry = dispatcher.dispatch(
            conn, agents, clock.now_ms(), store_path=str(desk), encode=str, dry_run=True
        )
    finally:
        conn.close()
    assert result.receipts == [] and dry.due == []
    assert not (tmp_path / "runs").exists() and _unread(desk, "bob") == 1
