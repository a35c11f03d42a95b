"""Durable replay cursors: `acomm cursor create|list|show|seek|delete` and `receive --cursor`,
which reads a channel's history forward and moves the cursor in the same transaction, never
touching a delivery; compaction past an unread position is said, not skipped."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import query, snapshot
from freezegun import freeze_time

from acomm_cli.engine import cursors, opening

pytestmark = pytest.mark.cli

T0 = "2026-03-01T09:00:00Z"


@pytest.fixture
def history(make_channel, cli) -> Path:
    """alice's `team` with bob, and five messages one minute apart from T0 (ids 1-5)."""
    store = make_channel("team", "alice", "bob")
    with freeze_time(T0) as frozen:
        for i in range(1, 6):
            cli.ok("send", "team", f"m{i}", "--as", "alice", "--meta", f"odd={i % 2}")
            frozen.tick(timedelta(minutes=1))
    return store


def _read(cli, name: str, *args: str) -> list[str]:
    docs = cli.ok("--json", "receive", "--cursor", name, *args).json()["messages"]
    return [m["content"] for m in docs]


def _position(store: Path, name: str) -> int:
    return query(store, "SELECT position FROM cursors WHERE name = ?", name)[0][0]


def test_a_cursor_reads_forward_and_moves_past_what_it_printed(cli, history):
    cli.ok("cursor", "create", "audit", "--channel", "team", "--from-start")
    assert _read(cli, "audit", "--limit", "2") == ["m1", "m2"]
    assert _position(history, "audit") == 2
    assert _read(cli, "audit") == ["m3", "m4", "m5"]
    assert _read(cli, "audit") == []
    cli.ok("send", "team", "m6", "--as", "alice")
    assert _read(cli, "audit") == ["m6"]


def test_a_cursor_never_touches_a_delivery(cli, history):
    before = query(history, "SELECT * FROM deliveries ORDER BY message_id, recipient")
    cli.ok("cursor", "create", "audit", "--channel", "team", "--from-start")
    assert len(_read(cli, "audit")) == 5
    assert query(history, "SELECT * FROM deliveries ORDER BY message_id, recipient") == before
    # bob still gets every message
    assert len(cli.ok("--json", "receive", "--as", "bob").json()["messages"]) == 5


def test_peek_leaves_the_cursor_where_it_was(cli, history):
    cli.ok("cursor", "create", "audit", "--channel", "team", "--from-start")
    assert _read(cli, "audit", "--peek", "--limit", "1") == ["m1"]
    assert _position(history, "audit") == 0


@pytest.mark.parametrize(
    "start, first",
    [
        (["--from-start"], "m1"),
        (["--from-id", "3"], "m3"),
        (["--from-time", "2026-03-01T09:02:00Z"], "m3"),
        (["--from-time", "2026-03-01T09:02:30Z"], "m4"),
        ([], None),  # from now: only what comes next
        (["--from-now"], None),
    ],
)
def test_each_start(cli, history, start, first):
    cli.ok("cursor", "create", "c", "--channel", "team", *start)
    got = _read(cli, "c", "--limit", "1")
    assert got == ([first] if first else [])


def test_the_filter_is_the_cursors_own(cli, history):
    cli.ok("cursor", "create", "odd", "--channel", "team", "--from-start", "--meta", "odd=1")
    assert _read(cli, "odd") == ["m1", "m3", "m5"]
    # the position passed what did not match, up to the channel's head
    assert _position(history, "odd") == 5
    res = cli("receive", "--cursor", "odd", "--meta", "odd=0")
    assert res.exit_code == 2 and "drop --meta" in res.stderr


def test_a_reader_that_fails_leaves_the_cursor_unmoved(history):
    """The output goes before the cursor moves: if it could not be written, the transaction
    rolls back and the next read hands the same messages again."""
    conn = opening.connect(history, create=False)
    cursors.create(conn, "audit", "team", cursors.Start("start"), 1)

    def broken(_result):
        raise OSError("reader gone")

    with pytest.raises(OSError):
        cursors.read(conn, "audit", 10, 2, emit=broken)
    assert cursors.show(conn, "audit").position == 0
    conn.close()


