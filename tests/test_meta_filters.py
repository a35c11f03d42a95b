"""Metadata filters when consuming: `receive`/`messages --meta KEY=VALUE|KEY!=VALUE|KEY|!KEY`
(repeatable, all must hold), evaluated in SQL, and `channel update --index-meta KEY`, the
expression index that serves them within a channel."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM, query, snapshot

pytestmark = pytest.mark.cli


@pytest.fixture
def jobs(make_channel, cli) -> Path:
    """alice's `team` with bob; four messages: region eu, us, eu (one with n=5), none."""
    store = make_channel("team", "alice", "bob")
    for args in (
        ["--meta", "region=eu", "--meta", "n=5"],
        ["--meta", "region=us"],
        ["--meta", "region=eu"],
        [],
    ):
        cli.ok("send", "team", f"job {args[1] if args else 'plain'}", "--as", "alice", *args)
    return store


def _ids(cli, *args: str) -> list[int]:
    return sorted(m["id"] for m in cli.ok("--json", "messages", *args).json()["messages"])


def test_each_form_of_meta_filter_selects_what_it_says(cli, jobs):
    assert _ids(cli, "--meta", "region=eu") == [1, 3]
    # `!=` also matches a message without the key, as label selectors read it
    assert _ids(cli, "--meta", "region!=eu") == [2, 4]
    assert _ids(cli, "--meta", "region") == [1, 2, 3]
    assert _ids(cli, "--meta", "!region") == [4]
    assert _ids(cli, "--meta", "region=eu", "--meta", "n=5") == [1]  # all must hold
    assert _ids(cli, "--meta", "region=mars") == []


def test_receive_takes_only_the_matching_messages_and_leaves_the_rest_unread(cli, jobs):
    got = cli.ok("--json", "receive", "--as", "bob", "--meta", "region=us").json()
    assert [m["content"] for m in got["messages"]] == ["job region=us"]
    left = query(
        jobs, "SELECT message_id FROM deliveries WHERE recipient = 'bob' AND state = 'unread'"
    )
    assert sorted(r[0] for r in left) == [1, 3, 4]


def test_a_number_in_metadata_matches_its_decimal_form(cli, store, make_channel):
    make_channel("team", "alice", "bob")
    batch = "\n".join(
        json.dumps({"channel": "team", "from": "alice", "content": c, "metadata": m})
        for c, m in (("int", {"n": 5}), ("text", {"n": "5"}), ("flag", {"ok": True}))
    )
    cli.ok("send", "--batch", "-", input=batch + "\n")
    got = {m["content"] for m in cli.ok("--json", "messages", "--meta", "n=5").json()["messages"]}
    assert got == {"int", "text"}
    assert _ids(cli, "--meta", "ok=1") == [3]


def test_a_key_holding_json_null_is_present(cli, store, make_channel):
    make_channel("team", "alice", "bob")
    line = json.dumps(
        {"channel": "team", "from": "alice", "content": "x", "metadata": {"gone": None}}
    )
    cli.ok("send", "--batch", "-", input=line + "\n")
    assert _ids(cli, "--meta", "gone") == [1]
    assert _ids(cli, "--meta", "!gone") == []


@pytest.mark.parametrize(
    "spec, says",
    [
        ('bad"key=1', "key 'bad\"key' must be"),
        ("=v", "key '' must be"),
        ("a" * 129 + "=v", "must be 1-128 characters"),
        ("k=" + "v" * 1025, "longer than 1024"),
    ],
)
def test_a_malformed_filter_is_exit_3_naming_the_field(cli, jobs, spec, says):
    before = snapshot(jobs)
    for command in (["messages"], ["receive", "--as", "bob"]):
        res = cli(*command, "--meta", spec)
        assert res.exit_code == 3, res.stderr
        assert "meta:" in res.stderr and says in res.stderr
    assert snapshot(jobs) == before


def test_more_than_sixteen_filters_are_refused(cli, jobs):
    args = [a for i in range(17) for a in ("--meta", f"k{i}")]
    res = cli("messages", *args)
    assert res.exit_code == 3 and "at most 16" in res.stderr


