"""Backpressure at its exact boundaries, crash safety and concurrent writers."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time

import pytest
from conftest import ACOMM, assert_invariants, run, snapshot

from acomm_cli.engine import sending
from acomm_cli.model import Limits
from acomm_cli.store import backlog

pytestmark = pytest.mark.process


@pytest.fixture
def team(make_channel):
    return make_channel("team", "a", "b")


def test_max_active_messages_at_its_boundary(cli, team, monkeypatch):
    monkeypatch.setenv("ACOMM_MAX_ACTIVE_MESSAGES", "3")
    ids = [int(cli.ok("send", "team", f"m{i}", "--as", "a").stdout) for i in range(3)]
    before = snapshot(team)
    r = cli("send", "team", "one too many", "--as", "a", "--json")
    assert r.exit_code == 6 and r.error["code"] == "store_full"
    assert r.error["field"] == "limits.max_active_messages"
    assert snapshot(team) == before
    # a batch that would cross the limit is refused whole, too
    r = cli("send", "--batch", "-", input='{"channel": "team", "from": "a", "content": "x"}\n')
    assert r.exit_code == 6
    assert snapshot(team) == before
    cli.ok("receive", "--as", "b", "--limit", "1")  # read on an untracked channel: terminal
    assert int(cli.ok("send", "team", "room again", "--as", "a").stdout) == ids[-1] + 1


def test_acked_messages_free_active_slots(cli, store, monkeypatch):
    monkeypatch.setenv("ACOMM_MAX_ACTIVE_MESSAGES", "1")
    cli.ok("channel", "create", "w", "--as", "a", "--delivery", "at-least-once")
    cli.ok("channel", "join", "w", "--as", "a", "b")
    mid = int(cli.ok("send", "w", "job", "--as", "a").stdout)
    cli.ok("receive", "--as", "b")  # read but not acked: still active
    assert cli("send", "w", "next", "--as", "a").exit_code == 6
    cli.ok("ack", mid, "--as", "b")
    # the acknowledgement is itself a message to `a`, active until `a` reads it
    assert cli("send", "w", "next", "--as", "a").exit_code == 6
    cli.ok("receive", "--as", "a")
    assert cli("send", "w", "next", "--as", "a").exit_code == 0


def test_max_pending_queues_and_releases_oldest_first(cli, store):
    cli.ok("channel", "create", "q", "--as", "a", "--max-pending", "2")
    cli.ok("channel", "join", "q", "--as", "a", "b")
    ids = [int(cli.ok("send", "q", f"m{i}", "--as", "a").stdout) for i in range(4)]
    states = [cli.ok("show", i, "--json").json()["deliveries"][0]["state"] for i in ids]
    assert states == ["unread", "unread", "queued", "queued"]
    first = cli.ok("receive", "--as", "b", "--limit", "1", "--json").json()["messages"]
    assert [m["id"] for m in first] == [ids[0]]  # reading one makes room for one
    assert cli.ok("show", ids[2], "--json").json()["deliveries"][0]["state"] == "unread"
    assert cli.ok("show", ids[3], "--json").json()["deliveries"][0]["state"] == "queued"
    rest = cli.ok("receive", "--as", "b", "--json").json()["messages"]
    assert [m["id"] for m in rest] == [ids[1], ids[2]]
    assert [m["id"] for m in cli.ok("receive", "--as", "b", "--json").json()["messages"]] == [
        ids[3]
    ]
    assert_invariants(store, set(ids))


def test_max_pending_on_tracked_channels_releases_on_ack(cli, store):
    cli.ok(
        "channel", "create", "q", "--as", "a", "--max-pending", "1", "--delivery", "at-least-once"
    )
    cli.ok("channel", "join", "q", "--as", "a", "b")
    one = int(cli.ok("send", "q", "one", "--as", "a").stdout)
    two = int(cli.ok("send", "q", "two", "--as", "a").stdout)
    cli.ok("receive", "--as", "b")
    assert cli.ok("show", two, "--json").json()["deliveries"][0]["state"] == "queued"
    cli.ok("ack", one, "--as", "b")
    assert cli.ok("show", two, "--json").json()["deliveries"][0]["state"] == "unread"


def test_max_store_bytes_reserve_at_its_boundary(cli, team, monkeypatch):
    reserve = Limits().reserve_bytes
    conn = sqlite3.connect(team)
    size = backlog.store_bytes(conn)
    conn.close()
    before = snapshot(team)
    monkeypatch.setenv("ACOMM_MAX_STORE_BYTES", str(size + reserve))
    r = cli("send", "team", "x", "--as", "a", "--json")
    assert r.exit_code == 6 and r.error["code"] == "store_capacity"
    assert snapshot(team) == before
    monkeypatch.setenv("ACOMM_MAX_STORE_BYTES", str(size + reserve + 1))
    assert cli("send", "team", "x", "--as", "a").exit_code == 0


def test_capacity_warning_above_ninety_percent(conn):
    size = backlog.store_bytes(conn)
    assert sending.capacity_warning(conn, Limits(max_store_bytes=int(size / 0.95))) is not None
    assert sending.capacity_warning(conn, Limits(max_store_bytes=int(size / 0.85))) is None


def test_sigkill_during_a_large_batch_leaves_none_or_all(store, tmp_path):
    assert run("channel", "create", "bulk", "--as", "a").returncode == 0
    assert run("channel", "join", "bulk", "--as", "a", "b").returncode == 0
    batch = tmp_path / "big.jsonl"
    with open(batch, "w") as fh:
        for i in range(200_000):
            fh.write(json.dumps({"channel": "bulk", "from": "a", "content": f"m{i}"}) + "\n")
    env = {**os.environ, "ACOMM_MAX_ACTIVE_MESSAGES": "0"}
    proc = subprocess.Popen(
        [ACOMM, "send", "--batch", str(batch)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    # kill it once it holds the write lock, i.e. in the middle of its transaction
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if os.path.exists(str(store) + "-wal") and os.path.getsize(str(store) + "-wal") > 4096:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the batch finished before it could be killed"
    c = sqlite3.connect(store)
    assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    n = c.execute("SELECT count(*) FROM messages WHERE channel_id != 1").fetchone()[0]
    d = c.execute("SELECT count(*) FROM deliveries").fetchone()[0]
    c.close()
    assert (n, d) in ((0, 0), (200_000, 200_000))
    assert_invariants(store)
    doctor = run("doctor", "--json")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert json.loads(doctor.stdout)["healthy"] is True


def test_four_senders_and_a_ticker_lose_nothing(store):
    assert (
        run(
            "channel",
            "create",
            "busy",
            "--as",
            "a",
            "--delivery",
            "at-least-once",
            "--ack-timeout",
            "50ms",
            "--retry-backoff",
            "10ms",
        ).returncode
        == 0
    )
    for who in ("b", "c", "d"):
        assert run("channel", "join", "busy", "--as", "a", who).returncode == 0
    script = (
        "import subprocess, sys\n"
        "ids = []\n"
        "for i in range(40):\n"
        "    r = subprocess.run([sys.argv[1], 'send', 'busy', f'{sys.argv[2]}-{i}', '--as', 'a'],"
        " capture_output=True, text=True)\n"
        "    assert r.returncode == 0, r.stderr\n"
        "    ids.append(r.stdout.strip())\n"
        "print(' '.join(ids))\n"
    )
    senders = [
        subprocess.Popen(
            ["python3", "-c", script, ACOMM, f"s{k}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    ticker = subprocess.Popen(
        [ACOMM, "tick", "--every", "100ms"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    outs = [s.communicate(timeout=300) for s in senders]
    ticker.terminate()
    _, tick_err = ticker.communicate(timeout=30)
    assert all(s.returncode == 0 for s in senders), [e for _, e in outs]
    assert "locked" not in tick_err and ticker.returncode == 0
    sent = {int(i) for out, _ in outs for i in out.split()}
    assert len(sent) == 160
    assert_invariants(store, sent)


def test_flush_policies_map_onto_sqlite(cli, team, monkeypatch):
    def pragma(name: str) -> int:
        from acomm_cli.engine import opening

        c = opening.connect(team, create=False, flush=flush)
        try:
            return c.execute(f"PRAGMA {name}").fetchone()[0]
        finally:
            c.close()

    for flush, sync, auto in (("immediate", 2, 1000), ("batch", 1, 1000), ("manual", 1, 0)):
        assert (pragma("synchronous"), pragma("wal_autocheckpoint")) == (sync, auto), flush


def test_batch_flush_checkpoints_after_the_interval(cli, team, monkeypatch):
    """While another process holds the store open (the last connection to close checkpoints
    anyway), `batch` leaves commits in the WAL until the interval has passed."""
    from freezegun import freeze_time

    monkeypatch.setenv("ACOMM_BATCH_INTERVAL", "1h")
    holder = sqlite3.connect(team)
    holder.execute("SELECT count(*) FROM messages").fetchone()
    try:
        start = os.stat(team).st_mtime_ns
        stamp = time.gmtime(start / 1e9 + 10)
        with freeze_time(time.strftime("%Y-%m-%d %H:%M:%S", stamp)):
            cli.ok("send", "team", "x", "--as", "a")
        assert os.stat(team).st_mtime_ns == start  # inside the interval: only in the WAL
        assert os.path.getsize(str(team) + "-wal") > 0
        with freeze_time(time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(start / 1e9 + 7200))):
            cli.ok("send", "team", "y", "--as", "a")
        assert os.stat(team).st_mtime_ns != start  # checkpointed into the database file
    finally:
        holder.close()


def test_batch_flush_checkpoints_after_batch_messages_commits(cli, team, monkeypatch):
    """`batch`: with a long interval, the WAL is checkpointed once it holds about
    batch_messages commits (two pages each), and not before."""
    monkeypatch.setenv("ACOMM_BATCH_INTERVAL", "1h")
    monkeypatch.setenv("ACOMM_BATCH_MESSAGES", "3")
    holder = sqlite3.connect(team)  # keeps the store open: closing would checkpoint anyway
    holder.execute("SELECT count(*) FROM messages").fetchone()
    try:
        cli.ok("flush")
        start = os.stat(team).st_mtime_ns
        checkpointed_after = None
        for n in range(1, 20):
            cli.ok("send", "team", f"m{n}", "--as", "a")
            if os.stat(team).st_mtime_ns != start:
                checkpointed_after = n
                break
        assert checkpointed_after in (2, 3, 4), checkpointed_after  # about 3 sends' pages
        # after a checkpoint the count starts over: the next send does not checkpoint again
        checkpointed = os.stat(team).st_mtime_ns
        cli.ok("send", "team", "after", "--as", "a")
        assert os.stat(team).st_mtime_ns == checkpointed
    finally:
        holder.close()
