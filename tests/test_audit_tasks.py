"""`acomm audit` of tasks and review incidents: the exact numbers of task_traffic.py,
an export made before tasks were exported, and a task between two nodes counted once."""

from __future__ import annotations

import json
from datetime import timedelta

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from freezegun import freeze_time
from task_traffic import T0, build
from test_federation_routing import linked_pair

from acomm_cli.analytics import audit
from acomm_cli.output import render, render_analytics

pytestmark = pytest.mark.cli

TASK_KEYS = (
    "tasks",
    "open",
    "completed",
    "failed",
    "overdue",
    "duration_p50_ms",
    "duration_p90_ms",
    "lateness_p50_ms",
    "lateness_p90_ms",
)


@pytest.fixture
def exported(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(T0) as clock:
        t = build(cli, tmp_path, clock)
        cli.ok("export", out)
    return t, out


def _by_capability(summary: dict) -> dict:
    return {
        (r["capability"], r["task_type"]): tuple(r[k] for k in TASK_KEYS)
        for r in summary["tasks"]["by_capability"]
    }


@pytest.mark.spark
def test_task_latency_and_incidents_have_the_numbers_the_traffic_set_up(
    spark, exported, tmp_path, capsys
):
    _t, out = exported
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    s = result.summary
    assert (s["totals"]["tasks"], s["totals"]["incidents"]) == (6, 4)
    # review: ok 240 s (-360 s), late 480 s (+180 s), failed 120 s (-480 s); stuck and fresh
    # open; late and stuck missed their ETA (fresh's, +11 m, is after the export at +9 m)
    assert _by_capability(s) == {
        ("review", "task"): (5, 2, 2, 1, 2, 240_000, 480_000, -360_000, 180_000),
        (None, "task"): (1, 0, 1, 0, 0, 30_000, 30_000, -30_000, -30_000),
    }
    assert {k: s["tasks"][k] for k in TASK_KEYS[:5]} == {
        "tasks": 6,
        "open": 2,
        "completed": 3,
        "failed": 1,
        "overdue": 2,
    }
    assert s["incidents"]["by_class"] == {
        "eta_breach": 2,
        "execution_error": 1,
        "output_mismatch": 1,
    }
    assert (s["incidents"]["incidents"], s["incidents"]["open"], s["incidents"]["resolved"]) == (
        4,
        3,
        1,
    )
    rows = {r["failure_class"]: r for r in s["incidents"]["by_capability"]}
    assert {
        c: (r["capability"], r["incidents"], r["open"], r["resolved"], r["resolve_p50_ms"])
        for c, r in rows.items()
    } == {
        "eta_breach": ("review", 2, 2, 0, None),
        "execution_error": ("review", 1, 0, 1, 60_000),  # opened at +2 m, resolved at +3 m
        "output_mismatch": ("review", 1, 1, 0, None),
    }
    # no check for tasks: an open or late task is a number to read, not a broken invariant
    assert set(s["checks"]) == {"exactly_once_violations", "unaccounted", "federation_unmatched"}
    table = pq.read_table(result.tables["task_latency"]).to_pylist()
    assert sum(r["tasks"] for r in table) == 6
    assert pq.read_table(result.tables["incidents"]).num_rows == 3

    # piped: a `tasks` and an `incidents` line per row; --json: the summary
    render_analytics.audit_summary(render.Output(), result)
    lines = capsys.readouterr().out.splitlines()
    assert (
        "tasks	review	task	5	2	2	1	2	240000	480000	-360000	180000"
        in lines
    )
    assert (
        "tasks		task	1	0	1	0	0	30000	30000	-30000	-30000" in lines
    )
    assert "incidents	execution_error	review	1	0	1	60000" in lines
    assert "total	tasks	6" in lines and "total	incidents	4" in lines
    render_analytics.audit_summary(render.Output(json=True), result)
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(s, default=str))


@pytest.mark.spark
def test_an_export_without_tasks_in_its_manifest_still_audits(spark, exported, tmp_path):
    _t, out = exported
    man = json.loads((out / "manifest.json").read_text())
    new = ("tasks", "task_events", "incidents")
    man["datasets"] = [d for d in man["datasets"] if d not in new]
    man["files"] = [f for f in man["files"] if f["dataset"] not in new]
    for key in new:
        man["rows"].pop(key)
    (out / "manifest.json").write_text(json.dumps(man))
    s = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark).summary
    assert (s["totals"]["tasks"], s["totals"]["incidents"]) == (0, 0)
    assert s["tasks"] == {
        "tasks": 0,
        "open": 0,
        "completed": 0,
        "failed": 0,
        "overdue": 0,
        "by_capability": [],
    }
    assert s["incidents"] == {
        "incidents": 0,
        "open": 0,
        "resolved": 0,
        "by_class": {},
        "by_capability": [],
    }
    assert s["totals"]["messages"] > 0 and s["checks"]["unaccounted"] == 0


@pytest.mark.spark
def test_a_task_between_two_nodes_is_counted_once_as_the_copy_that_knows_most(spark, cli, tmp_path):
    """alice on na delegates to bob on nb; bob accepts (ETA 10 m) and completes at +7 s. na's
    export is made before na pulls the completion: its copy says `accepted`, nb's
    `completed`; audited together the task is one, completed."""
    with freeze_time(T0) as clock:
        a, b = linked_pair(cli, tmp_path)
        clock.move_to(T0)
        gid = a.ok("task", "create", "--to", "bob", "run the tests", "--as", "alice")["global_id"]
        clock.move_to(T0 + timedelta(seconds=2))
        b.ok("fed", "pull")
        clock.move_to(T0 + timedelta(seconds=3))
        b.ok("task", "accept", gid, "--eta", "10m", "--as", "bob")
        clock.move_to(T0 + timedelta(seconds=4))
        a.ok("fed", "pull")
        clock.move_to(T0 + timedelta(seconds=7))
        b.ok("task", "complete", gid, "all pass", "--as", "bob")
        clock.move_to(T0 + timedelta(seconds=8))
        a.ok("export", str(tmp_path / "export-a"))
        b.ok("export", str(tmp_path / "export-b"))
    assert a.sql("SELECT state FROM tasks") == [("accepted",)]
    assert b.sql("SELECT state FROM tasks") == [("completed",)]
    both = audit.run(
        [str(tmp_path / "export-a"), str(tmp_path / "export-b")],
        out=str(tmp_path / "audit"),
        spark=spark,
    ).summary
    assert both["totals"]["tasks"] == 1
    # created at T0 (alice's clock, carried to nb), finished at +7 s, ETA +3 s + 10 m
    assert _by_capability(both) == {
        (None, "task"): (1, 0, 1, 0, 0, 7_000, 7_000, -596_000, -596_000)
    }
    for one in ("export-a", "export-b"):  # each node alone has its own copy
        alone = audit.run([str(tmp_path / one)], out=str(tmp_path / "audit"), spark=spark).summary
        assert alone["totals"]["tasks"] == 1
    assert alone["tasks"]["completed"] == 1  # nb's copy
