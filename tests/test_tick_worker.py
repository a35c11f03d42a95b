"""`tick --every` as a worker: a pass that meets a locked store says so and
the loop carries on; passes start on a schedule counted from when the previous one started;
SIGINT/SIGTERM wake the wait at once (it waits on the stop pipe instead of napping)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import ACOMM, query, wait_for
from procs import spawn
from procs import stop as stop_group

from acomm_cli import worker
from acomm_cli.errors import Duplicate, StoreLocked, StoreUnavailable

pytestmark = pytest.mark.process

WITHIN = 30.0  # every wait on another process is bounded by this (a loaded machine is slow)


class Lines:
    """A stream of another process's lines, read by a thread so that waits stay bounded."""

    def __init__(self, stream) -> None:
        self.seen: list[str] = []
        self._q: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self._q.put(line)

    def until(self, what: Callable[[str], bool], within: float = WITHIN) -> str:
        """The first line (from now on) for which `what` holds."""
        end = time.monotonic() + within
        while True:
            try:
                line = self._q.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no such line within {within}s; saw {self.seen}") from None
            self.seen.append(line)
            if what(line):
                return line


class WriteLock:
    """The store's write lock, taken by this process (as a long writer would) until released."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, timeout=WITHIN)

    def take(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


@pytest.fixture
def lock(team: Path) -> Iterator[WriteLock]:
    held = WriteLock(team)
    yield held
    held.release()
    held.conn.close()


def ticker(*args: str, busy_timeout: str = "100ms") -> subprocess.Popen[str]:
    env = {**os.environ, "ACOMM_BUSY_TIMEOUT": busy_timeout}
    return subprocess.Popen(
        [ACOMM, "tick", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for p in started:
        if p.poll() is None:
            p.kill()
        p.communicate(timeout=WITHIN)


# --every's stderr is a log: `TIME LEVEL acomm: text` (docs/OUTPUT.md, "Log lines")
NOTE = " WARNING acomm: tick: store "
LOCKED = "is locked by another process past the busy timeout"


def test_a_locked_pass_is_noted_and_the_loop_carries_on(cli, team, lock, procs):
    # due for delivery at once, but nobody can write while the lock is held
    mid = int(cli.ok("send", "team", "later", "--as", "alice", "--delay", "100ms").stdout)
    lock.take()
    p = ticker("--every", "200ms", "--json")
    procs.append(p)
    out, err = Lines(p.stdout), Lines(p.stderr)
    for _ in range(2):  # more than one pass has met the lock, and the worker is still there
        err.until(lambda line: NOTE in line and LOCKED in line and "; trying again " in line)
    assert p.poll() is None
    assert query(team, "SELECT state FROM deliveries WHERE message_id = ?", mid) == [("waiting",)]
    lock.release()  # the long writer is done
    doc = json.loads(out.until(lambda line: json.loads(line)["scheduled_delivered"] == 1))
    assert doc["scheduled_delivered"] == 1
    assert query(team, "SELECT state FROM deliveries WHERE message_id = ?", mid) == [("unread",)]
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=WITHIN) == 0  # the last pass succeeded
    assert not any(line.startswith("{") for line in err.seen)  # no error document


def test_stopped_while_still_locked_it_exits_with_the_lock_error(team, lock, procs):
    lock.take()
    p = ticker("--every", "200ms")
    procs.append(p)
    err = Lines(p.stderr)
    err.until(lambda line: NOTE in line)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=WITHIN) == 7
    err.until(lambda line: " ERROR acomm: store_unavailable: store " in line and LOCKED in line)


def _waiting_in(pid: int) -> str:
    with open(f"/proc/{pid}/wchan") as fh:
        return fh.read()


def test_the_wait_sleeps_on_the_stop_pipe_and_a_signal_ends_it_at_once(team, procs):
    """Between passes the worker blocks in select() on the stop pipe (not in a loop of short
    naps), so SIGTERM during an hour's wait ends it at once."""
    p = ticker("--every", "1h", "--json")
    procs.append(p)
    Lines(p.stdout).until(lambda line: "scheduled_delivered" in line)  # the first pass is done
    try:
        _waiting_in(p.pid)
    except OSError as exc:
        pytest.skip(f"/proc/PID/wchan is not readable here: {exc}")
    end = time.monotonic() + WITHIN
    while not any(w in _waiting_in(p.pid) for w in ("poll", "select")):
        assert time.monotonic() < end, f"never waiting on the pipe: {_waiting_in(p.pid)!r}"
        time.sleep(0.02)
    start = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=WITHIN) == 0
    assert time.monotonic() - start < 5  # generous on a loaded machine; not the hour


