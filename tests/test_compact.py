"""`acomm compact` and `acomm flush`: only what is terminal and old goes; ids stay unique."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

import every_state
import pytest
from conftest import assert_invariants, query, snapshot
from freezegun import freeze_time

from acomm_cli import clock
from acomm_cli.engine import opening, operations, sending
from acomm_cli.model import SendRequest

pytestmark = pytest.mark.cli


@pytest.fixture
def busy(cli, store):
    with freeze_time(every_state.T0) as frozen:
        ids = every_state.build(cli, frozen)
        yield ids, frozen


def _ids(path) -> set[int]:
    return {r[0] for r in query(path, "SELECT id FROM messages")}


# the _system dead-letter notifications (nobody subscribed: no delivery at all)
SYSTEM = {3, 4, 6}


def _terminal_and_old(ids: every_state.Ids) -> set[int]:
    return {ids.acked, ids.read_untracked, ids.dead_discarded, ids.published, ids.once, *SYSTEM}


def test_only_terminal_and_old_messages_go(cli, store, busy):
    ids, _ = busy
    assert {
        mid
        for mid in SYSTEM
        if query(store, "SELECT channel_id FROM messages WHERE id = ?", mid)[0][0] == 1
    } == SYSTEM
    before = _ids(store)
    sent = set(before)
    # the command on `once` and the acknowledgment back: both records expired at T0+2h+60s
    assert query(store, "SELECT count(*) FROM exactly_once")[0][0] == 2
    doc = cli.ok("compact", "--older-than", "5m", "--json").json()
    gone = before - _ids(store)
    assert gone == _terminal_and_old(ids)
    assert doc["removed_messages"] == len(gone) == 8
    assert doc["removed_deliveries"] == 4  # acked, read_untracked, dead_discarded, once
    assert doc["removed_dead_letters"] == 0
    assert doc["removed_exactly_once"] == 2
    assert query(store, "SELECT count(*) FROM exactly_once")[0][0] == 0
    assert doc["dry_run"] is False and doc["vacuumed"] is False
    assert doc["reclaimed_bytes"] == max(0, doc["bytes_before"] - doc["bytes_after"])
    # everything not done with, a kept dead letter, a live dedupe key, a recent message: kept
    kept = _ids(store)
    for mid in (
        ids.read_tracked,
        ids.unread,
        ids.unread_tracked,
        ids.waiting,
        ids.held_unread,
        ids.queued,
        ids.dead_old_letter,
        ids.dead_new_letter,
        ids.deduped,
        ids.closed_unread,
        ids.recent_acked,
    ):
        assert mid in kept, mid
    assert not query(
        store,
        "SELECT 1 FROM deliveries d WHERE NOT EXISTS"
        " (SELECT 1 FROM messages m WHERE m.id = d.message_id)",
    )
    assert_invariants(store, sent - gone)
    assert cli("doctor").exit_code == 0
    for mid in gone:
        assert cli("show", mid).exit_code == 4
    # a second run finds nothing more
    again = cli.ok("compact", "--older-than", "5m", "--json").json()
    assert again["removed_messages"] == 0 and again["removed_deliveries"] == 0


def test_without_older_than_recent_terminal_messages_go_too(cli, store, busy):
    ids, _ = busy
    before = _ids(store)
    cli.ok("compact")
    assert before - _ids(store) == _terminal_and_old(ids) | {ids.recent_acked}


def test_old_dead_letters_are_purged_and_their_messages_go(cli, store, busy):
    ids, _ = busy
    before = _ids(store)
    doc = cli.ok(
        "compact", "--older-than", "5m", "--dead-letters-older-than", "90m", "--json"
    ).json()
    assert doc["removed_dead_letters"] == 1
    assert before - _ids(store) == _terminal_and_old(ids) | {ids.dead_old_letter}
    assert [r[0] for r in query(store, "SELECT message_id FROM dead_letters")] == [
        ids.dead_new_letter
    ]
    assert_invariants(store)


def test_dry_run_changes_nothing_and_counts_the_same(cli, store, busy):
    before = snapshot(store)
    args = ("compact", "--older-than", "5m", "--dead-letters-older-than", "90m", "--json")
    dry = cli.ok(*args, "--dry-run").json()
    assert snapshot(store) == before
    assert dry["dry_run"] is True
    real = cli.ok(*args).json()
    for key in (
        "removed_messages",
        "removed_deliveries",
        "removed_dead_letters",
        "removed_exactly_once",
    ):
        assert dry[key] == real[key], key
    assert dry["removed_messages"] == 9


def test_dry_run_with_vacuum_does_not_vacuum(cli, store, busy):
    before = snapshot(store)
    doc = cli.ok("compact", "--dry-run", "--vacuum", "--json").json()
    assert doc["vacuumed"] is False and snapshot(store) == before


def test_a_dedupe_key_protects_its_message_until_the_window_ends(cli, store, busy):
    ids, frozen = busy
    cli.ok("compact")
    assert ids.deduped in _ids(store)
    # a retried send is still deduplicated after compaction
    again = cli.ok(
        "send", "chat", "once only", "--as", "alice", "--dedupe-key", "k1", "--json"
    ).json()
    assert again["deduplicated"] is True and again["id"] == ids.deduped
    frozen.tick(timedelta(hours=25))
    cli.ok("compact")
    assert ids.deduped not in _ids(store)


def test_message_ids_are_never_reused_after_compaction(cli, store):
    cli.ok("channel", "create", "chat", "--type", "pubsub", "--as", "alice")
    sent = [int(cli.ok("publish", "chat", "t", f"m{i}", "--as", "alice").stdout) for i in range(5)]
    # no subscription: no delivery, so every message is terminal
    doc = cli.ok("compact", "--json").json()
    assert doc["removed_messages"] == 5 and _ids(store) == set()
    nxt = int(cli.ok("publish", "chat", "t", "after", "--as", "alice").stdout)
    assert nxt == max(sent) + 1
    cli.ok("compact", "--vacuum")
    assert int(cli.ok("publish", "chat", "t", "after vacuum", "--as", "alice").stdout) == nxt + 1
    assert cli("doctor").exit_code == 0


def test_vacuum_gives_the_space_back(cli, store):
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "--as", "alice", "bob")
    body = "x" * 4000
    batch = "".join(
        json.dumps({"channel": "chat", "from": "alice", "content": body}) + "\n" for _ in range(300)
    )
    (store.parent / "batch.jsonl").write_text(batch)
    cli.ok("send", "--batch", store.parent / "batch.jsonl")
    cli.ok("receive", "--as", "bob", "--limit", "1000")
    cli.ok("flush")
    plain = cli.ok("compact", "--json").json()
    assert plain["removed_messages"] == 300 and plain["free_bytes"] > 1_000_000
    doc = cli.ok("compact", "--vacuum", "--json").json()
    assert doc["vacuumed"] is True and doc["free_bytes"] == 0
    assert doc["bytes_after"] < doc["bytes_before"]
    assert doc["reclaimed_bytes"] == doc["bytes_before"] - doc["bytes_after"] > 1_000_000
    assert store.stat().st_size == doc["bytes_after"]


def test_an_unknown_delivery_state_is_kept(cli, store):
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "--as", "alice", "bob")
    mid = int(cli.ok("send", "chat", "hi", "--as", "alice").stdout)
    cli.ok("receive", "--as", "bob")
    c = sqlite3.connect(store)
    c.execute("UPDATE deliveries SET state = 'limbo' WHERE message_id = ?", (mid,))
    c.commit()
    c.close()
    assert cli.ok("compact", "--json").json()["removed_messages"] == 0
    assert mid in _ids(store)


def test_a_hand_made_queued_delivery_is_kept(cli, store):
    """A queued delivery written straight into the store, next to a terminal one."""
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "--as", "alice", "bob")
    cli.ok("channel", "join", "chat", "--as", "alice", "carol")
    mid = int(cli.ok("send", "chat", "hi", "--as", "alice").stdout)
    cli.ok("receive", "--as", "bob")
    c = sqlite3.connect(store)
    c.execute(
        "UPDATE deliveries SET state = 'queued', delivered_at = NULL"
        " WHERE message_id = ? AND recipient = 'carol'",
        (mid,),
    )
    c.commit()
    c.close()
    assert cli.ok("compact", "--json").json()["removed_messages"] == 0
    assert_invariants(store, {mid})


def test_in_process_with_a_given_now(cli, store, busy):
    ids, _ = busy
    conn = opening.connect(store, create=False)
    try:
        now = clock.now_ms()
        dry = operations.compact(conn, now, older_than_ms=300_000, dry_run=True)
        assert (dry.removed_messages, dry.removed_deliveries) == (8, 4)
        # seen from an hour earlier (T0+1h10m), only messages created before T0+1h5m go:
        # the three dead-letter notifications and the discarded dead message
        early = operations.compact(conn, now - 3_600_000, older_than_ms=300_000, dry_run=True)
        assert (early.removed_messages, early.removed_deliveries) == (4, 1)
        with pytest.raises(Exception) as exc:
            operations.compact(conn, now, older_than_ms=-1)
        assert getattr(exc.value, "code", None) == "validation_failed"
    finally:
        conn.close()


def test_same_result_without_the_partial_index(cli, store, busy):
    ids, _ = busy
    c = sqlite3.connect(store)
    c.execute("DROP INDEX IF EXISTS deliveries_active")
    c.commit()
    c.close()
    before = _ids(store)
    cli.ok("compact", "--older-than", "5m")
    assert before - _ids(store) == _terminal_and_old(ids)


def test_bad_durations_and_a_missing_store(cli, isolated_env, store):
    r = cli("compact", "--older-than", "soon", "--json")
    assert r.exit_code == 3 and r.error["field"] == "older_than"
    r = cli("compact", "--store", str(isolated_env.parent / "none.acomm"))
    assert r.exit_code == 7
    assert not (isolated_env.parent / "none.acomm").exists()


def test_human_output_is_one_line_of_counts(cli, store):
    out = cli.ok("compact").stdout
    assert out.startswith("removed_messages=0 removed_deliveries=0 ")
    assert "dry_run=false" in out


# ---------------------------------------------------------------- flush


def test_flush_checkpoints_the_wal(cli, store):
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "bob", "--as", "alice")
    conn = opening.connect(store, create=False, flush="manual")  # no automatic checkpoint
    reader = sqlite3.connect(store)  # keeps the WAL from being removed at close
    reader.execute("SELECT 1").fetchall()
    try:
        for i in range(20):
            sending.send(
                conn, SendRequest(sender="alice", content=f"m{i}", channel="chat"), clock.now_ms()
            )
        wal = store.with_name(store.name + "-wal")
        assert wal.stat().st_size > 0
        doc = cli.ok("flush", "--json").json()
        assert set(doc) == {
            "busy",
            "wal_frames",
            "checkpointed_frames",
            "wal_bytes_before",
            "wal_bytes_after",
        }
        assert doc["busy"] is False
        assert doc["wal_frames"] > 0 and doc["checkpointed_frames"] == doc["wal_frames"]
        assert doc["wal_bytes_before"] > 0 and doc["wal_bytes_after"] == 0
        again = cli.ok("flush", "--json").json()
        assert again["wal_frames"] == 0 and again["wal_bytes_before"] == 0
    finally:
        reader.close()
        conn.close()
    assert cli.ok("flush").stdout.startswith("busy=false wal_frames=")


def test_channel_retention_removes_only_finished_messages_beyond_it(cli, store):
    """Per-channel retention applies even to messages newer than --older-than."""
    from freezegun import freeze_time

    cli.ok("channel", "create", "short", "--as", "a", "--retention-count", "2")
    cli.ok("channel", "create", "aged", "--as", "a", "--retention-age", "1h")
    cli.ok("channel", "create", "keep", "--as", "a")
    for ch in ("short", "aged", "keep"):
        cli.ok("channel", "join", ch, "b", "--as", "a")
    doc = cli.ok("channel", "show", "short", "--json").json()
    assert doc["config"]["retention_count"] == 2
    with freeze_time("2026-01-01 00:00:00") as clock:
        ids = {
            ch: [int(cli.ok("send", ch, f"{ch}{i}", "--as", "a").stdout) for i in range(4)]
            for ch in ("short", "aged", "keep")
        }
        unread_short = int(cli.ok("send", "short", "still unread", "--as", "a").stdout)
        cli.ok("receive", "--as", "b", "--limit", "12")  # all but the last one are read
        clock.tick(7200)
        out = cli.ok("compact", "--older-than", "30d", "--json").json()
    left = {m["id"] for m in cli.ok("messages", "--limit", "100", "--json").json()["messages"]}
    # short keeps its newest two (one of them unread); aged loses all four finished ones
    assert set(ids["short"][:3]).isdisjoint(left) and ids["short"][3] in left
    assert unread_short in left
    assert set(ids["aged"]).isdisjoint(left)
    assert set(ids["keep"]) <= left
    assert out["removed_messages"] == 7


def test_chunked_compaction_removes_the_same_as_one_pass(cli, store, monkeypatch):
    from acomm_cli.engine import operations

    monkeypatch.setattr(operations, "COMPACT_CHUNK", 3)  # many chunks over a few messages
    cli.ok("channel", "create", "c", "--as", "a")
    cli.ok("channel", "join", "c", "--as", "a", "b")
    read = [int(cli.ok("send", "c", f"m{i}", "--as", "a").stdout) for i in range(7)]
    cli.ok("receive", "--as", "b")
    unread = int(cli.ok("send", "c", "later", "--as", "a").stdout)
    out = cli.ok("compact", "--json").json()
    left = {m["id"] for m in cli.ok("messages", "--json").json()["messages"]}
    assert out["removed_messages"] == 7 and out["removed_deliveries"] == 7
    assert unread in left and left.isdisjoint(read)


def test_a_message_with_an_event_and_a_notice_is_compacted_with_them(cli, store):
    """What refers to a message (its event, its first notice) goes with it: the foreign keys
    would otherwise refuse the whole compaction."""
    cli.ok("channel", "create", "chat", "--as", "alice")
    cli.ok("channel", "join", "chat", "bob", "--as", "alice")
    mid = int(
        cli.ok(
            "send",
            "chat",
            "look",
            "--as",
            "alice",
            "--event-type",
            "mention.created",
            "--target",
            "bob",
            "--event-id",
            "e1",
        ).stdout
    )
    c = sqlite3.connect(store)
    with c:
        c.execute(
            "INSERT INTO notifications (message_id, recipient, notified_at, how)"
            " VALUES (?, 'bob', 1, 'bridge')",
            (mid,),
        )
    c.close()
    cli.ok("receive", "--as", "bob")
    doc = cli.ok("compact", "--json").json()
    assert doc["removed_messages"] == 1
    for table in ("messages", "message_events", "notifications"):
        assert query(store, f"SELECT count(*) FROM {table}") == [(0,)], table
    assert cli("doctor").exit_code == 0
