"""Full-text search: `messages --search` over content, subject and the event's fields, ranked
by bm25 with snippets, combined with the other filters, kept by the store through sends,
events and compaction, rebuilt by `doctor --rebuild-search`, and refusing what it cannot
read without touching the store."""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta

import pytest
from conftest import UNDO_MIGRATION, query, rewind_migrations, snapshot
from freezegun import freeze_time

from acomm_cli.engine import search
from acomm_cli.errors import ValidationFailed
from acomm_cli.store import search as store_search

pytestmark = pytest.mark.cli


@pytest.fixture
def team(make_channel):
    return make_channel("team", "alice", "bob")


def send(cli, *args: str) -> int:
    return int(cli.ok("send", *args).stdout)


def found(cli, *args: str) -> list[int]:
    return [m["id"] for m in cli.ok("messages", *args, "--json").json()["messages"]]


def test_a_search_finds_words_in_the_content_the_subject_and_the_event(cli, team):
    body = send(cli, "team", "the deploy failed on prod", "--as", "alice")
    subject = send(cli, "team", "see attached", "--subject", "Quarterly rollback", "--as", "bob")
    event = send(
        cli,
        "team",
        "have a look",
        "--event-type",
        "mention.created",
        "--target",
        "carol",
        "--thread",
        "release-42",
        "--as",
        "alice",
    )
    send(cli, "team", "nothing to see", "--as", "alice")
    assert found(cli, "--search", "deploy") == [body]
    assert found(cli, "--search", "DEPLOY prod") == [body]  # every word, any case
    assert found(cli, "--search", "deploy nowhere") == []
    assert found(cli, "--search", "rollback") == [subject]
    assert found(cli, "--search", "carol") == [event]  # the target
    assert found(cli, "--search", "release-42") == [event]  # the thread
    assert found(cli, "--search", "roll*") == [subject]  # a prefix
    assert found(cli, "--search", "fts:deploy OR rollback", "--sort", "id") == [subject, body]
    assert found(cli, "--search", "fts:subject:see") == []  # a column filter
    # the plain listing prints the matching rows as `messages` does
    out = cli.ok("messages", "--search", "deploy").stdout
    assert out.splitlines()[0].split("\t")[0] == str(body)


def test_results_are_ranked_by_bm25_with_a_snippet_each(cli, team):
    once = send(
        cli, "team", "a note about the outage and then a long tail of words", "--as", "alice"
    )
    often = send(cli, "team", "outage outage outage", "--as", "alice")
    titled = send(cli, "team", "nothing here", "--subject", "outage", "--as", "alice")
    send(cli, "team", "unrelated", "--as", "alice")
    doc = cli.ok("messages", "--search", "outage", "--json").json()
    ids = [m["id"] for m in doc["messages"]]
    assert set(ids) == {once, often, titled} and doc["total_count"] == 3
    ranks = [m["search"]["rank"] for m in doc["messages"]]
    assert ranks == sorted(ranks)  # best (lowest bm25) first
    assert ids.index(often) < ids.index(once)  # more of the word, in fewer words
    by_id = {m["id"]: m["search"] for m in doc["messages"]}
    assert by_id[once]["snippet"].startswith("a note about the [outage]")
    assert by_id[titled]["snippet"] == "[outage]"  # the subject's match
    # --sort still works; --order desc with rank gives the worst first
    assert found(cli, "--search", "outage", "--sort", "id") == [titled, often, once]
    newest = cli.ok("messages", "--search", "outage", "--sort", "id", "--json").json()
    assert {m["search"]["rank"] for m in newest["messages"]} == {None}  # not ranked
    assert newest["messages"][0]["search"]["snippet"] == "[outage]"
    assert found(cli, "--search", "outage", "--order", "desc") == ids[::-1]
    assert found(cli, "--search", "outage", "--limit", "1") == ids[:1]
    page = cli.ok("messages", "--search", "outage", "--limit", "1", "--json").json()
    assert page["total_count"] == 3 and page["has_more"] is True
    # without --search no message has a `search` object
    assert all("search" not in m for m in cli.ok("messages", "--json").json()["messages"])
    # rank is a sort of --search only
    bad = cli("messages", "--sort", "rank")
    assert bad.exit_code == 3 and "sort" in bad.stderr


