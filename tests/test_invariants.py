"""After any sequence of operations every delivery is in one documented state and no accepted
message has vanished; two tick processes never process one timer twice."""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ACOMM, assert_invariants, run
from freezegun import freeze_time

from acomm_cli.engine import acking, channels, deadletters, sending, timers
from acomm_cli.errors import CommError
from acomm_cli.model import ChannelConfig, DeliveryMode, MessageFilter, SendRequest

pytestmark = pytest.mark.process

AGENTS = ["a", "b", "c", "d"]


@pytest.mark.parametrize("seed", range(6))
def test_random_sequences_keep_the_invariants(conn, store, seed):
    rng = random.Random(seed)
    now = 1_700_000_000_000
    for name, mode in (
        ("alo", DeliveryMode.AT_LEAST_ONCE),
        ("eo", DeliveryMode.EXACTLY_ONCE),
        ("amo", DeliveryMode.AT_MOST_ONCE),
    ):
        cfg = ChannelConfig(
            delivery=mode,
            ack_timeout_ms=5000,
            max_retries=2,
            retry_backoff_ms=500,
            retry_jitter=0.2,
        )
        channels.create_channel(conn, name, "group", "a", cfg, now)
        for agent in AGENTS[1:]:
            channels.join_channel(conn, name, agent, "member", now, by="a")
    sent: set[int] = set()
    for _ in range(150):
        now += rng.choice([0, 100, 2000, 7000, 30000])
        op = rng.random()
        channel = rng.choice(["alo", "eo", "amo"])
        agent = rng.choice(AGENTS)
        try:
            if op < 0.35:
                r = sending.send(
                    conn,
                    SendRequest(
                        sender=agent,
                        content="x",
                        channel=channel,
                        type=rng.choice(["text", "command"]),
                        delay_ms=rng.choice([None, None, 3000]),
                    ),
                    now,
                )
                sent.add(r.id)
            elif op < 0.55:
                timers.receive_due(
                    conn,
                    agent,
                    MessageFilter(limit=rng.randint(1, 5)),
                    now,
                    peek=rng.random() < 0.2,
                )
            elif op < 0.7 and sent:
                acking.ack(
                    conn,
                    rng.choice(sorted(sent)),
                    agent,
                    rng.choice(["received", "in_progress", "completed", "failed"]),
                    None,
                    now,
                )
            elif op < 0.85:
                timers.tick(conn, now)
            elif op < 0.92:
                dead, _ = deadletters.list_dead_letters(conn, limit=5)
                if dead:
                    deadletters.replay(conn, dead[0].message_id, dead[0].recipient, now)
            elif op < 0.96 and agent != "a":
                channels.leave_channel(conn, channel, agent, now, by=agent)
            else:  # the owner adds it back
                channels.join_channel(conn, channel, agent, "member", now, by="a")
        except CommError:
            pass  # refusals are fine; what matters is the state they leave
        assert_invariants(store, sent)
    timers.tick(conn, now + 10_000_000)
    assert_invariants(store, sent)
    c = sqlite3.connect(store)
    live = c.execute(
        "SELECT count(*) FROM deliveries d JOIN channels ch ON ch.id = d.channel_id"
        " WHERE d.tracked = 1 AND d.state IN ('unread', 'read', 'waiting')"
        " AND ch.name != '_system'"
    ).fetchone()[0]
    assert live == 0, "every tracked delivery ends acknowledged or dead once time runs out"


def _wait_until_blocked(procs: list[subprocess.Popen], store) -> None:
    """Until every process has the store open (it then blocks on the held write lock)."""
    target = os.path.realpath(store)
    deadline = time.monotonic() + 30
    for p in procs:
        while True:
            fds = Path(f"/proc/{p.pid}/fd")
            try:
                if any(os.path.realpath(f) == target for f in fds.iterdir()):
                    break
            except OSError:
                pass  # a descriptor closed while we looked; look again
            assert p.poll() is None and time.monotonic() < deadline, "tick did not open the store"
            time.sleep(0.01)


def test_two_tick_processes_never_process_a_timer_twice(store):
    assert (
        run(
            "channel",
            "create",
            "w",
            "--as",
            "p",
            "--delivery",
            "at-least-once",
            "--max-retries",
            "0",
            "--ack-timeout",
            "1ms",
        ).returncode
        == 0
    )
    for i in range(20):
        assert run("channel", "join", "w", "--as", "p", f"r{i}").returncode == 0
    with open(store.parent / "batch.jsonl", "w") as fh:
        for i in range(200):
            fh.write(f'{{"channel": "w", "from": "p", "content": "m{i}"}}\n')
    assert run("send", "--batch", store.parent / "batch.jsonl").returncode == 0
    # Hold the write lock while both start, so both wait on it and then race for the timers.
    lock = sqlite3.connect(store, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    procs = [
        subprocess.Popen(
            [ACOMM, "tick", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    _wait_until_blocked(procs, store)
    lock.execute("COMMIT")
    lock.close()
    outs = [p.communicate(timeout=60) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    import json

    dead = sum(json.loads(o)["dead_lettered"] for o, _ in outs)
    assert dead == 200 * 20
    c = sqlite3.connect(store)
    assert c.execute("SELECT count(*) FROM dead_letters").fetchone()[0] == 4000
    assert c.execute("SELECT count(*) FROM messages WHERE channel_id = 1").fetchone()[0] == 4000
    assert_invariants(store)


def test_freezegun_controls_the_clock(cli, store):
    with freeze_time("2030-05-05 05:05:05.123"):
        doc = cli.ok("channel", "create", "t", "--as", "a", "--json").json()
    assert doc["created_at"] == "2030-05-05T05:05:05.123Z"
