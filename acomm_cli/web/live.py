"""The live updates: ONE watch of the store for every open page. A browser holds a server-sent
event stream (`/events`); each stream waits on the same `Live` and is told `change` when
another connection has committed. Each page then fetches its own fragment again: the watch's
cost does not grow with the browsers open.

An idle console's CPU is its wake-ups, not its work, so where the platform tells of writes to
the store's files (store/notify.py, Linux inotify) the loop sleeps on that descriptor and
reads `PRAGMA data_version` only on a hint, with a slow poll underneath (SAFETY_S) in case a
commit ever raised none. Without a watch (ACOMM_NO_INOTIFY=1, not Linux) it polls every
`interval_s`, as before."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable

from acomm_cli.store import notify

KEEPALIVE_S = 15.0  # a comment line this often, so proxies and browsers keep the stream
SAFETY_S = 5.0  # with a watch: the poll that stays underneath, so nothing is missed for long
# After a hint with no commit visible yet (the WAL is written before its index says so), look
# again after RECHECK_S, doubling, until RECHECK_FOR_S passes with no further hint: a slow
# fsync on a loaded machine still shows its commit at once, not at the next safety poll.
RECHECK_FOR_S = 0.5


class Live:
    """A generation number, bumped when the store's data_version moves. `interval_s` is the
    poll's interval without a watch, and with one the least time between two bumps (a burst
    of commits is one `change` per interval, as the poll gave)."""

    def __init__(
        self,
        version: Callable[[sqlite3.Connection], int],
        interval_s: float,
        safety_s: float = SAFETY_S,
    ) -> None:
        self.version = version
        self.interval_s = interval_s
        self.safety_s = safety_s
        self.generation = 0
        self.polls = 0  # how many times the store was read, for every client together
        self.watching = False  # True while the loop waits on the store's watch
        self.closed = False  # the server is stopping: every stream ends
        self._changed = asyncio.Event()
        self._last: int | None = None

    async def run(self, conn: sqlite3.Connection) -> None:
        """Follow the store until cancelled. A failed read (a locked or damaged store) is
        skipped and the loop goes on: the next one may succeed."""
        w = notify.watch(getattr(conn, "path", "") or "")
        if w is None:
            await self._poll(conn)
            return
        loop = asyncio.get_running_loop()
        hint = asyncio.Event()

        def readable() -> None:  # drained here: the descriptor is level-triggered
            if w.drain():
                hint.set()

        loop.add_reader(w.fileno(), readable)
        self.watching = True
        try:
            self._check(conn)
            while True:
                hinted = await _wait(hint, self.safety_s)
                hint.clear()
                if self._check(conn):
                    await asyncio.sleep(self.interval_s)  # hints meanwhile stay set
                    continue
                if not hinted:
                    continue  # the safety poll, and nothing new
                # a write with no commit visible yet: re-check until one shows, or until
                # RECHECK_FOR_S passes without another write (a checkpoint, a rollback)
                delay, quiet_until = notify.RECHECK_S, loop.time() + RECHECK_FOR_S
                while loop.time() < quiet_until:
                    if await _wait(hint, delay):
                        hint.clear()
                        delay, quiet_until = notify.RECHECK_S, loop.time() + RECHECK_FOR_S
                    else:
                        delay = min(delay * 2, RECHECK_FOR_S / 4)
                    if self._check(conn):
                        await asyncio.sleep(self.interval_s)
                        break
        finally:
            self.watching = False
            loop.remove_reader(w.fileno())
            w.close()

    async def _poll(self, conn: sqlite3.Connection) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            self._check(conn)
            await asyncio.sleep(max(self.interval_s - (loop.time() - started), 0.0))

    def _check(self, conn: sqlite3.Connection) -> bool:
        """Read data_version; True (and every stream told) when it moved since last read."""
        try:
            now = self.version(conn)
            self.polls += 1
        except sqlite3.Error:
            return False
        moved = self._last is not None and now != self._last
        self._last = now
        if moved:
            self.generation += 1
            self._changed.set()
            self._changed = asyncio.Event()
        return moved

    def close(self) -> None:
        """End every stream (the server stops: it need not wait for the browsers to go)."""
        self.closed = True
        self._changed.set()

    async def wait(self, seen: int, timeout_s: float) -> int:
        """The generation once it differs from `seen`, or `seen` after `timeout_s`."""
        if self.generation != seen:
            return self.generation
        await _wait(self._changed, timeout_s)
        return self.generation

    async def stream(self, keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[str]:
        """One browser's event stream: `change` with the generation, a comment meanwhile."""
        seen = self.generation
        yield "retry: 1000\n\n"
        while not self.closed:
            gen = await self.wait(seen, keepalive_s)
            if self.closed:
                return
            if gen == seen:
                yield ": keep-alive\n\n"
            else:
                seen = gen
                yield f"event: change\ndata: {gen}\n\n"


async def _wait(event: asyncio.Event, timeout_s: float) -> bool:
    """Whether `event` was set within `timeout_s`."""
    try:
        await asyncio.wait_for(event.wait(), timeout_s)
    except TimeoutError:
        return False
    return True
