"""Processes the tests start and must not outlive: servers in their own process group, and
the check that nothing a test started is still running after it.

A server is often a wrapper with a child (`faketime` runs `acomm gateway serve` as its child):
signalling the wrapper's pid alone leaves the child running. So every server is started with
`spawn` (its own session, so its own process group) and stopped with `stop`, which signals the
whole group. The pytest process is made a child subreaper: a grandchild whose parent died is
re-parented to pytest rather than to init, so `descendants()` still sees it."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux only; False elsewhere)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def spawn(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen` in a new session: the process and all it starts form one group."""
    return subprocess.Popen(list(args), start_new_session=True, **kwargs)


def signal_group(proc: subprocess.Popen[Any], sig: int) -> None:
    """Signal the process group `proc` leads (started by `spawn`); gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM, timeout: float = 15) -> int:
    """Signal `proc`'s group, wait for `proc`, SIGKILL the group when it does not exit in
    `timeout`; then SIGKILL whatever of the group is left (a wrapper's child that outlived
    the wrapper). Returns `proc`'s exit status."""
    if proc.poll() is None:
        signal_group(proc, sig)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        signal_group(proc, signal.SIGKILL)
        code = proc.wait(timeout=10)
    signal_group(proc, signal.SIGKILL)
    return code


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    """Running (a zombie is dead: only not yet waited for)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


def descendants(before: dict[int, str] | None = None) -> dict[int, str]:
    """The living descendants of this process: pid -> command line, read from
    /proc/PID/task/*/children (a few file reads, not a process listing). With `before` (an
    earlier answer), only those started since, leaving out what the processes of `before`
    started since (a JVM's workers, say, which belong to it)."""
    found: dict[int, str] = {}
    todo = _children(os.getpid())
    while todo:
        child = todo.pop()
        if child in found or not _alive(child):
            continue
        try:
            raw = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        cmd = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        if before is not None and before.get(child) == cmd:
            continue  # there before: neither it nor its children are the test's
        found[child] = cmd
        todo += _children(child)
    return found


def outliving(before: dict[int, str], polls: int = 100) -> dict[int, str]:
    """What the test started that is still alive, after up to `polls` times 50 ms (a
    process just sent SIGKILL takes a moment to go). Counted in sleeps, not by a clock: the
    test may have left time frozen."""
    for _ in range(polls):
        left = descendants(before)
        if not left:
            return left
        time.sleep(0.05)
    return descendants(before)


def kill_all(pids: dict[int, str]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


# What a test of the in-process tiers started: `watch_spawns` records every subprocess.Popen
# (Python's audit event) until `spawned` reads them, except those the code under
# acomm_cli.dispatch starts (running the configured agents is what `dispatch` does).
_spawned: list[str] = []
_watching = [False]


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "subprocess.Popen" or not _watching[0]:
        return
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("acomm_cli.dispatch"):
            return
        frame = frame.f_back
    argv = args[1]
    _spawned.append(argv if isinstance(argv, str) else " ".join(map(str, argv or [args[0]])))


def install_spawn_watch() -> None:
    sys.addaudithook(_audit)  # for the life of the process; idle unless watching


def watch_spawns() -> None:
    _spawned.clear()
    _watching[0] = True


def spawned() -> list[str]:
    _watching[0] = False
    return list(_spawned)
