"""`acomm export` of tasks, their history and review incidents: the rows read back
with pyarrow against the store, an open task keeping its chunk unsettled, and the snapshot of
incidents replaced by each export."""

from __future__ import annotations

import json
from datetime import UTC, timedelta

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs  # noqa: F401
import pytest
from conftest import query
from freezegun import freeze_time
from task_traffic import EXPORT, T0, build

pytestmark = pytest.mark.cli


def _ms(dt) -> int | None:
    if dt is None:
        return None
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1000)


def _at(**delta: float) -> int:
    return _ms(T0 + timedelta(**delta))  # type: ignore[return-value]


def read(out, dataset: str) -> list[dict]:
    return ds.dataset(out / dataset, format="parquet", partitioning="hive").to_table().to_pylist()


@pytest.fixture
def tasks(cli, store, tmp_path):
    with freeze_time(T0) as clock:
        t = build(cli, tmp_path, clock)
        yield t, clock


def test_tasks_history_and_incidents_are_exported_as_they_stand(cli, store, tasks, tmp_path):
    t, _clock = tasks
    out = tmp_path / "export"
    doc = cli.ok("export", out, "--json").json()
    n_events = query(store, "SELECT count(*) FROM task_events")[0][0]
    assert doc["datasets"]["tasks"] == 6 and doc["datasets"]["incidents"] == 4
    assert doc["datasets"]["task_events"] == n_events

    rows = {r["id"]: r for r in read(out, "tasks")}
    assert set(rows) == {t.ok, t.late, t.failed, t.stuck, t.fresh, t.plain}
    want = {  # state, capability, owner, eta, created, accepted, finished (from T0, s)
        t.ok: ("completed", "review", "rev", 600, 0, 0, 240),
        t.late: ("completed", "review", "rev", 300, 0, 0, 480),
        t.failed: ("failed", "review", "rev", 600, 0, 0, 120),
        t.stuck: ("incident", "review", "rev", 300, 0, 0, None),
        t.fresh: ("created", "review", "rev", 660, 60, None, None),
        t.plain: ("completed", None, "bob", 60, 0, 0, 30),
    }
    for tid, (state, cap, owner, eta, created, accepted, finished) in want.items():
        r = rows[tid]
        got = (
            r["state"],
            r["capability_id"],
            r["owner"],
            _ms(r["eta_at"]),
            _ms(r["created_at"]),
            _ms(r["accepted_at"]),
            _ms(r["finished_at"]),
        )
        assert got == (
            state,
            cap,
            owner,
            _at(seconds=eta),
            _at(seconds=created),
            None if accepted is None else _at(seconds=accepted),
            None if finished is None else _at(seconds=finished),
        ), tid
        assert r["creator"] == "alice" and r["task_type"] == "task"
        assert r["global_id"] is None and r["origin_node"] is None  # one store, no federation
        assert r["channel"] == ("_dm:alice:bob" if tid == t.plain else "_dm:alice:rev")
        assert _ms(r["exported_at"]) == _ms(EXPORT)
        assert str(r["date"]) == "2026-03-01"
    assert rows[t.ok]["progress"] == 100 and rows[t.ok]["note"] == '{"verdict": "ok"}'
    assert rows[t.failed]["note"] == "crashed"

    events = read(out, "task_events")
    assert len(events) == n_events
    store_events = query(store, "SELECT event_id, task_id, event, at FROM task_events")
    assert sorted(
        (e["event_id"], e["task_id"], e["event"], _ms(e["at"])) for e in events
    ) == sorted(store_events)
    late = [e["event"] for e in sorted(events, key=lambda e: e["seq"]) if e["task_id"] == t.late]
    assert late == ["created", "accepted", "overdue", "incident", "completed"]
    assert all(_ms(e["created_at"]) == _ms(rows[e["task_id"]]["created_at"]) for e in events)
    incident_event = next(e for e in events if e["task_id"] == t.stuck and e["event"] == "incident")
    assert json.loads(incident_event["detail"])["failure_class"] == "eta_breach"

    incidents = sorted(read(out, "incidents"), key=lambda i: i["id"])
    assert [(i["failure_class"], i["task_id"], i["state"]) for i in incidents] == [
        ("execution_error", t.failed, "resolved"),
        ("output_mismatch", t.ok, "open"),
        ("eta_breach", t.late, "open"),  # tick at +6 m: the late and the stuck one, by id
        ("eta_breach", t.stuck, "open"),
    ]
    first = incidents[0]
    assert (first["capability_id"], first["delegation_skill"], first["executor_skill"]) == (
        "review",
        "skills/review-request@1.2",
        "skills/review-exec@1.0",
    )
    assert _ms(first["created_at"]) == _at(minutes=2)
    assert (_ms(first["resolved_at"]), first["resolved_by"]) == (_at(minutes=3), "ops")
    assert json.loads(first["sample_corr_ids"]) == [rows[t.failed]["correlation_id"]]
    assert _ms(incidents[2]["created_at"]) == _at(minutes=5)  # dated at the late task's ETA
    man = json.loads((out / "manifest.json").read_text())
    assert {"tasks", "task_events", "incidents"} <= set(man["datasets"])
    assert man["rows"]["tasks"] == 6 and man["rows"]["incidents"] == 4


