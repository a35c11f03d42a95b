"""Export and audit of what an auditor asks of a delivery: when it was FIRST read (not the
latest read, which a redelivery moves), every earlier attempt (`delivery_attempts`), and the
lease and TTL columns; and an export made before them still audits (docs/EXPORT.md)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from conftest import query
from freezegun import freeze_time

from acomm_cli.analytics.datasets import DATASET_VERSION

pytestmark = pytest.mark.cli

T0 = datetime(2026, 3, 1, 9, 0, 0)


def _ms(dt: datetime | None) -> int | None:
    if dt is None:
        return None
    return int((dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp() * 1000)


def at(seconds: float) -> int:
    return _ms(T0 + timedelta(seconds=seconds))


def read(out, dataset: str, fmt: str = "parquet") -> list[dict]:
    return (
        ds.dataset(
            out / dataset, format="parquet" if fmt == "parquet" else "json", partitioning="hive"
        )
        .to_table()
        .to_pylist()
    )


def _send(cli, body: str, *extra: str) -> int:
    return int(cli.ok("send", "jobs", body, "--as", "boss", *extra).stdout)


class Jobs:
    """The ids of the traffic below."""

    redelivered = leased = expired = plain = 0


@pytest.fixture
def jobs(cli, make_channel):
    """`jobs`: at-least-once, ack timeout 30 s, 2 retries 1 s apart, lease 2 m, TTL 1 h,
    failed acks retried. Leaves the clock at T0 + 4 m (the caller's freeze_time)."""
    make_channel(
        "jobs",
        "boss",
        "w",
        delivery="at-least-once",
        ack_timeout="30s",
        max_retries=2,
        retry_backoff="1s",
        lease="2m",
        message_ttl="1h",
        retry_failed=True,
    )
    return Jobs()


def traffic(cli, clock, j: Jobs, out=None) -> None:
    """Four messages; with `out`, an incremental export before any retry happened. First
    reads at +5 s, +9 s and +2 s after creation; latest reads at +50 s, +144 s and +2 s."""
    clock.move_to(T0)
    j.redelivered = _send(cli, "read, not acked in time, redelivered, read again")
    j.expired = _send(cli, "nobody reads this in time", "--ttl", "10s")
    clock.move_to(T0 + timedelta(seconds=1))
    j.leased = _send(cli, "held in progress, the lease runs out")
    j.plain = _send(cli, "acked at once")  # expires at +1 h (the channel's TTL)
    clock.move_to(T0 + timedelta(seconds=3))
    cli.ok("ack", j.plain, "--as", "w")  # an ack of an unread delivery is its read
    clock.move_to(T0 + timedelta(seconds=5))
    cli.ok("receive", "jobs", "--as", "w", "--grep", "redelivered")  # the first read: +5 s
    clock.move_to(T0 + timedelta(seconds=10))
    cli.ok("ack", j.leased, "--as", "w", "--status", "in_progress")  # read at +10 s, held 2 m
    clock.move_to(T0 + timedelta(seconds=20))
    if out is not None:
        cli.ok("export", out, "--incremental")
    # +30 s: the ack deadline passes -> redelivered at +31 s; the TTL ended at +10 s
    clock.move_to(T0 + timedelta(seconds=40))
    tick = cli.ok("tick", "--json").json()
    assert (tick["redelivered"], tick["dead_lettered"]) == (1, 1)
    clock.move_to(T0 + timedelta(seconds=50))
    cli.ok("receive", "jobs", "--as", "w", "--grep", "redelivered")  # read again: read_at moves
    clock.move_to(T0 + timedelta(seconds=55))
    cli.ok("ack", j.redelivered, "--as", "w")
    # +2 m 10 s: the lease runs out -> redelivered at +2 m 11 s, acked without a second read
    # (that ack is its latest read) before its new ack deadline (+2 m 41 s)
    clock.move_to(T0 + timedelta(seconds=140))
    assert cli.ok("tick", "--json").json()["lease_expired"] == 1
    clock.move_to(T0 + timedelta(seconds=145))
    cli.ok("ack", j.leased, "--as", "w")
    clock.move_to(T0 + timedelta(seconds=240))


def test_lease_ttl_and_attempt_columns_are_exported_with_their_values(cli, store, jobs, tmp_path):
    out = tmp_path / "export"
    with freeze_time(T0) as clock:
        traffic(cli, clock, jobs, out)
        doc = cli.ok("export", out, "--incremental", "--json").json()
    j = jobs
    # the range first written before any retry (unsettled) is written again, attempts and all
    assert doc["refreshed"] and doc["datasets"]["delivery_attempts"] == 2
    man = json.loads((out / "manifest.json").read_text())
    assert man["dataset_version"] == DATASET_VERSION >= 2
    assert {f["dataset_version"] for f in man["files"]} == {DATASET_VERSION}
    assert man["rows"]["delivery_attempts"] == 2 and "delivery_attempts" in man["datasets"]
    files = [f for f in man["files"] if f["dataset"] == "delivery_attempts"]
    assert [f["path"].split("/")[:2] for f in files] == [["delivery_attempts", "date=2026-03-01"]]

    channels = {c["name"]: c for c in read(out, "channels")}
    assert (
        channels["jobs"]["lease_ms"],
        channels["jobs"]["message_ttl_ms"],
        channels["jobs"]["retry_failed"],
    ) == (120_000, 3_600_000, True)
    assert (
        channels["_system"]["lease_ms"],
        channels["_system"]["message_ttl_ms"],
        channels["_system"]["retry_failed"],
    ) == (0, 0, False)

    messages = {m["id"]: m for m in read(out, "messages")}
    assert _ms(messages[j.expired]["expires_at"]) == at(10)  # --ttl 10s
    assert _ms(messages[j.plain]["expires_at"]) == at(1 + 3600)  # the channel's 1 h
    assert _ms(messages[j.redelivered]["expires_at"]) == at(3600)

    deliveries = {d["message_id"]: d for d in read(out, "deliveries") if d["recipient"] == "w"}
    assert {m: d["lease_expired"] for m, d in deliveries.items()} == {
        j.redelivered: 0,
        j.expired: 0,
        j.leased: 1,
        j.plain: 0,
    }
    r = deliveries[j.redelivered]
    assert (_ms(r["first_read_at"]), _ms(r["read_at"]), _ms(r["delivered_at"])) == (
        at(5),
        at(50),
        at(31),
    )
    assert deliveries[j.expired]["state"] == "dead"

    attempts = sorted(read(out, "delivery_attempts"), key=lambda a: a["message_id"])
    assert [
        (
            a["message_id"],
            a["recipient"],
            a["channel"],
            a["attempt"],
            _ms(a["delivered_at"]),
            _ms(a["read_at"]),
            a["ack_status"],
        )
        for a in attempts
    ] == [
        (j.redelivered, "w", "jobs", 1, at(0), at(5), None),
        # j.expired has none: the late tick at +40 s expires it at +10 s, before its ack
        # deadline (+30 s) could retry it (due-time order, DECISIONS.md "Late tick")
        (j.leased, "w", "jobs", 1, at(1), at(10), "in_progress"),
    ]
    assert [_ms(a["created_at"]) for a in attempts] == [at(0), at(1)]  # the message's
    assert len(attempts) == query(store, "SELECT count(*) FROM delivery_attempts")[0][0]


def test_attempts_follow_the_messages_window_and_jsonl(cli, jobs, tmp_path):
    """--since/--until choose messages; their attempts go with them (never the others')."""
    with freeze_time(T0) as clock:
        traffic(cli, clock, jobs)
        late = tmp_path / "late"
        cli.ok("export", late, "--since", "2026-03-01T09:00:01Z")
        early = tmp_path / "early"
        cli.ok("export", early, "--until", "2026-03-01T09:00:01Z", "--format", "jsonl")
    assert [a["message_id"] for a in read(late, "delivery_attempts")] == [jobs.leased]
    got = read(early, "delivery_attempts", "jsonl")
    assert sorted((a["message_id"], a["delivered_at"], a["read_at"]) for a in got) == [
        (jobs.redelivered, "2026-03-01T09:00:00.000Z", "2026-03-01T09:00:05.000Z")
    ]


@pytest.fixture
def exported(cli, jobs, tmp_path):
    out = tmp_path / "export"
    with freeze_time(T0) as clock:
        traffic(cli, clock, jobs)
        cli.ok("export", out)
    return jobs, out


def _audit(cli, out, dest):
    r = cli("audit", out, "--out", dest, "--json")
    assert r.exit_code == 0, r.stderr
    return r.json()


def _jobs(rows):
    return next(r for r in rows if r.get("channel") == "jobs")


@pytest.mark.spark
def test_audit_measures_latency_to_the_first_read_and_reports_attempts(
    spark, cli, exported, tmp_path
):
    j, out = exported
    s = _audit(cli, out, tmp_path / "audit")
    lat = _jobs(s["latency"]["channels"])
    # first reads at +2 s, +5 s and +9 s (the latest ones, +50 s and +144 s, are not)
    assert (lat["read"], lat["read_p50_ms"], lat["read_p99_ms"]) == (3, 5_000, 9_000)
    assert lat["read_fallback"] == 0
    w = next(a for a in s["latency"]["agents"] if a["agent"] == "w")
    assert (w["read_p50_ms"], w["read_p99_ms"]) == (5_000, 9_000)

    att = _jobs(s["attempts"]["channels"])
    assert {
        k: att[k]
        for k in (
            "deliveries",
            "attempts",
            "retried",
            "max_attempts",
            "acked",
            "acked_attempts",
            "acked_after_retry",
            "dead",
            "dead_after_retry",
            "earlier_read",
            "leases_expired",
        )
    } == {
        "deliveries": 4,
        "attempts": 6,
        "retried": 2,
        "max_attempts": 2,
        "acked": 3,
        "acked_attempts": 5,
        "acked_after_retry": 2,
        "dead": 1,
        "dead_after_retry": 0,
        "earlier_read": 2,
        "leases_expired": 1,
    }
    assert s["attempts"]["attempts_per_acked"] == pytest.approx(5 / 3)
    assert s["attempts"]["attempts_per_delivery"] == 1.5
    assert s["exports"][0]["dataset_version"] == DATASET_VERSION

    retried = pq.read_table(s["tables"]["retried_deliveries"]).to_pylist()
    assert sorted(
        (
            r["message_id"],
            r["attempts"],
            r["lease_expired"],
            _ms(r["first_delivered_at"]),
            _ms(r["last_delivered_at"]),
        )
        for r in retried
    ) == [(j.redelivered, 2, 0, at(0), at(31)), (j.leased, 2, 1, at(1), at(131))]
    # the existing findings stand beside the new ones
    rel = _jobs(s["reliability"])  # retry_count moved twice; handed out again twice
    assert (rel["tracked"], rel["retried"], rel["retries"]) == (4, 2, 2)
    assert s["dead_letters_by_reason"] == {"expired": 1}
    assert s["checks"] == {
        "exactly_once_violations": 0,
        "unaccounted": 0,
        "federation_unmatched": 0,
    }

    # piped: one line per channel, led by `attempts`
    lines = cli.ok("audit", out, "--out", tmp_path / "audit").stdout.splitlines()
    assert any(
        line.startswith("attempts\t") and "\tjobs\t4\t6\t2\t2\t2\t0\t2\t1" in line for line in lines
    ), lines


def _as_older_export(out) -> None:
    """Make `out` look like an export of an acomm before these columns: no dataset_version,
    no delivery_attempts, deliveries without first_read_at and lease_expired, channels
    without the lease and TTL columns."""
    man = json.loads((out / "manifest.json").read_text())
    man.pop("dataset_version")
    man["datasets"].remove("delivery_attempts")
    man["rows"].pop("delivery_attempts")
    for f in man["files"]:
        f.pop("dataset_version")
    man["files"] = [f for f in man["files"] if f["dataset"] != "delivery_attempts"]
    drop = {
        "deliveries": ["first_read_at", "lease_expired"],
        "channels": ["lease_ms", "message_ttl_ms", "retry_failed"],
    }
    for f in man["files"]:
        if f["dataset"] in drop:
            path = out / f["path"]
            pq.write_table(pq.read_table(path).drop_columns(drop[f["dataset"]]), path)
    (out / "manifest.json").write_text(json.dumps(man))


@pytest.mark.spark
def test_an_export_made_before_first_reads_and_attempts_still_audits(
    spark, cli, exported, tmp_path
):
    _j, out = exported
    new = _audit(cli, out, tmp_path / "new")
    _as_older_export(out)
    old = _audit(cli, out, tmp_path / "old")
    assert old["exports"][0]["dataset_version"] == 1
    lat = _jobs(old["latency"]["channels"])
    # no first_read_at: measured to the latest read, and counted as such
    assert (lat["read"], lat["read_p50_ms"], lat["read_p99_ms"]) == (3, 50_000, 144_000)
    assert lat["read_fallback"] == 3
    att = _jobs(old["attempts"]["channels"])
    assert (att["deliveries"], att["attempts"], att["retried"], att["leases_expired"]) == (
        4,
        4,
        0,
        0,
    )
    for key in ("totals", "volume", "reliability", "dead_letters_by_reason", "checks"):
        assert old[key] == new[key], key
    # on a terminal or a pipe the fallback is said, on stderr
    r = cli("audit", out, "--out", tmp_path / "old")
    assert r.exit_code == 0 and "3 read latencies are to the latest read" in r.stderr


@pytest.mark.spark
def test_a_work_queue_s_attempts_of_every_worker_and_a_replay_are_counted(
    spark, cli, make_channel, tmp_path
):
    """w1's claim lapses, w2's too (dead letter), the dead letter is replayed and w1 acks:
    three hand-outs to two workers on the one delivery row, although replay set
    retry_count back to 0 (so `reliability` sees no retry)."""
    make_channel(
        "q",
        "boss",
        "w1",
        "w2",
        type="queue",
        delivery="at-least-once",
        ack_timeout="30s",
        max_retries=1,
        retry_backoff="1s",
    )
    out = tmp_path / "export"
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "q", "job", "--as", "boss").stdout)
        cli.ok("receive", "--as", "w1")
        clock.move_to(T0 + timedelta(seconds=31))
        cli.ok("receive", "--as", "w2")  # w1's claim ended at 30 s: back, claimed by w2
        clock.move_to(T0 + timedelta(seconds=100))
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 1
        cli.ok("deadletter", "replay", mid)
        clock.move_to(T0 + timedelta(seconds=110))
        cli.ok("receive", "--as", "w1")
        cli.ok("ack", mid, "--as", "w1")
        cli.ok("export", out)
    attempts = sorted(
        (a["recipient"], a["attempt"], _ms(a["delivered_at"]))
        for a in read(out, "delivery_attempts")
    )
    assert attempts == [("w1", 1, at(0)), ("w2", 2, at(31))]
    s = _audit(cli, out, tmp_path / "audit")
    row = next(r for r in s["attempts"]["channels"] if r["channel"] == "q")
    assert (
        row["deliveries"],
        row["attempts"],
        row["retried"],
        row["max_attempts"],
        row["acked_after_retry"],
        row["dead"],
    ) == (1, 3, 1, 3, 1, 0)
    assert next(r for r in s["reliability"] if r["channel"] == "q")["retried"] == 0
    [one] = pq.read_table(s["tables"]["retried_deliveries"]).to_pylist()
    assert (
        one["message_id"],
        one["recipient"],
        one["attempts"],
        one["retry_count"],
        _ms(one["first_delivered_at"]),
        _ms(one["last_delivered_at"]),
    ) == (mid, "w1", 3, 0, at(0), at(110))
