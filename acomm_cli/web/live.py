"""The live updates: ONE poll of `PRAGMA data_version` for every open page. A browser holds
a server-sent event stream (`/events`); each stream waits on the same `Live` and is told
`change` when another connection has committed. Each page then fetches its own fragment
again: the poll's cost does not grow with the browsers open."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable

KEEPALIVE_S = 15.0  # a comment line this often, so proxies and browsers keep the stream


class Live:
    """A generation number, bumped when the store's data_version moves."""

    def __init__(self, version: Callable[[sqlite3.Connection], int], interval_s: float) -> None:
        self.version = version
        self.interval_s = interval_s
        self.generation = 0
        self.polls = 0  # how many times the store was polled, for every client together
        self._changed = asyncio.Event()

    async def run(self, conn: sqlite3.Connection) -> None:
        """Poll until cancelled. A failed poll (a locked or damaged store) is skipped and the
        loop goes on: the next one may succeed."""
        last: int | None = None
        while True:
            started = asyncio.get_running_loop().time()
            now: int | None
            try:
                now = self.version(conn)
                self.polls += 1
            except sqlite3.Error:
                now = last
            if last is not None and now != last:
                self.generation += 1
                self._changed.set()
                self._changed = asyncio.Event()
            last = now
            spent = asyncio.get_running_loop().time() - started
            await asyncio.sleep(max(self.interval_s - spent, 0.0))

    async def wait(self, seen: int, timeout_s: float) -> int:
        """The generation once it differs from `seen`, or `seen` after `timeout_s`."""
        if self.generation != seen:
            return self.generation
        try:
            await asyncio.wait_for(self._changed.wait(), timeout_s)
        except TimeoutError:
            pass
        return self.generation

    async def stream(self, keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[str]:
        """One browser's event stream: `change` with the generation, a comment meanwhile."""
        seen = self.generation
        yield "retry: 1000\n\n"
        while True:
            gen = await self.wait(seen, keepalive_s)
            if gen == seen:
                yield ": keep-alive\n\n"
            else:
                seen = gen
                yield f"event: change\ndata: {gen}\n\n"
