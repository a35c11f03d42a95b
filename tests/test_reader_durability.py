"""A reader that goes away loses nothing: `receive` (every output form, --wait,
--follow) and `query --wait` print and flush BEFORE the read marks commit, so a closed pipe,
a closed or full stdout, or a reader that stalls past the busy timeout leaves every message
unread and exits 141 (`output_failed`) with a one-line error. Real processes, real pipes."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ACOMM, query, run, snapshot, wait_for

pytestmark = pytest.mark.process

N = 500
BODY = "x" * 900  # 500 of these are far more than a pipe buffer (64 KiB) in every form


@pytest.fixture
def loaded(cli, store, tmp_path: Path) -> Path:
    """Channel g (a owner, b member) with N messages unread for b."""
    cli.ok("channel", "create", "g", "--as", "a")
    cli.ok("channel", "join", "g", "--as", "a", "b")
    batch = tmp_path / "batch.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"channel": "g", "from": "a", "content": f"m{i} {BODY}"}) + "\n"
            for i in range(N)
        )
    )
    cli.ok("send", "--batch", str(batch))
    return store


def unread(store: Path, who: str = "b") -> int:
    return query(
        store, "SELECT count(*) FROM deliveries WHERE recipient = ? AND state = 'unread'", who
    )[0][0]


def pipeline(
    cmd: str, reader: str, tmp_path: Path, unbuffered: bool = False
) -> tuple[int, str, bytes]:
    """`cmd | reader` in bash; returns acomm's own exit status, its stderr, what the reader
    passed on. `unbuffered`: as `python -u` (PYTHONUNBUFFERED), where one large write that
    the reader cuts short is not an error to Python's text layer."""
    out, err = tmp_path / "out", tmp_path / "err"
    script = f"{cmd} 2>{err} | {reader} >{out}; exit ${{PIPESTATUS[0]}}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    p = subprocess.run(["bash", "-c", script], timeout=60, env=env)
    return p.returncode, err.read_text(), out.read_bytes()


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "form", ["--jsonl", "--json", "--body", "", "--wait 5 --jsonl", "--follow"]
)
def test_a_reader_that_closes_the_pipe_early_loses_nothing(loaded, tmp_path, form, unbuffered):
    """`receive ... | head -c 1000`: exit 141, the error on stderr, the store unchanged (the
    follow's failed batch too: it stays unread)."""
    before = snapshot(loaded)
    status, err, out = pipeline(
        f"{ACOMM} receive g --as b --limit 1000 {form}", "head -c 1000", tmp_path, unbuffered
    )
    assert len(out) == 1000
    assert status == 141, err
    # --follow hands messages over one at a time: head read only 1000 bytes of
    # the first and closed the pipe with the rest unread, so it stays unread
    count = 1 if form == "--follow" else 500
    message = (
        f"could not write {count} message{'s' * (count > 1)} to stdout (the reader "
        "closed the pipe); none were marked read"
    )
    if form == "--json":
        assert json.loads(err)["error"] == {
            "code": "output_failed",
            "message": message,
            "count": count,
        }
    else:
        assert err == f"acomm: error: output_failed: {message}\n"
    # one line: no "Exception ignored ... BrokenPipeError" noise
    assert unread(loaded) == N
    assert snapshot(loaded) == before


def test_receive_piped_to_head_n_1_prints_the_first_message(loaded, tmp_path):
    status, err, out = pipeline(
        f"{ACOMM} receive g --as b --jsonl --limit 1000", "head -n 1", tmp_path
    )
    assert json.loads(out)["content"].startswith("m0 ")
    assert (status, unread(loaded)) == (141, N)
    assert "output_failed" in err


@pytest.mark.parametrize("unbuffered", [False, True], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "cmd",
    [
        "messages --limit 1000",
        "messages --json --limit 1000",
        "receive g --as b --peek --jsonl --limit 1000",
    ],
)
def test_a_listing_whose_reader_leaves_early_exits_0_quietly(loaded, tmp_path, cmd, unbuffered):
    """Commands that only read (`messages | head`) lose nothing when the reader leaves: exit 0
    and no noise, as a shell user expects (Typer alone made it exit 1)."""
    before = snapshot(loaded)
    status, err, out = pipeline(f"{ACOMM} {cmd}", "head -c 100", tmp_path, unbuffered)
    assert len(out) == 100
    assert (status, err) == (0, "")
    assert snapshot(loaded) == before


