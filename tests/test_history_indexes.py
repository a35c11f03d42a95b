"""Work that scales with history reads indexes, not every delivery: `stats` counts the
worker pools' backlogs from the pool rows alone (m030's deliveries_pool)."""

from __future__ import annotations

import pytest

from acomm_cli.engine import opening
from acomm_cli.store import queues

pytestmark = pytest.mark.unit


def test_the_pool_backlog_of_stats_reads_the_pool_index(store):
    conn = opening.connect(store, create=False)
    try:
        seen: list[str] = []
        conn.set_trace_callback(seen.append)
        queues.pool_depth(conn)
        conn.set_trace_callback(None)
        (sql,) = seen
        plan = [r[-1] for r in conn.execute("EXPLAIN QUERY PLAN " + sql)]
    finally:
        conn.close()
    assert any("USING INDEX deliveries_pool" in step for step in plan), plan
    assert not any(step == "SCAN deliveries" for step in plan), plan
