"""Output that hands messages over: `receive` and `query --wait` print what they are about to
mark read, and the engine marks it read only once that output has left the process.

The engine calls these emitters inside the transaction that marks the messages read (see
`inbox.receive`): a write that fails here raises OutputFailed (exit 141) and the marks roll
back, so a reader that closes the pipe early, or a full disk, loses nothing. A kill after the
flush and before the commit hands the messages out again: at least once, never zero times.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator

from acomm_cli.errors import OutputFailed
from acomm_cli.model import Message, QueryResult
from acomm_cli.output import render, render_messages
from acomm_cli.output.render import Output

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import TextIO


class _Stalled(OutputFailed):
    """The reader did not take the output in time (raised from SIGALRM). An OutputFailed
    itself, so that an alarm landing just after the flush still exits 141 and rolls back."""

    def __init__(self) -> None:
        super().__init__(
            "could not write to stdout (the reader did not take it within the "
            "busy timeout); none were marked read"
        )


def _plural(n: int) -> str:
    return f"{n} message{'' if n == 1 else 's'}"


@contextlib.contextmanager
def handing_over(count: int, stall_s: float | None = None) -> Iterator[None]:
    """Output that hands messages over (`receive`, `query --wait`): what the block writes is
    also flushed out of the process inside it, because the engine runs it inside the
    transaction that marks those messages read. Any failure becomes OutputFailed (exit 141),
    which rolls the marks back: a closed pipe (EPIPE), EIO or ENOSPC on a redirected file, a
    closed stdout, or a reader that took longer than `stall_s` seconds (the busy timeout:
    the write lock is held meanwhile and other writers wait at most that long for it)."""

    def failed(why: str) -> OutputFailed:
        return OutputFailed(
            f"could not write {_plural(count)} to stdout ({why}); none were marked read",
            count=count,
        )

    stream = sys.stdout
    if stream is None or stream.closed:
        raise failed("stdout is closed")
    buffered = _buffered(stream)
    if buffered is not None:
        sys.stdout = buffered
    cancel = _alarm(stall_s)
    try:
        yield
        sys.stdout.flush()
    except _Stalled:
        silence_stdout()  # or exiting would flush into the stalled pipe and block for ever
        raise failed(
            f"the reader did not take it within {stall_s:g}s, the busy timeout; "
            "the store was locked meanwhile"
        ) from None
    except (OSError, ValueError) as exc:  # ValueError: a stream closed under us
        silence_stdout()
        why = (
            "the reader closed the pipe"
            if isinstance(exc, BrokenPipeError)
            else "stdout is closed"
            if isinstance(exc, ValueError)
            else exc.strerror or str(exc)
        )
        raise failed(why) from None
    finally:
        cancel()
        sys.stdout = stream


def _buffered(stream: TextIO) -> TextIO | None:
    """A buffered stand-in for an unbuffered stdout (python -u, PYTHONUNBUFFERED): there a
    write is one write(2) whose short count TextIOWrapper ignores, so a reader closing the
    pipe in the middle of a large write would go unnoticed and its messages count as read.
    A BufferedWriter writes until all is out or raises. None when stdout is buffered already
    or not a file at all (tests capture it)."""
    raw = getattr(stream, "buffer", None)
    if not isinstance(raw, io.FileIO):
        return None
    return io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(raw.fileno(), "w", closefd=False)),
        encoding=stream.encoding,
        errors=stream.errors,
    )


def _alarm(seconds: float | None) -> Callable[[], None]:
    """Raise _Stalled after `seconds` (SIGALRM interrupts a write blocked on a full pipe);
    returns the cancel. Only the main thread receives signals: elsewhere, no bound."""
    import signal
    import threading

    if not seconds or threading.current_thread() is not threading.main_thread():
        return lambda: None

    def on_alarm(_signum: int, _frame: object) -> None:
        raise _Stalled

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)

    def cancel() -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    return cancel


def silence_stdout() -> None:
    """Point stdout at /dev/null once it failed, so that Python's flush at exit neither
    complains ("Exception ignored ... BrokenPipeError") nor blocks (Python docs, signal:
    "Note on SIGPIPE")."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # None, closed, or not a file (tests)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def inbox_output(
    out: Output,
    *,
    body: bool,
    follow: bool,
    peek: bool,
    stall_s: float | None,
    stop: Callable[[], bool] | None = None,
) -> Callable[[QueryResult], None]:
    """What `receive` hands its results to (the engine calls it, see inbox.receive). With
    --peek nothing is marked read, so output fails as any read-only command's does.

    With --follow (not --peek) the engine calls it outside any transaction, one message at a
    time, and marks the message read when it returns (waiting.follow): so it also waits
    until the reader has taken the message (`taken`), or `stop()`. No lock is held, so
    nothing bounds that wait but the reader."""
    show = render_messages.follow if follow else render_messages.messages
    now = [out]  # --follow --csv: the header row with the first batch only

    def emit(batch: QueryResult) -> None:
        if peek:
            show(now[0], batch, body=body)
            now[0] = render.headed(out)
            return
        with handing_over(len(batch.messages), None if follow else stall_s):
            show(now[0], batch, body=body)
        now[0] = render.headed(out)
        if follow:
            taken(len(batch.messages), stop or (lambda: False))

    return emit


def taken(count: int, stop: Callable[[], bool]) -> None:
    """Return once the reader has read everything written to stdout so far, when stdout is a
    pipe (a terminal or a file takes what is written at once); raise OutputFailed if the
    reader closes the pipe first, as `head -1` does after its line. Without this, a write
    lands in the pipe's buffer (64 KiB) whether or not anyone will ever read it, and
    `receive --follow | head -1` would mark read every message that fitted there.
    Returns early on `stop()` (the caller then marks nothing)."""
    import select
    import stat

    try:
        fd = sys.stdout.fileno()
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
    except (AttributeError, OSError, ValueError):  # not a file (tests capture it), closed
        return
    import array
    import fcntl
    import termios

    poller = select.poll()
    poller.register(fd, 0)  # POLLERR (no reader left) and POLLHUP are always reported
    unread = array.array("i", [0])
    # No event says "the pipe is empty": look again after 0, 1, 2, 5, 10, then every 20 ms
    # (a reader at its read(2) takes the message at once; a busy one takes its time)
    for pause in _pauses():
        if stop():
            return
        closed = any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(pause))
        fcntl.ioctl(fd, termios.FIONREAD, unread, True)  # bytes still in the pipe
        if unread[0] == 0:  # taken, even if the reader closed the pipe right after
            return
        if closed:
            silence_stdout()
            raise OutputFailed(
                f"could not write {_plural(count)} to stdout (the reader closed "
                "the pipe); none were marked read",
                count=count,
            )


def reader_gone() -> bool:
    """stdout is a pipe whose reader has closed it. A follower waiting for new messages asks
    this between looks at the store, so that `receive --follow | head -1` ends once head has
    gone, instead of at the next message's write."""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (tests capture it), closed
        return False
    poller = select.poll()
    poller.register(fd, 0)
    return any(ev & select.POLLERR for _, ev in poller.poll(0))


def _pauses() -> Iterator[int]:
    yield from (0, 1, 2, 5, 10)
    while True:
        yield 20


def answer_output(out: Output, stall_s: float | None) -> Callable[[Message], None]:
    """What `query --wait` hands its response to, before the read mark commits."""

    def emit(m: Message) -> None:
        with handing_over(1, stall_s):
            render.ok(out, render_messages.message_doc(m), m.content.rstrip("\n"))

    return emit
