"""The agent directory in exports and the audit: `agents/` holds every registered name as it
stands (a snapshot, never a credential), and the audit counts traffic by the kinds of sender
and recipient, names in no directory as `unknown`."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from directory_rows import put
from freezegun import freeze_time

from acomm_cli.analytics import audit
from acomm_cli.analytics.datasets import DATASET_TABLE
from acomm_cli.output import render, render_analytics

pytestmark = pytest.mark.cli

T0 = datetime(2026, 3, 1, 9, 0, 0)
DAY = 86_400_000


def _ms(dt: datetime | None) -> int | None:
    if dt is None:
        return None
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1000)


def at(seconds: float) -> int:
    return _ms(T0 + timedelta(seconds=seconds))  # type: ignore[return-value]


def read(out, dataset: str) -> list[dict]:
    return ds.dataset(out / dataset, format="parquet", partitioning="hive").to_table().to_pylist()


SECRET = "5e1f0c0ffee5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e"


@pytest.fixture
def traffic(cli, make_channel, store, tmp_path):
    """alice (agent) and ann (human) on `team`, with bob (service), and `ops` (an unregistered
    member); alice -> team, ann -> alice directly; eve is retired. The directory's rows are
    written after the traffic, exactly, whatever the commands recorded on the way.

    The store also carries a credential column beside the directory's (as a later schema may):
    the export must never read it."""
    with freeze_time(T0) as clock:
        make_channel("team", "alice", "ann", "bob", "ops")
        for name in ("alice", "ann", "bob"):
            put(store, name, registered_at=at(0))
        clock.tick(10)
        cli.ok("send", "team", "hello", "--as", "alice")  # -> ann, bob, ops
        cli.ok("send", "--to", "alice", "ping", "--as", "ann")  # -> alice
        cli.ok("receive", "--as", "bob")
        clock.tick(50)
        put(store, "alice", kind="agent", team="core", display_name="Alice", registered_at=at(0))
        put(
            store,
            "ann",
            kind="human",
            team="core",
            description="on call",
            accept="contacts",
            is_admin=True,
            registered_at=at(0) - 3 * DAY,
            updated_at=at(5),
            last_seen_at=at(30),
        )
        put(store, "bob", kind="service", registered_at=at(0))
        put(store, "eve", kind="agent", registered_at=at(0) - DAY, retired_at=at(1))
        c = sqlite3.connect(store)
        with c:
            c.execute("DELETE FROM agents WHERE name = 'ops'")
            columns = [r[1] for r in c.execute("PRAGMA table_info(agents)")]
            if "token_sha256" not in columns:
                c.execute("ALTER TABLE agents ADD COLUMN token_sha256 TEXT")
            c.execute("UPDATE agents SET token_sha256 = ? WHERE name = 'alice'", (SECRET,))
        c.close()
        out = tmp_path / "export"
        doc = cli.ok("export", out, "--json").json()
    return out, doc


def test_the_agents_dataset_is_the_directory_as_it_stands_without_credentials(traffic):
    out, doc = traffic
    assert doc["datasets"]["agents"] == 4
    rows = {r["name"]: r for r in read(out, "agents")}
    assert set(rows) == {"alice", "ann", "bob", "eve"}  # retired ones too; `ops` is unregistered
    ann = rows["ann"]
    assert (ann["kind"], ann["team"], ann["description"], ann["accept"], ann["is_admin"]) == (
        "human",
        "core",
        "on call",
        "contacts",
        True,
    )
    assert (_ms(ann["registered_at"]), _ms(ann["updated_at"]), _ms(ann["last_seen_at"])) == (
        at(0) - 3 * DAY,
        at(5),
        at(30),
    )
    assert str(ann["date"]) == "2026-02-26"  # partitioned by the day it was registered
    assert (rows["alice"]["display_name"], rows["alice"]["last_seen_at"]) == ("Alice", None)
    assert _ms(rows["eve"]["retired_at"]) == at(1) and rows["bob"]["kind"] == "service"
    assert {_ms(r["exported_at"]) for r in rows.values()} == {at(60)}
    # exactly the documented columns: the credential beside them is not exported anywhere
    schema = pq.read_schema(next((out / "agents").rglob("*.parquet")))
    declared = next(d for d in DATASET_TABLE if d.name == "agents").columns
    assert [n for n in schema.names if n != "date"] == [n for n, _ in declared]
    for f in out.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    man = json.loads((out / "manifest.json").read_text())
    assert "agents" in man["datasets"] and man["rows"]["agents"] == 4


def test_the_agents_snapshot_is_replaced_by_each_export(cli, traffic, store):
    out, _doc = traffic
    put(store, "zed", kind="service", registered_at=at(100))
    with freeze_time(T0 + timedelta(seconds=120)):
        doc = cli.ok("export", out, "--json").json()
    assert doc["datasets"]["agents"] == 5
    assert sorted(r["name"] for r in read(out, "agents")) == ["alice", "ann", "bob", "eve", "zed"]
    man = json.loads((out / "manifest.json").read_text())
    assert man["rows"]["agents"] == 5  # replaced, not added to


def test_jsonl_exports_carry_the_agents_too(cli, traffic, tmp_path):
    out = tmp_path / "jsonl"
    cli.ok("export", out, "--format", "jsonl")
    lines = [json.loads(x) for f in (out / "agents").rglob("*.jsonl") for x in f.open()]
    assert sorted((r["name"], r["kind"]) for r in lines) == [
        ("alice", "agent"),
        ("ann", "human"),
        ("bob", "service"),
        ("eve", "agent"),
    ]
    assert all("token_sha256" not in r for r in lines)


@pytest.mark.spark
def test_the_audit_counts_traffic_by_kind(spark, traffic, tmp_path, capsys):
    out, _doc = traffic
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    s = result.summary
    assert s["totals"]["agents"] == 4
    pairs = {
        (r["sender_kind"], r["recipient_kind"]): (
            r["messages"],
            r["deliveries"],
            r["read"],
            r["acked"],
        )
        for r in s["kinds"]["pairs"]
    }
    assert pairs == {
        ("agent", "human"): (1, 1, 0, 0),  # alice -> team: ann
        ("agent", "service"): (1, 1, 1, 0),  # bob read it
        ("agent", "unknown"): (1, 1, 0, 0),  # ops is in no directory
        ("human", "agent"): (1, 1, 0, 0),  # ann -> alice
    }
    assert s["kinds"]["by_kind"] == {
        "agent": {"agents": 2, "sent": 1, "received": 1},
        "human": {"agents": 1, "sent": 1, "received": 1},
        "service": {"agents": 1, "sent": 0, "received": 1},
        "unknown": {"agents": 0, "sent": 0, "received": 1},
    }
    table = pq.read_table(result.tables["traffic_by_kind"]).to_pylist()
    assert len(table) == 4
    render_analytics.audit_summary(render.Output(table="csv"), result)
    csv = capsys.readouterr().out
    assert "kinds,agent/human,messages,1" in csv and "kind,unknown,received,1" in csv
