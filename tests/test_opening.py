"""Opening stores: a missing store is an error (only init makes one where none is named;
channel create, send --to and a few more create one at a named path), a full disk is
disk_full and not corruption, a read-only store can be read, and doctor reports a damaged
page instead of refusing the store."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ACOMM, query, run, snapshot

from acomm_cli.engine import opening

pytestmark = pytest.mark.cli

# ---------------------------------------------------------------- a missing store

NOT_CREATING = [
    ("status",),
    ("messages",),
    ("show", "1"),
    ("receive", "--as", "b"),
    ("receive", "--as", "b", "--peek"),
    ("receive", "--as", "b", "--wait", "5"),
    ("send", "team", "hi", "--as", "a"),
    ("publish", "ci", "build.ok", "hi", "--as", "a"),
    ("ack", "1", "--as", "b"),
    ("tick",),
    ("tick", "--every", "1s", "--max-seconds", "5"),
    ("channel", "list"),
    ("channel", "join", "team", "--as", "a", "b"),
    ("subscribe", "ci", "build.#", "--as", "b"),
    ("subscriptions", "ci"),
    ("deadletter", "list"),
    ("query", "team", "q?", "--as", "a"),
    ("thread", "c1"),
    ("stats",),
    ("doctor",),
    ("flush",),
    ("compact",),
    ("export", "out"),
    ("bridge", "sync", "--inbox-dir", "inbox"),
    ("__complete", "channels"),
]


@pytest.mark.parametrize("args", NOT_CREATING, ids=" ".join)
def test_a_mistyped_store_is_an_error_and_creates_nothing(cli, tmp_path, args):
    typo = tmp_path / "typo" / "typo.acomm"
    before = sorted(p.name for p in tmp_path.iterdir())
    r = cli("--store", str(typo), *args, "--json", input="")
    assert r.exit_code == 7, r.stderr
    assert r.error["code"] == "store_unavailable"
    assert r.error["message"] == f"no store at {typo} (acomm init creates one)"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no file, no directory
    plain = cli("--store", str(typo), *args, input="")
    assert (
        plain.stderr == f"acomm: error: store_unavailable: no store at {typo} (acomm init "
        "creates one)\n"
    )


def test_a_mistyped_acomm_store_is_an_error_too(cli, isolated_env):
    r = cli("receive", "--as", "b", "--json")
    assert r.exit_code == 7
    assert r.error["message"] == f"no store at {isolated_env} (acomm init creates one)"
    assert not isolated_env.parent.exists()


# the commands that create a store at a path --store or $ACOMM_STORE names
CREATING = [
    ("channel", "create", "team", "--as", "a"),
    ("send", "--to", "b", "hi", "--as", "a"),
    ("agent", "register", "a"),
    ("task", "create", "--to", "b", "run the tests", "--as", "a"),
]


def _no_store_found(work: Path) -> str:
    return f"no store found (searched from {work} up); run `acomm init` here, or pass --store"


@pytest.mark.parametrize(
    "args", [*CREATING, ("receive", "--as", "b"), ("tick",), ("send", "team", "hi", "--as", "a")]
)
def test_no_store_found_upwards_is_exit_7_and_creates_nothing(cli, tmp_path, monkeypatch, args):
    monkeypatch.delenv("ACOMM_STORE")
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    assert not any((d / ".acomm").exists() for d in work.parents)
    r = cli(*args, "--json")
    assert r.exit_code == 7, (args, r.stderr)
    assert r.error == {
        "code": "store_unavailable",
        "message": _no_store_found(work),
        "field": "store",
        "searched_from": str(work),
    }
    assert list(work.iterdir()) == []
    plain = cli(*args)
    assert plain.stderr == f"acomm: error: store_unavailable: {_no_store_found(work)}\n"
    assert list(work.iterdir()) == []


@pytest.mark.process
def test_a_send_on_the_fast_path_finds_no_store_and_creates_nothing(tmp_path):
    from acomm_cli.cli import main as fastpath

    argv = ["send", "--to", "bob", "hi", "--as", "alice"]
    assert fastpath.plan(argv) is not None  # the fast path runs it, not Typer
    work = tmp_path / "empty"
    work.mkdir()
    assert not any((d / ".acomm").exists() for d in work.parents)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")}
    p = subprocess.run(
        [ACOMM, *argv], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 7, p.stderr
    assert p.stderr == f"acomm: error: store_unavailable: {_no_store_found(work)}\n"
    assert list(work.iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ("channel", "create", "team", "--type", "group", "--as", "a"),
        ("send", "--to", "b", "hello", "--as", "a"),
    ],
    ids=" ".join,
)
def test_the_creating_commands_create_it_with_a_note(cli, isolated_env, args):
    r = cli(*args)
    assert r.exit_code == 0, r.stderr
    # first (the open directory's notes of the names it registered may follow)
    assert r.stderr.startswith(f"acomm: note: creating a new store at {isolated_env}\n")
    assert isolated_env.exists()
    again = cli("channel", "create", "again", "--type", "group", "--as", "a")
    assert again.exit_code == 0 and again.stderr == ""  # no note once it exists


def test_agent_register_creates_a_strict_store_with_a_note(cli, isolated_env, strict):
    r = cli("agent", "register", "a")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == f"acomm: note: creating a new store at {isolated_env}\n"
    refused = cli("send", "--to", "b", "hi", "--as", "a")
    assert refused.exit_code == 4 and "no agent 'b'" in refused.stderr


def test_only_init_makes_the_store_here_and_the_others_then_find_it(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("ACOMM_STORE")
    monkeypatch.chdir(tmp_path)
    assert cli("channel", "create", "team", "--as", "a").exit_code == 7
    default = tmp_path / ".acomm" / "store.acomm"
    assert not default.exists()
    assert cli.ok("init").stdout == f"{default}\n"
    r = cli("channel", "create", "team", "--type", "group", "--as", "a")
    assert r.exit_code == 0, r.stderr
    assert "creating" not in r.stderr
    assert query(default, "SELECT name FROM channels WHERE name = 'team'") == [("team",)]


# ---------------------------------------------------------------- helpers for mounts


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"mount {' '.join(args)} is not permitted here: {done.stderr.strip()}")


def _umount(path: Path) -> None:
    if subprocess.run(["umount", str(path)], capture_output=True, timeout=30).returncode:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def _fill(store: Path, *, messages: int = 5) -> list[int]:
    """A store with a group channel a -> b and some messages; returns their ids."""
    env = {"ACOMM_STORE": str(store)}
    assert run("init", env=env).returncode == 0
    assert run("channel", "create", "team", "--type", "group", "--as", "a", env=env).returncode == 0
    assert run("channel", "join", "team", "--as", "a", "b", env=env).returncode == 0
    ids = []
    for i in range(messages):
        done = run("send", "team", f"m{i}", "--as", "a", env=env)
        assert done.returncode == 0, done.stderr
        ids.append(int(done.stdout))
    return ids


READS = [
    ("messages",),
    ("status",),
    ("show", "1"),
    ("receive", "--as", "b", "--peek"),
    ("stats",),
    ("channel", "list"),
    ("doctor",),
]


def _reads_work(env: dict[str, str], ids: list[int]) -> None:
    for args in READS:
        done = run(*args, "--json", env=env)
        assert done.returncode == 0, (args, done.stderr)
    listed = json.loads(run("messages", "--json", env=env).stdout)
    assert sorted(m["id"] for m in listed["messages"]) == ids
    peeked = json.loads(run("receive", "--as", "b", "--peek", "--json", env=env).stdout)
    assert [m["content"] for m in peeked["messages"]] == [f"m{i}" for i in range(len(ids))]


# ---------------------------------------------------------------- a full disk


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "disk"
    mnt.mkdir()
    _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt))
    try:
        yield mnt
    finally:
        _umount(mnt)


def _fill_disk(mnt: Path) -> Path:
    filler = mnt / "filler"
    fd = os.open(filler, os.O_CREAT | os.O_WRONLY, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    st = os.statvfs(mnt)
    assert st.f_bavail == 0
    return filler


@pytest.mark.process
def test_a_full_disk_is_disk_full_and_reads_still_work(small_disk):
    store = small_disk / "store.acomm"
    env = {"ACOMM_STORE": str(store)}
    ids = _fill(store)
    before = snapshot(store)
    filler = _fill_disk(small_disk)

    _reads_work(env, ids)
    for args in (
        ("send", "team", "more", "--as", "a"),
        ("receive", "--as", "b"),
        ("tick",),
        ("channel", "create", "other", "--type", "group", "--as", "a"),
    ):
        done = run(*args, "--json", env=env)
        assert done.returncode == 6, (args, done.stderr)
        err = json.loads(done.stderr)["error"]
        assert err["code"] == "disk_full"
        assert "full" in err["message"] and "nothing was written" in err["message"]
        assert "corrupt" not in err["message"]
        plain = run(*args, env=env)
        assert plain.stderr.startswith("acomm: error: disk_full: "), plain.stderr

    filler.unlink()  # space again: the store is as it was and healthy
    assert snapshot(store) == before
    assert run("doctor", env=env).returncode == 0
    assert run("send", "team", "after", "--as", "a", env=env).returncode == 0


@pytest.mark.process
def test_a_write_that_fills_the_disk_midway_is_disk_full(small_disk):
    """An open -shm (another reader holds the store) lets the write start: SQLite then
    reports SQLITE_FULL while appending to the WAL, and the transaction is rolled back."""
    store = small_disk / "store.acomm"
    env = {"ACOMM_STORE": str(store)}
    ids = _fill(store)
    holder = sqlite3.connect(store)
    try:
        holder.execute("SELECT count(*) FROM messages").fetchone()
        _fill_disk(small_disk)
        done = run("send", "team", "x" * 3000, "--as", "a", "--json", env=env)
        assert done.returncode == 6, done.stderr
        assert json.loads(done.stderr)["error"]["code"] == "disk_full"
        assert [r[0] for r in holder.execute("SELECT id FROM messages ORDER BY id")] == ids
    finally:
        holder.close()


# ---------------------------------------------------------------- a read-only store


@pytest.fixture
def read_only_copy(tmp_path: Path) -> Iterator[tuple[Path, Path, list[int]]]:
    """(the store on a read-only bind mount, the same file writable, its message ids)"""
    src = tmp_path / "src"
    src.mkdir()
    ids = _fill(src / "store.acomm")
    mnt = tmp_path / "ro"
    mnt.mkdir()
    _mount("--bind", str(src), str(mnt))
    try:
        _mount("-o", "remount,ro,bind", str(mnt))
        yield mnt / "store.acomm", src / "store.acomm", ids
    finally:
        _umount(mnt)


@pytest.mark.process
def test_a_read_only_mount_can_be_read_and_refuses_writes(read_only_copy):
    store, writable, ids = read_only_copy
    env = {"ACOMM_STORE": str(store)}
    before = snapshot(writable)
    listing = sorted(p.name for p in store.parent.iterdir())
    _reads_work(env, ids)
    for args in (
        ("send", "team", "more", "--as", "a"),
        ("receive", "--as", "b"),
        ("ack", "1", "--as", "b"),
        ("tick",),
    ):
        done = run(*args, "--json", env=env)
        assert done.returncode == 7, (args, done.stderr)
        err = json.loads(done.stderr)["error"]
        assert err["code"] == "store_unavailable"
        assert "read-only" in err["message"], err
    assert snapshot(writable) == before
    assert sorted(p.name for p in store.parent.iterdir()) == listing


def _as_nobody(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    full = {**os.environ, **env}
    return subprocess.run(
        [*cmd, ACOMM, *args], capture_output=True, text=True, env=full, timeout=60
    )


@pytest.mark.process
@pytest.mark.parametrize("writable_dir", [False, True], ids=["dir-read-only", "dir-writable"])
def test_a_store_that_is_not_ours_can_be_read(writable_dir):
    if os.geteuid() != 0:
        pytest.skip("needs root to drop to user nobody")
    base = Path(tempfile.mkdtemp(prefix="acomm-nobody-"))  # not under root's private tmp
    try:
        _read_as_nobody(base, writable_dir)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _read_as_nobody(tmp_path: Path, writable_dir: bool) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    store = shared / "store.acomm"
    ids = _fill(store)
    os.chmod(tmp_path, 0o755)
    os.chmod(shared, 0o777 if writable_dir else 0o755)
    os.chmod(store, 0o644)
    os.chmod(shared / "config.yaml", 0o644)
    probe = subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "true"],
        capture_output=True,
        timeout=30,
    )
    if probe.returncode != 0:
        pytest.skip(f"setpriv is not permitted here: {probe.stderr!r}")
    env = {"ACOMM_STORE": str(store), "HOME": str(tmp_path)}
    before = snapshot(store)
    for args in READS:
        done = _as_nobody(*args, "--json", env=env)
        assert done.returncode == 0, (args, done.stderr)
    listed = json.loads(_as_nobody("messages", "--json", env=env).stdout)
    assert sorted(m["id"] for m in listed["messages"]) == ids
    done = _as_nobody("send", "team", "more", "--as", "a", "--json", env=env)
    assert done.returncode == 7, done.stderr
    assert "read-only" in json.loads(done.stderr)["error"]["message"]
    assert snapshot(store) == before


# ---------------------------------------------------------------- doctor on a damaged page


def _damage(store: Path, name: str, start: int, end: int) -> None:
    """Overwrite bytes [start, end) of the root page of table or index `name`."""
    c = sqlite3.connect(store)
    root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    page = c.execute("PRAGMA page_size").fetchone()[0]
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    data = bytearray(store.read_bytes())
    rng = random.Random(3)
    for i in range((root - 1) * page + start, (root - 1) * page + end):
        data[i] = rng.randrange(256)
    store.write_bytes(bytes(data))


@pytest.mark.process
def test_doctor_reports_a_damaged_page_with_sqlites_rows(cli, isolated_env):
    ids = _fill(isolated_env, messages=30)
    _damage(isolated_env, "deliveries_active", 4000, 4096)
    digest = isolated_env.read_bytes()
    r = cli("doctor", "--json")
    assert r.exit_code == 5, r.stderr
    doc = r.json()
    assert doc["healthy"] is False and doc["integrity"] == "failed"
    assert doc["findings"][0]["check"] == "integrity"
    assert "deliveries_active" in doc["findings"][0]["detail"]
    assert doc["integrity_check"], doc
    assert any("page" in row for row in doc["integrity_check"])
    assert r.error["code"] == "invalid_state"
    plain = cli("doctor")
    assert plain.exit_code == 5 and "integrity" in plain.stdout
    assert isolated_env.read_bytes() == digest  # doctor did not touch it
    assert [r[0] for r in query(isolated_env, "SELECT id FROM messages ORDER BY id")] == ids


@pytest.mark.process
def test_doctor_on_an_unreadable_schema_still_refuses(cli, isolated_env):
    _fill(isolated_env, messages=1)
    data = bytearray(isolated_env.read_bytes())
    data[100:4096] = bytes(random.Random(4).randrange(256) for _ in range(3996))
    isolated_env.write_bytes(bytes(data))
    r = cli("doctor", "--json")
    assert r.exit_code == 7, r.stderr
    assert r.error["code"] == "store_unavailable"


@pytest.mark.process
def test_a_second_connection_in_one_process_keeps_the_first_ones_locks(tmp_path):
    """Opening a store next to a live connection of the same process (a gateway opens one
    per request beside its own) must not read the file outside SQLite: closing that file
    descriptor dropped the live connection's shared lock, and the next process to close the
    store then checkpointed and deleted the WAL under it (a corrupt store within minutes)."""
    store = tmp_path / "s.acomm"
    assert run("--store", str(store), "init").returncode == 0
    first = opening.connect(store, create=False)
    try:
        first.execute("SELECT count(*) FROM messages").fetchone()  # holds the shared lock
        opening.connect(store, create=False).close()
        r = run("--store", str(store), "send", "--to", "bob", "hi", "--as", "alice")
        assert r.returncode == 0, r.stderr
        # the other process closed its connection: with our lock intact, it was not the
        # last one, so the WAL (and its index) are still there for us
        assert Path(f"{store}-wal").exists() and Path(f"{store}-shm").exists()
        assert first.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        first.close()
