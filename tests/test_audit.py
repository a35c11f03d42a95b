"""`acomm audit` on local Spark: the exact numbers the traffic of audit_traffic.py set up.

Every Spark test shares one session (conftest's `spark`, started once, local[2]); only the
test of a quiet terminal starts its own, in a subprocess, as a user would."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from audit_traffic import BACKLOG_AGE_MS, DAY1, day1, day2
from conftest import query, run
from freezegun import freeze_time

from acomm_cli.analytics import audit
from acomm_cli.errors import InvalidState
from acomm_cli.output import render, render_analytics

pytestmark = pytest.mark.cli


@pytest.fixture
def exported(cli, store, tmp_path):
    """The two days of traffic, exported; returns (traffic, export directory)."""
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        t = day2(cli, clock, day1(cli, clock))
        cli.ok("export", out)
    return t, out


def _by(rows, **key):
    return next(r for r in rows if all(r[k] == v for k, v in key.items()))


@pytest.mark.spark
def test_audit_reports_the_numbers_the_traffic_set_up(spark, store, exported, tmp_path, capsys):
    t, out = exported
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    s = result.summary
    assert s["totals"] == {
        "messages": query(store, "SELECT count(*) FROM messages")[0][0],
        "deliveries": query(store, "SELECT count(*) FROM deliveries")[0][0],
        "dead_letters": 1,
        "channels": 4,
        "receipts": 0,
        "federated_messages": 0,
        "tasks": 0,
        "incidents": 0,
        "agents": query(store, "SELECT count(*) FROM agents")[0][0],
    }
    assert s["dead_letters_by_reason"] == {"max_retries_exceeded": 1}
    # two chat messages carry an event; alice liking her own message is a self-action
    assert s["events"]["by_type"] == [
        {
            "event_type": "like.created",
            "events": 1,
            "targeted": 1,
            "to_agents": 1,
            "to_humans": 0,
            "self_actions": 1,
            "threads": 1,
        },
        {
            "event_type": "mention.created",
            "events": 1,
            "targeted": 1,
            "to_agents": 1,
            "to_humans": 0,
            "self_actions": 0,
            "threads": 1,
        },
    ]
    # the funnel per channel and event type, as the store has it (no dispatch runs here:
    # nothing is notified)
    expected = query(
        store,
        "SELECT c.name, coalesce(e.event_type, 'none'), count(*),"
        " count(coalesce(d.first_read_at, d.read_at, d.acked_at)) FROM deliveries d"
        " JOIN channels c ON c.id = d.channel_id"
        " LEFT JOIN message_events e ON e.message_id = d.message_id GROUP BY 1, 2",
    )
    funnel = s["engagement"]["funnel"]
    assert sorted((r["channel"], r["event_type"], r["routed"], r["engaged"]) for r in funnel) == (
        sorted(tuple(row) for row in expected)
    )
    assert {r["notified"] for r in funnel} == {0}
    assert {"none", "mention.created", "like.created"} <= {r["event_type"] for r in funnel}
    assert s["checks"] == {
        "exactly_once_violations": 0,
        "unaccounted": 0,
        "federation_unmatched": 0,
    }

    chat = _by(s["latency"]["channels"], channel="chat")
    assert (chat["deliveries"], chat["read"], chat["acked"]) == (6, 3, 0)
    assert chat["read_p50_ms"] == chat["read_p99_ms"] == 5000  # bob read all three at +5 s
    assert chat["ack_p50_ms"] is None
    executor = _by(s["latency"]["agents"], agent="executor")
    # acks 20 s (deploy), 20 s (once), 100 s (the late one) after delivery
    assert (executor["ack_p50_ms"], executor["ack_p99_ms"]) == (20_000, 100_000)

    work = _by(s["reliability"], channel="work")
    assert work["tracked"] == 4  # deploy, dead, late, backlog
    assert (work["retried"], work["retries"], work["late_acks"]) == (1, 1, 1)
    assert work["retry_rate"] == 0.25
    assert (work["backlog"], work["backlog_oldest_age_ms"]) == (1, BACKLOG_AGE_MS)
    assert s["late_acks"] == 1 and s["backlog"] == {
        "deliveries": 1,
        "oldest_age_ms": BACKLOG_AGE_MS,
    }
    assert s["retries"] == {"tracked": 5, "retried": 1, "retries": 1, "retry_rate": 0.2}

    volume = _by(s["volume"], channel="work")
    assert volume["days"] == 2
    assert volume["by_type"] == {"command": 1, "text": 3, "acknowledgment": 2}
    assert volume["by_priority"] == {"normal": 5, "high": 1}
    assert _by(s["volume"], channel="chat")["by_type"] == {"text": 3}

    # every table is Parquet under --out
    assert set(result.tables) == set(audit.QUERIES)
    late = pq.read_table(result.tables["late_acks"]).to_pylist()
    assert [(r["message_id"], r["ack_latency_ms"]) for r in late] == [(t.late, 100_000)]
    vol = pq.read_table(result.tables["volume"]).to_pylist()
    assert sum(r["messages"] for r in vol) == s["totals"]["messages"]
    assert {str(r["date"]) for r in vol} == {"2026-01-01", "2026-01-02"}
    assert (
        pq.read_table(result.tables["dead_letters"]).to_pylist()[0]["reason"]
        == "max_retries_exceeded"
    )

    # piped: one tab-separated line per row, led by its kind; --json: the summary
    render_analytics.audit_summary(render.Output(), result)
    lines = capsys.readouterr().out.splitlines()
    assert "dead_letters\tmax_retries_exceeded\t1" in lines
    assert "check\tunaccounted\t0\tok" in lines
    assert f"total\tmessages\t{s['totals']['messages']}" in lines
    assert any(
        line.startswith("latency_channel\t") and "\tchat\t3\t5000\t" in line for line in lines
    )
    render_analytics.audit_summary(render.Output(json=True), result)
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(s, default=str))
    # --csv: long rows kind, subject, metric, value under a header row
    render_analytics.audit_summary(render.Output(table="csv"), result)
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[0] == ["kind", "subject", "metric", "value"]
    assert ["dead_letters", "max_retries_exceeded", "dead_letters", "1"] in rows
    assert ["check", "unaccounted", "count", "0"] in rows
    assert any(
        r[0] == "latency_channel"
        and r[1].endswith("/chat")
        and r[2] == "read_p50_ms"
        and float(r[3]) == 5000
        for r in rows
    )


@pytest.mark.spark
def test_two_stores_audited_together_and_broken_exports_fail_the_checks(
    spark, cli, store, exported, tmp_path
):
    _, out = exported
    other_store = tmp_path / "other" / "store.acomm"
    other = tmp_path / "other-export"
    env = {"ACOMM_STORE": str(other_store)}
    with freeze_time(DAY1) as clock:
        cli("init", strict=True, env=env)
        day1(cli, clock, env=env)
        cli("export", other, strict=True, env=env)
    s = audit.run([str(out), str(other)], out=str(tmp_path / "audit"), spark=spark).summary
    ids = {e["store_id"] for e in s["exports"]}
    assert len(ids) == 2
    assert s["totals"]["dead_letters"] == 2
    assert s["dead_letters_by_reason"] == {"max_retries_exceeded": 2}
    assert s["totals"]["channels"] == 8
    assert {v["store_id"] for v in s["volume"] if v["channel"] == "chat"} == ids
    assert s["checks"] == {
        "exactly_once_violations": 0,
        "unaccounted": 0,
        "federation_unmatched": 0,
    }

    # Break the second export: list its deliveries twice (a duplicate exactly-once delivery)
    # and drop its messages (deliveries and dead letters of missing messages).
    man = json.loads((other / "manifest.json").read_text())
    twice = []
    for f in man["files"]:
        if f["dataset"] == "deliveries":
            copy = f["path"].replace("part-", "part-copy-")
            shutil.copyfile(other / f["path"], other / copy)
            twice.append({**f, "path": copy})
    man["files"] = [f for f in man["files"] if f["dataset"] != "messages"] + twice
    (other / "manifest.json").write_text(json.dumps(man))
    result = audit.run([str(out), str(other)], out=str(tmp_path / "audit"), spark=spark)
    checks = result.summary["checks"]
    deliveries_other = sum(f["rows"] for f in twice)
    assert checks["exactly_once_violations"] >= 1
    assert checks["unaccounted"] == 2 * deliveries_other + 1  # + the dead letter
    with pytest.raises(InvalidState, match="audit checks failed"):
        audit.require_clean(result)

    # an unreadable file: a one-line error naming it, not a Java stack trace
    victim = next(f["path"] for f in man["files"] if f["dataset"] == "deliveries")
    (other / victim).write_bytes(b"not parquet")
    with pytest.raises(audit.SparkError, match="FAILED_READ_FILE") as caught:
        audit.run([str(other)], out=str(tmp_path / "audit"), spark=spark)
    assert "\n" not in caught.value.message and victim in caught.value.message


def test_audit_command_refuses_bad_arguments_before_starting_spark(cli, exported, tmp_path):
    _, out = exported
    r = cli("audit", tmp_path / "nothing", "--json")
    assert r.exit_code == 4 and "not an acomm export" in r.error["message"]
    assert cli("audit", out, "--conf", "novalue").exit_code == 2


def test_missing_java_is_a_clear_error(cli, exported, tmp_path, monkeypatch):
    _, out = exported
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    r = cli("audit", out, "--json")
    assert r.exit_code == 8
    assert r.error["code"] == "spark_unavailable" and "Java 17" in r.error["message"]


@pytest.mark.spark
def test_spark_noise_never_reaches_the_terminal(spark, exported, tmp_path):
    """A real process with its own JVM: stderr stays empty, stdout holds the JSON summary."""
    _, out = exported
    p = run("audit", out, "--master", "local[1]", "--out", tmp_path / "b", "--json", timeout=240)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    doc = json.loads(p.stdout)
    assert doc["checks"] == {
        "exactly_once_violations": 0,
        "unaccounted": 0,
        "federation_unmatched": 0,
    }
    assert doc["dead_letters_by_reason"] == {"max_retries_exceeded": 1}
    assert doc["out"] == str(tmp_path / "b") and doc["tables"]["volume"].startswith(doc["out"])
    assert doc["spark"]["master"] == "local[1]" and doc["spark"]["startup_s"] > 0


def test_spark_master_from_the_environment_and_the_config_file(cli, store):
    def master(**env):
        doc = cli("config", "show", "--json", strict=True, env=env).json()
        return next(
            (s["value"], s["source"]) for s in doc["settings"] if s["key"] == "spark.master"
        )

    assert master() == ("local[*]", "default")
    cfg = store.parent / "config.yaml"
    cfg.write_text("spark:\n  master: spark://head:7077\n")
    assert master() == ("spark://head:7077", f"file ({cfg})")
    assert master(ACOMM_SPARK_MASTER="local[3]") == ("local[3]", "environment (ACOMM_SPARK_MASTER)")


def test_the_default_out_is_named_after_the_exports_so_two_never_collide(tmp_path):
    """Without --out, each export gets its own report folder: two in one folder never
    share `audit/`."""
    a, b = str(tmp_path / "x" / "a"), str(tmp_path / "x" / "b")
    assert audit.default_out([a]) == str(tmp_path / "x" / "a.audit")
    assert audit.default_out([b]) == str(tmp_path / "x" / "b.audit")
    assert audit.default_out([a, b]) == str(tmp_path / "x" / "a+b.audit")
    assert audit.default_out([a + "/"]) == audit.default_out([a])
    assert (
        audit.default_out(["s3a://bucket/exp/a", "s3a://bucket/exp/b/"])
        == "s3a://bucket/exp/a+b.audit"
    )
    many = [str(tmp_path / "x" / f"export-{i:03}") for i in range(20)]
    long = audit.default_out(many)
    assert long.startswith(str(tmp_path / "x" / "export-000+19-more-")) and len(long) < 200
    assert long != audit.default_out(many[:-1] + [many[0] + "z"])


@pytest.mark.spark
def test_audit_without_out_writes_beside_the_export_under_its_own_name(
    spark, cli, exported, tmp_path
):
    """Two exports in one folder, each audited without --out: two table directories, and
    the README's and the help's `./export.audit/`."""
    _, out = exported
    twin = tmp_path / "twin"
    shutil.copytree(out, twin)
    one = cli.ok("audit", out, "--json").json()
    two = cli.ok("audit", twin, "--json").json()
    assert one["out"] == str(tmp_path / "export.audit")
    assert two["out"] == str(tmp_path / "twin.audit")
    assert pq.read_table(one["tables"]["volume"]).num_rows > 0
    assert pq.read_table(two["tables"]["volume"]).num_rows > 0
    assert not (tmp_path / "audit").exists()