@pytest.mark.parametrize(("args", "status"), [(["--every", "1s"], 0), ([], 128 + 15)])
def test_sigterm_in_the_middle_of_a_pass_stops_it_within_a_second(
    cli, team, procs, tmp_path, monkeypatch, args, status
):
    """A pass with thousands of response files to ingest is cut short soon after SIGTERM
    (what it had not committed rolls back), rather than run to its end; nothing is lost or
    sent twice: the next tick takes the rest."""
    outbox = tmp_path / "outbox"
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(outbox))
    (outbox / "bob").mkdir(parents=True)
    n = 10_000  # seconds of work for one pass, even on a fast machine
    for i in range(n):
        (outbox / "bob" / f"{i:05}.json").write_text(f'{{"channel": "team", "content": "m{i}"}}')
    p = ticker(*args)
    procs.append(p)
    end = time.monotonic() + WITHIN
    while len(os.listdir(outbox / "bob")) == n:  # the pass is under way: files are going
        assert p.poll() is None and time.monotonic() < end, "no file was ever ingested"
        time.sleep(0.01)
    start = time.monotonic()
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=WITHIN) == status
    assert time.monotonic() - start < 3  # 1 s, and a margin for a loaded machine
    left = len(os.listdir(outbox / "bob"))
    assert 0 < left < n  # cut in the middle, not run to the end
    cli.ok("tick", "--no-dispatch")
    assert os.listdir(outbox / "bob") == []
    sent = query(team, "SELECT content FROM messages WHERE sender = 'bob'")
    assert sorted(c for (c,) in sent) == sorted(f"m{i}" for i in range(n))


# A long writer in its own process: takes the store's write lock, says so, holds it until killed
HOLDER = """
import os, signal, sqlite3, sys
if len(sys.argv) > 2:
    os.setsid()  # out of the dispatched agent's process group: a stop does not kill it
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN IMMEDIATE")
c.execute("INSERT INTO store_meta (key, value) VALUES ('held', 'never committed')")
if len(sys.argv) > 2:
    with open(sys.argv[2] + ".tmp", "w") as fh:
        fh.write(str(os.getpid()))
    os.rename(sys.argv[2] + ".tmp", sys.argv[2])
print("locked", flush=True)
signal.pause()
"""
WAITING = "tick: waiting for the store's write lock, held by another process"


@pytest.fixture
def holder(team: Path) -> Iterator[Callable[[], subprocess.Popen[str]]]:
    """Starts the long writer (once it holds the lock); it is killed after the test."""
    started: list[subprocess.Popen[str]] = []

    def hold() -> subprocess.Popen[str]:
        p = spawn([sys.executable, "-c", HOLDER, str(team)], stdout=subprocess.PIPE, text=True)
        started.append(p)
        Lines(p.stdout).until(lambda line: line == "locked\n")
        return p

    yield hold
    for p in started:
        stop_group(p, signal.SIGKILL)


def intact(store: Path) -> None:
    """Nothing of the killed holder's transaction, nor of a half-done pass, is in the store."""
    c = sqlite3.connect(store)
    try:
        assert c.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert c.execute("SELECT 1 FROM store_meta WHERE key = 'held'").fetchall() == []
    finally:
        c.close()


@pytest.mark.parametrize(("args", "status"), [(["--every", "1s"], 0), ([], 128 + 15)])
def test_sigterm_while_waiting_for_the_write_lock_stops_within_a_second(
    cli, team, holder, args, status
):
    """SQLite's wait for another process's lock does not return to Python before the busy
    timeout (here a minute): tick waits in slices instead, and a stop ends it within one."""
    mid = int(cli.ok("send", "team", "later", "--as", "alice", "--delay", "100ms").stdout)
    writer = holder()
    env = {**os.environ, "ACOMM_BUSY_TIMEOUT": "60s"}
    p = spawn([ACOMM, "-v", "tick", *args], stderr=subprocess.PIPE, text=True, env=env)
    try:
        err = Lines(p.stderr)
        err.until(lambda line: WAITING in line)  # a verbose line, or with --every a DEBUG one
        start = time.monotonic()
        p.send_signal(signal.SIGTERM)
        code = p.wait(timeout=WITHIN)
        took = time.monotonic() - start
    finally:
        stop_group(p, signal.SIGKILL)
    assert code == status
    assert took < 1.0, took
    assert not any("error" in line for line in err.seen)
    stop_group(writer, signal.SIGKILL)  # the long writer dies: its transaction never was
    intact(team)
    assert query(team, "SELECT state FROM deliveries WHERE message_id = ?", mid) == [("waiting",)]
    cli.ok("tick", "--no-dispatch")  # the next tick does what the stopped one could not
    assert query(team, "SELECT state FROM deliveries WHERE message_id = ?", mid) == [("unread",)]


