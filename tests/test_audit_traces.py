"""The audit's `traces` table: one row per trace, its hops, nodes, agents and end-to-end
time, and how much of it the dispatch runs took."""

from __future__ import annotations

from datetime import datetime

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from freezegun import freeze_time

from acomm_cli.analytics import audit

pytestmark = pytest.mark.cli

T0 = datetime(2026, 1, 1, 10, 0, 0)


@pytest.fixture
def exported(cli, team, tmp_path):
    """Trace `t-q`: alice's query, bob's response 3 s later, alice's ack of it 1 s after
    that; trace `t-solo`: one message nobody answered."""
    out = tmp_path / "export"
    with freeze_time(T0) as clock:
        corr = cli.ok("query", "team", "size?", "--as", "alice").stdout.strip()
        cli.ok("messages", "--json")
        clock.tick(3)
        cli.ok("respond", corr, "42", "--as", "bob")
        clock.tick(1)
        [answer] = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
        cli.ok("ack", str(answer["id"]), "--status", "completed", "--as", "alice")
        cli.ok("send", "team", "hello", "--as", "alice", "--trace-id", "t-solo")
        trace = cli.ok("thread", corr, "--json").json()["messages"][0]["trace_id"]
        cli.ok("export", str(out))
    return trace, out


@pytest.mark.spark
def test_the_traces_table_has_one_row_per_trace(spark, exported, tmp_path):
    trace, out = exported
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    rows = {r["trace_id"]: r for r in pq.read_table(result.tables["traces"]).to_pylist()}
    assert set(rows) == {trace, "t-solo"}
    q = rows[trace]
    # query, response, and the ack of the response: three messages, two agents, 4 s
    assert (q["messages"], q["hops"], q["runs"], q["nodes"], q["agents"]) == (3, 3, 0, 1, 2)
    assert (q["end_to_end_ms"], q["run_ms"], q["wait_ms"]) == (4000, 0, 4000)
    solo = rows["t-solo"]
    assert (solo["messages"], solo["hops"], solo["end_to_end_ms"]) == (1, 1, 0)
