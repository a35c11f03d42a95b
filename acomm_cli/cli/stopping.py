"""A stop request from SIGINT or SIGTERM, for work that must end cleanly rather than die:
agent dispatch kills the running command's process group and records its receipt, and a
`tick --every` loop stops between deliveries.

The handler records the signal and writes a byte to a pipe: a wait that selects on
`Stop.fileno()` wakes at once (a bare flag would wait for the select's timeout). Work that
checks for a stop only between steps could still run long (a backlog of timers, thousands
of bridge files), so inside `Stop.cuttable()` a stop not honoured within GRACE_S raises
_Interrupted from SIGALRM: the open transaction rolls back, as in any exception, and the
program stops within a second. Dispatch is not cuttable: it stops by itself, killing the
running agent's process group first. A wait for another process's write lock ends at once
on a stop, cuttable or not (`Stop.end_wait`, called between the slices of that wait).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Iterator
from types import FrameType

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from typing import Any

    # What signal.signal takes and returns (typeshed's private `_HANDLER`)
    _Handler = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None


GRACE_S = 0.5  # a stop inside cuttable() that the work has not honoured by then cuts it


class _Interrupted(BaseException):
    """Raised inside `Stop.cuttable()` GRACE_S after a stop request the work did not honour.
    A BaseException, so no `except Exception` on the way swallows it."""


class Stop:
    """Callable like `lambda: stopped` (true once a stop was requested)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        self._cuttable = False
        self._alarm = False  # our SIGALRM handler is installed (the main thread only)

    @contextlib.contextmanager
    def cuttable(self) -> Iterator[None]:
        """Work that may be cut short: a stop requested while it runs (or before) raises
        _Interrupted GRACE_S later if the block has not ended by then."""
        self._cuttable = True
        try:
            if self.signum is not None:
                self._arm()
            yield
        finally:
            self._cuttable = False
            self._disarm()

    def _arm(self) -> None:
        if self._alarm:
            signal.setitimer(signal.ITIMER_REAL, GRACE_S)

    def _disarm(self) -> None:
        if self._alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _on_alarm(self, _signum: int, _frame: FrameType | None) -> None:
        if self._cuttable:
            self._cuttable = False
            raise _Interrupted

    def __call__(self) -> bool:
        return self.signum is not None

    def end_wait(self, _slices: int = 0) -> None:
        """Between the slices of a wait for another process's write lock: a stop requested
        ends it at once (_Interrupted). Nothing of that transaction was written yet."""
        if self.signum is not None:
            raise _Interrupted

    def fileno(self) -> int:
        """Readable once a stop was requested."""
        return self._r

    def request(self, signum: int = signal.SIGTERM, _frame: FrameType | None = None) -> None:
        if self.signum is None:
            self.signum = signum
            if self._cuttable:
                self._arm()
        with contextlib.suppress(OSError):  # full or closed: it is readable already, or moot
            os.write(self._w, b"\0")

    def close(self) -> None:
        for fd in (self._r, self._w):
            with contextlib.suppress(OSError):
                os.close(fd)


@contextlib.contextmanager
def on_signals() -> Iterator[Stop]:
    """SIGINT and SIGTERM request a stop while the block runs; the previous handlers come back
    after it (in-process callers, tests among them, keep their own Ctrl-C)."""
    stop = Stop()
    previous: dict[signal.Signals, _Handler] = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(ValueError):  # not the main thread: no handler, no stop
                previous[sig] = signal.signal(sig, stop.request)
        if previous:
            previous[signal.SIGALRM] = signal.signal(signal.SIGALRM, stop._on_alarm)
            stop._alarm = True
        yield stop
    finally:
        stop._disarm()
        stop._alarm = False
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.close()
