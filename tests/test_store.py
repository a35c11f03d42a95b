"""The store: creation, permissions, WAL, refusal of foreign, corrupt and newer
files, migrations, path resolution, and two processes writing at once."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ACOMM, query, snapshot
from freezegun import freeze_time

from acomm_cli.engine import channels, opening
from acomm_cli.store import migrations
from acomm_cli.store.migrations import MIGRATIONS

pytestmark = pytest.mark.cli


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


# ---------------------------------------------------------------- creation


def test_init_creates_owner_only_store(cli, isolated_env):
    r = cli.ok("init")
    assert r.stdout.strip() == str(isolated_env)
    assert isolated_env.is_file()
    assert _mode(isolated_env) == 0o600
    assert _mode(isolated_env.parent) == 0o700
    cfg = isolated_env.parent / "config.yaml"
    assert cfg.is_file() and _mode(cfg) == 0o600


def test_init_dir_creates_dot_acomm_there(cli, tmp_path):
    r = cli.ok("init", str(tmp_path / "proj"))
    path = tmp_path / "proj" / ".acomm" / "store.acomm"
    assert r.stdout.strip() == str(path)
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    assert (path.parent / "config.yaml").exists()


def test_init_twice_leaves_the_store_alone(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    before = _sha(store)
    r = cli("init")
    assert r.exit_code == 0
    assert "already exists" in r.stderr
    assert _sha(store) == before
    assert cli.ok("channel", "show", "team", "--json").json()["name"] == "team"


def test_store_files_stay_owner_only_after_use(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("send", "team", "hi", "--as", "alice")
    conn = opening.connect(store, create=False)  # hold it open so -wal and -shm exist
    try:
        conn.execute("SELECT count(*) FROM messages").fetchone()
        for f in store.parent.iterdir():
            assert _mode(f) & 0o077 == 0, f
    finally:
        conn.close()


def test_status_shows_path_and_schema_version(cli, store):
    doc = cli.ok("status", "--json").json()
    assert doc["path"] == str(store)
    assert doc["schema_version"] == len(MIGRATIONS) >= 1
    assert doc["messages"] == 0
    plain = cli.ok("status").stdout
    assert str(store) in plain
    assert any(
        line.split(":")[0] == "schema_version" and line.split()[-1] == str(len(MIGRATIONS))
        for line in plain.splitlines()
    )


def test_status_counts_what_was_sent(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("send", "team", "one", "--as", "alice")
    cli.ok("send", "team", "two", "--as", "alice")
    doc = cli.ok("status", "--json").json()
    assert (doc["messages"], doc["unread"]) == (2, 2)


def test_wal_mode_and_pragmas(cli, store):
    assert query(store, "PRAGMA journal_mode") == [("wal",)]
    conn = opening.connect(store, create=False)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    finally:
        conn.close()


def test_migrations_are_recorded_by_name(cli, isolated_env):
    with freeze_time("2024-05-01T12:00:00.250Z"):
        cli.ok("init")
    rows = query(isolated_env, "SELECT name, applied_at FROM _acomm_migrations ORDER BY name")
    assert [r[0] for r in rows] == [fn.__name__ for fn in MIGRATIONS]
    assert rows[0][0] == "m001_initial"
    assert {r[1] for r in rows} == {1714564800250}
    assert query(isolated_env, "PRAGMA user_version") == [(len(MIGRATIONS),)]


def test_system_channel_is_in_every_store(cli, store):
    doc = cli.ok("channel", "show", "_system", "--json").json()
    assert (doc["type"], doc["state"]) == ("pubsub", "active")


def test_timestamps_are_milliseconds_from_the_clock(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    with freeze_time("2024-05-01T12:00:00.123Z"):
        mid = cli.ok("send", "team", "hi", "--as", "alice").stdout.strip()
    assert query(store, "SELECT created_at FROM messages WHERE id = ?", int(mid)) == [
        (1714564800123,)
    ]
    doc = cli.ok("show", mid, "--json").json()
    assert doc["created_at"] == "2024-05-01T12:00:00.123Z"
    assert doc["deliveries"][0]["delivered_at"] == "2024-05-01T12:00:00.123Z"


def test_message_ids_increase_and_are_never_reused(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    ids = [int(cli.ok("send", "team", f"m{i}", "--as", "alice").stdout) for i in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5
    # a refused batch does not burn ids either way; the next id is still above every old one
    assert cli("send", "team", "", "--as", "alice").exit_code == 3
    assert int(cli.ok("send", "team", "again", "--as", "alice").stdout) > ids[-1]


# ---------------------------------------------------------------- refusing bad files

COMMANDS = [
    ("status",),
    ("init",),
    ("channel", "list"),
    ("channel", "create", "team", "--as", "alice"),
    ("send", "team", "hi", "--as", "alice"),
    ("receive", "--as", "bob"),
    ("messages",),
    ("show", "1"),
    ("__complete", "channels"),  # shell completion never touches a bad store either
]


def _random_bytes(path: Path) -> None:
    rng = random.Random(7)
    path.write_bytes(bytes(rng.randrange(256) for _ in range(8192)))


def _header_then_garbage(path: Path) -> None:
    rng = random.Random(8)
    path.write_bytes(b"SQLite format 3\x00" + bytes(rng.randrange(256) for _ in range(8176)))


def _garbled_pages(path: Path) -> None:
    """A real acomm store whose pages after the first were overwritten."""
    opening.init_store(path, 0)
    conn = opening.connect(path, create=False)
    channels.create_channel(conn, "team", "group", "alice", channels.channel_config(), 0)
    conn.close()
    data = bytearray(path.read_bytes())
    rng = random.Random(9)
    for i in range(4096, len(data)):
        data[i] = rng.randrange(256)
    path.write_bytes(bytes(data))


def _foreign_sqlite(path: Path) -> None:
    c = sqlite3.connect(path)
    c.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    c.execute("INSERT INTO notes (body) VALUES ('not yours')")
    c.commit()
    c.close()


def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _newer_schema(path: Path) -> None:
    opening.init_store(path, 0)
    c = sqlite3.connect(path)
    c.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    c.close()


BAD_FILES = {
    "random-bytes": _random_bytes,
    "sqlite-header-then-garbage": _header_then_garbage,
    "garbled-pages": _garbled_pages,
    "foreign-sqlite": _foreign_sqlite,
    "empty-file": _empty_file,
    "newer-schema": _newer_schema,
}


@pytest.mark.parametrize("kind", list(BAD_FILES))
def test_bad_store_is_refused_and_untouched(cli, isolated_env, kind):
    isolated_env.parent.mkdir(mode=0o700)
    BAD_FILES[kind](isolated_env)
    digest = _sha(isolated_env)
    listing = sorted(p.name for p in isolated_env.parent.iterdir())
    for args in COMMANDS:
        r = cli(*args, "--json")
        assert r.exit_code == 7, (args, r.stderr)
        assert r.error["code"] == "store_unavailable"
        assert str(isolated_env) in r.error["message"]
        plain = cli(*args)
        assert plain.exit_code == 7
        assert plain.stderr.startswith("acomm: error: store_unavailable: ")
        assert _sha(isolated_env) == digest, args
        assert sorted(p.name for p in isolated_env.parent.iterdir()) == listing, args


def test_newer_schema_says_so(cli, isolated_env):
    isolated_env.parent.mkdir(mode=0o700)
    _newer_schema(isolated_env)
    r = cli("status", "--json")
    assert r.exit_code == 7
    assert "newer" in r.error["message"]
    assert str(len(MIGRATIONS) + 1) in r.error["message"]


@pytest.mark.process
def test_bad_store_is_refused_by_a_separate_process(isolated_env):
    from conftest import run

    isolated_env.parent.mkdir(mode=0o700)
    _header_then_garbage(isolated_env)
    digest = _sha(isolated_env)
    r = run("send", "team", "hi", "--as", "alice")
    assert r.returncode == 7
    assert r.stderr.startswith("acomm: error: store_unavailable: ")
    assert _sha(isolated_env) == digest


def test_lock_held_past_busy_timeout_is_exit_7_and_writes_nothing(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        r = cli(
            "send", "team", "hi", "--as", "alice", "--json", env={"ACOMM_BUSY_TIMEOUT": "100ms"}
        )
        assert r.exit_code == 7, r.stderr
        assert r.error["code"] == "store_unavailable"
    finally:
        holder.rollback()
        holder.close()
    assert query(store, "SELECT count(*) FROM messages") == [(0,)]


# ---------------------------------------------------------------- where the store is


def test_acomm_store_variable_is_used(cli, store):
    assert cli.ok("status", "--json").json()["path"] == str(store)


def test_store_flag_beats_the_variable(cli, store, tmp_path):
    other = tmp_path / "other" / "s.acomm"
    cli.ok("--store", str(other), "init")
    cli.ok("--store", str(other), "channel", "create", "elsewhere", "--as", "alice")
    cli.ok("channel", "create", "here", "--as", "alice", "--file", str(other))
    assert cli.ok("--file", str(other), "status", "--json").json()["path"] == str(other)
    names = {
        c["name"]
        for c in cli.ok("--store", str(other), "channel", "list", "--json").json()["channels"]
    }
    assert {"elsewhere", "here"} <= names
    default = {c["name"] for c in cli.ok("channel", "list", "--json").json()["channels"]}
    assert not default & {"elsewhere", "here"}


def _no_store_above(path: Path) -> None:
    for d in (path, *path.parents):
        assert not (d / ".acomm" / "store.acomm").exists(), f"a stray store at {d}"


def test_nearest_store_is_found_walking_up(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ACOMM_STORE")
    _no_store_above(tmp_path)
    cli.ok("init", str(tmp_path / "proj"))
    deep = tmp_path / "proj" / "a" / "b" / "c"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    outer = tmp_path / "proj" / ".acomm" / "store.acomm"
    assert cli.ok("status", "--json").json()["path"] == str(outer)
    cli.ok("channel", "create", "team", "--as", "alice")
    assert query(outer, "SELECT count(*) FROM channels WHERE name = 'team'") == [(1,)]
    # a nearer store wins
    cli.ok("init", str(tmp_path / "proj" / "a"))
    inner = tmp_path / "proj" / "a" / ".acomm" / "store.acomm"
    assert cli.ok("status", "--json").json()["path"] == str(inner)
    assert not (deep / ".acomm").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("status",),
        ("messages",),
        ("channel", "list"),
        ("channel", "show", "team"),
        ("show", "1"),
        ("subscriptions", "ci"),
    ],
)
def test_read_commands_without_a_store_are_exit_7(cli, tmp_path, monkeypatch, args):
    monkeypatch.delenv("ACOMM_STORE")
    _no_store_above(tmp_path)
    r = cli(*args, "--json")
    assert r.exit_code == 7, r.stderr
    assert r.error["code"] == "store_unavailable"
    assert not (tmp_path / ".acomm").exists()


def test_read_command_with_missing_acomm_store_file_creates_nothing(cli, isolated_env):
    r = cli("messages")
    assert r.exit_code == 7
    assert not isolated_env.exists()


@pytest.mark.parametrize(
    "args",
    [
        ("channel", "create", "team", "--as", "alice"),
        ("send", "--to", "bob", "hi", "--as", "alice"),
    ],
)
def test_write_commands_create_a_store_at_a_named_path(cli, tmp_path, monkeypatch, args):
    path = tmp_path / ".acomm" / "store.acomm"
    monkeypatch.setenv("ACOMM_STORE", str(path))
    _no_store_above(tmp_path)
    r = cli(*args)
    assert r.exit_code == 0, r.stderr
    assert path.is_file()
    assert str(path) in r.stderr and "creat" in r.stderr  # a note says so, on stderr
    assert str(path) not in r.stdout
    assert _mode(path) == 0o600
    assert _mode(path.parent) == 0o700
    again = cli("status", "--json")
    assert again.exit_code == 0 and again.json()["path"] == str(path)
    assert "creat" not in again.stderr


# ---------------------------------------------------------------- two writers at once

WRITER = r"""
import sys
from acomm_cli.cli.app import app

