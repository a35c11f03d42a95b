"""A stop request from SIGINT or SIGTERM, for work that must end cleanly rather than die:
agent dispatch kills the running command's process group and records its receipt, and a
`tick --every` loop stops between deliveries.

The handler only records the signal and writes a byte to a pipe: a wait that selects on
`Stop.fileno()` wakes at once (a bare flag would wait for the select's timeout), and nothing
is ever raised in the middle of a write transaction.
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


class Stop:
    """Callable like `lambda: stopped` (true once a stop was requested)."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)

    def __call__(self) -> bool:
        return self.signum is not None

    def fileno(self) -> int:
        """Readable once a stop was requested."""
        return self._r

    def request(self, signum: int = signal.SIGTERM, _frame: FrameType | None = None) -> None:
        if self.signum is None:
            self.signum = signum
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
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop.close()
