"""uvicorn's server with a quieter main loop, for servers that are mostly idle (`acomm web`,
`gateway serve`).

uvicorn's `Server.main_loop` wakes ten times a second to call `on_tick`, which refreshes the
Date header once a second and returns whether to stop; on an idle server those wake-ups are
most of its CPU. This loop wakes once a second instead and calls `on_tick(0)` each time (the
tick on which uvicorn refreshes the header and notifies), and a SIGINT or SIGTERM (uvicorn's
`handle_exit`, which sets `should_exit`) wakes it at once, so stopping is as prompt as before.
A `should_exit` set by other code than `handle_exit` is seen within TICK_S.

`at_exit`: callables run in the event loop at the first SIGINT/SIGTERM, before uvicorn waits
for the open connections to finish: an application ends its endless responses there (the
console's event streams), so the shutdown need not wait out its grace period.

uvicorn is an extra (`web`, `federation`): it is imported by `server_class()`, never by this
module's import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

TICK_S = 1.0  # uvicorn's Date header has a resolution of one second

_CLASS: list[type] = []


def server_class() -> type:
    """`uvicorn.Server` with the once-a-second main loop (made once, on the first call)."""
    if _CLASS:
        return _CLASS[0]
    import uvicorn

    class QuietServer(uvicorn.Server):
        _loop: asyncio.AbstractEventLoop | None = None
        _exit: asyncio.Event | None = None
        _exiting = False

        def __init__(self, config: Any, at_exit: Sequence[Callable[[], None]] = ()) -> None:
            super().__init__(config)
            self.at_exit = list(at_exit)

        async def main_loop(self) -> None:
            self._loop, self._exit = asyncio.get_running_loop(), asyncio.Event()
            while not await self.on_tick(0):
                try:
                    await asyncio.wait_for(self._exit.wait(), TICK_S)
                except TimeoutError:
                    pass

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            # a signal handler runs between two steps of the loop's own thread, or while
            # it sleeps in select (which the self-pipe of call_soon_threadsafe then wakes)
            loop, event = self._loop, self._exit
            if loop is None or event is None or loop.is_closed():
                return  # before the main loop: uvicorn's own startup sees should_exit
            if not self._exiting:
                self._exiting = True
                for call in self.at_exit:
                    loop.call_soon_threadsafe(call)
            loop.call_soon_threadsafe(event.set)

    _CLASS.append(QuietServer)
    return QuietServer