def test_without_a_stop_a_locked_store_still_fails_after_the_busy_timeout(cli, team, holder):
    writer = holder()
    env = {**os.environ, "ACOMM_BUSY_TIMEOUT": "300ms"}
    start = time.monotonic()
    done = subprocess.run([ACOMM, "tick"], capture_output=True, text=True, env=env, timeout=WITHIN)
    took = time.monotonic() - start
    assert done.returncode == 7, done.stderr
    assert done.stderr.startswith("acomm: error: store_unavailable: store ")
    assert LOCKED in done.stderr
    assert 0.3 <= took < 5  # the configured wait, not the default 5 s
    stop_group(writer, signal.SIGKILL)
    intact(team)


def test_a_stop_while_settling_a_dispatched_run_waits_for_no_lock(cli, team, tmp_path):
    """The agent's command is killed at the stop; recording its run then meets another
    process's lock (its own helper's, which outlives it): tick does not wait the busy
    timeout for it. The run stays claimed until its lease runs out, as after a crash."""
    from test_dispatch import agent_script, configure

    locked = tmp_path / "holder.pid"
    (tmp_path / "holder.py").write_text(HOLDER)
    run_ = agent_script(
        tmp_path,
        "locker.sh",
        f"""
echo $$ > "$WORK/agent.pid"
{sys.executable} "$WORK/holder.py" "$ACOMM_STORE" "{locked}" > /dev/null &
exec sleep 300""",
    )
    configure(team, bob={"run": run_})
    mid = int(cli.ok("send", "team", "a", "--as", "alice").stdout)
    env = {**os.environ, "ACOMM_BUSY_TIMEOUT": "60s"}
    p = spawn([ACOMM, "tick", "--every", "1s"], stderr=subprocess.PIPE, text=True, env=env)
    held = None
    try:
        wait_for(lambda: locked.exists())
        held = int(locked.read_text())
        agent = int((tmp_path / "agent.pid").read_text())
        start = time.monotonic()
        p.send_signal(signal.SIGTERM)
        code = p.wait(timeout=WITHIN)
        took = time.monotonic() - start
        assert not _alive(agent)  # killed before tick ended
    finally:
        stop_group(p, signal.SIGKILL)
        if held is not None:
            os.kill(held, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):  # an orphan re-parented to pytest
                os.waitpid(held, 0)
    assert code == 0, p.stderr.read() if p.stderr else ""
    assert took < 1.0, took
    intact(team)
    assert query(team, "SELECT status FROM dispatch_receipts WHERE message_id = ?", mid) == [
        ("running",)
    ]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


# ---------------------------------------------------------------- the schedule, in process


