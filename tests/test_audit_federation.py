"""`acomm audit` over exports of several federated nodes, dispatch receipts, an export given
twice, and exports named by URI."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs  # noqa: F401
import pytest
from audit_traffic import DAY1, day1, day2
from freezegun import freeze_time
from test_federation_routing import linked_pair

from acomm_cli.analytics import audit
from acomm_cli.errors import InvalidState

pytestmark = pytest.mark.cli

T0 = datetime(2026, 3, 1, 12, 0, 0)


@pytest.fixture
def two_nodes(cli, tmp_path):
    """na's alice sends bob (owned by nb) two messages and a query at T0; nb pulls them at
    +2 s, bob reads them at +5 s and answers the query; na pulls the accepted acks (and the
    reply) at +7 s. alice also posts one local message. Both nodes exported at +10 s."""
    with freeze_time(T0) as clock:
        a, b = linked_pair(cli, tmp_path)
        clock.move_to(T0)
        sent = [
            a.ok("send", "--to", "bob", f"job {i}", "--as", "alice")["results"][0] for i in range(2)
        ]
        sent.append(
            a.ok(
                "send",
                "--to",
                "bob",
                "why?",
                "--type",
                "query",
                "--correlation-id",
                "q1",
                "--as",
                "alice",
            )["results"][0]
        )
        a.ok("channel", "create", "notes", "--as", "alice")
        a.ok("channel", "join", "notes", "dave", "--as", "alice")
        a.ok("send", "notes", "a local one", "--as", "alice")
        clock.move_to(T0 + timedelta(seconds=2))
        assert b.ok("fed", "pull")["delivered"] == 3
        clock.move_to(T0 + timedelta(seconds=5))
        assert len(b.ok("receive", "--as", "bob")["messages"]) == 3
        b.ok("respond", "q1", "because", "--as", "bob")
        clock.move_to(T0 + timedelta(seconds=7))
        assert a.ok("fed", "pull")["replies"] == 1
        clock.move_to(T0 + timedelta(seconds=10))
        a.ok("export", str(tmp_path / "export-a"))
        b.ok("export", str(tmp_path / "export-b"))
    return a, b, sent, tmp_path / "export-a", tmp_path / "export-b"


@pytest.mark.spark
def test_two_nodes_audited_together_count_each_federated_message_once(spark, two_nodes, tmp_path):
    a, b, sent, ea, eb = two_nodes
    s = audit.run([str(ea), str(eb)], out=str(tmp_path / "audit"), spark=spark).summary
    # na holds 3 sent + the reply + 1 local, nb the 3 received + bob's response: 5 messages
    assert a.sql("SELECT count(*) FROM messages") == [(5,)]
    assert b.sql("SELECT count(*) FROM messages") == [(4,)]
    assert s["totals"]["messages"] == 5 and s["totals"]["federated_messages"] == 4
    assert sum(v["messages"] for v in s["volume"]) == 5
    assert s["federation"]["nodes"] == ["na", "nb"]
    [pair] = s["federation"]["latency"]
    assert (pair["from_node"], pair["to_node"], pair["messages"], pair["read"]) == (
        "na",
        "nb",
        3,
        3,
    )
    # bob read at +5 s what alice wrote at T0 (one clock here, frozen)
    assert pair["latency_p50_ms"] == pair["latency_p99_ms"] == 5000
    # nb received at +2 s (its clock); the accepted acks were back at +7 s (na's): nb's clock
    # is between 5 s behind and 2 s ahead of na's, a 7 s bound on the latencies
    assert (pair["clock_offset_min_ms"], pair["clock_offset_max_ms"]) == (-5000, 2000)
    assert pair["skew_bound_ms"] == 7000
    assert s["checks"]["federation_unmatched"] == 0

    # one node's export alone: nothing to match against, nothing unmatched
    alone = audit.run([str(ea)], out=str(tmp_path / "audit"), spark=spark).summary
    assert alone["totals"]["messages"] == 5 and alone["checks"]["federation_unmatched"] == 0

    # a message na sent after nb's export: on one side only, the check fails
    with freeze_time(T0 + timedelta(seconds=20)):
        late = a.ok("send", "--to", "bob", "too late", "--as", "alice")["results"][0]
        a.ok("export", str(tmp_path / "export-a2"))
    result = audit.run(
        [str(tmp_path / "export-a2"), str(eb)], out=str(tmp_path / "audit"), spark=spark
    )
    assert result.summary["checks"]["federation_unmatched"] == 1
    import pyarrow.parquet as pq

    [row] = pq.read_table(result.tables["federation_unmatched"]).to_pylist()
    assert (row["global_id"], row["from_node"], row["to_node"], row["problem"]) == (
        late["global_id"],
        "na",
        "nb",
        "not_received",
    )
    with pytest.raises(InvalidState, match="federation_unmatched=1"):
        audit.require_clean(result)


def test_an_export_given_twice_is_refused_before_spark_starts(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        day1(cli, clock)
        cli.ok("export", out)
    r = cli("audit", out, out, "--json")
    assert r.exit_code == 3 and r.error["code"] == "validation_failed"
    assert "given twice (the same directory)" in r.error["message"] and r.error["field"] == "export"
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    r = cli("audit", out, copy, "--json")
    assert r.exit_code == 3 and "count them twice" in r.error["message"]
    assert f"{out} and {copy}" in r.error["message"] and "messages 1..9" in r.error["message"]
    assert not (tmp_path / "audit").exists()  # nothing written


@pytest.mark.spark
def test_dispatch_receipts_are_exported_and_audited_by_status_and_agent(spark, cli, team, tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    for name, code in (("ok.sh", 0), ("no.sh", 1)):
        (agents / name).write_text(f"#!/bin/sh\ncat >/dev/null\nexit {code}\n")
        (agents / name).chmod(0o755)
    cli.ok("channel", "join", "team", "--as", "alice", "carol")
    (team.parent / "config.yaml").write_text(
        json.dumps(
            {
                "agents": {
                    "bob": {"run": str(agents / "ok.sh")},
                    "carol": {"run": str(agents / "no.sh")},
                }
            }
        )
    )
    for i in range(2):
        cli.ok("send", "team", f"task {i}", "--type", "command", "--as", "alice")
    doc = cli.ok("dispatch", "--json").json()
    assert (doc["accepted"], doc["failed"]) == (2, 2)
    out = tmp_path / "export"
    exported = cli.ok("export", out, "--json").json()
    assert exported["datasets"]["receipts"] == 4
    s = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark).summary
    assert s["totals"]["receipts"] == 4
    assert s["receipts"]["by_status"] == {"accepted": 2, "failed": 2}
    agents_seen = {r["agent"]: r for r in s["receipts"]["agents"]}
    assert agents_seen["bob"]["by_status"] == {"accepted": 2}
    assert agents_seen["carol"]["by_status"] == {"failed": 2}
    assert agents_seen["carol"]["runs"] == 2

    # an export made before receipts were exported (an older manifest) still audits
    man = json.loads((out / "manifest.json").read_text())
    man["datasets"] = ["messages", "deliveries", "dead_letters", "channels"]
    man["files"] = [f for f in man["files"] if f["dataset"] in man["datasets"]]
    for key in ("receipts", "federation"):
        man["rows"].pop(key)
    (out / "manifest.json").write_text(json.dumps(man))
    old = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark).summary
    assert old["totals"]["receipts"] == 0 and old["receipts"]["by_status"] == {}
    assert old["totals"]["messages"] == s["totals"]["messages"]


@pytest.fixture
def exported(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        day2(cli, clock, day1(cli, clock))
        cli.ok("export", out)
    return out


def _comparable(doc: dict) -> dict:
    return {
        k: v for k, v in doc.items() if k not in ("spark", "out", "tables", "exports", "report")
    }


@pytest.mark.spark
def test_an_export_named_by_uri_is_read_through_spark(spark, exported, tmp_path):
    """file:// goes the way hdfs:// and s3a:// go: the manifest read by Spark's filesystem
    layer, the same URI for the data."""
    plain = audit.run([str(exported)], out=str(tmp_path / "a"), spark=spark).summary
    uri = audit.run([exported.as_uri()], out=str(tmp_path / "b"), spark=spark).summary
    assert _comparable(uri) == _comparable(plain)
    assert uri["exports"][0]["path"] == exported.as_uri()
    with pytest.raises(audit.NotFound, match="not an acomm export"):
        audit.run([(tmp_path / "nothing").as_uri()], out=str(tmp_path / "c"), spark=spark)


@pytest.mark.spark
def test_a_uri_spark_cannot_read_is_refused_with_a_hint(cli, exported, tmp_path):
    """No hadoop-aws jars here: s3a:// is refused with exit 3 and what a cluster needs, not an
    `internal` error from pyarrow."""
    r = cli(
        "audit",
        "s3a://no-such-bucket/export",
        "--master",
        "local[1]",
        "--out",
        tmp_path / "out",
        "--json",
    )
    assert r.exit_code == 3, r.stderr
    err = r.error
    assert err["code"] == "validation_failed" and err["field"] == "export"
    assert "S3AFileSystem" in err["message"] and "hadoop-aws" in err["message"]
    assert "every executor" in err["message"]


def test_the_federation_dataset_carries_the_senders_routing(two_nodes):
    """The sender's fed_sent row whole: whom it was for, how it was routed, and when an SLA
    incident was raised (none here: every message was processed)."""
    a, _b, sent, ea, _eb = two_nodes
    rows = ds.dataset(ea / "federation", partitioning="hive").to_table().to_pylist()
    emitted = sorted(
        (r["message_id"], r["to_node"], r["to_agent"], r["route_decision"], r["incident_at"])
        for r in rows
        if r["kind"] == "message"
    )
    assert emitted == sorted(
        a.sql("SELECT message_id, to_node, to_agent, route_decision, incident_at FROM fed_sent")
    )
    assert len(emitted) == len(sent)
    assert {(e[1], e[2], e[4]) for e in emitted} == {("nb", "bob", None)}
    assert all(e[3] for e in emitted)