@pytest.mark.parametrize(
    "redirect, why", [(">&-", "stdout is closed"), (">/dev/full", "No space left on device")]
)
def test_a_closed_or_full_stdout_loses_nothing(loaded, redirect, why):
    if redirect == ">/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    before = snapshot(loaded)
    p = subprocess.run(
        ["bash", "-c", f"{ACOMM} receive g --as b --json --limit 3 {redirect}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 141
    assert json.loads(p.stderr)["error"] == {
        "code": "output_failed",
        "count": 3,
        "message": f"could not write 3 messages to stdout ({why}); none were marked read",
    }
    assert snapshot(loaded) == before


def test_a_reader_that_stalls_releases_the_store_after_the_busy_timeout(loaded):
    """A reader that takes nothing holds the write lock while receive waits to write: the
    wait is bounded by the busy timeout, then nothing is marked read and the lock is free."""
    p = subprocess.Popen(
        [ACOMM, "receive", "g", "--as", "b", "--jsonl", "--limit", "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ACOMM_BUSY_TIMEOUT": "500"},
    )
    try:
        assert p.wait(timeout=30) == 141  # never reading its stdout until it has exited
        err = p.stderr.read().decode()
        assert "did not take it within 0.5s" in err, err
    finally:
        p.kill()
        p.communicate(timeout=30)
    assert unread(loaded) == N
    assert run("send", "g", "after", "--as", "a").returncode == 0


class Lines:
    """Complete lines from a child's stdout, read in large chunks (a slow reader would hit
    the stall bound), each wait bounded; the child is killed in the caller's teardown."""

    def __init__(self, p: subprocess.Popen) -> None:
        self.fd = p.stdout.fileno()
        self.buf = b""

    def take(self, n: int, within: float = 30) -> list[bytes]:
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        end = time.monotonic() + within
        while self.buf.count(b"\n") < n:
            assert sel.select(timeout=max(0.0, end - time.monotonic())), "no line in time"
            chunk = os.read(self.fd, 1 << 16)
            assert chunk, "stdout ended"
            self.buf += chunk
        *got, self.buf = self.buf.split(b"\n", n)
        return got


def test_query_wait_leaves_the_response_unread_when_stdout_is_closed(cli, store):
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    asker = subprocess.Popen(
        [ACOMM, "query", "team", "ready?", "--as", "alice", "--wait", "30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        asker.stdout.close()  # nobody will read the answer

        def asked() -> bool:
            return bool(cli.ok("messages", "--type", "query", "--json").json()["messages"])

        wait_for(asked)
        corr = cli.ok("messages", "--type", "query", "--json").json()["messages"][0][
            "correlation_id"
        ]
        cli.ok("respond", corr, "yes", "--as", "bob")
        assert asker.wait(timeout=30) == 141
        err = asker.stderr.read().decode()
        assert "could not write 1 message to stdout (the reader closed the pipe)" in err, err
    finally:
        asker.kill()
        asker.wait(timeout=30)
    got = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert [(m["type"], m["content"]) for m in got] == [("response", "yes")]


def test_follow_keeps_what_it_printed_read_and_the_failed_batch_unread(loaded, cli):
    """A follow that printed one batch fine and then meets a closed pipe: the first batch is
    read, the second stays unread."""
    f = subprocess.Popen(
        [ACOMM, "receive", "g", "--as", "b", "--follow", "--jsonl", "--limit", "1000"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = [json.loads(line) for line in Lines(f).take(N)]
        wait_for(lambda: unread(loaded) == 0)  # the commit follows the flush
        f.stdout.close()
        cli.ok("send", "g", "late", "--as", "a")
        assert f.wait(timeout=30) == 141
    finally:
        f.kill()
        f.wait(timeout=30)
    assert len(first) == N
    got = cli.ok("receive", "g", "--as", "b", "--json").json()["messages"]
    assert [m["content"] for m in got] == ["late"]