class FakeTime:
    """A monotonic clock that only passes work and waits move."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []
        self.starts: list[float] = []

    def wait(self, seconds: float) -> bool:
        self.waits.append(round(seconds, 6))
        self.now += seconds
        return False


def schedule(
    durations: list[float],
    every_s: float = 1.0,
    failures: dict[int, BaseException] | None = None,
    max_seconds: float | None = None,
) -> tuple[FakeTime, list, object]:
    t = FakeTime()
    notes: list[tuple[str, float]] = []
    passes = iter(range(len(durations)))
    stopped = [False]

    def one_pass() -> None:
        i = next(passes)
        t.starts.append(round(t.now, 6))
        t.now += durations[i]
        if i == len(durations) - 1:
            stopped[0] = True
        if failures and i in failures:
            raise failures[i]

    last = worker.repeat(
        one_pass,
        every_s,
        max_seconds,
        lambda: stopped[0],
        on_error=lambda exc, in_s: notes.append((exc.code, round(in_s, 6))),
        wait=t.wait,
        monotonic=lambda: t.now,
    )
    return t, notes, last


def test_passes_start_every_interval_counted_from_the_previous_start():
    t, _, last = schedule([0.7, 0.2, 0.0, 0.5])
    assert t.waits == [0.3, 0.8, 1.0]
    assert t.starts == [100.0, 101.0, 102.0, 103.0]
    assert last is None


def test_an_overrun_starts_the_next_pass_at_once_without_drift_adding_up():
    t, _, _ = schedule([2.5, 0.25, 0.5, 0.0])
    assert t.waits == [0.75, 0.5]  # none after the overrun; then back on a 1 s beat
    assert t.starts == [100.0, 102.5, 103.5, 104.5]


def test_max_seconds_ends_the_schedule_between_passes():
    t, _, _ = schedule([0.1] * 10, max_seconds=2.5)
    assert t.starts == [100.0, 101.0, 102.0]
    assert t.waits == [0.9, 0.9, 0.4]


def test_transient_failures_are_reported_with_the_time_to_the_next_pass():
    locked = StoreLocked("store is locked by another process past the busy timeout")
    t, notes, last = schedule([0.2, 1.5, 0.1, 0.1], failures={0: locked, 1: locked})
    assert notes == [("store_unavailable", 0.8), ("store_unavailable", 0.0)]
    assert t.starts == [100.0, 101.0, 102.5, 103.5]
    assert last is None  # the last pass succeeded


def test_the_last_failure_is_returned_when_the_loop_ends_on_it():
    locked = StoreLocked("locked")
    _, _, last = schedule([0.1, 0.1], failures={1: locked})
    assert last is locked


class Cut(BaseException):
    """What a stop raises in the middle of a pass (stopping._Interrupted)."""


def test_a_pass_cut_short_by_a_stop_after_a_failed_one_returns_that_failure():
    """Stopped while the store is still locked (waiting for it again): exit with the lock
    error, as when the stop comes between passes; without a failure before, the cut goes on."""
    locked = StoreLocked("locked")
    _, _, last = schedule([0.1, 0.1], failures={0: locked, 1: Cut()})
    assert last is locked
    with pytest.raises(Cut):
        schedule([0.1, 0.1], failures={1: Cut()})


@pytest.mark.parametrize("exc", [StoreUnavailable("corrupt"), Duplicate("no")])
def test_errors_a_later_pass_cannot_cure_end_the_loop(exc):
    with pytest.raises(type(exc)):
        schedule([0.1, 0.1, 0.1], failures={0: exc})


def test_a_stop_during_the_wait_ends_the_loop():
    t = FakeTime()
    runs: list[float] = []
    last = worker.repeat(
        lambda: runs.append(t.now),
        1.0,
        None,
        lambda: False,
        on_error=lambda exc, s: None,
        wait=lambda s: True,
        monotonic=lambda: t.now,
    )
    assert (runs, last) == ([100.0], None)


def test_wait_for_stop_wakes_when_the_pipe_is_written():
    from acomm_cli.cli.stopping import Stop

    stop = Stop()
    try:
        assert worker.wait_for_stop(stop, 0) is False
        threading.Timer(0.05, stop.request).start()
        assert worker.wait_for_stop(stop, WITHIN) is True
    finally:
        stop.close()


@pytest.mark.unit
def test_a_stop_cuts_a_cuttable_block_short_and_nothing_else():
    """Inside `cuttable()`, work that ignores a stop ends by _Interrupted about GRACE_S after
    it; a block that ends in time, and code outside any block, are never interrupted."""
    from acomm_cli.cli import stopping

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGALRM)}
    with stopping.on_signals() as stop:
        with stop.cuttable():
            pass  # ended before any stop: nothing armed
        start = time.monotonic()
        with pytest.raises(stopping._Interrupted), stop.cuttable():
            os.kill(os.getpid(), signal.SIGTERM)
            while time.monotonic() - start < WITHIN:  # work that never looks at the stop
                pass
        assert stopping.GRACE_S <= time.monotonic() - start < WITHIN
        assert stop.signum == signal.SIGTERM
        with stop.cuttable():
            pass  # a stop requested already arms the grace; the block ends before it
        end = time.monotonic() + 2 * stopping.GRACE_S
        while time.monotonic() < end:  # outside any block: the alarm, if any, raises nothing
            pass
    assert {sig: signal.getsignal(sig) for sig in before} == before  # given back
