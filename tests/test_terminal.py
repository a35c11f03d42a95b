"""acomm on a terminal versus in a pipe: colour per --no-color / NO_COLOR / FORCE_COLOR / TERM,
rich views only for people, progress bars only on a terminal, help instead of a hang, and
the --follow views updating as another process sends (one of them driven through tmux)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import tempfile
import termios
import time
from pathlib import Path

import pytest
from conftest import ACOMM, VENV_BIN, query, run, snapshot

pytestmark = pytest.mark.process

ESC = "\x1b["


def plain(text: str) -> str:
    """What the terminal shows, without the escape sequences that colour it."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def on_terminal(
    *args: str,
    env: dict[str, str] | None = None,
    stdout_tty: bool = True,
    stdin_tty: bool = False,
    stderr_tty: bool = False,
    timeout: float = 60,
) -> tuple[int, str, str]:
    """Run acomm with the chosen streams on a pseudo-terminal (80x24), the others piped;
    returns (exit status, stdout, stderr) with the terminal's output in its stream."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    full_env = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    p = subprocess.Popen(
        [ACOMM, *args],
        env=full_env,
        stdin=slave if stdin_tty else subprocess.DEVNULL,
        stdout=slave if stdout_tty else subprocess.PIPE,
        stderr=slave if stderr_tty else subprocess.PIPE,
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif p.poll() is not None and not (stdout_tty or stderr_tty or stdin_tty):
            break
    os.close(master)
    if p.poll() is None and time.monotonic() >= deadline:
        p.kill()  # do not leave a hung child behind the failure
    piped_out = p.stdout.read().decode() if p.stdout else ""
    piped_err = p.stderr.read().decode() if p.stderr else ""
    code = p.wait(timeout=timeout)
    tty = b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")
    return (
        code,
        tty if stdout_tty else piped_out,
        tty if stderr_tty and not stdout_tty else piped_err,
    )


@pytest.fixture
def team(cli, make_channel):
    store = make_channel("team", "alice", "bob", "carol", delivery="at-least-once")
    cli.ok("send", "team", "deploy 1.4", "--as", "alice", "--type", "command")
    cli.ok("receive", "--as", "bob")
    cli.ok("ack", "1", "--as", "bob", "--status", "completed")
    return store


# ---------------------------------------------------------------- colour


@pytest.mark.parametrize(
    ("env", "args", "coloured"),
    [
        ({}, [], True),
        ({}, ["--no-color"], False),
        ({"NO_COLOR": "1"}, [], False),
        ({"NO_COLOR": ""}, [], True),  # no-color.org: set *and not empty*
        ({"TERM": "dumb"}, [], False),
        ({"TERM": "dumb", "FORCE_COLOR": "1"}, [], True),
        ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, [], False),
        ({"FORCE_COLOR": "1"}, ["--no-color"], False),
    ],
)
def test_colour_follows_flags_and_environment(team, env, args, coloured):
    code, out, err = on_terminal(*args, "show", "1", env=env)
    assert code == 0, err
    assert "message 1" in out and "acked (completed)" in plain(out)  # a panel: a terminal
    assert (ESC in out) is coloured


def test_show_panel_says_how_far_each_recipient_got(team):
    code, out, err = on_terminal("show", "1", env={"COLUMNS": "200"})
    assert code == 0, err
    text = plain(out)
    assert "reached" in text and "engaged" in text
    lines = text.split("\n")
    assert any("bob" in ln and "engaged" in ln and "read +" in ln for ln in lines)
    assert any("carol" in ln and "routed" in ln for ln in lines)  # carol did nothing


def test_piped_output_stays_plain_text_whatever_force_color_says(team):
    plain = run("show", "1")
    forced = run("show", "1", env={"FORCE_COLOR": "1"})
    assert plain.returncode == forced.returncode == 0
    assert forced.stdout == plain.stdout and ESC not in forced.stdout
    assert (
        plain.stdout.startswith("id:") and "  bob\tacked\tretries=0 ack=completed" in plain.stdout
    )  # scripts parse these lines: unchanged


def test_thread_panels_show_each_recipients_delivery_state(cli, team):
    corr = cli.ok("query", "team", "pool size?", "--as", "alice").stdout.strip()
    cli.ok("receive", "--as", "bob")
    cli.ok("respond", corr, "20", "--as", "bob")
    code, out, err = on_terminal("thread", corr)
    assert code == 0, err
    shown = plain(out)
    assert f"thread {corr}" in shown and "pool size?" in shown and "20" in shown
    assert "bob: acked (completed)  carol: unread" in shown
    assert ESC + "33munread" in out and ESC + "32macked" in out  # yellow, green
    piped = run("thread", corr)
    assert piped.stdout.splitlines()[0].split("\t")[1:3] == ["alice", "query"]


# ---------------------------------------------------------------- progress bars


def _batch(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "batch.jsonl"
    path.write_text(
        "".join(
            json.dumps({"channel": "team", "from": "alice", "content": f"m{i}"}) + "\n"
            for i in range(n)
        )
    )
    return path


def test_a_large_batch_shows_a_progress_bar_on_a_terminal_only(team, tmp_path):
    batch = _batch(tmp_path, 1200)
    code, out, err = on_terminal("send", "--batch", str(batch), stdout_tty=False, stderr_tty=True)
    assert code == 0 and len(out.split()) == 1200
    assert "sending" in err and "/1200" in err
    piped = run("send", "--batch", str(batch))
    assert piped.returncode == 0 and piped.stderr == ""
    assert len(piped.stdout.split()) == 1200
    tty_bar = on_terminal(
        "send", "--batch", str(batch), stdout_tty=False, stderr_tty=True, env={"TERM": "dumb"}
    )
    assert tty_bar[0] == 0 and "sending" not in tty_bar[2]  # a dumb terminal gets no bar


def test_progress_reports_chunks_of_compaction_and_passes_of_a_large_tick(conn, monkeypatch):
    """The pipeline side of the bars: totals and steps (the bar itself is rich's)."""
    from acomm_cli import model
    from acomm_cli.engine import acking, channels, operations, sending, timers
    from acomm_cli.model import SendRequest

    now = 1_700_000_000_000
    channels.create_channel(
        conn,
        "w",
        "group",
        "a",
        channels.channel_config(delivery="at-least-once", ack_timeout_ms=1000, max_retries=1),
        now,
    )
    channels.join_channel(conn, "w", "b", "member", now, by="a")
    for i in range(6):
        sending.send(conn, SendRequest(sender="a", content=f"m{i}", channel="w"), now)
    seen: list[tuple[str, int]] = []

    def progress(total: int):
        seen.append(("total", total))
        return lambda n: seen.append(("step", n))

    monkeypatch.setattr(timers, "LARGE_TICK", 5)
    timers.tick(conn, now + 1000, progress)  # 6 ack deadlines are due
    assert seen[0] == ("total", 6) and sum(n for k, n in seen[1:]) >= 6
    seen.clear()
    timers.tick(conn, now + 1001, progress)  # nothing due: no bar
    assert seen == []
    r = timers.receive_due(conn, "b", model.MessageFilter(), now + 5000)
    for m in r.messages:
        acking.ack(conn, m.id, "b", "completed", None, now + 5000)
    monkeypatch.setattr(operations, "COMPACT_CHUNK", 2)
    result = operations.compact(conn, now + 10_000, progress=progress)
    assert result.removed_messages >= 6
    chunks = seen[0][1]
    assert seen[0][0] == "total" and chunks >= 3 and seen[1:] == [("step", 1)] * chunks


# ---------------------------------------------------------------- help, not a hang


@pytest.mark.parametrize(
    "view",
    [("messages",), ("receive", "--as", "bob", "--peek"), ("show", "{id}"), ("deadletter", "list")],
)
def test_content_is_shown_as_sent_never_read_as_markup(cli, team, view):
    odd = "[/nope] [bold]B[/bold] :smile: [link=x]y[/link]"
    mid = cli.ok("send", "team", odd, "--as", "alice").stdout.strip()
    if view[0] == "deadletter":  # a dead letter shows its content too
        cli.ok("channel", "leave", "team", "--as", "alice", "carol")
    code, out, err = on_terminal(*(a.format(id=mid) for a in view), env={"COLUMNS": "200"})
    assert code == 0, err
    flat = " ".join(out.split())  # a table may wrap the cell
    for piece in ("[/nope]", "[bold]B[/bold]", ":smile:", "[link=x]y[/link]"):
        assert piece in flat, (view, out)


def test_a_body_read_from_a_terminal_prints_help_instead_of_hanging(team):
    before = snapshot(team)
    for args in (
        ["send", "team", "--as", "alice"],
        ["publish", "team", "x.y", "--as", "a"],
        ["send", "--batch", "-"],
    ):
        code, out, err = on_terminal(*args, stdout_tty=False, stdin_tty=True, timeout=30)
        assert code == 2, (args, err)
        assert f"Usage: acomm {args[0]}" in err and "Example" in err
        assert "acomm: error: usage: no" in err and out == ""
    assert snapshot(team) == before


def test_with_json_a_terminal_body_is_only_a_json_error(team):
    code, _, err = on_terminal(
        "send", "team", "--as", "alice", "--json", stdout_tty=False, stdin_tty=True, timeout=30
    )
    assert code == 2 and json.loads(err)["error"]["field"] == "body"


# ---------------------------------------------------------------- --follow


class Lines:
    """Lines of a child's stdout as they come, without blocking past a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buf = fd, b""

    def next(self, timeout: float = 20) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], max(0, deadline - time.monotonic()))
            assert ready, "nothing printed in time"
            data = os.read(self.fd, 65536)
            assert data, "the follower exited"
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)


def test_messages_follow_prints_history_then_messages_from_another_process(team):
    follower = subprocess.Popen(
        [ACOMM, "messages", "--follow", "--channel", "team"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    lines = Lines(follower.stdout.fileno())
    try:
        history = [lines.next()["content"] for _ in range(2)]
        assert history == ["deploy 1.4", "completed"]  # oldest first: the command, bob's ack
        assert run("send", "team", "one", "--as", "alice").returncode == 0
        assert run("send", "--to", "bob", "elsewhere", "--as", "alice").returncode == 0
        assert run("send", "team", "two", "--as", "bob").returncode == 0
        got = [lines.next() for _ in range(2)]
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=10)
    assert [(m["content"], m["sender"]) for m in got] == [("one", "alice"), ("two", "bob")]
    assert got[0]["deliveries"]  # JSON Lines of whole message documents
    assert follower.returncode == 0  # interrupted cleanly
    assert query(team, "SELECT count(*) FROM deliveries WHERE state = 'read'")[0][0] == 0


def test_messages_follow_changes_nothing_and_refuses_a_sort(cli, team):
    before = snapshot(team)
    r = cli("messages", "--follow", "--sort", "priority")
    assert r.exit_code == 2 and "--follow" in r.stderr
    assert snapshot(team) == before


# ---------------------------------------------------------------- through tmux


@pytest.mark.skipif(
    shutil.which("tmux") is None,
    reason="tmux is not installed (make test installs it with apt-get)",
)
def test_the_follow_view_updates_in_a_real_terminal(team, tmp_path):
    """A user's terminal, driven through tmux: `acomm messages --follow` shows the history,
    then each message another process sends, as it arrives; Ctrl-C ends it."""
    # a socket's path is at most 107 bytes: a short directory of its own, not tmp_path
    sock_dir = tempfile.mkdtemp(prefix="acomm-tmux-")
    sock = os.path.join(sock_dir, "s")
    env = {
        **os.environ,
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "TERM": "xterm-256color",
    }

    def tmux(*args: str) -> str:
        p = subprocess.run(
            ["tmux", "-S", sock, "-f", "/dev/null", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert p.returncode == 0, p.stderr
        return p.stdout

    def screen_shows(text: str, timeout: float = 20) -> str:
        deadline = time.monotonic() + timeout
        while True:
            shown = tmux("capture-pane", "-p", "-t", "follow")
            if text in shown or time.monotonic() > deadline:
                return shown
            time.sleep(0.1)  # polling the screen; the assertion does not depend on timing

    tmux(
        "new-session",
        "-d",
        "-s",
        "follow",
        "-x",
        "100",
        "-y",
        "30",
        f"env ACOMM_STORE={team} acomm messages --follow --channel team; "
        "echo follow-ended; sleep 30",
    )
    try:
        shown = screen_shows("deploy 1.4")
        assert "deploy 1.4" in shown and "#1" in shown and "alice -> bob, carol" in shown
        assert "second message" not in shown
        assert (
            run("send", "team", "second message", "--as", "carol", "--priority", "high").returncode
            == 0
        )
        shown = screen_shows("second message")
        assert "second message" in shown and "#2" in shown and "high" in shown
        assert shown.index("deploy 1.4") < shown.index("second message")
        tmux("send-keys", "-t", "follow", "C-c")
        assert "follow-ended" in screen_shows("follow-ended")
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True, timeout=30)
        shutil.rmtree(sock_dir, ignore_errors=True)


def test_small_work_on_a_terminal_draws_nothing_on_stderr(team):
    """The progress bar (and rich) appear only when there is enough work for one."""
    code, _out, err = on_terminal("tick", stdout_tty=False, stderr_tty=True)
    assert code == 0 and err == "", repr(err)
