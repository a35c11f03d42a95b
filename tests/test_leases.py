"""Leases, nack and requeue, retried failures, TTL, through the command line; time
moved by freezegun in process and by faketime for the installed program."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import procs
import pytest
from conftest import ACOMM, assert_invariants, query, snapshot
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"


def _d(cli, mid: int, agent: str = "w") -> dict:
    doc = cli.ok("show", mid, "--json").json()
    return next(d for d in doc["deliveries"] if d["recipient"] == agent)


def _send(cli, body: str = "job", *extra: str) -> int:
    return int(cli.ok("send", "work", body, "--as", "boss", *extra).stdout)


@pytest.fixture
def work(make_channel):
    """boss hands work to w on an at-least-once channel: ack timeout 30 s, lease 2 m,
    1 retry, back-off 1 s."""
    return make_channel(
        "work", "boss", "w", delivery="at-least-once", lease="2m", max_retries=1, retry_backoff="1s"
    )


# ---------------------------------------------------------------- leases


def test_an_in_progress_ack_holds_the_delivery_for_its_lease_then_it_is_redelivered(cli, work):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("receive", "--as", "w")
        got = cli.ok("ack", mid, "--as", "w", "--status", "in_progress", "--json").json()
        assert got["lease_until"] == "2026-01-01T00:02:00.000Z"
        clock.tick(119)  # far past the ack timeout, inside the lease: held
        assert cli.ok("tick", "--json").json()["lease_expired"] == 0
        assert (_d(cli, mid)["state"], _d(cli, mid)["ack_status"]) == ("acked", "in_progress")
        clock.tick(1)  # the worker died: its lease ends at 2 m, redelivery after 1 s back-off
        out = cli.ok("tick", "--json").json()
        assert (out["lease_expired"], out["retried"], out["redelivered"]) == (1, 1, 0)
        clock.tick(1)
        assert cli.ok("tick", "--json").json()["redelivered"] == 1
        d = _d(cli, mid)
        assert (d["state"], d["ack_status"], d["retry_count"]) == ("unread", None, 1)
        assert d["delivered_at"] == "2026-01-01T00:02:01.000Z"
        again = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in again] == [mid]
        assert query(
            work, "SELECT lease_expired, last_error FROM deliveries WHERE message_id = ?", mid
        ) == [(1, "the in_progress lease ran out at delivery 1")]
    assert_invariants(work, {mid})


def test_a_late_tick_writes_the_same_history_as_punctual_ones(cli, work, tmp_path):
    """The lease's end, not the tick's time, dates the redelivery and the dead letter."""
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("ack", mid, "--as", "w", "--status", "received")
        clock.tick(3600)
        out = cli.ok("tick", "--json").json()
        # lease ends 2:00 -> redelivered 2:01 -> ack deadline 2:31 -> no budget: dead
        assert (out["lease_expired"], out["redelivered"], out["dead_lettered"]) == (1, 1, 1)
        dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [(x["reason"], x["dead_lettered_at"]) for x in dl] == [
            ("max_retries_exceeded", "2026-01-01T00:02:31.000Z")
        ]
        assert _d(cli, mid)["delivered_at"] == "2026-01-01T00:02:01.000Z"


@pytest.mark.parametrize("renew", ["ack", "extend"])
def test_renewing_keeps_the_delivery(cli, work, renew):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("ack", mid, "--as", "w", "--status", "in_progress")
        for _ in range(5):  # a worker's heartbeat every 100 s, for 500 s
            clock.tick(100)
            cli.ok("tick")
            if renew == "ack":
                r = cli.ok("ack", mid, "--as", "w", "--status", "in_progress", "--json").json()
                assert r["changed"] is False and r["ack_message_id"] is None
                until = r["lease_until"]
            else:
                until = cli.ok("extend", mid, "--by", "2m", "--as", "w").stdout.strip()
            assert _d(cli, mid)["next_timer_at"] == until
        assert until == "2026-01-01T00:10:20.000Z"
        assert (_d(cli, mid)["state"], _d(cli, mid)["retry_count"]) == ("acked", 0)
        cli.ok("ack", mid, "--as", "w", "--status", "completed")
        clock.tick(3600)
        cli.ok("tick")
        d = _d(cli, mid)
        assert (d["state"], d["ack_status"], d["next_timer_at"]) == ("acked", "completed", None)
    assert_invariants(work, {mid})


def test_extend_never_shortens_and_a_repeated_ack_keeps_a_longer_extension(cli, work):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("ack", mid, "--as", "w", "--status", "in_progress")
        assert (
            cli.ok("extend", mid, "--by", "1h", "--as", "w").stdout.strip()
            == "2026-01-01T01:00:00.000Z"
        )
        clock.tick(60)
        assert (
            cli.ok("extend", mid, "--by", "1m", "--as", "w").stdout.strip()
            == "2026-01-01T01:00:00.000Z"
        )
        r = cli.ok("ack", mid, "--as", "w", "--status", "in_progress", "--json").json()
        assert r["lease_until"] == "2026-01-01T01:00:00.000Z"


def test_lease_expiry_past_max_retries_dead_letters(cli, work):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        for _attempt in range(2):  # the first delivery and its one retry both crash
            cli.ok("receive", "--as", "w")
            cli.ok("ack", mid, "--as", "w", "--status", "in_progress")
            clock.tick(121)
            cli.ok("tick")
        d = _d(cli, mid)
        assert (d["state"], d["retry_count"]) == ("dead", 1)
        [dl] = cli.ok("deadletter", "list", "--reason", "max_retries_exceeded", "--json").json()[
            "dead_letters"
        ]
        assert dl["last_error"] == "the in_progress lease ran out after 2 deliveries"
        stats = cli.ok("stats", "--as", "w", "--json").json()["agents"][0]
        assert (stats["lease_expired"], stats["in_progress"], stats["dead_letters"]) == (2, 0, 1)
    assert_invariants(work, {mid})


def test_stats_and_messages_show_held_work(cli, work):
    with freeze_time(T0):
        held, done, idle = _send(cli, "a"), _send(cli, "b"), _send(cli, "c")
        cli.ok("ack", held, "--as", "w", "--status", "in_progress")
        cli.ok("ack", done, "--as", "w", "--status", "completed")
        doc = cli.ok("stats", "--json").json()
        w = next(a for a in doc["agents"] if a["agent"] == "w")
        assert (w["in_progress"], w["awaiting_ack"], w["lease_expired"]) == (1, 1, 0)
        ch = next(c for c in doc["channels"] if c["channel"] == "work")
        assert ch["in_progress"] == 1
        listed = cli.ok("messages", "--status", "in_progress", "--json").json()
        assert [m["id"] for m in listed["messages"]] == [held]
        both = cli.ok(
            "messages",
            "--status",
            "in_progress",
            "--status",
            "delivered",
            "--channel",
            "work",
            "--json",
        ).json()
        assert {m["id"] for m in both["messages"]} >= {held, idle}
        assert done not in {m["id"] for m in both["messages"]}


def test_an_at_most_once_ack_holds_no_lease(cli, make_channel):
    make_channel("chat", "boss", "w")
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "chat", "fyi", "--as", "boss").stdout)
        r = cli.ok("ack", mid, "--as", "w", "--status", "in_progress", "--json").json()
        assert r["lease_until"] is None
        clock.tick(86_400)
        assert cli.ok("tick", "--json").json()["lease_expired"] == 0
        bad = cli("extend", mid, "--by", "5m", "--as", "w", "--json")
        assert bad.exit_code == 5 and bad.error["code"] == "invalid_state"


def test_the_channel_shows_its_lease_ttl_and_retry_failed(cli, make_channel):
    make_channel("plain", "boss", ack_timeout="45s")
    make_channel(
        "tuned", "boss", lease="5m", message_ttl="10m", retry_failed=True, delivery="at-least-once"
    )
    plain = cli.ok("channel", "show", "plain", "--json").json()["config"]
    tuned = cli.ok("channel", "show", "tuned", "--json").json()["config"]
    assert (plain["lease_ms"], plain["message_ttl_ms"], plain["retry_failed"]) == (45000, 0, False)
    assert (tuned["lease_ms"], tuned["message_ttl_ms"], tuned["retry_failed"]) == (
        300000,
        600000,
        True,
    )


@pytest.mark.process
@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_a_crashed_worker_s_message_is_redelivered_after_its_lease(work, tmp_path):
    """The installed program, its clock moved by faketime: a worker takes a job, says
    in_progress and is killed; a tick after the lease hands the job to the next receive."""
    env = {"FAKETIME_DONT_RESET": "1", "ACOMM_STORE": str(work)}

    def at(when: str, *args: str) -> subprocess.CompletedProcess[str]:
        r = subprocess.run(
            ["faketime", "-f", f"@2026-01-01 {when}", ACOMM, *args],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, **env},
        )
        assert r.returncode == 0, (args, r.stderr)
        return r

    mid = at("00:00:00", "send", "work", "build it", "--as", "boss").stdout.strip()
    worker = procs.spawn(
        [
            "faketime",
            "-f",
            "@2026-01-01 00:00:01",
            "sh",
            "-c",
            f"{ACOMM} receive --as w --body && {ACOMM} ack {mid} --as w --status in_progress"
            " && sleep 600",
        ],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "build it"
        for _ in range(600):  # its ack is committed once the row says so (bounded poll)
            if query(work, "SELECT ack_status FROM deliveries WHERE recipient = 'w'") == [
                ("in_progress",)
            ]:
                break
            subprocess.run(["sleep", "0.05"], check=True)
    finally:
        procs.stop(worker, signal.SIGKILL)  # the crash: faketime, sh and the worker alike
    assert at("00:01:59", "receive", "--as", "w", "--body").stdout == ""
    at("00:02:03", "tick")
    assert at("00:02:03", "receive", "--as", "w", "--body").stdout.strip() == "build it"


# ---------------------------------------------------------------- nack


def test_nack_requeue_now_hands_it_back_at_once(cli, work):
    with freeze_time(T0):
        mid = _send(cli)
        cli.ok("receive", "--as", "w")
        cli.ok("ack", mid, "--as", "w", "--status", "in_progress")
        r = cli.ok("nack", mid, "--as", "w", "--requeue", "--reason", "db busy", "--json").json()
        assert (r["outcome"], r["retry_count"], r["redeliver_at"]) == (
            "requeued",
            1,
            "2026-01-01T00:00:00.000Z",
        )
        d = _d(cli, mid)
        assert (d["state"], d["ack_status"], d["retry_count"]) == ("unread", None, 1)
        assert [m["id"] for m in cli.ok("receive", "--as", "w", "--json").json()["messages"]] == [
            mid
        ]
    assert_invariants(work, {mid})


def test_nack_with_a_delay_waits_then_redelivers(cli, work):
    with freeze_time(T0) as clock:
        mid = _send(cli)
        cli.ok("receive", "--as", "w")
        out = cli.ok("nack", mid, "--as", "w", "--delay", "30s").stdout
        assert out == "requeued 2026-01-01T00:00:30.000Z\n"  # a delay implies --requeue
        assert _d(cli, mid)["state"] == "waiting"
        clock.tick(29)
        assert cli.ok("receive", "--as", "w", "--json").json()["messages"] == []
        clock.tick(1)
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [mid]
        assert got[0]["delivery"]["delivered_at"] == "2026-01-01T00:00:30.000Z"


def test_nack_without_requeue_dead_letters_at_once_with_the_reason(cli, work):
    with freeze_time(T0):
        mid = _send(cli)
        cli.ok("receive", "--as", "w")
        assert (
            cli.ok("nack", mid, "--as", "w", "--reason", "malformed input").stdout
            == "dead_lettered nacked\n"
        )
        [dl] = cli.ok("deadletter", "list", "--reason", "nacked", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["recipient"], dl["last_error"]) == (
            mid,
            "w",
            "malformed input",
        )
        assert _d(cli, mid)["state"] == "dead"
        assert query(
            work, "SELECT count(*) FROM messages WHERE topic = '_system.message.deadletter'"
        ) == [(1,)]
        cli.ok("deadletter", "replay", mid)  # a nacked message can be replayed like any
        assert _d(cli, mid)["state"] == "unread"
    assert_invariants(work, {mid})


def test_requeues_count_against_max_retries(cli, work):
    with freeze_time(T0):
        mid = _send(cli)
        assert (
            cli.ok("nack", mid, "--as", "w", "--requeue", "--json").json()["outcome"] == "requeued"
        )
        r = cli.ok(
            "nack", mid, "--as", "w", "--requeue", "--reason", "still broken", "--json"
        ).json()
        assert (r["outcome"], r["reason"]) == ("dead_lettered", "max_retries_exceeded")
        [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert dl["last_error"] == "still broken (given back after 2 deliveries)"


def test_a_failed_ack_on_a_retry_failed_channel_is_retried_then_dead_lettered(cli, make_channel):
    store = make_channel(
        "jobs",
        "boss",
        "w",
        delivery="at-least-once",
        retry_failed=True,
        max_retries=2,
        retry_backoff="10s",
    )
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "jobs", "flaky", "--as", "boss").stdout)
        for k, wait in enumerate([10, 20], start=1):  # back-off 10 s x 2^(k-1)
            cli.ok("receive", "--as", "w")
            r = cli.ok(
                "ack", mid, "--as", "w", "--status", "failed", "--note", "oops", "--json"
            ).json()
            assert (r["requeued"], r["ack_message_id"]) == (True, None)
            d = _d(cli, mid)
            assert (d["state"], d["retry_count"], d["ack_status"]) == ("waiting", k, None)
            clock.tick(wait)
            cli.ok("tick")
        cli.ok("receive", "--as", "w")
        r = cli.ok("ack", mid, "--as", "w", "--status", "failed", "--json").json()
        assert r["requeued"] is False
        [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert (dl["reason"], dl["retry_count"]) == ("max_retries_exceeded", 2)
        # without --retry-failed a failed ack stays terminal
        mid2 = _send_to(cli, make_channel, "plainjobs")
        r = cli.ok("ack", mid2, "--as", "w", "--status", "failed", "--json").json()
        assert (r["requeued"], _d(cli, mid2)["state"]) == (False, "acked")
    assert_invariants(store)


def test_receive_ack_failed_on_a_retry_failed_channel_retries_as_ack_failed_does(cli, make_channel):
    """`receive --ack failed` is `receive` then `ack --status failed`: on a --retry-failed
    channel the message is given back after the back-off, its sender gets no acknowledgement,
    and past max_retries it is dead-lettered; on a plain channel in the same call the failed
    ack stays terminal."""
    store = make_channel(
        "jobs",
        "boss",
        "w",
        delivery="at-least-once",
        retry_failed=True,
        max_retries=1,
        retry_backoff="10s",
    )
    mid2 = _send_to(cli, make_channel, "plainjobs")
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "jobs", "flaky", "--as", "boss").stdout)
        out = cli.ok("receive", "--as", "w", "--ack", "failed", "--json").json()
        got = {m["id"]: m["delivery"] for m in out["messages"]}
        assert set(got) == {mid, mid2}
        assert (got[mid]["state"], got[mid]["retry_count"], got[mid]["ack_status"]) == (
            "waiting",
            1,
            None,
        )
        assert (got[mid2]["state"], got[mid2]["ack_status"]) == ("acked", "failed")
        for m, state in ((mid, "waiting"), (mid2, "acked")):  # printed as stored
            d = _d(cli, m)
            assert (d["state"], d["retry_count"]) == (state, got[m]["retry_count"])
        assert _d(cli, mid)["next_timer_at"] == got[mid]["next_timer_at"]
        # the retried message's sender hears nothing; the plain one's gets its `failed` ack
        acks = query(
            store,
            "SELECT json_extract(metadata, '$.ack_for'), json_extract("
            "metadata, '$.status') FROM messages WHERE type = 'acknowledgment'",
        )
        assert acks == [(str(mid2), "failed")]
        clock.tick(10)
        cli.ok("tick")
        out = cli.ok("receive", "--as", "w", "--ack", "failed", "--json").json()
        assert [(m["id"], m["delivery"]["state"]) for m in out["messages"]] == [(mid, "dead")]
        [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["reason"]) == (mid, "max_retries_exceeded")
    assert_invariants(store)


def test_receive_ack_failed_on_a_retry_failed_queue_gives_the_job_back_to_the_queue(
    cli, make_channel
):
    store = make_channel(
        "jobs",
        "boss",
        "w",
        "v",
        type="queue",
        delivery="at-least-once",
        retry_failed=True,
        max_retries=2,
        retry_backoff="10s",
    )
    with freeze_time(T0) as clock:
        mid = int(cli.ok("send", "jobs", "flaky", "--as", "boss").stdout)
        [m] = cli.ok("receive", "--as", "w", "--ack", "failed", "--json").json()["messages"]
        d = m["delivery"]
        assert (m["id"], d["recipient"], d["state"], d["retry_count"]) == (mid, "*", "waiting", 1)
        clock.tick(10)
        cli.ok("tick")
        # back in the queue after the back-off: any member may claim it
        [again] = cli.ok("receive", "--as", "v", "--json").json()["messages"]
        assert again["id"] == mid and again["delivery"]["recipient"] == "v"
    assert_invariants(store)


def _send_to(cli, make_channel, name: str) -> int:
    make_channel(name, "boss", "w", delivery="at-least-once")
    return int(cli.ok("send", name, "x", "--as", "boss").stdout)


def test_retry_failed_is_refused_on_an_exactly_once_channel(cli, store):
    r = cli(
        "channel",
        "create",
        "once",
        "--as",
        "boss",
        "--delivery",
        "exactly-once",
        "--retry-failed",
        "--json",
    )
    assert r.exit_code == 3 and r.error["field"] == "retry_failed"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "args, status, code, field",
    [
        (["nack", "{mid}", "--as", "w", "--delay", "0s"], 3, "validation_failed", "delay"),
        (["nack", "{mid}", "--as", "w", "--delay", "-5s"], 3, "validation_failed", "delay"),
        (["extend", "{mid}", "--as", "w", "--by", "0s"], 3, "validation_failed", "by"),
        (["extend", "{mid}", "--as", "w", "--by", "-1m"], 3, "validation_failed", "by"),
        (["send", "work", "x", "--as", "boss", "--ttl", "0s"], 3, "validation_failed", "ttl"),
        (["send", "work", "x", "--as", "boss", "--ttl", "-10m"], 3, "validation_failed", "ttl"),
        (
            ["channel", "create", "c2", "--as", "boss", "--lease", "0s"],
            3,
            "validation_failed",
            "lease",
        ),
        (
            ["channel", "create", "c2", "--as", "boss", "--message-ttl", "0ms"],
            3,
            "validation_failed",
            "message_ttl",
        ),
        (["nack", "{mid}", "--as", "boss"], 5, "not_participant", "agent"),  # someone else's
        (["nack", "999", "--as", "w"], 4, "not_found", "message"),
        (["extend", "{mid}", "--as", "w", "--by", "5m"], 5, "invalid_state", "message"),
        (["nack", "{done}", "--as", "w"], 5, "invalid_state", "message"),  # already acked
        (["nack", "{done}", "--as", "w", "--requeue"], 5, "invalid_state", "message"),
    ],
)
def test_bad_input_exits_with_its_code_and_changes_nothing(cli, work, args, status, code, field):
    with freeze_time(T0):
        mid = _send(cli)
        done = _send(cli, "done")
        cli.ok("ack", done, "--as", "w", "--status", "completed")
        before = snapshot(work)
        r = cli(*[a.format(mid=mid, done=done) for a in args], "--json")
        assert (r.exit_code, r.error["code"], r.error.get("field")) == (status, code, field), (
            r.stderr
        )
        assert snapshot(work) == before


def test_a_nack_of_a_dead_or_waiting_delivery_is_refused(cli, work):
    with freeze_time(T0):
        mid = _send(cli)
        cli.ok("nack", mid, "--as", "w", "--delay", "1m")
        r = cli("nack", mid, "--as", "w", "--json")
        assert r.exit_code == 5 and "waiting" in r.error["message"]
        other = _send(cli)
        cli.ok("nack", other, "--as", "w")
        r = cli("nack", other, "--as", "w", "--requeue", "--json")
        assert r.exit_code == 5 and "dead-lettered" in r.error["message"]


# ---------------------------------------------------------------- TTL


@pytest.fixture
def feed(make_channel):
    """boss tells w things on an at-most-once channel (no ack timer to race the TTL)."""
    return make_channel("work", "boss", "w")


def test_an_unread_message_past_its_ttl_is_dead_lettered_expired(cli, feed):
    work = feed
    with freeze_time(T0) as clock:
        mid = _send(cli, "stale soon", "--ttl", "10m")
        assert cli.ok("show", mid, "--json").json()["deliveries"][0]["state"] == "unread"
        clock.tick(599)
        assert cli.ok("receive", "--as", "w", "--peek", "--json").json()["total_count"] == 1
        clock.tick(1)
        # receive applies its own due timers: an expired message is never handed out
        assert cli.ok("receive", "--as", "w", "--json").json()["messages"] == []
        [dl] = cli.ok("deadletter", "list", "--reason", "expired", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["dead_lettered_at"]) == (mid, "2026-01-01T00:10:00.000Z")
    assert_invariants(work, {mid})


def test_a_read_message_does_not_expire(cli, work):
    with freeze_time(T0) as clock:
        mid = _send(cli, "read in time", "--ttl", "1m")
        cli.ok("receive", "--as", "w")
        cli.ok("ack", mid, "--as", "w")
        clock.tick(3600)
        assert cli.ok("tick", "--json").json()["expired"] == 0
        assert _d(cli, mid)["state"] == "acked"


def test_the_channel_default_ttl_applies_and_send_ttl_overrides_it(cli, make_channel):
    make_channel("news", "boss", "w", message_ttl="1m")
    with freeze_time(T0) as clock:
        short = int(cli.ok("send", "news", "default", "--as", "boss").stdout)
        long = int(cli.ok("send", "news", "longer", "--as", "boss", "--ttl", "1h").stdout)
        clock.tick(61)
        out = cli.ok("tick", "--json").json()
        assert (out["expired"], out["dead_lettered"]) == (1, 1)
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [long]
        assert _d(cli, short)["state"] == "dead"


def test_a_scheduled_message_s_ttl_counts_from_its_delivery(cli, feed):
    with freeze_time(T0) as clock:
        mid = _send(cli, "later", "--delay", "1h", "--ttl", "10m")
        clock.tick(3600 + 300)
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [mid]


def test_a_queued_message_past_its_ttl_is_dead_lettered_expired(cli, make_channel):
    """max_pending holds the second message back (queued); it expires there, never
    delivered, and does not take a slot when the first is acknowledged."""
    store = make_channel("narrow", "boss", "w", max_pending=1)
    with freeze_time(T0) as clock:
        first = int(cli.ok("send", "narrow", "one", "--as", "boss").stdout)
        held = int(cli.ok("send", "narrow", "two", "--as", "boss", "--ttl", "5m").stdout)
        third = int(cli.ok("send", "narrow", "three", "--as", "boss").stdout)
        assert _d(cli, held)["state"] == "queued"
        clock.tick(300)
        out = cli.ok("tick", "--json").json()
        assert out["expired"] == 1
        [dl] = cli.ok("deadletter", "list", "--reason", "expired", "--json").json()["dead_letters"]
        assert (dl["message_id"], dl["last_error"]) == (held, "not read before the message expired")
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [first]  # reading it frees the slot: for `three`
        got = cli.ok("receive", "--as", "w", "--json").json()["messages"]
        assert [m["id"] for m in got] == [third]
    assert_invariants(store, {first, held, third})


def test_a_batch_line_may_carry_a_ttl(cli, work, tmp_path):
    batch = tmp_path / "b.jsonl"
    batch.write_text(
        '{"channel": "work", "from": "boss", "content": "x", "ttl": "1m"}\n'
        '{"channel": "work", "from": "boss", "content": "y", "ttl": "0s"}\n'
    )
    r = cli("send", "--batch", str(batch), "--json")
    assert r.exit_code == 3 and r.error["field"] == "ttl" and r.error["line"] == 2
    batch.write_text('{"channel": "work", "from": "boss", "content": "x", "ttl": "1m"}\n')
    with freeze_time(T0) as clock:
        cli.ok("send", "--batch", str(batch))
        clock.tick(60)
        assert cli.ok("tick", "--json").json()["expired"] == 1