def test_a_search_combines_with_the_other_filters(cli, team, make_channel):
    make_channel("ops", "alice", "bob")
    with freeze_time("2026-01-01T00:00:00Z") as frozen:
        old = send(cli, "team", "disk full on db1", "--as", "alice")
        frozen.tick(timedelta(hours=2))
        tagged = send(cli, "team", "disk full on db2", "--meta", "env=prod", "--as", "bob")
        other = send(cli, "ops", "disk full on db3", "--as", "alice")
        assert found(cli, "--search", "disk") == [other, tagged, old]
        assert found(cli, "--search", "disk", "--channel", "team") == [tagged, old]
        assert found(cli, "--search", "disk", "--since", "-1h") == [other, tagged]
        assert found(cli, "--search", "disk", "--meta", "env=prod") == [tagged]
        assert found(cli, "--search", "disk", "--from", "alice") == [other, old]
        assert found(cli, "--search", "disk", "--grep", "db[13]$") == [other, old]
        assert found(cli, "--search", "full", "--channel", "ops", "--type", "text") == [other]


def test_deleted_messages_leave_the_index_when_compact_removes_them(cli, team):
    with freeze_time("2026-01-01T00:00:00Z") as frozen:
        gone = send(
            cli, "team", "stale incident", "--event-type", "mention.created", "--target", "bob",
            "--thread", "old-thread", "--subject", "stale", "--as", "alice",
        )  # fmt: skip
        plain = send(cli, "team", "stale plain", "--as", "alice")
        cli.ok("receive", "--as", "bob")  # read: nothing more to wait for
        frozen.tick(timedelta(hours=1))
        assert found(cli, "--search", "stale", "--sort", "id") == [plain, gone]  # indexed now
        never = send(cli, "team", "stale, never searched", "--as", "alice")
        cli.ok("receive", "--as", "bob")
        frozen.tick(timedelta(hours=1))
        kept = send(cli, "team", "stale but fresh", "--as", "alice")
        doc = cli.ok("compact", "--older-than", "5m", "--json").json()
        assert doc["removed_messages"] == 3
        assert not query(team, "SELECT 1 FROM messages WHERE id IN (?, ?, ?)", gone, plain, never)
        assert found(cli, "--search", "stale") == [kept]
        assert found(cli, "--search", "old-thread") == []
        assert cli.ok("doctor").exit_code == 0  # the index holds exactly the messages left
        assert query(team, "SELECT count(*) FROM message_search_docsize")[0][0] == len(
            query(team, "SELECT id FROM messages")
        )


def test_the_index_follows_subjects_events_and_deletes_after_a_message_is_indexed(store):
    """A message enters the index at the next search; after that, the triggers keep it in
    step with its subject and event. FTS5's integrity check compares the index with the text
    it was built from."""
    c = sqlite3.connect(store, isolation_level=None)
    try:
        insert = (
            "INSERT INTO messages (channel_id, sender, type, content, priority, created_at)"
            " VALUES (1, 'a', 'text', ?, 1, 0)"
        )
        c.execute(insert, ("alpha beta",))
        mid = c.execute("SELECT max(id) FROM messages").fetchone()[0]

        def hits(word: str) -> list[int]:
            return [
                r[0]
                for r in c.execute(
                    "SELECT rowid FROM message_search WHERE message_search MATCH ?", (word,)
                )
            ]

        def consistent() -> None:
            c.execute(
                "INSERT INTO message_search (message_search, rank) VALUES ('integrity-check', 1)"
            )

        assert hits("alpha") == []  # not yet: the next search indexes it
        assert search.catch_up(c) == 1 and search.catch_up(c) == 0
        assert hits("alpha") == [mid]
        c.execute("UPDATE messages SET subject = 'gamma' WHERE id = ?", (mid,))
        c.execute(
            "INSERT INTO message_events (message_id, channel_id, event_type, actor, thread_id)"
            " VALUES (?, 1, 'mention.created', 'delta', 'th')",
            (mid,),
        )
        c.execute("UPDATE message_events SET actor = 'epsilon' WHERE message_id = ?", (mid,))
        assert hits("gamma") == hits("epsilon") == hits("beta") == [mid]
        assert hits("delta") == []
        consistent()
        c.execute("DELETE FROM messages WHERE id = ?", (mid,))  # before its event this time
        c.execute("DELETE FROM message_events WHERE message_id = ?", (mid,))
        assert hits("gamma") == []
        consistent()
        # an event inserted before its message is indexed comes in with it
        c.execute(insert, ("zeta",))
        later = c.execute("SELECT max(id) FROM messages").fetchone()[0]
        c.execute(
            "INSERT INTO message_events (message_id, channel_id, event_type, target)"
            " VALUES (?, 1, 'mention.created', 'theta')",
            (later,),
        )
        c.execute("DELETE FROM messages WHERE id = ?", (later - 100,))  # nothing indexed
        search.catch_up(c)
        assert hits("theta") == hits("zeta") == [later]
        consistent()
    finally:
        c.close()


