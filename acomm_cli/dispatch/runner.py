"""Running an agent's command for dispatch: its own process group, a timeout or a stop
request (SIGINT/SIGTERM) that kills the whole group, output kept up to a cap, and the clean-up
of a crashed dispatcher's orphans.

Standard input is an anonymous temporary file (a command that never reads it cannot block).
Standard output and error are pipes that the dispatcher drains while it waits: it keeps the
first STDOUT_CAP bytes of stdout and the end of stderr and throws the rest away, so a command
that prints without end costs neither memory nor disk (temporary files would have filled
TMPDIR). The wait ends when the command's own process exits (a pidfd): a background child
that keeps the pipes open does not hold the dispatcher, and once the pipes are closed its
further writes fail (EPIPE).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

STDOUT_CAP = 4 * 1024 * 1024  # bytes of output kept (a response is at most 1 MiB by default)
STDERR_TAIL = 2000  # characters of the end of standard error kept for a failure's reason
TERM_GRACE_S = 2.0  # after SIGTERM, this long before SIGKILL
# the same when the dispatcher itself was asked to stop: a command that ignores SIGTERM must
# not hold a `tick` told to stop for more than a second
STOP_GRACE_S = 0.5
_CHUNK = 64 * 1024
_POLL_S = 0.05  # without a pidfd (not Linux 5.3+), how often the command's exit is checked


@dataclass(frozen=True)
class RunOutcome:
    exit_code: int | None  # None: timed out, stopped or did not start; negative: a signal
    stdout: str
    stderr: str  # the end of it
    elapsed_ms: int
    timed_out: bool = False
    start_error: str | None = None
    interrupted: bool = False  # the dispatcher was asked to stop and killed the command
    stdout_dropped: int = 0  # bytes of stdout past STDOUT_CAP, not kept


class _Head:
    """The first `cap` bytes, and how many came after them."""

    def __init__(self, cap: int) -> None:
        self.data, self.cap, self.dropped = bytearray(), cap, 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        self.data += chunk[: max(room, 0)]
        self.dropped += max(len(chunk) - max(room, 0), 0)


class _Tail:
    """The last `keep` bytes."""

    def __init__(self, keep: int) -> None:
        self.data, self.keep = bytearray(), keep

    def feed(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > 2 * self.keep:
            del self.data[: -self.keep]


def argv(run: str | tuple[str, ...]) -> list[str]:
    """A string is a shell command line; a list runs as it is, without a shell."""
    return ["/bin/sh", "-c", run] if isinstance(run, str) else list(run)


def run_command(
    run: str | tuple[str, ...],
    stdin: bytes,
    env: Mapping[str, str],
    timeout_s: float,
    cwd: str | None = None,
    stop: Callable[[], bool] | None = None,
) -> RunOutcome:
    """Run to its end, its timeout, or a stop request. `stop` may have a `fileno()` that
    becomes readable on the request (acomm_cli.cli.stopping.Stop): the wait then wakes at once."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    with tempfile.TemporaryFile() as fin:
        fin.write(stdin)
        fin.seek(0)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            proc = subprocess.Popen(
                argv(run),
                stdin=fin,
                stdout=out_w,
                stderr=err_w,
                env=dict(env),
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
        except (OSError, ValueError) as exc:
            for fd in (out_r, err_r):
                os.close(fd)
            return RunOutcome(
                None, "", "", elapsed(), start_error=getattr(exc, "strerror", None) or str(exc)
            )
        finally:
            os.close(out_w)
            os.close(err_w)
        head, tail = _Head(STDOUT_CAP), _Tail(4 * STDERR_TAIL)
        sinks: dict[int, _Head | _Tail] = {out_r: head, err_r: tail}
        try:
            for fd in sinks:
                os.set_blocking(fd, False)
            ended = _pump(proc, sinks, timeout_s, stop)
            if ended != "exited":
                _kill_group(proc, STOP_GRACE_S if ended == "stopped" else TERM_GRACE_S)
            _drain(sinks)
        except BaseException:  # interrupted: never leave the command running unwatched
            _kill_group(proc, STOP_GRACE_S)
            raise
        finally:
            for fd in (out_r, err_r):
                os.close(fd)
        code = proc.returncode if ended == "exited" else None
        return RunOutcome(
            code,
            head.data.decode("utf-8", errors="replace"),
            _text_tail(tail.data),
            elapsed(),
            timed_out=ended == "timeout",
            interrupted=ended == "stopped",
            stdout_dropped=head.dropped,
        )


def _pump(
    proc: subprocess.Popen[bytes],
    sinks: dict[int, _Head | _Tail],
    timeout_s: float,
    stop: Callable[[], bool] | None,
) -> str:
    """Drain the pipes until the command exits ("exited"), its time is up ("timeout") or a
    stop is requested ("stopped"). Popen.wait with a timeout polls (sleeps of up to 50 ms,
    about 1 ms a run for a quick command); a pidfd wakes the moment the command exits."""
    deadline = time.monotonic() + timeout_s
    try:
        pidfd: int | None = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    stop_fd = getattr(stop, "fileno", None)
    extra = [fd for fd in (pidfd, stop_fd() if stop_fd else None) if fd is not None]
    try:
        while True:
            if stop is not None and stop():
                return "stopped"
            if pidfd is None and proc.poll() is not None:
                return "exited"
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "timeout"
            wait = remaining if pidfd is not None else min(remaining, _POLL_S)
            ready = select.select([*sinks, *extra], [], [], wait)[0]
            for fd in ready:
                if fd in sinks:
                    chunk = _read(fd)
                    if chunk == b"":  # end of file: every writer closed it
                        sinks.pop(fd)
                    elif chunk:
                        sinks[fd].feed(chunk)
            if pidfd is not None and pidfd in ready:
                proc.wait()
                return "exited"
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _read(fd: int) -> bytes | None:
    """A chunk, b"" at end of file, None when nothing is there just now."""
    try:
        return os.read(fd, _CHUNK)
    except BlockingIOError:
        return None


def _drain(sinks: dict[int, _Head | _Tail]) -> None:
    """What is left in the pipes (the command has exited or been killed): read what is there,
    without waiting for a background child that may still hold them open."""
    for fd, sink in sinks.items():
        while chunk := _read(fd):
            sink.feed(chunk)


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the command's process group, SIGKILL `grace_s` later."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # the group, also when its leader is gone
    proc.wait()


def _text_tail(data: bytearray) -> str:
    text = bytes(data).decode("utf-8", errors="replace").strip()
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