tag = sys.argv[1]
print("ready", flush=True)
sys.stdin.readline()
failed = 0
for i in range(200):
    try:
        app(["send", "team", f"{tag}-{i}", "--as", tag])
    except SystemExit as exc:
        failed += bool(exc.code)
sys.exit(1 if failed else 0)
"""


def _team(cli) -> None:
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("channel", "join", "team", "--as", "alice", "carol")


@pytest.mark.process
def test_two_processes_sending_at_once_lose_nothing(cli, store):
    _team(cli)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, tag],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("alice", "bob")
    ]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    for p in procs:  # release both together
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        assert "locked" not in err.lower()
        assert len(out.split()) == 200
    ids = [int(x) for out, _ in outs for x in out.split()]
    assert len(set(ids)) == 400
    rows = query(store, "SELECT sender, content FROM messages")
    assert sorted(rows) == sorted([(t, f"{t}-{i}") for t in ("alice", "bob") for i in range(200)])
    assert query(store, "SELECT count(*) FROM deliveries") == [(800,)]
    assert query(store, "PRAGMA integrity_check") == [("ok",)]


@pytest.mark.process
def test_two_acomm_processes_in_shell_loops(cli, store):
    _team(cli)
    loop = 'for i in $(seq 1 10); do "$ACOMM_BIN" send team "$0-$i" --as "$0" || exit 1; done'
    env = {**os.environ, "ACOMM_BIN": ACOMM}
    procs = [
        subprocess.Popen(
            ["sh", "-c", loop, tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for tag in ("alice", "bob")
    ]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "locked" not in err.lower()
        assert len(out.split()) == 10
    assert query(store, "SELECT count(*) FROM messages") == [(20,)]


def _store_at_version(path, version: int) -> None:
    """A store built by an older acomm: only the first `version` migrations."""
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("BEGIN IMMEDIATE")
    c.execute("CREATE TABLE _acomm_migrations (name TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)")
    for fn in MIGRATIONS[:version]:
        fn(c, 1000)
        c.execute("INSERT INTO _acomm_migrations VALUES (?, 1000)", (fn.__name__,))
    c.execute(f"PRAGMA user_version = {version}")
    c.execute("COMMIT")
    c.close()


def _schema(path) -> list[tuple]:
    return sorted(
        query(
            path,
            "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'",
        )
    )


@pytest.mark.parametrize("version", range(1, len(MIGRATIONS)))
def test_older_stores_are_upgraded_to_the_fresh_schema_keeping_their_data(
    cli, isolated_env, tmp_path, version
):
    isolated_env.parent.mkdir(mode=0o700)
    _store_at_version(isolated_env, version)
    # data written by the older acomm, through the tables m001 created
    raw = sqlite3.connect(isolated_env)
    raw.execute(
        "INSERT INTO channels (name, type, owner, state, created_at, delivery,"
        " max_message_size, ack_timeout_ms, max_retries, retry_backoff_ms, retry_jitter,"
        " echo, priority_ordering, max_pending, dedupe_window_ms) VALUES ('old', 'group',"
        " 'alice', 'active', 1000, 'at-most-once', 1048576, 30000, 3, 1000, 0, 0, 0, 0,"
        " 86400000)"
    )
    raw.execute(
        "INSERT INTO participants (channel_id, agent, role, joined_at) VALUES"
        " ((SELECT id FROM channels WHERE name = 'old'), 'alice', 'owner', 1000)"
    )
    raw.commit()
    raw.close()
    cli.ok("channel", "join", "old", "bob", "--as", "alice")  # the first command upgrades the store
    cli.ok("send", "old", "after the upgrade", "--as", "alice")
    assert [
        m["content"] for m in cli.ok("receive", "--as", "bob", "--json").json()["messages"]
    ] == ["after the upgrade"]
    fresh = tmp_path / "fresh" / "store.acomm"
    opening.init_store(fresh, 1000)
    assert _schema(isolated_env) == _schema(fresh)
    assert query(isolated_env, "PRAGMA user_version") == [(len(MIGRATIONS),)]
    names = [r[0] for r in query(isolated_env, "SELECT name FROM _acomm_migrations ORDER BY name")]
    assert names == [fn.__name__ for fn in MIGRATIONS]


def test_snapshot_sees_every_table_and_any_changed_value(cli, store):
    """The helper that proves a refused command changed nothing: WITHOUT ROWID tables
    included, values keyed by column."""
    cli.ok("channel", "create", "team", "--as", "alice")
    before = snapshot(store)
    assert set(before) >= {"channels", "deliveries", "store_meta", "_acomm_migrations"}
    assert [c["owner"] for c in before["channels"] if c["name"] == "team"] == ["alice"]
    raw = sqlite3.connect(store)
    raw.execute("UPDATE store_meta SET value = 'changed' WHERE key = 'created_at'")
    raw.commit()
    raw.close()
    after = snapshot(store)
    assert after["store_meta"] != before["store_meta"]
    assert {t: r for t, r in after.items() if t != "store_meta"} == {
        t: r for t, r in before.items() if t != "store_meta"
    }


# ------------------------------------------------------------ migrations split DDL whole


def test_a_trigger_body_stays_one_statement(tmp_path: Path):
    """The old splitter cut at every ';', so the first trigger body broke the migration."""
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    conn.execute("BEGIN")
    migrations._script(
        conn,
        """
        CREATE TABLE t (x TEXT);  -- a comment; with a semicolon
        CREATE TABLE log (y TEXT);
        CREATE TRIGGER t_log AFTER INSERT ON t BEGIN
            INSERT INTO log VALUES ('a;b');
            INSERT INTO log VALUES (new.x);
        END;
        CREATE INDEX log_y ON log(y)
    """,
    )
    conn.execute("COMMIT")
    conn.execute("INSERT INTO t VALUES ('z')")
    assert conn.execute("SELECT y FROM log ORDER BY rowid").fetchall() == [("a;b",), ("z",)]
    assert conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'").fetchall() == [
        ("log_y",)
    ]
    conn.close()


def test_an_unfinished_statement_still_reaches_sqlite(tmp_path: Path):
    conn = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrations._script(
            conn, "CREATE TABLE t (x); CREATE TRIGGER u AFTER INSERT ON t BEGIN SELECT 1;"
        )
    conn.close()
