"""Repeating a state change is a no-op that says so: the second `channel
close`, `pause`, `resume`, `drain`, `join`, `leave`, `subscribe` or `unsubscribe` exits 0
with `"changed": false`, leaves the store exactly as it was, and (without --json) notes it on
stderr; so a script may simply retry. A missing channel is still not found (exit 4)."""

from __future__ import annotations

import pytest
from conftest import snapshot

pytestmark = pytest.mark.cli

AS = ("--as", "alice")


@pytest.fixture
def world(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    return store


# (verb, arguments) of each state change, done once before the repeat where it needs to be
REPEATS = {
    "pause": ("channel", "pause", "team", "--as", "alice"),
    "drain": ("channel", "drain", "team", "--as", "alice"),
    "close": ("channel", "close", "team", "--as", "alice"),
    "join": ("channel", "join", "team", "--as", "alice", "carol"),
    "leave": ("channel", "leave", "team", "--as", "alice", "bob"),
    "subscribe": ("subscribe", "ci", "build.#", "--as", "bob"),
    "unsubscribe": ("unsubscribe", "ci", "build.#", "--as", "bob"),
}
SETUP = {"unsubscribe": [("subscribe", "ci", "build.#", "--as", "bob")]}


@pytest.mark.parametrize("verb", REPEATS)
def test_repeating_a_change_is_a_no_op_that_says_so(cli, world, verb):
    for args in SETUP.get(verb, []):
        cli.ok(*args)
    first = cli.ok(*REPEATS[verb], "--json").json()
    assert first["changed"] is True
    before = snapshot(world)
    again = cli(*REPEATS[verb], "--json")
    assert again.exit_code == 0, again.stderr
    assert again.json()["changed"] is False
    assert again.stderr == ""  # with --json stderr is only for errors
    assert snapshot(world) == before
    plain = cli(*REPEATS[verb])
    assert plain.exit_code == 0, plain.stderr
    assert plain.stderr.startswith("acomm: note: ") and "\n" == plain.stderr[-1]
    assert plain.stderr.count("\n") == 1
    assert snapshot(world) == before


def test_resume_of_an_active_channel_is_a_no_op(cli, world):
    before = snapshot(world)
    r = cli("channel", "resume", "team", "--as", "alice", "--json")
    assert r.exit_code == 0, r.stderr
    assert (r.json()["state"], r.json()["changed"]) == ("active", False)
    plain = cli("channel", "resume", "team", "--as", "alice")
    assert plain.exit_code == 0
    assert plain.stdout == "team\tactive\n"  # stdout's contract is unchanged
    assert plain.stderr == "acomm: note: channel team is already active\n"
    assert snapshot(world) == before


def test_notes_name_what_was_already_so(cli, world):
    cli.ok("channel", "close", "team", "--as", "alice")
    assert cli("channel", "close", "team", "--as", "alice").stderr == (
        "acomm: note: channel team is already closed\n"
    )
    assert cli("channel", "leave", "ci", "--as", "ci", "mallory").stderr == (
        "acomm: note: mallory is not in channel ci; nothing to leave\n"
    )
    cli.ok("channel", "join", "ci", "--as", "ci", "dave", "--role", "observer")
    assert cli("channel", "join", "ci", "--as", "ci", "dave").stderr == (
        "acomm: note: dave is already in channel ci (as observer)\n"
    )
    assert cli("unsubscribe", "ci", "x.*", "--as", "dave").stderr == (
        "acomm: note: dave has no subscription 'x.*' on ci; nothing to remove\n"
    )


def test_leaving_twice_dead_letters_once(cli, world):
    cli.ok("send", "team", "for bob", "--as", "alice")
    cli.ok("channel", "leave", "team", "--as", "alice", "bob")
    assert len(cli.ok("deadletter", "list", "--json").json()["dead_letters"]) == 1
    assert cli("channel", "leave", "team", "bob", *AS, "--json").json()["changed"] is False
    assert len(cli.ok("deadletter", "list", "--json").json()["dead_letters"]) == 1


def test_unsubscribe_of_a_missing_pattern_says_nothing_was_removed(cli, world):
    r = cli("unsubscribe", "ci", "deploy.#", "--as", "bob", "--json")
    assert r.exit_code == 0, r.stderr
    assert (r.json()["removed"], r.json()["changed"]) == (False, False)


@pytest.mark.parametrize(
    "args",
    [
        ("channel", "close", "nope", *AS),
        ("channel", "resume", "nope", *AS),
        ("channel", "pause", "nope", *AS),
        ("channel", "drain", "nope", *AS),
        ("channel", "leave", "nope", "bob", *AS),
        ("channel", "join", "nope", "bob", *AS),
        ("unsubscribe", "nope", "a.#", "--as", "bob"),
        ("subscribe", "nope", "a.#", "--as", "bob"),
    ],
)
def test_a_missing_channel_is_still_not_found(cli, world, args):
    before = snapshot(world)
    r = cli(*args, "--json")
    assert r.exit_code == 4
    assert (r.error["code"], r.error["field"]) == ("not_found", "channel")
    assert snapshot(world) == before


@pytest.mark.parametrize(
    "args",
    [
        ("channel", "resume", "team", *AS),
        ("channel", "pause", "team", *AS),
        ("channel", "drain", "team", *AS),
    ],
)
def test_leaving_the_closed_state_is_still_a_conflict(cli, world, args):
    cli.ok("channel", "close", "team", "--as", "alice")
    before = snapshot(world)
    r = cli(*args, "--json")
    assert r.exit_code == 5
    assert (r.error["code"], r.error["state"]) == ("invalid_state", "closed")
    assert snapshot(world) == before


def test_the_owner_still_cannot_leave(cli, world):
    r = cli("channel", "leave", "team", "--as", "alice", "alice", "--json")
    assert (r.exit_code, r.error["code"]) == (5, "invalid_state")