@pytest.mark.parametrize(
    "damage",
    [
        "DROP TABLE message_search",
        "DELETE FROM message_search_docsize",
        "DROP TRIGGER message_search_delete",
    ],
)
def test_doctor_rebuild_search_restores_a_dropped_or_damaged_index(cli, team, damage):
    first = send(cli, "team", "findable words", "--subject", "kept", "--as", "alice")
    assert found(cli, "--search", "findable") == [first]  # indexed now
    c = sqlite3.connect(team)
    c.execute(damage)
    c.commit()
    c.close()
    if damage.startswith("DROP TABLE"):
        bad = cli("messages", "--search", "findable")
        assert bad.exit_code == 5 and "--rebuild-search" in bad.stderr
    sick = cli("doctor", "--json")
    assert sick.exit_code == 5
    (finding,) = [f for f in sick.json()["findings"] if f["check"] == "search"]
    assert "--rebuild-search" in finding["detail"]
    fixed = cli.ok("doctor", "--rebuild-search")
    assert "rebuilt the search index: " in fixed.stderr
    assert found(cli, "--search", "findable") == [first]
    later = send(cli, "team", "findable too", "--as", "bob")  # the triggers are back
    assert found(cli, "--search", "findable", "--sort", "id") == [later, first]
    assert found(cli, "--search", "kept") == [first]


def test_a_rebuilt_index_has_the_schema_the_migration_made(store):
    def schema() -> list[tuple[str, str]]:
        return [
            (name, re.sub(r"\s+", " ", re.sub(r"\s*([(),])\s*", r"\1", sql)).strip())
            for name, sql in query(
                store,
                "SELECT name, sql FROM sqlite_master WHERE name LIKE 'message_search%'"
                " AND sql IS NOT NULL ORDER BY name",
            )
        ]

    migrated = schema()
    assert len(migrated) == 11  # the table, its four shadow tables, its view, five triggers
    c = sqlite3.connect(store)
    with c:
        store_search.rebuild(c)
    c.close()
    assert schema() == migrated


def test_the_migration_indexes_the_messages_already_stored(cli, team):
    mid = send(cli, "team", "written before search existed", "--as", "alice")
    c = sqlite3.connect(team)
    rewind_migrations(c, "m026_search")
    c.executescript(UNDO_MIGRATION["m026_search"])
    assert not query(team, "SELECT 1 FROM sqlite_master WHERE name = 'message_search'")
    c.close()
    assert found(cli, "--search", "existed") == [mid]  # opened: migrated and filled
    assert cli.ok("doctor").exit_code == 0


@pytest.mark.parametrize(
    "text, says",
    [
        ("fts:deploy OR", "syntax error"),
        ('fts:"unclosed', "search"),
        ("fts:nosuchcolumn:word", "no such column"),
        ("fts:", "nothing after"),
        ("   ", "no words"),
        ("x" * 501, "at most 500 characters"),
        (" ".join(["w"] * 33), "at most 32 words"),
    ],
)
def test_a_query_it_cannot_read_is_exit_3_naming_search_and_changes_nothing(cli, team, text, says):
    send(cli, "team", "deploy", "--as", "alice")
    before = snapshot(team)
    r = cli("messages", "--search", text, "--json")
    assert r.exit_code == 3, r.stderr
    err = r.error
    assert err["code"] == "validation_failed" and err["field"] == "search"
    assert says in err["message"]
    assert snapshot(team) == before


def test_plain_words_are_never_fts5_syntax(cli, team):
    mid = send(cli, "team", "error: timeout in C++ code (don't panic) a-b", "--as", "alice")
    for text in ("error:", "C++", "don't", "a-b", "(don't", 'NEAR("x"', "OR", "timeout AND"):
        r = cli("messages", "--search", text, "--json")
        assert r.exit_code == 0, (text, r.stderr)
    assert found(cli, "--search", "error: timeout") == [mid]
    assert found(cli, "--search", "C++") == [mid]


def test_the_expression_a_query_means():
    assert search.expression("deploy fail*") == '"deploy" "fail"*'
    assert search.expression('say "hi"') == '"say" """hi"""'
    assert search.expression("fts: a OR b") == "a OR b"
    with pytest.raises(ValidationFailed) as e:
        search.expression("")
    assert e.value.field == "search"


def test_follow_and_search_do_not_go_together(cli, team):
    r = cli("messages", "--search", "x", "--follow")
    assert r.exit_code == 2 and "--search" in r.stderr


