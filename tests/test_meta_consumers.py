"""Metadata filters beyond receive and messages: the answer `query --wait --meta` waits for,
the indexed keys `channel show` lists, and `channel delete` dropping a channel's indexes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import query, snapshot

from acomm_cli import clock, model
from acomm_cli.engine import queries
from acomm_cli.model import SendRequest

pytestmark = pytest.mark.cli


def _indexes(store: Path) -> int:
    [(n,)] = query(store, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_meta_%'")
    return n


def test_await_response_takes_only_an_answer_meeting_the_filter(cli, team, conn):
    asked = queries.query(
        conn, SendRequest(sender="alice", content="deploy?", channel="team"), clock.now_ms()
    ).correlation_id
    assert asked is not None
    for verdict in ("draft", "final"):
        cli.ok(
            "send", "team", verdict, "--type", "response", "--correlation-id", asked,
            "--meta", f"verdict={verdict}", "--as", "bob",
        )  # fmt: skip
    final = model.meta_conditions(["verdict=final"])
    got = queries.await_response(conn, asked, "alice", 0, meta=final)
    assert got is not None and got.content == "final"
    # the draft it passed over stays unread for receive; no second final answer
    assert queries.await_response(conn, asked, "alice", 0, meta=final) is None
    left = cli.ok("--json", "receive", "--as", "alice").json()["messages"]
    assert [m["content"] for m in left] == ["draft"]


def test_query_wait_without_a_matching_answer_times_out(cli, team):
    r = cli("query", "team", "deploy?", "--as", "alice", "--wait", "100ms", "--meta", "final")
    assert r.exit_code == 124


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        (["--meta", "final"], 2, "meta"),  # a filter on an answer nobody waits for
        (["--wait", "1s", "--meta", "=x"], 3, "meta"),
        (["--wait", "1s", "--meta", "bad key"], 3, "meta"),
    ],
)
def test_query_meta_is_refused_before_anything_is_sent(cli, team, args, code, field):
    before = snapshot(team)
    r = cli("--json", "query", "team", "deploy?", "--as", "alice", *args)
    assert r.exit_code == code
    assert r.error["field"] == field
    assert snapshot(team) == before


def test_channel_show_lists_the_indexed_metadata_keys(cli, team):
    assert cli.ok("--json", "channel", "show", "team").json()["indexed_meta"] == []
    assert "\nindexed_meta:      -\n" in cli.ok("channel", "show", "team").stdout
    for key in ("tenant", "region"):
        cli.ok("channel", "update", "team", "--index-meta", key, "--as", "alice")
    assert cli.ok("--json", "channel", "show", "team").json()["indexed_meta"] == [
        "region",
        "tenant",
    ]
    assert "\nindexed_meta:      region, tenant\n" in cli.ok("channel", "show", "team").stdout
    cli.ok("channel", "update", "team", "--drop-index-meta", "tenant", "--as", "alice")
    assert cli.ok("--json", "channel", "show", "team").json()["indexed_meta"] == ["region"]


def test_channel_delete_drops_its_metadata_indexes_and_no_others(cli, team, make_channel):
    make_channel("ops", "alice", "bob")
    cli.ok("send", "team", "x", "--meta", "region=eu", "--as", "alice")
    cli.ok("channel", "update", "team", "--index-meta", "region", "--as", "alice")
    cli.ok("channel", "update", "ops", "--index-meta", "region", "--as", "alice")
    assert _indexes(team) == 2
    cli.ok("channel", "delete", "team", "--force", "--as", "alice")
    assert _indexes(team) == 1  # ops keeps its own
    assert cli.ok("--json", "channel", "show", "ops").json()["indexed_meta"] == ["region"]
    # the history stays readable by the same filter, without the index
    kept = cli.ok("--json", "messages", "--meta", "region=eu").json()["messages"]
    assert [m["content"] for m in kept] == ["x"]
