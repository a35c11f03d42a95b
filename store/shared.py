"""SQL fragments several store modules share: the deliveries not yet done with, the
channels token, the id an INSERT assigned."""

from __future__ import annotations

import sqlite3

# Deliveries not yet done with, written exactly as the WHERE clause of the partial index
# `deliveries_active` (m015), so that `INDEXED BY deliveries_active` can use it. A chain of `=`,
# not `state IN (...)`: SQLite evaluates an IN list in an index's WHERE through a temporary
# b-tree built for every row an UPDATE changes (DECISIONS.md "Issue 17, receive's indexes").
ACTIVE = ("(state = 'queued' OR state = 'waiting' OR state = 'unread'"
          " OR (tracked = 1 AND state = 'read'))")



# The same, on the alias `d`: what lets a query of an agent's deliveries in several states
# use deliveries_agent_active (`state IN (...)` alone does not imply the index's WHERE).
ACTIVE_D = ACTIVE.replace("state", "d.state").replace("tracked", "d.tracked")



CHANNELS_TOKEN = "(SELECT token FROM channels_version WHERE id = 1)"



def inserted(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cur` assigned (sqlite3 types it `int | None`: None
    only before any INSERT)."""
    rowid = cur.lastrowid
    assert rowid is not None
    return rowid

