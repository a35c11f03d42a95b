"""Work queues: channel type `queue`, each message to exactly one member, the first
`receive` that claims it. Through the command line: in process for the rules (time moved with
freezegun), and worker processes draining one queue in parallel (time moved with faketime)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from freezegun import freeze_time

from tests.conftest import ACOMM, assert_invariants, query, run, snapshot, wait_for

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"
WORKER = Path(__file__).with_name("queue_worker.py")


def _jobs(cli, make_channel, *workers: str, **flags):
    store = make_channel("queue", "boss", *workers, type="queue", **flags)
    return store


def _send(cli, body: str, **opts: str) -> int:
    args = ["send", "queue", body, "--as", "boss"]
    for k, v in opts.items():
        args += [f"--{k}", v]
    return int(cli.ok(*args).stdout)


def _receive(cli, agent: str, limit: int = 1) -> list[dict]:
    out = cli.ok("receive", "--as", agent, "--json", "--limit", str(limit)).json()
    return out["messages"]


def test_each_message_goes_to_one_worker_oldest_first(cli, make_channel):
    _jobs(cli, make_channel, "w1", "w2")
    sent = cli.ok("send", "queue", "job 1", "--as", "boss", "--json").json()
    assert sent["recipients"] == ["*"] and sent["status"] == "delivered"
    ids = [sent["id"]] + [_send(cli, f"job {i}") for i in (2, 3)]
    first = _receive(cli, "w1")
    second = _receive(cli, "w2", limit=5)
    assert [m["id"] for m in first] == ids[:1]
    assert [m["id"] for m in second] == ids[1:]
    assert first[0]["delivery"]["recipient"] == "w1"
    assert _receive(cli, "w1") == []  # nothing left to claim
    shown = cli.ok("show", str(ids[1]), "--json").json()
    assert [(d["recipient"], d["state"]) for d in shown["deliveries"]] == [("w2", "read")]


def test_receive_ack_claims_from_the_queue_as_receive_does(cli, make_channel):
    """`receive --ack STATUS` is `receive` then `ack`: on a work queue it claims the jobs it
    prints (it used to read the inbox without claiming, so a queue's worker got nothing)."""
    store = _jobs(cli, make_channel, "w1", "w2", delivery="at-least-once")
    ids = [_send(cli, f"job {i}") for i in (1, 2, 3)]
    out = cli.ok("receive", "--as", "w1", "--limit", "2", "--ack", "completed", "--json").json()[
        "messages"
    ]
    assert [
        (m["id"], m["delivery"]["recipient"], m["delivery"]["state"], m["delivery"]["ack_status"])
        for m in out
    ] == [(ids[0], "w1", "acked", "completed"), (ids[1], "w1", "acked", "completed")]
    assert [m["id"] for m in _receive(cli, "w2", limit=5)] == ids[2:]
    assert_invariants(store)


def test_priority_first_when_the_channel_orders_by_priority(cli, make_channel):
    _jobs(cli, make_channel, "w1", priority_ordering=True)
    low = _send(cli, "low", priority="low")
    high = _send(cli, "high", priority="high")
    normal = _send(cli, "normal")
    assert [m["id"] for m in _receive(cli, "w1", 3)] == [high, normal, low]


def test_without_priority_ordering_the_oldest_comes_first(cli, make_channel):
    _jobs(cli, make_channel, "w1")
    low = _send(cli, "low", priority="low")
    high = _send(cli, "high", priority="high")
    assert [m["id"] for m in _receive(cli, "w1", 3)] == [low, high]


def test_who_claims(cli, make_channel):
    """Members and the owner claim; observers and a sender's own messages (without echo) do
    not; --peek claims nothing; an unclaimed message waits with no member at all."""
    _jobs(cli, make_channel)
    mid = _send(cli, "waits for a worker")
    cli.ok("channel", "join", "queue", "--as", "boss", "watcher", "--role", "observer")
    assert _receive(cli, "watcher") == []
    assert _receive(cli, "boss") == []  # its own message
    cli.ok("channel", "join", "queue", "--as", "boss", "w1")
    peek = cli.ok("receive", "--as", "w1", "--peek", "--json").json()
    assert peek["messages"] == []
    assert [m["id"] for m in _receive(cli, "w1")] == [mid]
    mine = int(cli.ok("send", "queue", "from w1", "--as", "w1").stdout)
    assert [m["id"] for m in _receive(cli, "boss")] == [mine]


def test_exactly_once_is_refused_and_nothing_is_created(cli, store):
    before = snapshot(store)
    r = cli(
        "channel",
        "create",
        "queue",
        "--type",
        "queue",
        "--delivery",
        "exactly-once",
        "--as",
        "boss",
        "--json",
    )
    assert r.exit_code == 3
    assert r.error["code"] == "validation_failed" and r.error["field"] == "delivery"
    assert "exactly-once" in r.error["message"]
    assert snapshot(store) == before


def test_an_unacked_claim_returns_to_the_queue_for_any_worker_then_dead_letters(cli, make_channel):
    store = _jobs(
        cli,
        make_channel,
        "w1",
        "w2",
        delivery="at-least-once",
        ack_timeout="30s",
        max_retries=1,
        retry_backoff="1s",
    )
    with freeze_time(T0) as clock:
        mid = _send(cli, "job")
        assert [m["id"] for m in _receive(cli, "w1")] == [mid]
        clock.tick(29)
        assert _receive(cli, "w2") == []  # still w1's
        clock.tick(2)  # deadline at 30 s, back in the queue after the 1 s back-off
        got = _receive(cli, "w2")  # w2's own receive moves the queue's timers: no tick
        assert [(m["id"], m["delivery"]["retry_count"]) for m in got] == [(mid, 1)]
        late = cli("ack", str(mid), "--as", "w1", "--json")
        assert late.exit_code == 5 and late.error["code"] == "invalid_state"
        assert "does not hold" in late.error["message"]
        clock.tick(31)  # w2's claim expires too: past max_retries
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 1
        dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [(d["message_id"], d["recipient"], d["reason"]) for d in dl] == [
            (mid, "w2", "max_retries_exceeded")
        ]
        stats = cli.ok("stats", "--json").json()
        assert [c for c in stats["channels"] if c["channel"] == "queue"] == [
            {
                "channel": "queue",
                "pending": 0,
                "queued": 0,
                "dead_letters": 1,
                "in_progress": 0,
                "lease_expired": 0,
                "unclaimed": 0,
            }
        ]
        # replayed: back in the queue, for any member (w2 left meanwhile)
        cli.ok("channel", "leave", "queue", "--as", "boss", "w2")
        cli.ok("deadletter", "replay", str(mid))
        assert cli.ok("stats", "--json").json()["channels"][1]["unclaimed"] == 1
        got = _receive(cli, "w1")
        assert [(m["id"], m["delivery"]["retry_count"]) for m in got] == [(mid, 0)]
        cli.ok("ack", str(mid), "--as", "w1")
        assert [
            r[0] for r in query(store, "SELECT state FROM deliveries WHERE message_id = ?", mid)
        ] == ["acked"]
    assert_invariants(store, {mid})


def test_at_most_once_claims_have_no_timer(cli, make_channel):
    store = _jobs(cli, make_channel, "w1", "w2")
    with freeze_time(T0) as clock:
        mid = _send(cli, "job")
        assert [m["id"] for m in _receive(cli, "w1")] == [mid]
        clock.tick(3600)
        cli.ok("tick")
        assert _receive(cli, "w2") == []
    assert query(store, "SELECT recipient, state, next_timer_at FROM deliveries") == [
        ("w1", "read", None)
    ]


def test_a_worker_leaving_gives_its_claims_back(cli, make_channel):
    store = _jobs(cli, make_channel, "w1", "w2", delivery="at-least-once")
    mid = _send(cli, "job")
    assert [m["id"] for m in _receive(cli, "w1")] == [mid]
    cli.ok("channel", "leave", "queue", "--as", "boss", "w1")
    assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 0
    assert [m["id"] for m in _receive(cli, "w2")] == [mid]
    assert_invariants(store, {mid})


def test_stats_counts_unclaimed_work_on_the_channel_not_as_an_agent(cli, make_channel):
    _jobs(cli, make_channel, "w1", delivery="at-least-once")
    for i in range(3):
        _send(cli, f"job {i}")
    _receive(cli, "w1")
    doc = cli.ok("stats", "--json").json()
    assert [a["agent"] for a in doc["agents"]] == ["w1"]
    queue = [c for c in doc["channels"] if c["channel"] == "queue"][0]
    assert queue["pending"] == 3 and queue["unclaimed"] == 2
    assert "unclaimed" not in doc["channels"][0]  # _system is no queue


# ---------------------------------------------------------------- worker processes


def _fill(store: Path, tmp_path: Path, n: int) -> set[int]:
    lines = "".join(
        json.dumps({"channel": "queue", "from": "boss", "content": f"job {i}"}) + "\n"
        for i in range(n)
    )
    r = run("send", "--batch", "-", "--json", input=lines)
    assert r.returncode == 0, r.stderr
    return {
        row[0]
        for row in query(
            store,
            "SELECT m.id FROM messages m JOIN channels c ON"
            " c.id = m.channel_id WHERE c.name = 'queue'",
        )
    }


def _worker(
    agent: str, log: Path, *, ack: bool, limit: int, prefix: str = ""
) -> subprocess.Popen[bytes]:
    args = [
        sys.executable,
        str(WORKER),
        ACOMM,
        agent,
        str(log),
        "--limit",
        str(limit),
        "--prefix",
        prefix,
    ] + (["--ack"] if ack else [])
    return subprocess.Popen(
        args, env=os.environ.copy(), start_new_session=True, stderr=subprocess.PIPE
    )


def _logged(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]


def _finish(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err.decode()


@pytest.mark.process
def test_four_workers_drain_an_at_most_once_queue_each_message_exactly_once(
    cli, make_channel, tmp_path
):
    store = _jobs(cli, make_channel, "w1", "w2", "w3", "w4")
    n = int(os.environ.get("ACOMM_QUEUE_TEST_MESSAGES", "2000"))
    sent = _fill(store, tmp_path, n)
    logs = [tmp_path / f"w{k}.log" for k in range(1, 5)]
    _finish([_worker(f"w{k}", log, ack=False, limit=25) for k, log in enumerate(logs, 1)])
    got = [e for log in logs for e in _logged(log)]
    seen = Counter(e["id"] for e in got)
    assert set(seen) == sent and len(sent) == n
    assert max(seen.values()) == 1  # never twice: never held by two workers
    assert sum(1 for log in logs if _logged(log)) >= 2  # the work was shared
    assert query(
        store,
        "SELECT count(*) FROM deliveries d JOIN channels c ON c.id ="
        " d.channel_id WHERE c.name = 'queue' AND d.recipient = '*'",
    ) == [(0,)]
    assert_invariants(store, sent)


@pytest.mark.process
@pytest.mark.skipif(shutil.which("faketime") is None, reason="faketime is not installed")
def test_workers_killed_at_random_lose_nothing_on_an_at_least_once_queue(
    cli, make_channel, tmp_path
):
    """Four workers receive and ack; two are killed (with their acomm child) at random
    points. The survivors drain what nobody holds; an hour later (faketime) a tick hands the
    dead workers' claims back and the survivors finish. Every message ends acked, and no
    claim generation (retry_count) of a message was ever held by two workers."""
    store = _jobs(
        cli,
        make_channel,
        "w1",
        "w2",
        "w3",
        "w4",
        delivery="at-least-once",
        ack_timeout="30m",
        max_retries=5,
    )
    n = int(os.environ.get("ACOMM_QUEUE_TEST_ACKED", "2000"))
    sent = _fill(store, tmp_path, n)
    rng = random.Random(os.environ.get("ACOMM_QUEUE_TEST_SEED", "18"))
    logs = {f"w{k}": tmp_path / f"w{k}.log" for k in range(1, 5)}
    procs = {w: _worker(w, log, ack=True, limit=25) for w, log in logs.items()}
    victims = rng.sample(sorted(procs), 2)
    for w in victims:  # killed once it has claimed a random number of messages
        at = rng.randint(1, 300)
        wait_for(
            lambda w=w, at=at: len(_logged(logs[w])) >= at or procs[w].poll() is not None,
            within=120,
        )
        os.killpg(procs[w].pid, signal.SIGKILL)
        procs[w].wait()
    survivors = [w for w in procs if w not in victims]
    _finish([procs[w] for w in survivors])
    later = "faketime -f +1h"
    r = subprocess.run(
        [*later.split(), ACOMM, "tick", "--json"], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    _finish([_worker(w, logs[w], ack=True, limit=25, prefix=later) for w in survivors])
    states = query(
        store,
        "SELECT d.state, d.ack_status, count(*) FROM deliveries d JOIN"
        " messages m ON m.id = d.message_id WHERE m.type = 'text' AND"
        " d.channel_id = (SELECT id FROM channels WHERE name = 'queue')"
        " GROUP BY 1, 2",
    )
    assert states == [("acked", "completed", n)]
    got = [e for log in logs.values() for e in _logged(log)]
    assert {e["id"] for e in got} == sent  # at least once each
    assert any(e["retry"] >= 1 for e in got)  # a killed worker's claim went to another
    claims = Counter((e["id"], e["retry"]) for e in got)
    assert max(claims.values()) == 1, [k for k, v in claims.items() if v > 1]
    assert_invariants(store, sent)


def test_a_lapsed_lease_or_a_nack_gives_the_claim_back_to_the_queue(cli, make_channel):
    """Leases and nack on a work queue: work a worker held and lost, or gave back,
    returns to the queue for ANY worker, not to the worker that held it."""
    store = _jobs(
        cli,
        make_channel,
        "w1",
        "w2",
        delivery="at-least-once",
        ack_timeout="30s",
        lease="1m",
        max_retries=3,
        retry_backoff="1s",
    )
    with freeze_time(T0) as clock:
        held = _send(cli, "long job")
        assert [m["id"] for m in _receive(cli, "w1")] == [held]
        cli.ok("ack", str(held), "--as", "w1", "--status", "in_progress")
        clock.tick(59)
        assert _receive(cli, "w2") == []  # still held by w1's lease
        clock.tick(3)  # the lease ran out at 60 s; back in the queue after the 1 s back-off
        cli.ok("tick")
        got = _receive(cli, "w2")
        assert [(m["id"], m["delivery"]["recipient"]) for m in got] == [(held, "w2")]
        cli.ok("nack", str(held), "--as", "w2", "--requeue", "--reason", "busy")
        again = _receive(cli, "w1")
        assert [(m["id"], m["delivery"]["retry_count"]) for m in again] == [(held, 2)]
    assert_invariants(store)
