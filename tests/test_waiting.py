"""Blocking and following across real processes, and time moved by the faketime program."""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import ACOMM, run

pytestmark = pytest.mark.process

needs_faketime = pytest.mark.skipif(
    shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
)


_PENDING: dict[int, bytes] = {}  # bytes read past the last newline, per descriptor


def readline(proc: subprocess.Popen, timeout: float = 30, stream: str = "stdout") -> str:
    """The next line of a child's stdout (or stderr), failing (not hanging) when none comes in
    time. Reads the descriptor itself: a buffered reader would hide lines from select()."""
    fd = getattr(proc, stream).fileno()
    buf = _PENDING.pop(fd, b"")
    deadline = time.monotonic() + timeout
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise AssertionError(f"no line from {proc.args} within {timeout}s: {buf!r}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"{proc.args} closed its output: {buf!r}")
            buf += chunk
    line, _, rest = buf.partition(b"\n")
    _PENDING[fd] = rest
    return line.decode() + "\n"


def test_receive_wait_times_out_with_exit_124(team):
    r = run("receive", "--as", "bob", "--wait", "0.3")
    assert r.returncode == 124 and "nothing arrived" in r.stderr


# `acomm ARGV...` that says "waiting" on stderr when it first sleeps until another process
# commits (its read found nothing): the readiness signal for a test that sends only then.
ANNOUNCING_ACOMM = """
import os, sys
from acomm_cli.cli.app import main
from acomm_cli.engine import waiting

wait_change = waiting.wait_change

def announce_then_wait(*args, **kwargs):
    waiting.wait_change = wait_change
    os.write(2, b"waiting\\n")
    return wait_change(*args, **kwargs)

waiting.wait_change = announce_then_wait
sys.argv = ["acomm", *sys.argv[1:]]
main()
"""


def test_receive_wait_wakes_when_another_process_sends(team):
    waiter = subprocess.Popen(
        [
            sys.executable,
            "-c",
            ANNOUNCING_ACOMM,
            "receive",
            "--as",
            "bob",
            "--wait",
            "20",
            "--body",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert readline(waiter, stream="stderr") == "waiting\n"  # its read found nothing
    assert run("send", "team", "wake up", "--as", "alice").returncode == 0
    out, err = waiter.communicate(timeout=20)
    assert waiter.returncode == 0, err
    assert out == "wake up\n"


def test_follow_prints_messages_sent_by_another_process(team):
    follower = subprocess.Popen(
        [ACOMM, "receive", "--as", "bob", "--follow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for body in ("one", "two"):
            assert run("send", "team", body, "--as", "alice").returncode == 0
        lines = [json.loads(readline(follower)) for _ in range(2)]
    finally:
        follower.terminate()
        follower.wait(timeout=10)
    assert [m["content"] for m in lines] == ["one", "two"]
    assert follower.returncode == 0  # SIGTERM stops it cleanly


def test_query_wait_prints_the_first_response(team):
    asker = subprocess.Popen(
        [ACOMM, "query", "team", "ready?", "--as", "alice", "--wait", "20"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    corr = None
    deadline = time.monotonic() + 20
    while corr is None and time.monotonic() < deadline:
        got = json.loads(run("receive", "--as", "bob", "--json").stdout)["messages"]
        corr = got[0]["correlation_id"] if got else None
    assert run("respond", corr, "yes", "--as", "bob").returncode == 0
    out, err = asker.communicate(timeout=20)
    assert asker.returncode == 0, err
    assert out == "yes\n"


def test_query_wait_without_answer_exits_124(team):
    r = run("query", "team", "anyone?", "--as", "alice", "--wait", "0.2")
    assert r.returncode == 124


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_tick_every_works_and_stops_cleanly_on_a_signal(team, sig):
    mid = run("send", "team", "later", "--as", "alice", "--delay", "300ms").stdout.strip()
    worker = subprocess.Popen(
        [ACOMM, "tick", "--every", "100ms", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        delivered = 0
        while not delivered:  # one JSON document per tick; the handlers are in place by now
            delivered = json.loads(readline(worker))["scheduled_delivered"]
        assert delivered == 1
    finally:
        worker.send_signal(sig)
        _, err = worker.communicate(timeout=10)
    assert worker.returncode == 0, err
    show = json.loads(run("show", mid, "--json").stdout)
    assert show["deliveries"][0]["state"] == "unread"


@needs_faketime
def test_retry_schedule_through_the_command_line_with_faketime(store):
    def at(offset: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "FAKETIME": f"@2026-01-01 {offset}", "FAKETIME_DONT_RESET": "1"}
        return subprocess.run(
            ["faketime", "-f", f"@2026-01-01 {offset}", ACOMM, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    assert (
        at(
            "00:00:00", "channel", "create", "w", "--as", "p", "--delivery", "at-least-once"
        ).returncode
        == 0
    )
    assert at("00:00:00", "channel", "join", "w", "--as", "p", "e").returncode == 0
    sent = at("00:00:00", "send", "w", "go", "--type", "command", "--as", "p")
    assert sent.returncode == 0, sent.stderr
    redelivered = []
    for offset in ("00:00:30", "00:00:32", "00:01:04", "00:01:38", "00:02:08"):
        out = json.loads(at(offset, "tick", "--json").stdout)
        redelivered.append((out["redelivered"], out["dead_lettered"]))
    assert redelivered == [(0, 0), (1, 0), (1, 0), (1, 0), (0, 1)]
    dl = json.loads(run("deadletter", "list", "--json").stdout)["dead_letters"]
    assert dl[0]["reason"] == "max_retries_exceeded"


@needs_faketime
def test_exactly_once_across_real_process_restarts(store):
    """Each step a separate process at a faked time: the read is remembered in the store."""

    def at(offset: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "FAKETIME_DONT_RESET": "1"}
        return subprocess.run(
            ["faketime", "-f", f"@2026-01-01 {offset}", ACOMM, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    assert (
        at(
            "00:00:00", "channel", "create", "once", "--as", "p", "--delivery", "exactly-once"
        ).returncode
        == 0
    )
    assert at("00:00:00", "channel", "join", "once", "--as", "p", "w").returncode == 0
    mid = at(
        "00:00:00", "send", "once", "charge card", "--type", "command", "--as", "p"
    ).stdout.strip()
    assert at("00:00:05", "receive", "--as", "w", "--body").stdout == "charge card\n"
    for offset in ("00:00:40", "00:01:20", "00:02:00"):  # past each ack deadline
        assert at(offset, "tick").returncode == 0
        got = at(offset, "receive", "--as", "w", "--json")
        assert json.loads(got.stdout)["messages"] == []
    d = json.loads(at("00:02:00", "show", mid, "--json").stdout)["deliveries"][0]
    assert (d["state"], d["retry_count"]) == ("read", 3)
