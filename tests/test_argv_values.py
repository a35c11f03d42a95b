"""A literal `-q`, `-v` or `--json` written as an option's value is that option's value, never a
global option (`acomm messages --grep -v` searches for `-v`; it does not turn on -v). The
globals written after the subcommand still work. Through the real `acomm` (fast path for
send/receive, Typer for the rest) and in process (Typer for everything)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import query, run, snapshot

from acomm_cli.cli import outcome

pytestmark = pytest.mark.cli


@pytest.fixture
def words(team: Path, cli) -> Path:
    """`team` holding two messages whose text contains a global option's name."""
    cli.ok("send", "team", "has -v inside", "--as", "alice")
    cli.ok("send", "team", "says --json and -q", "--as", "alice")
    cli.ok("send", "team", "plain", "--as", "alice")
    return team


def _status(r) -> int:
    """The exit status of a subprocess run or of an in-process one."""
    return r.returncode if hasattr(r, "returncode") else r.exit_code


def _contents(stdout: str) -> list[str]:
    return [line.rsplit("\t", 1)[1] for line in stdout.splitlines()]


@pytest.mark.parametrize("how", [pytest.param("process", marks=pytest.mark.process), "in-process"])
def test_a_grep_for_a_global_flags_name_searches_for_it(words, cli, how):
    call = run if how == "process" else cli
    r = call("messages", "--grep", "-v")
    assert _status(r) == 0, r.stderr
    assert _contents(r.stdout) == ["has -v inside"]
    assert "verbose" not in r.stderr  # -v was not switched on
    r = call("messages", "--grep", "--json")
    assert _contents(r.stdout) == ["says --json and -q"]  # rows, not one JSON document
    r = call("messages", "--grep", "-q", "--json")  # a global after the value still counts
    assert [m["content"] for m in json.loads(r.stdout)["messages"]] == ["says --json and -q"]


@pytest.mark.process
def test_the_fast_paths_receive_greps_for_it_too(words):
    r = run("receive", "--as", "bob", "--peek", "--grep", "-v")
    assert r.returncode == 0, r.stderr
    assert "has -v inside" in r.stdout and "plain" not in r.stdout
    assert "verbose" not in r.stderr


@pytest.mark.parametrize("how", [pytest.param("process", marks=pytest.mark.process), "in-process"])
def test_a_send_option_stores_the_literal_value(team, cli, how):
    call = run if how == "process" else cli
    r = call("send", "--to", "bob", "--correlation-id", "-q", "hello", "--as", "alice")
    assert _status(r) == 0, r.stderr
    first = int(r.stdout)  # the id alone: not quiet-swallowed, not JSON
    r = call("send", "--to", "bob", "hi", "--as", "alice", "--dedupe-key", "--json")
    second = int(r.stdout)  # plain: --json was the key, not the output format
    r = call("send", "team", "x", "--as", "alice", "--correlation-id", "-v", "--json")
    third = json.loads(r.stdout)["id"]  # the trailing --json is the global
    assert "verbose" not in r.stderr
    rows = query(
        team,
        "SELECT id, content, correlation_id, dedupe_key FROM messages "
        "WHERE id IN (?, ?, ?) ORDER BY id",
        first,
        second,
        third,
    )
    assert rows == [
        (first, "hello", "-q", None),
        (second, "hi", None, "--json"),
        (third, "x", "-v", None),
    ]


@pytest.mark.parametrize("how", [pytest.param("process", marks=pytest.mark.process), "in-process"])
def test_a_refused_value_is_named_in_plain_text_and_nothing_is_stored(team, cli, how):
    call = run if how == "process" else cli
    before = snapshot(team)
    r = call("send", "team", "hi", "--as", "alice", "--priority", "--json")
    assert _status(r) == 3
    assert r.stderr.startswith("acomm: error: validation_failed: priority: '--json'")
    r = call("send", "team", "hi", "-t", "-q", "--as", "alice")  # a short option's value
    assert _status(r) == 3
    assert "type: '-q' is not one of" in r.stderr
    assert snapshot(team) == before


@pytest.mark.process
def test_globals_after_the_command_and_the_double_dash_still_work(words, cli):
    assert run("messages", "-q", "--grep", "plain").stdout.count("\n") == 1
    r = run("send", "team", "x", "--as", "alice", "--json")
    assert json.loads(r.stdout)["id"]
    r = run("send", "team", "--as", "alice", "--", "-v")  # after --: the body
    assert r.returncode == 0 and "verbose" not in r.stderr
    assert query(words, "SELECT content FROM messages WHERE id = ?", int(r.stdout)) == [("-v",)]
    r = run("messages", "--grep", "x", "--limit", "1", "-v")
    assert r.returncode == 0 and "acomm: verbose: done in" in r.stderr
    r = cli("channel", "list", "-q", "--json")  # a group's command (Typer path)
    assert r.exit_code == 0 and "channels" in r.json()


def test_the_scan_reads_values_as_click_does():
    """Fine cases of `outcome.hoist_globals`: clustered short options, `--opt=value`, an
    unknown command, a group's subcommand."""

    def options(path: tuple[str, ...]) -> tuple[frozenset[str], bool] | None:
        return {
            ("m",): (frozenset({"-t", "--grep"}), False),
            ("g",): (frozenset({"--in"}), True),
            ("g", "s"): (frozenset({"--grep"}), False),
        }.get(path)

    hoist = outcome.hoist_globals
    assert hoist(["m", "-ft", "-v"], options) == ["m", "-ft", "-v"]  # -t takes the next word
    assert hoist(["m", "-tf", "-v"], options) == ["-v", "m", "-tf"]  # -t's value is "f"
    assert hoist(["m", "--grep=-v", "-q"], options) == ["-q", "m", "--grep=-v"]
    assert hoist(["x", "--grep", "-v"], options) == ["-v", "x", "--grep"]  # unknown: as before
    assert hoist(["g", "--in", "-q", "s", "--grep", "--json", "--csv"], options) == [
        "--csv",
        "g",
        "--in",
        "-q",
        "s",
        "--grep",
        "--json",
    ]
    assert hoist(["--store", "-q", "m", "--grep", "-v"], options) == [
        "--store",
        "-q",
        "m",
        "--grep",
        "-v",
    ]
    assert not outcome.wants_json(["--store", "--json", "m", "--grep", "--json"], options)
    assert outcome.wants_json(["m", "--grep", "--json", "--json"], options)
    assert not outcome.wants_json(["m", "--", "--json"], options)
