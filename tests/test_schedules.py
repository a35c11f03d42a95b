"""Recurring schedules (`acomm schedule`) and `acomm cancel`: each occurrence a normal message
sent by `tick` or by a reader at its time, none sent twice or skipped, however late the tick
or wherever a process dies; a scheduled send withdrawn becomes a `cancelled` dead letter."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import query, snapshot
from freezegun import freeze_time

from acomm_cli.engine import opening, schedules, sending

pytestmark = pytest.mark.cli

T0 = "2026-03-02T09:00:00Z"  # a Monday
MS0 = 1772442000000  # T0 in ms


@pytest.fixture
def ops(make_channel) -> Path:
    return make_channel("ops", "rep", "bob")


def _occurrences(store: Path) -> list[str]:
    """The `occurrence` of every message a schedule sent, in id order."""
    rows = query(
        store, "SELECT metadata FROM messages WHERE metadata LIKE '%occurrence%' ORDER BY id"
    )
    return [json.loads(m)["occurrence"] for (m,) in rows]


def _tick(cli) -> dict:
    return cli.ok("--json", "tick").json()


def test_every_sends_each_occurrence_once_and_a_late_tick_catches_up(cli, ops):
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "ping", "--every", "10m", "--as", "rep")
        assert _tick(cli)["schedules_sent"] == 0  # the first is one --every from now
        frozen.tick(timedelta(minutes=35))
        assert _tick(cli)["schedules_sent"] == 3
        assert _tick(cli)["schedules_sent"] == 0  # never twice
        assert _occurrences(ops) == [
            "2026-03-02T09:10:00.000Z",
            "2026-03-02T09:20:00.000Z",
            "2026-03-02T09:30:00.000Z",
        ]
        got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
        assert [m["content"] for m in got] == ["ping"] * 3
        assert got[0]["metadata"]["schedule"] == "1"


def test_catch_up_last_sends_only_the_latest(cli, ops):
    with freeze_time(T0) as frozen:
        cli.ok(
            "schedule",
            "create",
            "ops",
            "ping",
            "--every",
            "10m",
            "--catch-up",
            "last",
            "--as",
            "rep",
        )
        frozen.tick(timedelta(minutes=35))
        assert _tick(cli)["schedules_sent"] == 1
        assert _occurrences(ops) == ["2026-03-02T09:30:00.000Z"]
        frozen.tick(timedelta(minutes=5))
        assert _tick(cli)["schedules_sent"] == 1
        assert _occurrences(ops)[-1] == "2026-03-02T09:40:00.000Z"


def test_cron_in_utc(cli, ops):
    with freeze_time(T0) as frozen:
        cli.ok(
            "schedule", "create", "ops", "standup", "--cron", "*/15 9-17 * * MON-FRI", "--as", "rep"
        )
        doc = cli.ok("--json", "schedule", "show", "1").json()
        assert doc["next_at"] == "2026-03-02T09:15:00.000Z"
        frozen.tick(timedelta(hours=1))
        assert _tick(cli)["schedules_sent"] == 4
        assert _occurrences(ops)[-1] == "2026-03-02T10:00:00.000Z"


def test_max_runs_and_until_finish_a_schedule(cli, ops):
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "a", "--every", "1m", "--max-runs", "2", "--as", "rep")
        cli.ok("schedule", "create", "ops", "b", "--every", "1m", "--until", "+150s", "--as", "rep")
        frozen.tick(timedelta(minutes=10))
        assert _tick(cli)["schedules_sent"] == 4
        docs = cli.ok("--json", "schedule", "list").json()["schedules"]
        assert [(d["runs"], d["state"], d["next_at"]) for d in docs] == [
            (2, "finished", None),
            (2, "finished", None),
        ]
        assert _tick(cli)["schedules_sent"] == 0


def test_a_paused_schedule_sends_nothing_and_resumes_from_now(cli, ops):
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "ping", "--every", "10m", "--as", "rep")
        assert cli.ok("schedule", "pause", "1", "--as", "rep").stdout == "1\tpaused\n"
        frozen.tick(timedelta(minutes=35))
        assert _tick(cli)["schedules_sent"] == 0
        cli.ok("schedule", "resume", "1", "--as", "rep")
        assert cli.ok("--json", "schedule", "show", "1").json()["next_at"] == (
            "2026-03-02T09:40:00.000Z"
        )
        res = cli.ok("schedule", "resume", "1", "--as", "rep")
        assert "already active" in res.stderr


def test_a_reader_sends_what_fell_due_on_its_channels_only(cli, ops, make_channel):
    make_channel("other", "rep", "carol")
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "for bob", "--every", "10m", "--as", "rep")
        cli.ok("schedule", "create", "other", "for carol", "--every", "10m", "--as", "rep")
        frozen.tick(timedelta(minutes=10))
        got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
        assert [m["content"] for m in got] == ["for bob"]
        # the other channel's occurrence waits for its own reader or a tick
        assert query(ops, "SELECT count(*) FROM messages WHERE content = 'for carol'") == [(0,)]
        assert _tick(cli)["schedules_sent"] == 1


def test_a_refused_occurrence_is_recorded_and_stops_nothing_else(cli, ops):
    cli.ok("channel", "join", "ops", "carol", "--as", "rep")  # rep's sends still reach someone
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "from bob", "--every", "10m", "--as", "bob")
        cli.ok("schedule", "create", "ops", "from rep", "--every", "10m", "--as", "rep")
        cli.ok("channel", "leave", "ops", "bob", "--as", "bob")
        frozen.tick(timedelta(minutes=10))
        doc = _tick(cli)
        assert doc["schedules_sent"] == 1 and doc["schedule_errors"] == 1
        bad = cli.ok("--json", "schedule", "show", "1").json()
        assert "2026-03-02T09:10:00.000Z" in bad["last_error"] and bad["runs"] == 1
        assert bad["next_at"] == "2026-03-02T09:20:00.000Z"


def test_a_pass_that_dies_mid_way_sends_nothing_and_the_next_sends_each_once(cli, ops, monkeypatch):
    """Fault injection: the process dies (an exception no send handles) after two of three
    occurrences were written; the transaction rolls back whole, and the next pass sends
    all three, once each."""
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "ping", "--every", "10m", "--as", "rep")
        frozen.tick(timedelta(minutes=35))
        real, calls = sending.send, []

        def dies_on_the_third(*args, **kwargs):
            calls.append(1)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        monkeypatch.setattr(sending, "send", dies_on_the_third)
        conn = opening.connect(ops, create=False)
        with pytest.raises(KeyboardInterrupt):
            schedules.fire(conn, schedules.clock.now_ms())
        conn.close()
        assert _occurrences(ops) == []
        assert query(ops, "SELECT runs, next_at FROM schedules") == [(0, MS0 + 600_000)]
        monkeypatch.setattr(sending, "send", real)
        assert _tick(cli)["schedules_sent"] == 3
        assert len(set(_occurrences(ops))) == 3


def test_only_the_sender_may_change_a_schedule(cli, ops):
    cli.ok("schedule", "create", "ops", "ping", "--every", "10m", "--as", "rep")
    before = snapshot(ops)
    for verb in ("pause", "resume", "delete"):
        res = cli("schedule", verb, "1", "--as", "bob")
        assert res.exit_code == 5 and "only 'rep'" in res.stderr
    assert snapshot(ops) == before
    assert cli.ok("schedule", "delete", "1", "--as", "rep").stdout == "1\tdeleted\n"


@pytest.mark.parametrize(
    "args, code, says",
    [
        (["--every", "10m", "--cron", "* * * * *"], 2, "one of --every or --cron"),
        ([], 2, "one of --every or --cron"),
        (["--cron", "61 * * * *"], 3, "cron:"),
        (["--cron", "not a cron"], 3, "cron:"),
        (["--every", "500ms"], 3, "shorter than a second"),
        (["--every", "1m", "--until", "-1h"], 3, "would never send"),
        (["--every", "1m", "--catch-up", "some"], 3, "catch_up"),
        (["--every", "1m", "--as", "stranger"], 5, "not a participant"),
    ],
)
def test_bad_schedules_are_refused_and_change_nothing(cli, ops, args, code, says):
    before = snapshot(ops)
    if "--as" not in args:
        args = [*args, "--as", "rep"]
    res = cli("schedule", "create", "ops", "ping", *args)
    assert res.exit_code == code, res.stderr
    assert says in res.stderr
    assert snapshot(ops) == before


def test_an_unknown_schedule_is_not_found(cli, ops):
    for verb in ("show", "pause", "resume", "delete"):
        extra = [] if verb == "show" else ["--as", "rep"]
        res = cli("schedule", verb, "9", *extra)
        assert res.exit_code == 4 and "no schedule 9" in res.stderr


# ---------------------------------------------------------------- cancel


def test_cancel_withdraws_a_scheduled_send_into_the_dead_letters(cli, ops):
    mid = cli.ok("send", "ops", "later", "--delay", "1h", "--as", "rep").stdout.strip()
    assert cli.ok("cancel", mid, "--as", "rep").stdout == f"{mid}\tcancelled\t1\n"
    dead = cli.ok("--json", "deadletter", "list").json()
    assert [(d["message_id"], d["reason"]) for d in dead["dead_letters"]] == [
        (int(mid), "cancelled")
    ]
    # it never arrives, however long bob waits
    with freeze_time(timedelta(hours=2)):
        cli.ok("tick")
        assert cli.ok("--json", "receive", "--as", "bob").json()["messages"] == []
    res = cli("cancel", mid, "--as", "rep")
    assert res.exit_code == 5 and "no delivery left" in res.stderr


def test_cancel_refuses_what_it_cannot_withdraw(cli, ops):
    now = cli.ok("send", "ops", "now", "--as", "rep").stdout.strip()
    later = cli.ok("send", "ops", "later", "--delay", "1h", "--as", "rep").stdout.strip()
    before = snapshot(ops)
    for args, code, says in (
        ([now, "--as", "rep"], 5, "not sent with --delay"),
        ([later, "--as", "bob"], 5, "only 'rep'"),
        (["999", "--as", "rep"], 4, "no message 999"),
    ):
        res = cli("cancel", *args)
        assert res.exit_code == code, res.stderr
        assert says in res.stderr
    assert snapshot(ops) == before
    with freeze_time(timedelta(hours=2)):
        cli.ok("tick")
        res = cli("cancel", later, "--as", "rep")
    assert res.exit_code == 5 and "has been delivered" in res.stderr


@pytest.mark.process
def test_sigkill_in_a_catch_up_pass_sends_no_occurrence_twice_and_skips_none(cli, ops):
    """A tick killed in the middle of its transaction (a thousand occurrences to catch up):
    the passes after it send every occurrence exactly once."""
    import signal
    import subprocess
    import time

    from conftest import ACOMM

    # 1,500 occurrences of a 20 KiB body: a pass writes 20 MB, far past SQLite's page cache,
    # so its uncommitted pages spill into the WAL while the transaction is still open
    cli.ok(
        "schedule",
        "create",
        "ops",
        "x" * 20_000,
        "--every",
        "1s",
        "--start",
        "-1500s",
        "--max-runs",
        "1500",
        "--as",
        "rep",
    )
    wal = Path(str(ops) + "-wal")
    start = wal.stat().st_size if wal.exists() else 0
    proc = subprocess.Popen([ACOMM, "tick"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if wal.exists() and wal.stat().st_size > start + 4 * 1024 * 1024:
            break
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the pass finished before it could be killed"
    assert query(ops, "SELECT count(*) FROM messages WHERE content LIKE 'xx%'") == [(0,)]
    sent = 0
    for _ in range(4):
        sent += _tick(cli)["schedules_sent"]
    assert sent == 1500
    times = _occurrences(ops)
    assert len(times) == len(set(times)) == 1500


def test_a_reader_sends_an_occurrence_under_the_configured_limits(cli, ops, monkeypatch):
    """The configured limits bind an occurrence a reader sends as they bind tick's: with
    limits.max_active_messages at 2 and two messages unread, bob's receive does not send the
    due occurrence (the default limit, 100,000, would) but records the refusal on it."""
    monkeypatch.setenv("ACOMM_MAX_ACTIVE_MESSAGES", "2")
    with freeze_time(T0) as frozen:
        cli.ok("schedule", "create", "ops", "ping", "--every", "10m", "--as", "rep")
        cli.ok("send", "ops", "one", "--as", "rep")
        cli.ok("send", "ops", "two", "--as", "rep")
        frozen.tick(timedelta(minutes=10))
        got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
        assert [m["content"] for m in got] == ["one", "two"]
        assert _occurrences(ops) == []
        sched = cli.ok("--json", "schedule", "show", "1").json()
        assert "max_active_messages" in sched["last_error"]
        assert sched["next_at"] == "2026-03-02T09:20:00.000Z"  # passed, not sent twice later
        frozen.tick(timedelta(minutes=10))  # two read: room again, the next one goes out
        got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
        assert [m["content"] for m in got] == ["ping"]
