"""History filters, bounds on settings, agent ids, `--follow`'s edges,
`first_read_at`, and where `audit` writes by default. Through the command line, on real
stores; every refusal names the field and value, exits as documented and changes nothing."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM, query, run, snapshot, wait_for
from freezegun import freeze_time

pytestmark = pytest.mark.cli


def _dump(store: Path) -> str:
    """Everything the store holds, to show a refusal changed nothing."""
    rows = []
    for (name,) in query(
        store,
        "SELECT name FROM sqlite_master WHERE type = 'table'"
        " AND name NOT LIKE 'sqlite_%' ORDER BY name",
    ):
        rows.append((name, query(store, f'SELECT * FROM "{name}" ORDER BY 1')))
    return hashlib.sha256(repr(rows).encode()).hexdigest()


# ---------------------------------------------------------------- agent ids


@pytest.mark.parametrize("bad", ["w@.", "w@t.", "w@.x", "w@t.x", "w@"])
def test_an_agent_id_whose_team_is_not_a_name_is_refused_everywhere(cli, team, bad):
    """The team of `name@team` follows the channel-name rule (it names a directory in the
    bridge): refused on join, on send, on receive, with exit 3 naming the field and value."""
    before = _dump(team)
    for args, field in (
        (("channel", "join", "team", bad, "--as", "alice"), "agent"),
        (("send", "team", "hi", "--as", bad), "sender"),
        (("receive", "--as", bad), "recipient"),
        (("send", "--to", bad, "hi", "--as", "alice"), None),
    ):
        r = cli(*args, "--json")
        assert r.exit_code == 3, (args, r.stdout, r.stderr)
        err = r.error if "error" in r.stderr else r.json()["results"][0]["error"]
        assert err["value"] == bad and bad in err["message"]
        if field is not None:
            assert err["field"] == field
    assert _dump(team) == before


def test_team_agent_ids_that_are_names_still_work(cli, team):
    cli.ok("channel", "join", "team", "w@crew-1", "--as", "alice")
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


# ---------------------------------------------------------------- read history


def _read_twice_then_die(cli, make_channel, clock):
    """b reads message 1, misses its ack deadline, is handed it again, reads it again, and
    misses the second deadline too: max_retries 1 makes that a dead letter."""
    make_channel("w", "a", "b", delivery="at-least-once", ack_timeout="10s", max_retries=1)
    cli.ok(
        "send", "w", "x", "--as", "a", "--topic", "t.x", "--meta", "k=v", "--correlation-id", "c-1"
    )
    cli.ok("receive", "--as", "b")  # t=0: attempt 1, read
    clock.tick(15)
    cli.ok("tick")  # deadline 10s: back-off 1s, again at 11
    clock.tick(2)
    cli.ok("receive", "--as", "b")  # t=17: attempt 2, read again
    clock.tick(10)
    cli.ok("tick")  # deadline 21s passed: dead


def test_read_at_is_the_latest_read_and_first_read_at_the_first(cli, make_channel):
    with freeze_time("2026-01-01 00:00:00") as clock:
        _read_twice_then_die(cli, make_channel, clock)
    (d,) = cli.ok("show", "1", "--json").json()["deliveries"]
    assert d["first_read_at"] == "2026-01-01T00:00:00.000Z"
    assert d["read_at"] == "2026-01-01T00:00:17.000Z"
    assert query(
        Path("store/store.acomm"),
        "SELECT first_read_at, read_at FROM deliveries WHERE message_id = 1",
    ) == [(1767225600000, 1767225617000)]


def test_acking_a_redelivery_without_reading_it_again_counts_as_its_read(cli, make_channel):
    """An ack of an unread delivery is its read: read_at moves to the ack, not kept from the
    first attempt; first_read_at stays."""
    make_channel("w", "a", "b", delivery="at-least-once", ack_timeout="10s")
    with freeze_time("2026-01-01 00:00:00") as clock:
        cli.ok("send", "w", "x", "--as", "a")
        cli.ok("receive", "--as", "b")
        clock.tick(15)
        cli.ok("tick")
        clock.tick(5)
        cli.ok("ack", "1", "--as", "b")
    d = cli.ok("receive", "--as", "b", "--peek", "--json").json()["messages"]
    assert d == []
    (d,) = cli.ok("show", "1", "--json").json()["deliveries"]
    assert (d["first_read_at"], d["read_at"]) == (
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:20.000Z",
    )


def test_receive_json_carries_first_read_at(cli, team):
    cli.ok("send", "team", "x", "--as", "alice")
    (m,) = cli.ok("receive", "--as", "bob", "--json").json()["messages"]
    assert m["delivery"]["first_read_at"] == m["delivery"]["read_at"] is not None


# ---------------------------------------------------------------- deadletter show


def test_deadletter_show_prints_the_whole_record_with_each_attempt(cli, make_channel):
    with freeze_time("2026-01-01 00:00:00") as clock:
        _read_twice_then_die(cli, make_channel, clock)
    doc = cli.ok("deadletter", "show", "1", "--json").json()
    assert doc["total_count"] == 1
    (dl,) = doc["dead_letters"]
    assert {
        k: dl[k]
        for k in (
            "message_id",
            "recipient",
            "channel",
            "reason",
            "retry_count",
            "last_error",
            "topic",
            "metadata",
            "correlation_id",
            "type",
            "sender",
            "content",
            "dead_lettered_at",
        )
    } == {
        "message_id": 1,
        "recipient": "b",
        "channel": "w",
        "reason": "max_retries_exceeded",
        "retry_count": 1,
        "last_error": "no acknowledgement after 2 deliveries",
        "topic": "t.x",
        "metadata": {"k": "v"},
        "correlation_id": "c-1",
        "type": "text",
        "sender": "a",
        "content": "x",
        "dead_lettered_at": "2026-01-01T00:00:21.000Z",
    }
    assert [(a["attempt"], a["delivered_at"], a["read_at"]) for a in dl["attempts"]] == [
        (1, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"),
        (2, "2026-01-01T00:00:11.000Z", "2026-01-01T00:00:17.000Z"),
    ]
    text = cli.ok("deadletter", "show", "1").stdout
    for part in (
        "last_error:",
        "no acknowledgement after 2 deliveries",
        "topic:",
        "t.x",
        "metadata:",
        "k=v",
        "retry_count:",
        "attempt 1: delivered 2026-01-01T00:00:00.000Z, read 2026-01-01T00:00:00.000Z",
        "attempt 2: delivered 2026-01-01T00:00:11.000Z, read 2026-01-01T00:00:17",
    ):
        assert part in text, (part, text)


def test_a_replayed_dead_letter_keeps_its_earlier_attempts(cli, make_channel):
    with freeze_time("2026-01-01 00:00:00") as clock:
        _read_twice_then_die(cli, make_channel, clock)
        clock.tick(100)
        cli.ok("deadletter", "replay", "1")  # t=127: a fresh budget
        clock.tick(20)
        cli.ok("tick")  # deadline 137: again at 138
        clock.tick(30)
        cli.ok("tick")  # deadline 148 passed: dead again
    (dl,) = cli.ok("deadletter", "show", "1", "--json").json()["dead_letters"]
    assert [(a["attempt"], a["delivered_at"][11:19], a["read_at"]) for a in dl["attempts"]] == [
        (1, "00:00:00", "2026-01-01T00:00:00.000Z"),
        (2, "00:00:11", "2026-01-01T00:00:17.000Z"),
        (1, "00:02:07", None),
        (2, "00:02:18", None),
    ]


def test_deadletter_show_of_nothing_is_not_found(cli, team):
    cli.ok("send", "team", "x", "--as", "alice")
    r = cli("deadletter", "show", "1", "--json")
    assert r.exit_code == 4 and r.error["field"] == "message" and r.error["value"] == 1
    r = cli("deadletter", "show", "1", "--recipient", "w@.", "--json")
    assert r.exit_code == 3 and r.error["value"] == "w@."


# ---------------------------------------------------------------- messages filters


def _ids(r) -> list[int]:
    return [m["id"] for m in r.json()["messages"]]


def test_messages_by_correlation_id_recipient_and_state(cli, make_channel):
    make_channel("team", "alice", "bob", "carol")
    q = cli.ok("query", "team", "ready?", "--as", "alice", "--json").json()
    corr = q["correlation_id"]
    cli.ok("send", "team", "other", "--as", "alice")  # 2
    cli.ok("send", "--to", "carol", "dm", "--as", "bob")  # 3
    cli.ok("receive", "--as", "bob")  # bob reads 1, 2
    cli.ok("respond", corr, "yes", "--as", "bob")  # 4, to alice
    assert _ids(cli.ok("messages", "--correlation-id", corr, "--json")) == [4, 1]
    assert _ids(cli.ok("messages", "--recipient", "carol", "--json")) == [3, 2, 1]
    assert _ids(cli.ok("messages", "--recipient", "alice", "--json")) == [4]
    assert _ids(cli.ok("messages", "--state", "unread", "--json")) == [4, 3, 2, 1]  # carol
    assert _ids(cli.ok("messages", "--state", "acked", "--json")) == [1]  # bob's answer
    assert _ids(cli.ok("messages", "--recipient", "bob", "--state", "read", "--json")) == [2]
    assert _ids(
        cli.ok("messages", "--recipient", "bob", "--state", "read", "--state", "acked", "--json")
    ) == [2, 1]
    assert _ids(cli.ok("messages", "--recipient", "carol", "--state", "read", "--json")) == []
    r = cli.ok("messages", "--recipient", "bob", "--correlation-id", corr, "--json").json()
    assert (r["total_count"], r["has_more"]) == (1, False)


@pytest.mark.parametrize(
    ("args", "field", "value"),
    [
        (("--state", "bogus"), "state", "bogus"),
        (("--state", "read", "--state", "dead_letter"), "state", "dead_letter"),
        (("--recipient", "w@t."), "recipient", "w@t."),
        (("--correlation-id", "a b"), "correlation_id", "a b"),
    ],
)
def test_messages_filters_refuse_bad_values(cli, team, args, field, value):
    cli.ok("send", "team", "x", "--as", "alice")
    before = _dump(team)
    r = cli("messages", *args, "--json")
    assert r.exit_code == 3, r.stderr
    assert (r.error["field"], r.error["value"]) == (field, value)
    assert repr(value) in r.error["message"]
    assert _dump(team) == before


# ---------------------------------------------------------------- receive --follow


def _states(store: Path, who: str = "bob") -> list[str]:
    return [
        s
        for (s,) in query(
            store, "SELECT state FROM deliveries WHERE recipient = ? ORDER BY message_id", who
        )
    ]


def _head_1(*args: str) -> tuple[int, str, bytes]:
    """`acomm receive ... | head -1` as a shell runs it: acomm's exit status and stderr, and
    what head printed."""
    p = subprocess.run(
        [
            "bash",
            "-c",
            f"{ACOMM} receive {' '.join(args)} 2>err | head -1; exit ${{PIPESTATUS[0]}}",
        ],
        capture_output=True,
        timeout=60,
    )
    return p.returncode, Path("err").read_text(), p.stdout


@pytest.mark.process
def test_receive_follow_piped_to_head_marks_only_the_line_head_printed(cli, team):
    """Print before commit, per message: `receive --follow | head -1` takes one message, and
    the next run the next one; the rest stay unread."""
    for i in range(5):
        cli.ok("send", "team", f"m{i}", "--as", "alice")
    status, err, out = _head_1("--as", "bob", "--follow", "--body")
    assert out == b"m0\n"
    # head gone before or at the next write: either way one line on stderr, exit 141
    assert status == 141 and "output_failed" in err and "marked read" in err
    assert _states(team) == ["read"] + ["unread"] * 4
    status, _, out = _head_1("--as", "bob", "--follow", "--jsonl")
    assert json.loads(out)["content"] == "m1" and status == 141
    assert _states(team) == ["read"] * 2 + ["unread"] * 3


@pytest.mark.process
def test_receive_peek_follow_piped_to_head_marks_nothing(cli, team):
    for i in range(3):
        cli.ok("send", "team", f"m{i}", "--as", "alice")
    before = snapshot(team)
    status, err, out = _head_1("--as", "bob", "--follow", "--peek", "--body")
    # read-only, as `messages | head`: the reader leaving is no failure
    assert out == b"m0\n" and (status, err) == (0, "")
    assert snapshot(team) == before


@pytest.mark.process
def test_a_follower_holds_no_lock_while_its_reader_has_not_taken_a_message(cli, team):
    """The message waits in the pipe, unread in the store, while other processes send; it
    counts as read once the reader takes it."""
    cli.ok("send", "team", "first", "--as", "alice")
    f = subprocess.Popen(
        [ACOMM, "receive", "--as", "bob", "--follow", "--body"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        # within the busy timeout: a lock held by the follower would make this exit 7
        p = run("send", "team", "second", "--as", "alice", env={"ACOMM_BUSY_TIMEOUT": "2000"})
        assert p.returncode == 0, p.stderr
        assert _states(team)[0] == "unread"
        assert f.stdout.readline() == b"first\n"
        wait_for(lambda: _states(team)[0] == "read")
        assert f.stdout.readline() == b"second\n"
        wait_for(lambda: _states(team) == ["read", "read"])
        f.terminate()
        assert f.wait(timeout=30) == 0
    finally:
        f.kill()
        f.wait(timeout=30)


@pytest.mark.process
def test_receive_wait_with_follow_is_refused_naming_both(cli, team):
    cli.ok("send", "team", "x", "--as", "alice")
    before = snapshot(team)
    for args in (("--wait", "5", "--follow"), ("--follow", "--wait", "0")):
        r = cli("receive", "--as", "bob", *args, "--json")
        assert r.exit_code == 2, r.stderr
        assert r.error["field"] == "wait"
        assert "--wait" in r.error["message"] and "--follow" in r.error["message"]
        p = run("receive", "--as", "bob", *args)  # the fast path says the same
        assert p.returncode == 2 and "--wait" in p.stderr and "--follow" in p.stderr
    assert snapshot(team) == before