def test_an_open_task_keeps_its_chunk_in_flight_until_it_ends(cli, store, tasks, tmp_path):
    """The open tasks (stuck, fresh) make the range unsettled; the next export writes it
    again with their new states, and the incidents snapshot is replaced, not added to."""
    t, clock = tasks
    out = tmp_path / "export"
    cli.ok("export", out)
    man = json.loads((out / "manifest.json").read_text())
    assert man["unsettled"] == man["ranges"]
    clock.move_to(T0 + timedelta(minutes=10))
    cli.ok("task", "fail", str(t.stuck), "--reason", "gave up", "--as", "rev")
    cli.ok("task", "fail", str(t.fresh), "--reason", "declined", "--as", "rev")
    cli.ok("incident", "resolve", "3", "--as", "ops")
    doc = cli.ok("export", out, "--json").json()
    assert doc["refreshed"] == man["unsettled"]
    rows = {r["id"]: r for r in read(out, "tasks")}
    assert len(rows) == 6  # rewritten, not duplicated
    assert (rows[t.stuck]["state"], rows[t.fresh]["state"]) == ("failed", "failed")
    incidents = read(out, "incidents")
    # failing a capability task is an execution_error, declining included: 4 + 2, once each
    assert len(incidents) == 6 == query(store, "SELECT count(*) FROM incidents")[0][0]
    assert sorted((i["failure_class"], i["state"]) for i in incidents) == [
        ("eta_breach", "open"),
        ("eta_breach", "resolved"),
        ("execution_error", "open"),
        ("execution_error", "open"),
        ("execution_error", "resolved"),
        ("output_mismatch", "open"),
    ]
    assert len(read(out, "task_events")) == query(store, "SELECT count(*) FROM task_events")[0][0]


def test_only_open_tasks_keep_a_settled_range_in_flight(cli, store, tmp_path):
    """With every delivery read and acknowledged, an open task alone keeps the range
    unsettled; once it ends (and its result is read) the range settles."""
    from acomm_cli.engine import opening
    from acomm_cli.store import export as sql

    with freeze_time(T0) as clock:
        tid = cli.ok("task", "create", "--to", "bob", "look", "--as", "alice").stdout.strip()
        cli.ok("receive", "--as", "bob")
        cli.ok("task", "accept", tid, "--as", "bob")
        cli.ok("receive", "--as", "alice")
        conn = opening.connect(store, create=False)
        try:
            hi = sql.id_bounds_all(conn)[1]  # type: ignore[index]
            busy = conn.execute(
                "SELECT count(*) FROM deliveries WHERE state IN ('queued', 'waiting', 'unread')"
            ).fetchone()[0]
            assert busy == 0
            assert sql.unsettled(conn, 1, hi)
            clock.move_to(T0 + timedelta(seconds=5))
            cli.ok("task", "complete", tid, "--as", "bob")
            cli.ok("receive", "--as", "alice")
            hi = sql.id_bounds_all(conn)[1]  # type: ignore[index]
            assert not sql.unsettled(conn, 1, hi)
        finally:
            conn.close()


def test_tasks_in_json_lines(cli, store, tasks, tmp_path):
    t, _clock = tasks
    out = tmp_path / "jsonl"
    cli.ok("export", out, "--format", "jsonl")
    rows = [
        json.loads(line)
        for p in sorted((out / "tasks").rglob("part-*.jsonl"))
        for line in p.read_text().splitlines()
    ]
    by_id = {r["id"]: r for r in rows}
    assert len(by_id) == 6 and by_id[t.late]["finished_at"] == "2026-03-01T12:08:00.000Z"
    assert by_id[t.late]["eta_required"] is False
    incidents = [
        json.loads(line)
        for p in (out / "incidents").rglob("part-*.jsonl")
        for line in p.read_text().splitlines()
    ]
    assert sorted(i["failure_class"] for i in incidents) == [
        "eta_breach",
        "eta_breach",
        "execution_error",
        "output_mismatch",
    ]
