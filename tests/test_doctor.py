"""`acomm doctor`: healthy stores pass; each broken invariant is found and named (exit 5)."""

from __future__ import annotations

import random
import sqlite3

import every_state
import pytest
from freezegun import freeze_time

from acomm_cli.engine import opening, operations

pytestmark = pytest.mark.cli


@pytest.fixture
def busy(cli, store):
    with freeze_time(every_state.T0) as frozen:
        ids = every_state.build(cli, frozen)
    return ids


def _sql(path, *statements: str) -> None:
    c = sqlite3.connect(path)
    try:
        for s in statements:
            c.execute(s)
        c.commit()
    finally:
        c.close()


def test_a_fresh_store_is_healthy(cli, store):
    r = cli("doctor")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("healthy: integrity ok, schema version ")
    doc = cli.ok("doctor", "--json").json()
    assert doc == {
        "healthy": True,
        "schema_version": doc["expected_schema_version"],
        "expected_schema_version": doc["expected_schema_version"],
        "integrity": "ok",
        "findings": [],
    }


def test_a_store_with_every_state_is_healthy(cli, busy):
    assert cli("doctor", "--json").exit_code == 0
    assert cli("doctor", "--quick").exit_code == 0


# name -> statements that break exactly that invariant in the every-state store
BREAKS = {
    "delivery_state": ["UPDATE deliveries SET state = 'flying' WHERE message_id = 13"],
    "tracked_flag": ["UPDATE deliveries SET tracked = 7 WHERE message_id = 11"],
    "tracked_timer": ["UPDATE deliveries SET next_timer_at = NULL WHERE message_id = 8"],
    "waiting_timer": ["UPDATE deliveries SET next_timer_at = NULL WHERE message_id = 14"],
    "terminal_timer": ["UPDATE deliveries SET next_timer_at = 1 WHERE message_id = 7"],
    "dead_letter_delivery": [
        "UPDATE deliveries SET state = 'acked', next_timer_at = NULL WHERE message_id = 2"
    ],
    "message_channel": [
        "PRAGMA foreign_keys = OFF",
        "UPDATE messages SET channel_id = 999 WHERE id = 17",
    ],
    "delivery_message": ["UPDATE deliveries SET channel_id = 1 WHERE message_id = 13"],
    "message_sequence": ["UPDATE sqlite_sequence SET seq = 3 WHERE name = 'messages'"],
    "foreign_keys": [
        "PRAGMA foreign_keys = OFF",
        "INSERT INTO deliveries (message_id, recipient, channel_id, state, rank,"
        " tracked) VALUES (5000, 'ghost', 2, 'read', 0, 0)",
    ],
    "migrations": ["DELETE FROM _acomm_migrations"],
}


@pytest.mark.parametrize("check", list(BREAKS))
def test_a_broken_invariant_is_found_and_named(cli, store, busy, check):
    _sql(store, *BREAKS[check])
    r = cli("doctor", "--json")
    assert r.exit_code == 5, r.stderr
    assert r.error["code"] == "invalid_state"
    doc = r.json()
    assert doc["healthy"] is False
    checks = {f["check"]: f for f in doc["findings"]}
    assert check in checks, doc
    assert checks[check]["count"] >= 1 and checks[check]["detail"]
    plain = cli("doctor")
    assert plain.exit_code == 5
    assert check in plain.stdout
    assert plain.stderr.startswith("acomm: error: invalid_state: the store has ")


def test_the_finding_says_which_rows(cli, store, busy):
    _sql(store, "UPDATE deliveries SET state = 'flying' WHERE message_id IN (13, 15)")
    f = cli("doctor", "--json").json()["findings"]
    assert f == [
        {
            "check": "delivery_state",
            "count": 2,
            "detail": "2 deliveries in a state other than queued, waiting, unread, read, acked, "
            "dead: message 13 to bob: 'flying', message 15 to executor: 'flying'",
        }
    ]


def test_a_damaged_index_fails_the_integrity_check(cli, store, busy):
    """Bytes of an index page overwritten: the tables still open, the check finds it."""
    c = sqlite3.connect(store)
    root = c.execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'messages_sender'"
    ).fetchone()[0]
    page = c.execute("PRAGMA page_size").fetchone()[0]
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    data = bytearray(store.read_bytes())
    rng = random.Random(3)
    for i in range((root - 1) * page + page - 200, root * page - 100):
        data[i] = rng.randrange(256)
    store.write_bytes(bytes(data))
    r = cli("doctor", "--json")
    assert r.exit_code in (5, 7), r.stderr  # 7 if SQLite cannot even read the page
    if r.exit_code == 5:
        doc = r.json()
        assert doc["integrity"] == "failed"
        assert doc["findings"][0]["check"] == "integrity"
        assert "messages_sender" in doc["findings"][0]["detail"]


def test_an_unreadable_store_is_exit_7(cli, isolated_env):
    isolated_env.parent.mkdir(mode=0o700)
    isolated_env.write_bytes(b"not a database at all" * 100)
    r = cli("doctor", "--json")
    assert r.exit_code == 7 and r.error["code"] == "store_unavailable"


def test_in_process(cli, store, busy):
    conn = opening.connect(store, create=False)
    try:
        assert operations.doctor(conn).healthy
        conn.execute("UPDATE deliveries SET next_timer_at = NULL WHERE message_id = 14")
        health = operations.doctor(conn)
        assert [f.check for f in health.findings] == ["waiting_timer"]
        with pytest.raises(Exception) as exc:
            operations.require_healthy(health)
        assert exc.value.exit_status == 5
    finally:
        conn.close()
