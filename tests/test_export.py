"""`acomm export`: datasets read back with pyarrow and checked against the store."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC
from pathlib import Path

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs
import pyarrow.parquet  # noqa: F401
import pytest
from audit_traffic import DAY1, DAY2, NOW, day1, day2
from conftest import query
from freezegun import freeze_time

from acomm_cli.clock import iso

pytestmark = pytest.mark.cli


def _ms(dt) -> int:
    """A datetime (naive ones are UTC) -> epoch milliseconds."""
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1000)


def read(out: Path, dataset: str, fmt: str = "parquet"):
    return ds.dataset(
        out / dataset, format="parquet" if fmt == "parquet" else "json", partitioning="hive"
    ).to_table()


@pytest.fixture
def traffic(cli, store):
    with freeze_time(DAY1) as clock:
        t = day1(cli, clock)
        day2(cli, clock, t)
        yield t, clock


def test_export_matches_the_store(cli, store, traffic, tmp_path):
    t, _clock = traffic
    out = tmp_path / "export"
    doc = cli.ok("export", out, "--json").json()
    n_messages = query(store, "SELECT count(*) FROM messages")[0][0]
    n_deliveries = query(store, "SELECT count(*) FROM deliveries")[0][0]
    assert doc["datasets"] == {
        "messages": n_messages,
        "deliveries": n_deliveries,
        "dead_letters": 1,
        "delivery_attempts": 1,
        "receipts": 0,
        "federation": 0,
        "tasks": 0,
        "task_events": 0,
        "channels": 4,
        "incidents": 0,
        "agents": query(store, "SELECT count(*) FROM agents")[0][0],  # the directory, whole
        "events": query(store, "SELECT count(*) FROM message_events")[0][0],
        "attachments": 0,
        "notifications": query(store, "SELECT count(*) FROM notifications")[0][0],
    }
    assert doc["id_range"] == [1, n_messages]
    assert doc["incremental"] is False
    assert doc["out"] == str(out)

    messages = read(out, "messages")
    assert sorted(messages.column("id").to_pylist()) == list(range(1, n_messages + 1))
    by_id = {r["id"]: r for r in messages.to_pylist()}
    assert by_id[t.dead]["priority_name"] == "high" and by_id[t.dead]["channel"] == "work"
    assert by_id[t.acked]["type"] == "command" and by_id[t.acked]["correlation_id"]
    assert by_id[t.chat[0]]["content"] == "hello 0"
    assert _ms(by_id[t.chat[0]]["created_at"]) == _ms(DAY1)
    # hive partitions: the UTC day each message was created
    days = {r["id"]: r["date"] for r in messages.select(["id", "date"]).to_pylist()}
    assert str(days[t.chat[0]]) == "2026-01-01" and str(days[t.late]) == "2026-01-02"
    assert {p.name for p in (out / "messages").iterdir()} == {"date=2026-01-01", "date=2026-01-02"}

    deliveries = read(out, "deliveries").to_pylist()
    assert len(deliveries) == n_deliveries
    rows = {(d["message_id"], d["recipient"]): d for d in deliveries}
    store_rows = query(
        store,
        "SELECT message_id, recipient, state, retry_count, delivered_at,"
        " read_at, ack_status, acked_at, first_read_at FROM deliveries",
    )
    for mid, rcpt, state, retries, delivered, read_at, ack_status, acked, first in store_rows:
        d = rows[(mid, rcpt)]
        assert (d["state"], d["retry_count"], d["ack_status"]) == (state, retries, ack_status)
        for col, want in (
            ("delivered_at", delivered),
            ("read_at", read_at),
            ("acked_at", acked),
            ("first_read_at", first),
        ):
            assert (None if d[col] is None else _ms(d[col])) == want, (mid, rcpt, col)
        assert _ms(d["exported_at"]) == _ms(NOW)
    assert rows[(t.chat[0], "bob")]["state"] == "read"
    assert _ms(rows[(t.chat[0], "bob")]["read_at"]) - _ms(DAY1) == 5000
    assert rows[(t.late, "executor")]["ack_status"] == "completed"
    assert rows[(t.dead, "executor")]["state"] == "dead"
    assert rows[(t.dead, "executor")]["tracked"] is True

    dead = read(out, "dead_letters").to_pylist()
    assert [(d["message_id"], d["recipient"], d["reason"], d["retry_count"]) for d in dead] == [
        (t.dead, "executor", "max_retries_exceeded", 1)
    ]
    channels = {c["name"]: c for c in read(out, "channels").to_pylist()}
    assert set(channels) == {"_system", "chat", "work", "once"}
    assert channels["work"]["ack_timeout_ms"] == 60_000
    assert channels["work"]["delivery"] == "at-least-once"
    assert channels["once"]["delivery"] == "exactly-once"
    # when the ack deadline starts and which acks notify: the defaults here
    assert {(c["ack_clock"], c["ack_notify"]) for c in channels.values()} == {("sent", "all")}


def test_manifest_lists_every_file_with_size_and_sha256(cli, store, traffic, tmp_path):
    out = tmp_path / "export"
    cli.ok("export", out)
    man = json.loads((out / "manifest.json").read_text())
    store_id = query(store, "SELECT value FROM store_meta WHERE key = 'store_id'")[0][0]
    assert man["store"] == {
        "path": str(store),
        "store_id": store_id,
        "schema_version": query(store, "PRAGMA user_version")[0][0],
        "node_id": None,
    }
    assert man["acomm_version"] and man["format"] == "parquet"
    assert man["exported_at"] == iso(_ms(NOW))
    n_messages = query(store, "SELECT count(*) FROM messages")[0][0]
    assert man["id_range"] == [1, n_messages] and man["ranges"] == [[1, n_messages]]
    assert man["rows"]["messages"] == n_messages and man["rows"]["dead_letters"] == 1
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("part-*"))
    assert sorted(f["path"] for f in man["files"]) == on_disk
    for f in man["files"]:
        data = (out / f["path"]).read_bytes()
        assert f["bytes"] == len(data)
        assert f["sha256"] == hashlib.sha256(data).hexdigest()
    per_dataset = dict.fromkeys(man["datasets"], 0)
    for f in man["files"]:
        per_dataset[f["dataset"]] = per_dataset.get(f["dataset"], 0) + f["rows"]
    assert per_dataset == man["rows"]


def test_incremental_twice_adds_only_new_rows(cli, store, tmp_path):
    out = tmp_path / "export"
    with freeze_time(DAY1) as clock:
        t = day1(cli, clock)
        first = cli.ok("export", out, "--incremental", "--json").json()
        day1_messages = query(store, "SELECT count(*) FROM messages")[0][0]
        assert first["id_range"] == [1, day1_messages]
        assert query(store, "SELECT target, last_message_id FROM exports") == [
            (str(out), day1_messages)
        ]
        day2(cli, clock, t)
        # carol never reads the chat: day 1 is still in flight, and is written again
        assert json.loads((out / "manifest.json").read_text())["unsettled"] == [[1, day1_messages]]
        second = cli.ok("export", out, "--incremental", "--json").json()
        total = query(store, "SELECT count(*) FROM messages")[0][0]
        assert second["id_range"] == [day1_messages + 1, total]
        assert second["refreshed"] == [[1, day1_messages]]
        assert second["datasets"]["messages"] == total  # the new ones, and day 1 again
        in_flight = json.loads((out / "manifest.json").read_text())["unsettled"]
        assert in_flight == [[1, day1_messages], [day1_messages + 1, total]]
        cli.ok("receive", "--as", "carol")
        cli.ok("receive", "--as", "bob")
        cli.ok("receive", "--as", "planner")
        cli.ok("receive", "--as", "executor")  # the backlog's last deadline passed: dead
        third = cli.ok("export", out, "--incremental", "--json").json()
        assert third["refreshed"] == in_flight
        total += 1  # the dead letter's notification on _system is a new message
        assert third["id_range"] == [total, total]
        again = cli.ok("export", out, "--incremental", "--json").json()
        assert again["id_range"] is None and again["refreshed"] == []
        assert again["datasets"]["messages"] == 0
    ids = read(out, "messages").column("id").to_pylist()
    assert sorted(ids) == list(range(1, total + 1))  # every message once
    deliveries = read(out, "deliveries")
    assert deliveries.num_rows == query(store, "SELECT count(*) FROM deliveries")[0][0]
    states = dict(
        zip(
            zip(
                deliveries.column("message_id").to_pylist(),
                deliveries.column("recipient").to_pylist(),
                strict=True,
            ),
            deliveries.column("state").to_pylist(),
            strict=True,
        )
    )
    assert states[(t.backlog, "executor")] == "dead"  # dead-lettered after its first export
    assert states[(t.chat[0], "carol")] == "read"
    assert t.backlog in read(out, "dead_letters").column("message_id").to_pylist()
    man = json.loads((out / "manifest.json").read_text())
    assert man["ranges"] == [[1, total]] and man["unsettled"] == []
    assert sorted(f["path"] for f in man["files"]) == sorted(
        str(p.relative_to(out)) for p in out.rglob("part-*")
    )
    assert [e["incremental"] for e in man["exports"]] == [True] * 4


def test_exporting_the_same_range_twice_never_duplicates(cli, store, traffic, tmp_path):
    out = tmp_path / "export"
    cli.ok("export", out)
    in_flight = json.loads((out / "manifest.json").read_text())["unsettled"]
    assert in_flight  # the traffic leaves a backlog: its range is written again, in place
    files = {p for p in out.rglob("part-*") if "channels" not in str(p)}
    doc = cli.ok("export", out, "--json").json()
    assert doc["id_range"] is None and doc["refreshed"] == in_flight
    assert {p for p in out.rglob("part-*") if "channels" not in str(p)} == files
    n = query(store, "SELECT count(*) FROM deliveries")[0][0]
    assert read(out, "deliveries").num_rows == n
    assert read(out, "channels").num_rows == 4  # the snapshot is replaced, not appended


def test_since_until_select_a_window_and_a_later_full_export_fills_the_rest(
    cli, store, traffic, tmp_path
):
    out = tmp_path / "export"
    doc = cli.ok("export", out, "--since", "2026-01-02T00:00:00Z", "--json").json()
    day2_ids = [
        r[0] for r in query(store, "SELECT id FROM messages WHERE created_at >= ?", _ms(DAY2))
    ]
    assert doc["id_range"] == [min(day2_ids), max(day2_ids)]
    assert {p.name for p in (out / "messages").iterdir()} == {"date=2026-01-02"}
    doc = cli.ok("export", out, "--until", "2026-01-02T00:00:00Z", "--json").json()
    assert doc["id_range"] == [1, min(day2_ids) - 1]
    total = query(store, "SELECT count(*) FROM messages")[0][0]
    assert sorted(read(out, "messages").column("id").to_pylist()) == list(range(1, total + 1))
    again = cli.ok("export", out, "--json").json()
    assert again["id_range"] is None
    assert sorted(read(out, "messages").column("id").to_pylist()) == list(range(1, total + 1))


def test_jsonl_format(cli, store, traffic, tmp_path):
    t, _ = traffic
    out = tmp_path / "jsonl"
    doc = cli.ok("export", out, "--format", "jsonl", "--json").json()
    assert all(f["path"].endswith(".jsonl") for f in doc["files"])
    lines = [
        json.loads(line)
        for p in sorted((out / "deliveries").rglob("*.jsonl"))
        for line in p.read_text().splitlines()
    ]
    assert len(lines) == query(store, "SELECT count(*) FROM deliveries")[0][0]
    bob = next(r for r in lines if r["message_id"] == t.chat[0] and r["recipient"] == "bob")
    assert bob["read_at"] == "2026-01-01T10:00:05.000Z" and bob["state"] == "read"
    assert json.loads((out / "manifest.json").read_text())["format"] == "jsonl"
    r = cli("export", out, "--json")  # a parquet export into a jsonl directory is refused
    assert r.exit_code == 5 and r.error["field"] == "format"


def test_stray_files_from_an_interrupted_export_are_removed(cli, store, traffic, tmp_path):
    out = tmp_path / "export"
    cli.ok("export", out, "--until", "2026-01-02T00:00:00Z")
    stray = out / "messages" / "date=2026-01-02" / "part-000000000099-000000000120-0000.parquet"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"half written")
    cli.ok("export", out)
    assert not stray.exists()
    total = query(store, "SELECT count(*) FROM messages")[0][0]
    assert read(out, "messages").num_rows == total


def test_an_export_of_another_store_is_refused(cli, store, traffic, tmp_path):
    out = tmp_path / "export"
    cli.ok("export", out)
    other = tmp_path / "other" / "store.acomm"
    cli.ok("--store", other, "init")
    r = cli("--store", other, "export", out, "--json")
    assert r.exit_code == 5 and "export each store to its own directory" in r.error["message"]


def test_incremental_without_a_manifest_starts_again(cli, store, traffic, tmp_path):
    out = tmp_path / "export"
    cli.ok("export", out, "--incremental")
    (out / "manifest.json").unlink()
    r = cli.ok("export", out, "--incremental", "--json")
    assert r.json()["id_range"][0] == 1
    assert "no manifest.json" in r.stderr


def test_empty_store_exports_channels_only(cli, store, tmp_path):
    out = tmp_path / "export"
    doc = cli.ok("export", out, "--json").json()
    assert doc["datasets"] == {
        "messages": 0,
        "deliveries": 0,
        "dead_letters": 0,
        "delivery_attempts": 0,
        "receipts": 0,
        "federation": 0,
        "tasks": 0,
        "task_events": 0,
        "channels": 1,
        "incidents": 0,
        "agents": query(store, "SELECT count(*) FROM agents")[0][0],
        "events": 0,
        "attachments": 0,
        "notifications": 0,
    }
    assert doc["id_range"] is None
    plain = cli.ok("export", out).stdout
    assert plain.startswith(str(out)) and "no new messages" in plain


def test_bad_options(cli, store, tmp_path):
    assert cli("export", tmp_path / "x", "--format", "csv").exit_code == 3
    assert (
        cli("export", tmp_path / "x", "--since", "2026-01-02", "--until", "2026-01-01").exit_code
        == 3
    )
    f = tmp_path / "file"
    f.write_text("")
    assert cli("export", f).exit_code == 3


def test_small_chunks_and_batches_give_the_same_rows(store, traffic, tmp_path):
    """Memory stays bounded by reading in chunks of ids and batches of rows: however small
    they are, the rows written are the store's, each once, and refreshing works per chunk."""
    from acomm_cli.analytics import export as exporter
    from acomm_cli.engine import opening

    conn = opening.connect(store, create=False)
    try:
        out = str(tmp_path / "small")
        res = exporter.export(conn, out, _ms(NOW), chunk=3, batch=2)
        n = query(store, "SELECT count(*) FROM messages")[0][0]
        ranges = sorted({tuple(f["id_range"]) for f in res.files if f["id_range"]})
        assert ranges == [(lo, min(lo + 2, n)) for lo in range(1, n + 1, 3)]
        assert max(f["rows"] for f in res.files if f["id_range"]) <= 2  # at most a batch
        again = exporter.export(conn, out, _ms(NOW), chunk=3, batch=2)
        assert again.refreshed == [tuple(r) for r in res.manifest["unsettled"]]
    finally:
        conn.close()
    for dataset, table in (
        ("messages", "messages"),
        ("deliveries", "deliveries"),
        ("dead_letters", "dead_letters"),
    ):
        assert (
            read(Path(out), dataset).num_rows == query(store, f"SELECT count(*) FROM {table}")[0][0]
        ), dataset
    assert sorted(read(Path(out), "messages").column("id").to_pylist()) == list(range(1, n + 1))


def test_channels_carry_their_ack_clock_and_ack_notify(cli, store, tmp_path):
    """Dataset version 7: a channel's ack clock and ack notices, as `channel show` says."""
    cli.ok(
        "channel",
        "create",
        "reports",
        "--delivery",
        "at-least-once",
        "--ack-clock",
        "read",
        "--ack-notify",
        "failures",
        "--as",
        "boss",
    )
    cli.ok("channel", "create", "quiet", "--ack-notify", "none", "--as", "boss")
    out = tmp_path / "export"
    cli.ok("export", out)
    rows = {c["name"]: (c["ack_clock"], c["ack_notify"]) for c in read(out, "channels").to_pylist()}
    assert rows == {
        "_system": ("sent", "all"),
        "reports": ("read", "failures"),
        "quiet": ("sent", "none"),
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["dataset_version"] == 7
    assert {f["dataset_version"] for f in manifest["files"] if f["dataset"] == "channels"} == {7}
