"""Running an agent's command for dispatch: its own process group, files for its streams,
a timeout that kills the whole group, and the clean-up of a crashed dispatcher's orphans.

Standard input, output and error are anonymous temporary files, not pipes: a command that
never reads its input cannot block, a background child that keeps the output open cannot
keep the dispatcher waiting past the command's exit, and output is read up to a cap.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

STDOUT_CAP = 4 * 1024 * 1024  # bytes of output kept (a response is at most 1 MiB by default)
STDERR_TAIL = 2000  # characters of the end of standard error kept for a failure's reason
TERM_GRACE_S = 2.0  # after SIGTERM, this long before SIGKILL


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int | None  # None: timed out or did not start; negative: killed by a signal
    stdout: str
    stderr: str  # the end of it
    elapsed_ms: int
    timed_out: bool = False
    start_error: str | None = None
    interrupted: bool = False  # the dispatcher was stopped (SIGINT) and killed the command


def argv(run: str | tuple[str, ...]) -> list[str]:
    """A string is a shell command line; a list runs as it is, without a shell."""
    return ["/bin/sh", "-c", run] if isinstance(run, str) else list(run)


def run_command(run: str | tuple[str, ...], stdin: bytes, env: Mapping[str, str],
                timeout_s: float, cwd: str | None = None) -> RunOutcome:
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, \
            tempfile.TemporaryFile() as ferr:
        fin.write(stdin)
        fin.seek(0)
        try:
            proc = subprocess.Popen(argv(run), stdin=fin, stdout=fout, stderr=ferr,
                                    env=dict(env), cwd=cwd, start_new_session=True,
                                    close_fds=True)
        except (OSError, ValueError) as exc:
            return RunOutcome(None, "", "", elapsed(),
                              start_error=getattr(exc, "strerror", None) or str(exc))
        timed_out = False
        try:
            code: int | None = _wait(proc, timeout_s)
        except subprocess.TimeoutExpired:
            timed_out, code = True, None
            _kill_group(proc)
        except BaseException:  # interrupted: never leave the command running unwatched
            _kill_group(proc)
            raise
        return RunOutcome(code, _head(fout), _tail(ferr), elapsed(), timed_out=timed_out)


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> int:
    """Popen.wait with a timeout polls (sleeps of up to 50 ms; about 1 ms a run for a quick
    command); a pidfd wakes the moment the command exits (Linux 5.3+)."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return proc.wait(timeout=timeout_s)
    try:
        if not select.select([fd], [], [], timeout_s)[0]:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
    finally:
        os.close(fd)
    return proc.wait()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the command's process group, SIGKILL after a grace period."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=TERM_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group, also when its leader is gone
    proc.wait()


def _head(f: IO[bytes]) -> str:
    f.seek(0)
    return f.read(STDOUT_CAP).decode("utf-8", errors="replace")


def _tail(f: IO[bytes]) -> str:
    size = f.seek(0, os.SEEK_END)
    f.seek(max(0, size - 4 * STDERR_TAIL))
    text = f.read().decode("utf-8", errors="replace").strip()
    return text[-STDERR_TAIL:]


def kill_orphans(run_id: str) -> int:
    """Kill what is left of a run whose dispatcher died (its lease ran out): every process
    carrying ACOMM_RUN_ID=run_id in its environment, which the command's children inherit.
    Linux only (/proc); elsewhere nothing is found. Returns how many were signalled."""
    marker = f"ACOMM_RUN_ID={run_id}".encode()
    killed = 0
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return 0
    me = os.getpid()
    for pid in pids:
        if pid == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                found = marker in fh.read().split(b"\0")
        except OSError:  # gone, or not ours to read
            continue
        if found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
    return killed
