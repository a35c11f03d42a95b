"""`acomm ui` in a real terminal: tmux runs it at 120x40, `capture-pane -p` reads the screen.
Skipped, saying why, where tmux is missing (`make test` installs it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ACOMM, run
from uitraffic import build

pytestmark = [
    pytest.mark.ui,
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (make test installs it)"
    ),
]


class Terminal:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "ui")

    def wait_for(self, seen: Callable[[str], bool], within: float = 20.0) -> str:
        """Until the screen shows it (an event, polled with a deadline)."""
        end = time.monotonic() + within
        while True:
            text = self.screen()
            if seen(text):
                return text
            assert time.monotonic() < end, f"never shown; the screen:\n{text}"
            time.sleep(0.05)

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "ui", *keys)

    def pid(self) -> int:
        return int(self.tmux("display-message", "-p", "-t", "ui", "#{pane_pid}").strip())


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    t = Terminal(f"acomm-ui-{os.getpid()}-{tmp_path.name}")
    yield t
    subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, timeout=30)


def _state(pid: int) -> str:
    """The process's state line (a diagnosis for a failure)."""
    try:
        return next(
            line
            for line in Path(f"/proc/{pid}/status").read_text().splitlines()
            if line.startswith("State:")
        )
    except (OSError, StopIteration):
        return "gone"


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A directory with a short path: the header shows the store's path, then `as AGENT`,
    which a long test directory would push off a 120-column screen."""
    d = Path(tempfile.mkdtemp(prefix="acomm-ui-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_acomm_ui_in_a_real_terminal(cli, make_channel, terminal, short_dir):
    b: dict[str, Any] = build(cli, make_channel)
    shutil.copytree(Path(b["store"]).parent, short_dir / "s")
    store = short_dir / "s" / Path(b["store"]).name
    terminal.tmux(
        "new-session",
        "-d",
        "-s",
        "ui",
        "-x",
        "120",
        "-y",
        "40",
        f"exec env -u COLUMNS -u LINES ACOMM_STORE={store} TERM=xterm-256color "
        f"{ACOMM} ui --as alice",
    )
    terminal.tmux("set-option", "-t", "ui", "remain-on-exit", "on")  # an error stays shown
    text = terminal.wait_for(lambda s: "Agents" in s and "hello team" in s, within=30)
    assert "Channels" in text and "Feed" in text and "as alice" in text
    assert "bob" in text and "stale" in text

    terminal.keys("?")
    terminal.wait_for(lambda s: "acomm ui · keys" in s)
    terminal.keys("Escape")
    terminal.wait_for(lambda s: "acomm ui · keys" not in s)

    done = run("send", "team", "typed elsewhere", "--as", "bob", env={"ACOMM_STORE": str(store)})
    assert done.returncode == 0, done.stderr
    terminal.wait_for(lambda s: "typed elsewhere" in s, within=5)

    # idle: the data_version poll only, under 2% of a core (measured over three seconds)
    pid = terminal.pid()
    cpu0, t0 = _cpu_seconds(pid), time.monotonic()
    time.sleep(3)  # the measuring window itself, not a wait for an event
    used = (_cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
    assert used < 0.02, f"{used:.1%} of a core while idle"

    terminal.keys("q")
    end = time.monotonic() + 10
    # quit = exited: gone, or a zombie tmux has not reaped yet (seen under load for over 10 s)
    while _state(pid) not in ("gone", "State:\tZ (zombie)"):
        assert time.monotonic() < end, f"q did not quit; {_state(pid)}\n{terminal.screen()}"
        time.sleep(0.05)