def test_compaction_past_an_unread_position_is_said_not_skipped(cli, history):
    cli.ok("cursor", "create", "late", "--channel", "team", "--from-start")
    cli.ok("cursor", "create", "done", "--channel", "team", "--from-start")
    assert len(_read(cli, "done")) == 5
    cli.ok("receive", "--as", "bob")  # every delivery finished: compact may take them all
    assert cli.ok("compact", "--json").json()["removed_messages"] == 5
    cli.ok("send", "team", "m6", "--as", "alice")
    res = cli("receive", "--cursor", "late")
    assert res.exit_code == 5, res.stderr
    assert "behind compacted history" in res.stderr and "up to id 5" in res.stderr
    assert "the oldest id still held is 6" in res.stderr
    assert cli.ok("--json", "cursor", "show", "late").json()["behind_compaction"] is True
    # the cursor that had read them all goes on
    assert _read(cli, "done") == ["m6"]
    # a seek accepts the loss
    cli.ok("cursor", "seek", "late", "--from-id", "6")
    assert _read(cli, "late") == ["m6"]


def test_list_show_seek_delete(cli, history):
    cli.ok("cursor", "create", "a", "--channel", "team", "--from-start", "--as", "auditor")
    cli.ok("cursor", "create", "b", "--channel", "team")
    docs = cli.ok("--json", "cursor", "list").json()["cursors"]
    assert [(d["name"], d["position"], d["head"], d["pending"]) for d in docs] == [
        ("a", 0, 5, 5),
        ("b", 5, 5, 0),
    ]
    assert docs[0]["created_by"] == "auditor"
    assert cli.ok("cursor", "seek", "b", "--from-id", "2").stdout == "b\t5\t1\n"
    assert cli.ok("cursor", "delete", "a").stdout == "a\tdeleted\n"
    assert query(history, "SELECT name FROM cursors") == [("b",)]


@pytest.mark.parametrize(
    "args, code, says",
    [
        (["create", "bad name", "--channel", "team"], 3, "cursor: 'bad name'"),
        (["create", "c", "--channel", "nope"], 4, "nope"),
        (["create", "c", "--channel", "team", "--from-start", "--from-id", "2"], 2, "give one"),
        (["create", "c", "--channel", "team", "--meta", 'bad"k'], 3, "meta:"),
        (["create", "c", "--channel", "team", "--from-time", "yesterday-ish"], 3, "from_time"),
        (["show", "missing"], 4, "no cursor 'missing'"),
        (["seek", "missing", "--from-start"], 4, "no cursor"),
        (["delete", "missing"], 4, "no cursor"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(cli, history, args, code, says):
    before = snapshot(history)
    res = cli("cursor", *args)
    assert res.exit_code == code, res.stderr
    assert says in res.stderr
    assert snapshot(history) == before


def test_a_second_cursor_of_the_same_name_is_refused(cli, history):
    cli.ok("cursor", "create", "c", "--channel", "team")
    res = cli("cursor", "create", "c", "--channel", "team")
    assert res.exit_code == 5 and "exists" in res.stderr


def test_reading_a_missing_cursor_is_not_found(cli, history):
    res = cli("receive", "--cursor", "missing")
    assert res.exit_code == 4 and "no cursor" in res.stderr


def test_the_cursor_table_as_stored(cli, history):
    cli.ok("cursor", "create", "odd", "--channel", "team", "--meta", "odd=1", "--type", "text")
    c = sqlite3.connect(history)
    [(text,)] = c.execute("SELECT filter FROM cursors").fetchall()
    c.close()
    assert json.loads(text) == {"meta": ["odd=1"], "types": ["text"]}
