"""`direction` in dispatch `on:` rules: the kinds at both ends of a direct message (U2U,
U2A, A2U, A2A, as message documents report them) select what runs an agent; a message on
a group channel has no direction and never meets such a rule; a bad value is exit 3 naming
the key; `dispatch rules` lists it."""

from __future__ import annotations

import pytest
from conftest import query
from test_dispatch import agent_script, configure
from test_dispatch_events import RECORD, ran

pytestmark = pytest.mark.cli


@pytest.fixture
def kinds(cli, team):
    """dana is a person; alice and bob agents (registered by `team`, alice's channel, which
    bob and dana have joined)."""
    cli.ok("agent", "register", "dana", "--kind", "human")
    cli.ok("channel", "join", "team", "dana", "--as", "alice")
    return team


def _send(cli, *args: str) -> int:
    return int(cli.ok("send", *args).stdout.strip())


def test_a_direction_rule_runs_the_agent_on_those_direct_messages_only(cli, kinds, tmp_path):
    configure(
        kinds, bob={"run": agent_script(tmp_path, "r.sh", RECORD), "on": {"direction": "U2A"}}
    )
    from_person = _send(cli, "--to", "bob", "from a person", "--as", "dana")
    from_agent = _send(cli, "--to", "bob", "from an agent", "--as", "alice")
    on_channel = _send(cli, "team", "on the channel", "--as", "dana")
    assert cli.ok("show", str(from_person), "--json").json()["direction"] == "U2A"
    assert cli.ok("show", str(from_agent), "--json").json()["direction"] == "A2A"
    got = {r["message_id"]: r for r in cli.ok("dispatch", "--json").json()["receipts"]}
    assert ran(tmp_path) == [from_person]
    assert (got[from_agent]["reason"], got[on_channel]["reason"]) == ("filtered", "filtered")


def test_a_list_of_directions_and_other_conditions_all_hold(cli, kinds, tmp_path):
    configure(
        kinds,
        bob={
            "run": agent_script(tmp_path, "r.sh", RECORD),
            "on": {"direction": ["U2A", "A2A"], "types": "command"},
        },
    )
    command = _send(cli, "--to", "bob", "--type", "command", "do it", "--as", "alice")
    _send(cli, "--to", "bob", "just text", "--as", "dana")
    cli.ok("dispatch")
    assert ran(tmp_path) == [command]


@pytest.mark.parametrize("value", ["u2a", "A2B", ["U2A", "sideways"], []])
def test_a_bad_direction_is_refused_naming_the_key(cli, kinds, tmp_path, value):
    configure(kinds, bob={"run": "true", "on": {"direction": value}})
    _send(cli, "--to", "bob", "hello", "--as", "dana")
    r = cli("dispatch", "--json")
    assert r.exit_code == 3
    assert r.error["field"] == "agents.bob.on.direction"
    if value and value != ["U2A", "sideways"]:
        assert "U2U, U2A, A2U, A2A" in r.error["message"]
    assert query(kinds, "SELECT count(*) FROM dispatch_receipts") == [(0,)]
    r = cli("dispatch", "rules", "--json")  # the listing checks the same rules
    assert (r.exit_code, r.error["field"]) == (3, "agents.bob.on.direction")


def test_dispatch_rules_lists_a_direction(cli, kinds):
    configure(kinds, bob={"run": "true", "on": {"direction": ["A2U", "U2U"], "from": "dana"}})
    [bob] = cli.ok("dispatch", "rules", "--json").json()["agents"]
    assert bob["rules"] == "own"
    assert bob["on"] == {"from": ["dana"], "direction": ["A2U", "U2U"]}
    assert "direction" in cli.ok("dispatch", "rules").stdout