def test_past_the_bound_a_search_ranks_the_newest_matches_and_counts_no_further(
    cli, team, make_channel, monkeypatch
):
    """A search's cost follows its page: past `search.BOUND` matches the ranked order scores
    the newest BOUND of them only and the total is a lower bound; newest first stays exact."""
    monkeypatch.setattr(search, "BOUND", 3)
    best = send(cli, "team", "outage outage outage", "--as", "alice")  # the best, but oldest
    weak = [
        send(cli, "team", f"an outage in a long note, number {i}", "--as", "bob") for i in range(4)
    ]
    make_channel("ops", "alice", "bob")
    elsewhere = send(cli, "ops", "outage outage", "--as", "alice")
    doc = cli.ok("messages", "--search", "outage", "--json").json()
    assert [m["id"] for m in doc["messages"]][0] == elsewhere
    assert len(doc["messages"]) == 3 and best not in [m["id"] for m in doc["messages"]]
    assert doc["total_count"] == 3 and doc["total_is_lower_bound"] is True
    assert doc["has_more"] is False  # nothing ranked past the newest 3
    page = cli.ok("messages", "--search", "outage", "--limit", "2", "--json").json()
    assert page["total_count"] == 3 and page["total_is_lower_bound"] and page["has_more"]
    # within a channel: the newest 3 of that channel's matches
    team_doc = cli.ok("messages", "--search", "outage", "--channel", "team", "--json").json()
    assert {m["id"] for m in team_doc["messages"]} == set(weak[1:])
    assert team_doc["total_is_lower_bound"] is True
    # newest first: exact order, a page past the bound still pages, the total a lower bound
    newest = cli.ok("messages", "--search", "outage", "--sort", "id", "--limit", "2", "--json")
    assert [m["id"] for m in newest.json()["messages"]] == [elsewhere, weak[3]]
    assert newest.json()["total_is_lower_bound"] is True and newest.json()["has_more"]
    deep = cli.ok(
        "messages", "--search", "outage", "--sort", "id", "--offset", "4", "--limit", "1", "--json"
    ).json()
    assert [m["id"] for m in deep["messages"]] == [weak[0]]
    assert deep["total_count"] == 6 and deep["total_is_lower_bound"] is False and deep["has_more"]
    every = cli.ok("messages", "--search", "outage", "--sort", "id", "--limit", "10", "--json")
    assert every.json()["total_count"] == 6 and every.json()["total_is_lower_bound"] is False
    assert [m["id"] for m in every.json()["messages"]] == [elsewhere, *weak[::-1], best]
    # below the bound both are exact
    exact = cli.ok("messages", "--search", "outage outage", "--channel", "ops", "--json").json()
    assert exact["total_count"] == 1 and exact["total_is_lower_bound"] is False
    # a listing without --search has no such field: its totals are always exact
    assert "total_is_lower_bound" not in cli.ok("messages", "--json").json()


def test_tick_indexes_what_was_sent_so_a_search_after_it_writes_nothing(cli, team):
    first = send(cli, "team", "the deploy went out", "--as", "alice")
    second = send(cli, "team", "the deploy is green", "--as", "bob")
    mark = "SELECT indexed_through FROM search_state"
    assert query(team, mark)[0][0] < first  # a send does not index
    assert cli.ok("tick", "--json").json()["search_indexed"] == 2
    assert query(team, mark)[0][0] == second  # the high-water mark moved
    before = snapshot(team)
    assert found(cli, "--search", "deploy", "--sort", "id") == [second, first]
    assert snapshot(team) == before  # the search had nothing left to index
    assert cli.ok("tick", "--json").json()["search_indexed"] == 0
    # the fallback: what tick has not reached yet, the next search indexes first
    third = send(cli, "team", "deploy rolled back", "--as", "alice")
    assert found(cli, "--search", "rolled") == [third]
    assert query(team, mark)[0][0] == third
    assert cli.ok("doctor").exit_code == 0


def test_tick_indexes_in_bounded_batches_and_a_missing_index_does_not_fail_it(cli, team):
    for i in range(5):
        send(cli, "team", f"batch word {i}", "--as", "alice")
    c = sqlite3.connect(team, isolation_level=None)
    try:
        began: list[str] = []
        c.set_trace_callback(lambda s: began.append(s) if s.startswith("BEGIN") else None)
        assert search.catch_up(c, batch=2) == 5
        assert len(began) == 3  # 2 + 2 + 1, a transaction each
        c.set_trace_callback(None)
        c.execute("DROP TABLE message_search")
    finally:
        c.close()
    send(cli, "team", "after the damage", "--as", "alice")
    assert cli.ok("tick", "--json").json()["search_indexed"] == 0  # doctor's finding, not tick's
    assert cli("doctor").exit_code == 5


def test_rebuild_merges_the_index_into_one_segment(cli, team):
    """Each batch indexed is an FTS5 segment, and a common word is read from every one of
    them; `doctor --rebuild-search` leaves one."""
    segments = "SELECT count(DISTINCT segid) FROM message_search_idx"
    for i in range(3):
        send(cli, "team", f"segment word {i}", "--as", "alice")
        cli.ok("tick")
    assert query(team, segments)[0][0] > 1
    cli.ok("doctor", "--rebuild-search")
    assert query(team, segments)[0][0] == 1
    assert len(found(cli, "--search", "segment")) == 3
