"""`receive --wait` woken by another process's commit: by the file-system notification of the
store's WAL where there is one (Linux inotify, store/notify.py), else by the data_version poll.
Real processes; no timing is asserted, only which way the waiter woke and what it got."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
from conftest import run
from test_waiting import readline

from acomm_cli.store import notify

pytestmark = pytest.mark.process

# `acomm ARGV...` that says "waiting" on stderr when it first waits for another process's
# commit (its watch made, if it has one), and at exit how each of its waits on the watch
# ended ("event" / "timeout"), or "no watch". POLL_S is raised far past the test's length
# in the inotify case, so only an event can wake it there.
WAITER = """
import os, sys
from acomm_cli.cli.app import main
from acomm_cli.engine import waiting
from acomm_cli.store import notify

mode = sys.argv.pop(1)
ends = []
watch, notify_wait = waiting._watch, notify.wait

def watch_then_announce(conn):
    waiting._watch = watch
    made = watch(conn)
    os.write(2, b"waiting\\n")
    return made

def recorded(*args, **kwargs):
    woke = notify_wait(*args, **kwargs)
    ends.append("event" if woke else "timeout")
    return woke

waiting._watch = watch_then_announce
notify.wait = recorded
if mode == "inotify":
    waiting.POLL_S = 3600.0
else:
    notify.watch = lambda path: None
sys.argv = ["acomm", *sys.argv[1:]]
try:
    main()
finally:
    os.write(2, (" ".join(ends) or "no watch").encode() + b"\\n")
"""

linux = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="inotify is Linux's (elsewhere the poll)"
)


def _waiter(mode: str, *argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WAITER, mode, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@linux
def test_a_watch_is_made_on_linux(tmp_path):
    w = notify.watch(str(tmp_path / "store.acomm"))
    assert w is not None and w.kind == "inotify"
    (tmp_path / "store.acomm-wal").write_bytes(b"x")
    assert notify.wait(w, 5.0)  # the event names the store's WAL
    (tmp_path / "other-file").write_bytes(b"x")
    assert not notify.wait(w, 0.0)  # another file's write is not the store's
    w.close()


@linux
def test_receive_wait_is_woken_by_the_inotify_event_of_another_process_commit(team):
    waiter = _waiter("inotify", "receive", "--as", "bob", "--wait", "60", "--body")
    assert readline(waiter, stream="stderr") == "waiting\n"  # its read found nothing
    assert run("send", "team", "wake up", "--as", "alice").returncode == 0
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, err
    assert out == "wake up\n"
    # its first wait (an hour long) ended on the event; then short re-checks, if any
    assert err.splitlines()[-1].split()[0] == "event"


def test_without_a_watch_the_wait_polls_and_still_wakes(team):
    waiter = _waiter("poll", "receive", "--as", "bob", "--wait", "60", "--body")
    assert readline(waiter, stream="stderr") == "waiting\n"
    assert run("send", "team", "wake up", "--as", "alice").returncode == 0
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, err
    assert out == "wake up\n"
    assert err.splitlines()[-1] == "no watch"


@linux
def test_the_wait_on_the_watch_honours_its_timeout(team):
    waiter = _waiter("inotify", "receive", "--as", "bob", "--wait", "0.3")
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 124 and "nothing arrived" in err
    assert "event" not in err.splitlines()[-1]


@linux
def test_sigint_ends_a_wait_on_the_watch(team):
    waiter = _waiter("inotify", "receive", "--as", "bob", "--wait", "60")
    assert readline(waiter, stream="stderr") == "waiting\n"
    waiter.send_signal(signal.SIGINT)
    _, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 130, err
    assert run("receive", "--as", "bob", "--peek").stdout == ""  # nothing was marked read
