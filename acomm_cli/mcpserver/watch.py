"""When the agent's inbox changed: `PRAGMA data_version` polled as `receive --follow` waits
(engine/waiting.py), then the unread deliveries compared, so a commit elsewhere in the store
(another agent's traffic) wakes the poll but raises no notification."""

from __future__ import annotations

import sqlite3

from acomm_cli import clock
from acomm_cli.model import Limits, MessageFilter
from acomm_cli.store import reads, stats, timers
from acomm_cli.store.maintenance import snapshot

POLL_S = 0.2  # a shared-memory read; five a second costs nothing and feels immediate
_SIGNATURE = MessageFilter(limit=200)

Signature = tuple[int, tuple[int, ...]]


class InboxWatch:
    """One read connection of its own; `changed()` is cheap until another process commits."""

    def __init__(self, conn: sqlite3.Connection, agent: str, limits: Limits | None = None) -> None:
        self.conn, self.agent, self.limits = conn, agent, limits
        self.version = stats.data_version(conn)
        self.signature = self._signature()

    def _signature(self) -> Signature:
        """The unread count and the first unread ids, in one read snapshot."""
        with snapshot(self.conn):  # one read transaction: the count and the ids agree
            msgs, total, _ = reads.inbox(self.conn, self.agent, _SIGNATURE)
        return total, tuple(m.id for m in msgs)

    def _due(self) -> bool:
        """A timer of the agent's has fallen due (a scheduled send, a redelivery): applying
        it is what the next `receive` would do first, and it changes the inbox."""
        at = timers.next_timer_of(self.conn, self.agent)
        if at is None or at > clock.now_ms():
            return False
        from acomm_cli.engine.timers import receive_due

        receive_due(  # a schedule's occurrence it sends respects the configured limits
            self.conn,
            self.agent,
            MessageFilter(limit=1),
            clock.now_ms(),
            peek=True,
            limits=self.limits,
        )
        return True

    def changed(self) -> bool:
        """Whether the unread inbox differs from the last time this said so."""
        version = stats.data_version(self.conn)
        if version == self.version and not self._due():
            return False
        self.version = stats.data_version(self.conn)
        signature = self._signature()
        if signature == self.signature:
            return False
        self.signature = signature
        return True
