"""The audit's engagement funnel counts every kind of notice the store kept: an inbox file,
a team inbox entry, an MCP client told, a dispatch run; checked against the store."""

from __future__ import annotations

import json

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from conftest import query
from freezegun import freeze_time

from acomm_cli.analytics import audit
from acomm_cli.engine import engagement, opening

pytestmark = pytest.mark.cli


@pytest.fixture
def exported(cli, make_channel, tmp_path, monkeypatch):
    """One channel per way of telling: `files` (bob's inbox files), `crew` (carol@crew's
    team inbox), `runs` (a dispatch run of dave), `mcp` (erin's MCP client told); on
    `files` also a self-action, mirrored to nobody. Returns (store, export directory)."""
    store = make_channel("files", "alice", "bob")
    make_channel("crew", "alice", "carol@crew")
    make_channel("runs", "alice", "dave")
    make_channel("mcp", "alice", "erin")
    run = tmp_path / "ok.sh"
    run.write_text("#!/bin/sh\ncat >/dev/null\n")
    run.chmod(0o755)
    (store.parent / "config.yaml").write_text(json.dumps({"agents": {"dave": {"run": str(run)}}}))
    out = tmp_path / "export"
    with freeze_time("2026-01-01T10:00:00Z"):
        monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(tmp_path / "inbox"))
        cli.ok("send", "files", "f", "--as", "alice")
        cli.ok(
            "send", "files", "q", "--as", "alice",
            "--event-type", "mention.created", "--actor", "bob", "--target", "bob",
        )  # fmt: skip
        monkeypatch.delenv("ACOMM_BRIDGE_INBOX_DIR")
        monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(tmp_path / "teams"))
        cli.ok("send", "crew", "c", "--as", "alice")
        monkeypatch.delenv("ACOMM_BRIDGE_TEAMS_DIR")
        cli.ok("send", "runs", "r", "--as", "alice")
        cli.ok("dispatch")
        told = int(cli.ok("send", "mcp", "m", "--as", "alice").stdout)
        conn = opening.connect(store, create=False)
        assert engagement.told(conn, "erin", [told], "mcp", 1767261600000)
        conn.close()
        cli.ok("receive", "--as", "bob")
        cli.ok("export", str(out))
    return store, out


@pytest.mark.spark
def test_the_funnel_counts_every_notice_the_store_kept(spark, exported, tmp_path):
    store, out = exported
    kept = query(store, "SELECT how, count(*) FROM notifications GROUP BY how ORDER BY how")
    assert [tuple(r) for r in kept] == [
        ("bridge", 1),
        ("dispatch", 1),
        ("mcp", 1),
        ("team_inbox", 1),
    ]
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    funnel = result.summary["engagement"]["funnel"]
    expected = query(
        store,
        "SELECT c.name, coalesce(e.event_type, 'none'), count(*), count(n.recipient),"
        " count(coalesce(d.first_read_at, d.read_at, d.acked_at)) FROM deliveries d"
        " JOIN channels c ON c.id = d.channel_id"
        " LEFT JOIN message_events e ON e.message_id = d.message_id"
        " LEFT JOIN notifications n ON n.message_id = d.message_id"
        " AND n.recipient = d.recipient GROUP BY 1, 2",
    )
    got = [
        (r["channel"], r["event_type"], r["routed"], r["notified"], r["engaged"]) for r in funnel
    ]
    assert sorted(got) == sorted(tuple(r) for r in expected)
    by = {(r["channel"], r["event_type"]): r["notified"] for r in funnel}
    assert by == {
        ("files", "none"): 1,
        ("files", "mention.created"): 0,  # the self-action: no inbox file
        ("crew", "none"): 1,
        ("runs", "none"): 1,
        ("mcp", "none"): 1,
    }
    rows = pq.read_table(result.tables["engagement_funnel"]).to_pylist()
    assert sum(r["notified"] for r in rows) == 4
