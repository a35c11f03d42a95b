"""Worker pools on pubsub channels (`subscribe --group`) and FIFO message groups
(`send --group-key`): one member of a pool gets each message, as a work-queue claim; a key's
messages go out in send order, one at a time, while other keys run in parallel."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from freezegun import freeze_time

from acomm_cli.engine import channels as channel_engine
from acomm_cli.engine import inbox, sending
from acomm_cli.errors import ValidationFailed
from acomm_cli.model import ChannelConfig, DeliveryMode, MessageFilter, SendRequest
from acomm_cli.store.connection import open_store
from tests.conftest import ACOMM, assert_invariants, query, run, snapshot

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"
WORKER = Path(__file__).with_name("queue_worker.py")


def _pool(cli, make_channel, *members: str, name: str = "ci", **flags) -> Path:
    store = make_channel(name, "pub", type="pubsub", **flags)
    for m in members:
        cli.ok("subscribe", name, "job.#", "--group", "builders", "--as", m)
    return store


def _publish(cli, body: str, *opts: str, channel: str = "ci", topic: str = "job.build") -> int:
    return int(cli.ok("publish", channel, topic, body, "--as", "pub", *opts).stdout)


def _receive(cli, agent: str, limit: int = 1) -> list[dict]:
    return cli.ok("receive", "--as", agent, "--json", "--limit", str(limit)).json()["messages"]


def _ids(msgs: list[dict]) -> list[int]:
    return [m["id"] for m in msgs]


# ---------------------------------------------------------------- worker pools


def test_one_member_of_a_pool_gets_each_message_other_subscribers_their_own_copy(cli, make_channel):
    store = _pool(cli, make_channel, "w1", "w2", "w3")
    cli.ok("subscribe", "ci", "job.*", "--as", "audit")  # its own copy
    cli.ok("subscribe", "ci", "job.build", "--group", "archivers", "--as", "arch")
    sent = cli.ok("publish", "ci", "job.build", "first", "--as", "pub", "--json").json()
    assert sent["recipients"] == ["*archivers", "*builders", "audit"]
    ids = [sent["id"]] + [_publish(cli, f"job {i}") for i in range(2, 7)]
    got = {w: _ids(_receive(cli, w, limit=2)) for w in ("w1", "w2", "w3")}
    assert got == {"w1": ids[0:2], "w2": ids[2:4], "w3": ids[4:6]}
    assert _receive(cli, "w1", limit=10) == []  # the pool's share is all claimed
    assert _ids(_receive(cli, "audit", limit=10)) == ids  # every one, as before
    assert _ids(_receive(cli, "arch", limit=10)) == ids  # the other pool: its own copies
    shown = cli.ok("show", str(ids[2]), "--json").json()
    assert sorted(d["recipient"] for d in shown["deliveries"]) == ["arch", "audit", "w2"]
    assert_invariants(store, set(ids))


def test_a_nack_gives_the_message_back_to_the_pool_not_to_the_member(cli, make_channel):
    store = _pool(cli, make_channel, "w1", "w2", delivery="at-least-once")
    mid = _publish(cli, "job")
    assert _ids(_receive(cli, "w1")) == [mid]
    assert _receive(cli, "w2") == []
    cli.ok("nack", str(mid), "--requeue", "--as", "w1", "--reason", "busy")
    assert query(store, "SELECT recipient, pool FROM deliveries WHERE message_id = ?", mid) == [
        ("*builders", "*builders")
    ]
    again = _receive(cli, "w2")
    assert [(m["id"], m["delivery"]["recipient"], m["delivery"]["retry_count"]) for m in again] == [
        (mid, "w2", 1)
    ]
    cli.ok("ack", str(mid), "--as", "w2")
    assert_invariants(store, {mid})


def test_a_lapsed_lease_returns_the_claim_to_the_pool_for_any_member(cli, make_channel):
    store = _pool(
        cli,
        make_channel,
        "w1",
        "w2",
        delivery="at-least-once",
        ack_timeout="30s",
        lease="1m",
        max_retries=1,
        retry_backoff="1s",
    )
    with freeze_time(T0) as clock:
        mid = _publish(cli, "long job")
        assert _ids(_receive(cli, "w1")) == [mid]
        cli.ok("ack", str(mid), "--as", "w1", "--status", "in_progress")
        clock.tick(59)
        assert _receive(cli, "w2") == []  # w1's lease holds it
        clock.tick(3)  # ran out at 60 s, back in the pool after the 1 s back-off
        got = _receive(cli, "w2")  # w2's own receive moves the pool's timers: no tick
        assert [(m["id"], m["delivery"]["retry_count"]) for m in got] == [(mid, 1)]
        late = cli("ack", str(mid), "--as", "w1", "--json")
        assert late.exit_code == 5
        clock.tick(31)  # w2 never acks: past max_retries, dead-lettered as w2's
        assert cli.ok("tick", "--json").json()["dead_lettered"] == 1
        dl = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
        assert [(d["message_id"], d["recipient"]) for d in dl] == [(mid, "w2")]
        # w2 leaves; the replayed dead letter goes back to the pool, for w1
        cli.ok("unsubscribe", "ci", "job.#", "--as", "w2")
        cli.ok("deadletter", "replay", str(mid))
        assert [(m["id"], m["delivery"]["recipient"]) for m in _receive(cli, "w1")] == [(mid, "w1")]
    assert_invariants(store, {mid})


def test_a_pool_outlives_its_last_member_and_keeps_filling(cli, make_channel):
    """As an SQS queue subscribed to an SNS topic with no consumer: the last member leaves,
    the pool still gets a copy of each new matching message, `stats` shows the backlog
    grow, and the member who joins later claims all of it, in order."""
    store = _pool(cli, make_channel, "w1", delivery="at-least-once")
    cli.ok("subscribe", "ci", "job.#", "--as", "audit")
    ids = [_publish(cli, f"job {i}") for i in range(3)]
    assert _ids(_receive(cli, "w1")) == ids[:1]
    cli.ok("unsubscribe", "ci", "job.#", "--as", "w1")  # its claim goes back too
    stats = cli.ok("stats", "--json").json()
    assert stats["pools"] == [{"channel": "ci", "group": "builders", "waiting": 3, "claimed": 0}]
    assert _receive(cli, "w1") == []  # no longer a member
    # no member: the pool keeps the pattern its last member had, and keeps filling
    listed = cli.ok("subscriptions", "ci", "--json").json()["subscriptions"]
    assert {"agent": "*builders", "pattern": "job.#", "group": "builders"} in listed
    later = cli.ok("publish", "ci", "job.build", "later", "--as", "pub", "--json").json()
    assert later["recipients"] == ["*builders", "audit"]
    assert (
        cli.ok("publish", "ci", "other.x", "x", "--as", "pub", "--json").json()["recipients"] == []
    )  # only what matches the pool's pattern
    ids.append(later["id"])
    ids.append(_publish(cli, "later 2", "--group-key", "k"))  # still a pool: keys are fine
    assert cli.ok("stats", "--json").json()["pools"] == [
        {"channel": "ci", "group": "builders", "waiting": 5, "claimed": 0}
    ]
    assert "pool\tci\tbuilders\t5\t0" in cli.ok("stats").stdout
    # a new member: its patterns are the pool's again, and it claims the backlog in order
    cli.ok("subscribe", "ci", "job.build", "--group", "builders", "--as", "w9")
    assert _ids(_receive(cli, "w9", limit=10)) == ids
    assert cli.ok("stats", "--json").json()["pools"] == [
        {"channel": "ci", "group": "builders", "waiting": 0, "claimed": 5}
    ]
    assert query(store, "SELECT count(*) FROM pool_bindings") == [(0,)]
    assert cli.ok("publish", "ci", "job.test", "x", "--as", "pub", "--json").json()[
        "recipients"
    ] == ["audit"]  # job.# went with the last member who held it
    assert_invariants(store, set(ids))


def test_leaving_the_channel_keeps_the_pool_too(cli, make_channel):
    _pool(cli, make_channel, "w1", delivery="at-least-once")
    cli.ok("channel", "leave", "ci", "w1", "--as", "w1")
    mid = _publish(cli, "job")
    cli.ok("subscribe", "ci", "job.#", "--group", "builders", "--as", "w2")
    assert _ids(_receive(cli, "w2")) == [mid]


def test_a_pool_without_members_is_deleted_by_the_channels_owner(cli, make_channel):
    store = _pool(cli, make_channel, "w1", delivery="at-least-once")
    ids = [_publish(cli, f"job {i}") for i in range(2)]
    before = snapshot(store)
    refusals = [
        (("--group", "builders", "--delete", "--as", "pub"), 5, "invalid_state"),  # w1 is in
        (("--group", "builders", "--delete", "--as", "w1"), 5, "forbidden"),  # not the owner
        (("--group", "nope", "--delete", "--as", "pub"), 4, "not_found"),
        (("--group", "builders", "--as", "pub"), 2, "usage"),  # --group needs --delete
        (("job.#", "--group", "builders", "--delete", "--as", "pub"), 2, "usage"),
    ]
    for args, status, code in refusals[:2]:
        r = cli("unsubscribe", "ci", *args, "--json")
        assert (r.exit_code, r.error["code"]) == (status, code), r.output
    assert snapshot(store) == before
    cli.ok("unsubscribe", "ci", "job.#", "--as", "w1")
    for args, status, code in refusals[2:]:
        r = cli("unsubscribe", "ci", *args, "--json")
        assert (r.exit_code, r.error["code"]) == (status, code), r.output
    r = cli("unsubscribe", "ci", "--as", "pub", "--json")  # neither a pattern nor a pool
    assert r.exit_code == 2 and r.error["field"] == "pattern"
    done = cli.ok("unsubscribe", "ci", "--group", "builders", "--delete", "--as", "pub", "--json")
    assert done.json() == {
        "channel": "ci",
        "group": "builders",
        "deleted": True,
        "dead_lettered": 2,
    }
    dead = cli.ok("deadletter", "list", "--reason", "pool_deleted", "--json").json()
    assert [(d["message_id"], d["recipient"]) for d in dead["dead_letters"]] == [
        (i, "*builders") for i in ids
    ]
    assert cli.ok("stats", "--json").json()["pools"] == []
    assert cli.ok("publish", "ci", "job.x", "x", "--as", "pub", "--json").json()["recipients"] == []
    r = cli("unsubscribe", "ci", "--group", "builders", "--delete", "--as", "pub", "--json")
    assert r.exit_code == 4  # gone
    # a replayed one goes back to the pool's placeholder, for a member joining later
    cli.ok("deadletter", "replay", str(ids[0]))
    cli.ok("subscribe", "ci", "job.#", "--group", "builders", "--as", "w2")
    assert _ids(_receive(cli, "w2", limit=5)) == ids[:1]


def test_leaving_the_channel_gives_claims_back_to_the_pool(cli, make_channel):
    _pool(cli, make_channel, "w1", "w2", delivery="at-least-once")
    mid = _publish(cli, "job")
    assert _ids(_receive(cli, "w1")) == [mid]
    cli.ok("channel", "leave", "ci", "w1", "--as", "w1")
    assert cli.ok("deadletter", "list", "--json").json()["dead_letters"] == []
    assert _ids(_receive(cli, "w2")) == [mid]


def test_subscription_modes_do_not_mix_on_one_channel(cli, make_channel):
    store = _pool(cli, make_channel, "w1")
    before = snapshot(store)
    for args in (
        ("subscribe", "ci", "other.*", "--as", "w1"),  # a member of a pool: no own copy
        ("subscribe", "ci", "other.*", "--group", "other", "--as", "w1"),  # nor two pools
    ):
        r = cli(*args, "--json")
        assert r.exit_code == 5 and r.error["field"] == "group", r.output
    bad = cli("subscribe", "ci", "job.#", "--group", "no spaces", "--as", "w2", "--json")
    assert bad.exit_code == 3 and bad.error["field"] == "group"
    assert snapshot(store) == before
    # a second pattern for the same pool is fine
    cli.ok("subscribe", "ci", "other.*", "--group", "builders", "--as", "w1")


# ---------------------------------------------------------------- FIFO groups


def _queue(cli, make_channel, *workers: str, **flags) -> Path:
    return make_channel("jobs", "boss", *workers, type="queue", **flags)


def _send(cli, body: str, key: str | None, channel: str = "jobs") -> int:
    extra = () if key is None else ("--group-key", key)
    return int(cli.ok("send", channel, body, "--as", "boss", *extra).stdout)


def test_fifo_two_keys_interleaved_two_workers_in_order_one_at_a_time(cli, make_channel):
    store = _queue(cli, make_channel, "w1", "w2", delivery="at-least-once")
    a = []
    b = []
    for i in range(3):
        a.append(_send(cli, f"a{i}", "A"))
        b.append(_send(cli, f"b{i}", "B"))
    free = _send(cli, "no key", None)
    # each worker asks for everything: a key's head only, one per key in flight
    assert _ids(_receive(cli, "w1", limit=10)) == [a[0], b[0], free]
    assert _receive(cli, "w2", limit=10) == []  # both heads are in flight
    cli.ok("ack", str(b[0]), "--as", "w1")
    assert _ids(_receive(cli, "w2", limit=10)) == [b[1]]  # B moves on, A still held
    cli.ok("ack", str(a[0]), "--as", "w1")
    assert _ids(_receive(cli, "w2", limit=10)) == [a[1]]
    cli.ok("ack", str(a[1]), str(b[1]), "--as", "w2")
    assert _ids(_receive(cli, "w1", limit=10)) == [a[2], b[2]]
    cli.ok("ack", str(a[2]), str(b[2]), "--as", "w1")
    assert _receive(cli, "w2", limit=10) == []
    assert_invariants(store)


def test_fifo_on_a_worker_pool(cli, make_channel):
    _pool(cli, make_channel, "w1", "w2", delivery="at-least-once")
    cli.ok("subscribe", "ci", "job.#", "--as", "audit")
    a = [_publish(cli, f"a{i}", "--group-key", "A") for i in range(2)]
    assert _ids(_receive(cli, "w1", limit=5)) == a[:1]
    assert _receive(cli, "w2", limit=5) == []
    assert _ids(_receive(cli, "audit", limit=5)) == a  # its own copies are not held back
    cli.ok("ack", str(a[0]), "--as", "w1")
    assert _ids(_receive(cli, "w2", limit=5)) == a[1:]


def test_show_and_messages_give_the_group_key(cli, make_channel):
    """A FIFO message's key in `show` (JSON, the piped lines) and `messages --json`; a
    message without one says null in JSON, and its piped `show` lines stay as they were."""
    _queue(cli, make_channel, "w1", delivery="at-least-once")
    keyed, plain = _send(cli, "charge", "order-7"), _send(cli, "plain", None)
    assert cli.ok("show", str(keyed), "--json").json()["group_key"] == "order-7"
    assert cli.ok("show", str(plain), "--json").json()["group_key"] is None
    assert re.search(r"^group_key: +order-7$", cli.ok("show", str(keyed)).stdout, re.M)
    assert "group_key" not in cli.ok("show", str(plain)).stdout
    listed = cli.ok("messages", "--channel", "jobs", "--json").json()["messages"]
    assert {m["id"]: m["group_key"] for m in listed} == {keyed: "order-7", plain: None}
    # the worker that claims it sees its key, and `show` still does after the ack
    got = _receive(cli, "w1", limit=5)
    assert {m["id"]: m["group_key"] for m in got} == {keyed: "order-7", plain: None}
    cli.ok("ack", str(keyed), "--as", "w1")
    assert cli.ok("show", str(keyed), "--json").json()["group_key"] == "order-7"


def test_show_on_a_terminal_gives_the_group_key():
    from rich.console import Console

    from acomm_cli.model import Delivery, DeliveryState, Message, MessageType, Priority
    from acomm_cli.output import views

    m = Message(
        1,
        "jobs",
        1,
        "boss",
        MessageType.TEXT,
        "charge",
        None,
        Priority.NORMAL,
        None,
        None,
        {},
        0,
        None,
        deliveries=[Delivery("*", DeliveryState.UNREAD)],
        group_key="order-7",
    )
    console = Console(width=100, record=True)
    console.print(views.message_panel(m))
    assert re.search(r"group key +order-7", console.export_text())


def test_a_nacked_head_blocks_its_key_until_redelivered_or_dead_lettered(cli, make_channel):
    store = _queue(cli, make_channel, "w1", "w2", delivery="at-least-once", max_retries=3)
    with freeze_time(T0) as clock:
        a = [_send(cli, f"a{i}", "A") for i in range(3)]
        b = _send(cli, "b0", "B")
        assert _ids(_receive(cli, "w1", limit=1)) == a[:1]
        cli.ok("nack", str(a[0]), "--delay", "1m", "--as", "w1")
        # the head waits out its delay: the rest of A waits behind it, B goes on
        assert _ids(_receive(cli, "w2", limit=10)) == [b]
        cli.ok("ack", str(b), "--as", "w2")
        clock.tick(61)
        got = _receive(cli, "w2", limit=10)
        assert [(m["id"], m["delivery"]["retry_count"]) for m in got] == [(a[0], 1)]
        cli.ok("nack", str(a[0]), "--as", "w2")  # no requeue: dead-lettered, A moves on
        assert _ids(_receive(cli, "w1", limit=10)) == [a[1]]
        cli.ok("nack", str(a[1]), "--requeue", "--as", "w1")  # back at the head, not behind
        assert _ids(_receive(cli, "w2", limit=10)) == [a[1]]
        cli.ok("ack", str(a[1]), "--as", "w2")
        assert _ids(_receive(cli, "w1", limit=10)) == [a[2]]
    assert_invariants(store)


def test_a_lapsed_head_blocks_its_key_until_redelivered(cli, make_channel):
    _queue(
        cli,
        make_channel,
        "w1",
        "w2",
        delivery="at-least-once",
        ack_timeout="30s",
        retry_backoff="1s",
    )
    with freeze_time(T0) as clock:
        a = [_send(cli, f"a{i}", "A") for i in range(2)]
        assert _ids(_receive(cli, "w1")) == a[:1]
        clock.tick(30)  # the deadline passed; the 1 s back-off has not
        assert _receive(cli, "w2", limit=5) == []
        clock.tick(2)
        assert _ids(_receive(cli, "w2", limit=5)) == a[:1]


def test_at_most_once_a_read_message_no_longer_holds_its_key(cli, make_channel):
    _queue(cli, make_channel, "w1", "w2")
    a = [_send(cli, f"a{i}", "A") for i in range(2)]
    assert _ids(_receive(cli, "w1", limit=5)) == a[:1]
    assert _ids(_receive(cli, "w2", limit=5)) == a[1:]


def test_group_key_refusals_change_nothing(cli, make_channel):
    store = _queue(cli, make_channel, "w1")
    make_channel("team", "boss", "w1")
    make_channel("news", "boss", type="pubsub")
    cli.ok("subscribe", "news", "#", "--as", "w1")  # its own copy only: nothing to order
    before = snapshot(store)
    cases = [
        ("send", "jobs", "x", "--group-key", "k" * 129, "--as", "boss"),
        ("send", "team", "x", "--group-key", "k", "--as", "boss"),
        ("send", "--to", "w1", "x", "--group-key", "k", "--as", "boss"),
        ("publish", "news", "a.b", "x", "--group-key", "k", "--as", "boss"),
    ]
    for args in cases:
        r = cli(*args, "--json")
        assert r.exit_code == 3, (args, r.output)
        assert '"field": "group_key"' in r.stderr, (args, r.stderr)
    line = json.dumps({"channel": "team", "from": "boss", "content": "x", "group_key": "k"})
    r = cli("send", "--batch", "-", "--json", input=line + "\n")
    assert r.exit_code == 3 and '"field": "group_key"' in r.stderr
    assert snapshot(store) == before
    # the longest key that is accepted
    assert _send(cli, "ok", "k" * 128) > 0


def test_a_batch_line_carries_its_group_key(cli, make_channel):
    store = _queue(cli, make_channel, "w1", delivery="at-least-once")
    lines = "".join(
        json.dumps({"channel": "jobs", "from": "boss", "content": f"j{i}", "group_key": "K"}) + "\n"
        for i in range(3)
    )
    cli.ok("send", "--batch", "-", "--json", input=lines)
    assert query(store, "SELECT DISTINCT pool, group_key FROM deliveries") == [("*", "K")]
    assert len(_receive(cli, "w1", limit=10)) == 1


# ---------------------------------------------------------------- the engine


def test_engine_claims_share_a_pool_and_keep_key_order(store):
    conn = open_store(store)
    try:
        now = 1_767_225_600_000
        channel_engine.create_channel(
            conn,
            "ev",
            "pubsub",
            "pub",
            ChannelConfig(delivery=DeliveryMode.AT_LEAST_ONCE),
            now,
        )
        for w in ("w1", "w2"):
            channel_engine.subscribe(conn, "ev", "#", w, now, "pool")
        req = SendRequest(sender="pub", content="x", channel="ev", topic="t")
        sent = [
            sending.send(conn, SendRequest(**{**req.__dict__, "group_key": k}), now).id
            for k in ("A", "A", "B")
        ]
        f = MessageFilter(limit=10)
        first = [m.id for m in inbox.receive(conn, "w1", f, now).messages]
        second = [m.id for m in inbox.receive(conn, "w2", f, now).messages]
        assert first == [sent[0], sent[2]] and second == []
        with pytest.raises(ValidationFailed) as err:
            sending.send(conn, SendRequest(**{**req.__dict__, "group_key": ""}), now)
        assert err.value.field == "group_key"
    finally:
        conn.close()


# ---------------------------------------------------------------- processes


def _worker(agent: str, log: Path) -> subprocess.Popen[bytes]:
    args = [sys.executable, str(WORKER), ACOMM, agent, str(log), "--limit", "10", "--ack"]
    return subprocess.Popen(
        args, env=os.environ.copy(), start_new_session=True, stderr=subprocess.PIPE
    )


def _logged(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.endswith("}")]


@pytest.mark.process
def test_four_pool_members_in_processes_never_get_a_message_twice(cli, make_channel, tmp_path):
    """queue_worker.py receives from the channel named `queue`: here a pubsub channel whose
    pool the four workers serve, keyed into 64 FIFO groups, beside a plain subscriber."""
    store = make_channel("queue", "pub", type="pubsub", delivery="at-least-once")
    for k in range(1, 5):
        cli.ok("subscribe", "queue", "job.#", "--group", "pool", "--as", f"w{k}")
    cli.ok("subscribe", "queue", "job.#", "--as", "audit")
    n = 400
    lines = "".join(
        json.dumps(
            {
                "channel": "queue",
                "from": "pub",
                "content": f"job {i}",
                "topic": "job.run",
                "group_key": f"k{i % 64}",
            }
        )
        + "\n"
        for i in range(n)
    )
    r = run("send", "--batch", "-", "--json", input=lines)
    assert r.returncode == 0, r.stderr
    sent = {row[0] for row in query(store, "SELECT id FROM messages WHERE topic = 'job.run'")}
    logs = [tmp_path / f"w{k}.log" for k in range(1, 5)]
    procs = [_worker(f"w{k}", log) for k, log in enumerate(logs, 1)]
    for p in procs:
        _, err = p.communicate(timeout=240)
        assert p.returncode == 0, err.decode()
    got = [e for log in logs for e in _logged(log)]
    # a worker stops when every head is held by others: the test drains what is left
    while more := _receive(cli, "w1", limit=10):
        got += [{"id": m["id"], "at": m["delivery"]["delivered_at"], "agent": "w1"} for m in more]
        cli.ok("ack", *(str(m["id"]) for m in more), "--as", "w1")
    seen = Counter(e["id"] for e in got)
    assert set(seen) == sent and max(seen.values()) == 1  # each once, none twice
    assert sum(1 for log in logs if _logged(log)) >= 2  # the work was shared
    key_of = {mid: (mid - min(sent)) % 64 for mid in sent}
    claims: dict[int, list[int]] = defaultdict(list)
    for e in sorted(got, key=lambda e: (e["at"], e["id"])):
        claims[key_of[e["id"]]].append(e["id"])
    assert all(ids == sorted(ids) for ids in claims.values())  # send order within a key
    assert _ids(_receive(cli, "audit", limit=1000)) == sorted(sent)  # its own copy of each
    assert_invariants(store, sent)
