"""Issue 19, part C: history filters, bounds on settings, agent ids, `--follow`'s edges,
`first_read_at`, and where `audit` writes by default. Through the command line, on real
stores; every refusal names the field and value, exits as documented and changes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from conftest import query


def _dump(store: Path) -> str:
    """Everything the store holds, to show a refusal changed nothing."""
    rows = []
    for (name,) in query(store, "SELECT name FROM sqlite_master WHERE type = 'table'"
                         " AND name NOT LIKE 'sqlite_%' ORDER BY name"):
        rows.append((name, query(store, f"SELECT * FROM \"{name}\" ORDER BY 1")))
    return hashlib.sha256(repr(rows).encode()).hexdigest()


# ---------------------------------------------------------------- agent ids


@pytest.mark.parametrize("bad", ["w@.", "w@t.", "w@.x", "w@t.x", "w@"])
def test_an_agent_id_whose_team_is_not_a_name_is_refused_everywhere(cli, team, bad):
    """The team of `name@team` follows the channel-name rule (it names a directory in the
    bridge): refused on join, on send, on receive, with exit 3 naming the field and value."""
    before = _dump(team)
    for args, field in ((("channel", "join", "team", bad), "agent"),
                        (("send", "team", "hi", "--as", bad), "sender"),
                        (("receive", "--as", bad), "recipient"),
                        (("send", "--to", bad, "hi", "--as", "alice"), None)):
        r = cli(*args, "--json")
        assert r.exit_code == 3, (args, r.stdout, r.stderr)
        err = r.error if "error" in r.stderr else r.json()["results"][0]["error"]
        assert err["value"] == bad and bad in err["message"]
        if field is not None:
            assert err["field"] == field
    assert _dump(team) == before


def test_team_agent_ids_that_are_names_still_work(cli, team):
    cli.ok("channel", "join", "team", "w@crew-1")
    cli.ok("send", "team", "hi", "--as", "alice")
    assert cli.ok("receive", "--as", "w@crew-1", "--body").stdout == "hi\n"


# ---------------------------------------------------------------- max message size


def test_a_max_message_size_above_the_store_limit_is_refused(cli, store):
    before = _dump(store)
    r = cli("channel", "create", "big", "--as", "a", "--max-message-size", "5GiB", "--json")
    assert r.exit_code == 3
    assert r.error["field"] == "max_message_size" and r.error["value"] == 5 * 1024**3
    assert r.error["bound"] == 998_951_424
    assert "5368709120" in r.error["message"] and "998951424" in r.error["message"]
    assert _dump(store) == before
    r = cli("channel", "create", "big", "--as", "a", "--max-message-size", "998951425")
    assert r.exit_code == 3 and "max_message_size" in r.stderr
    cli.ok("channel", "create", "big", "--as", "a", "--max-message-size", "998951424")
    doc = cli.ok("channel", "show", "big", "--json").json()
    assert doc["config"]["max_message_size"] == 998_951_424