def test_index_meta_builds_an_index_the_channel_filter_uses(cli, jobs):
    res = cli.ok("channel", "update", "team", "--index-meta", "region", "--as", "alice")
    assert res.stdout == "team\tindexed_meta\t-\tregion\n"
    [(sql,)] = query(jobs, "SELECT sql FROM sqlite_master WHERE name LIKE 'messages_meta_%'")
    assert "json_extract(metadata, '$.\"region\"')" in sql
    # the statement `messages --channel team --meta region=eu` runs, as SQLite plans it
    c = sqlite3.connect(jobs)
    [(cid,)] = c.execute("SELECT id FROM channels WHERE name = 'team'").fetchall()
    plan = " ".join(
        str(r[-1])
        for r in c.execute(
            "EXPLAIN QUERY PLAN SELECT m.id FROM messages m JOIN channels c ON c.id = m.channel_id"
            f" WHERE c.name = ? AND m.channel_id = {cid}"
            " AND json_extract(m.metadata, '$.\"region\"') IN (?)",
            ("team", "eu"),
        )
    )
    c.close()
    assert "messages_meta_c" in plan
    assert _ids(cli, "--channel", "team", "--meta", "region=eu") == [1, 3]
    # again: nothing to do, said so
    res = cli.ok("channel", "update", "team", "--index-meta", "region", "--as", "alice")
    assert res.stdout == "" and "nothing changed" in res.stderr
    res = cli.ok("channel", "update", "team", "--drop-index-meta", "region", "--as", "alice")
    assert res.stdout == "team\tindexed_meta\tregion\t-\n"
    assert query(jobs, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'messages_meta_%'") == [
        (0,)
    ]


def test_only_the_owner_or_an_admin_may_index(cli, jobs):
    before = snapshot(jobs)
    res = cli("channel", "update", "team", "--index-meta", "region", "--as", "bob")
    assert res.exit_code == 5
    assert snapshot(jobs) == before


def test_an_index_key_is_checked_before_anything_is_built(cli, jobs):
    before = snapshot(jobs)
    res = cli(
        "channel", "update", "team", "--index-meta", "x');DROP TABLE messages;--", "--as", "alice"
    )
    assert res.exit_code == 3 and "index_meta:" in res.stderr
    assert snapshot(jobs) == before
    res = cli(
        "channel", "update", "team", "--index-meta", "k", "--drop-index-meta", "k", "--as", "alice"
    )
    assert res.exit_code == 2 and "both indexed and dropped" in res.stderr


def test_a_work_queue_worker_claims_only_what_its_filter_matches(cli, make_channel):
    store = make_channel("jobs", "boss", "w1", "w2", type="queue")
    for region in ("eu", "us", "eu"):
        cli.ok("send", "jobs", f"job {region}", "--meta", f"region={region}", "--as", "boss")
    got = cli.ok("--json", "receive", "--as", "w1", "--meta", "region=us").json()
    assert [m["content"] for m in got["messages"]] == ["job us"]
    # the eu jobs are still the queue's, for any worker
    got = cli.ok("--json", "receive", "--as", "w2").json()
    assert [m["content"] for m in got["messages"]] == ["job eu", "job eu"]
    assert query(store, "SELECT count(*) FROM deliveries WHERE state = 'unread'") == [(0,)]


@pytest.mark.process
def test_follow_hands_over_only_matching_messages(cli, jobs):
    """`receive --follow --meta region=us | head -1`: the us job, the others left unread."""
    p = subprocess.run(
        ["bash", "-c", f"{ACOMM} receive --as bob --follow --body --meta region=us | head -1"],
        capture_output=True,
        timeout=60,
    )
    assert p.stdout == b"job region=us\n"
    unread = query(
        jobs, "SELECT message_id FROM deliveries WHERE recipient = 'bob' AND state = 'unread'"
    )
    assert sorted(r[0] for r in unread) == [1, 3, 4]
