"""Acknowledging in batches: `ack 4 5 6` in one transaction, results in order,
all or nothing; `receive --ack STATUS` reads and acknowledges in one transaction, printing
before it commits, so a failed output acks nothing."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import ACOMM, query, snapshot

pytestmark = pytest.mark.cli


@pytest.fixture
def tracked(make_channel, cli):
    """alice's at-least-once `team` with bob; alice has sent messages 1-4."""
    path = make_channel("team", "alice", "bob", delivery="at-least-once")
    for i in range(1, 5):
        cli.ok("send", "team", f"m{i}", "--as", "alice")
    return path


def acks_to_alice(path):
    return query(
        path,
        "SELECT json_extract(metadata, '$.ack_for'), json_extract(metadata,"
        " '$.status') FROM messages WHERE type = 'acknowledgment' ORDER BY id",
    )


def test_ack_several_ids_in_order(cli, tracked):
    cli.ok("receive", "--as", "bob")
    out = cli.ok("ack", "3", "1", "2", "--as", "bob", "--json").json()
    assert [d["message_id"] for d in out] == [3, 1, 2]
    assert all(d["changed"] and d["status"] == "completed" and d["agent"] == "bob" for d in out)
    # each one told alice, in the order given
    assert acks_to_alice(tracked) == [("3", "completed"), ("1", "completed"), ("2", "completed")]
    assert [d["ack_message_id"] for d in out] == [
        r[0]
        for r in query(tracked, "SELECT id FROM messages WHERE type = 'acknowledgment' ORDER BY id")
    ]
    states = query(
        tracked,
        "SELECT message_id, state, ack_status FROM deliveries WHERE"
        " recipient = 'bob' ORDER BY message_id",
    )
    assert states == [
        (1, "acked", "completed"),
        (2, "acked", "completed"),
        (3, "acked", "completed"),
        (4, "read", None),
    ]


def test_one_id_keeps_its_single_json_object(cli, tracked):
    out = cli.ok("ack", "1", "--as", "bob", "--json").json()
    assert isinstance(out, dict) and out["message_id"] == 1 and out["changed"]


def test_a_repeat_inside_a_batch_is_a_no_op_in_place(cli, tracked):
    cli.ok("ack", "2", "--as", "bob")
    out = cli.ok("ack", "1", "2", "--as", "bob", "--json").json()
    assert [(d["message_id"], d["changed"]) for d in out] == [(1, True), (2, False)]


@pytest.mark.parametrize(
    "ids, code, status, field",
    [
        (["1", "2", "99"], "not_found", 4, "message"),  # no such message
        (["1", "5", "2"], "not_participant", 5, "agent"),  # bob is not its recipient
        (["1", "2", "2"], "validation_failed", 3, "message"),  # named twice
    ],
)
def test_any_bad_id_acks_nothing(cli, tracked, ids, code, status, field):
    cli.ok("send", "team", "from bob", "--as", "bob")  # message 5: to alice, not to bob
    before = snapshot(tracked)
    r = cli("ack", *ids, "--as", "bob", "--json")
    assert r.exit_code == status
    assert (r.error["code"], r.error["field"]) == (code, field)
    assert r.stdout == ""
    assert snapshot(tracked) == before


def test_a_backwards_status_in_a_batch_acks_nothing(cli, tracked):
    cli.ok("ack", "3", "--as", "bob", "--status", "completed")
    before = snapshot(tracked)
    r = cli("ack", "1", "3", "--as", "bob", "--status", "received", "--json")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (5, "invalid_state", "status")
    assert snapshot(tracked) == before


def test_receive_ack_prints_exactly_what_it_acks(cli, tracked):
    out = cli.ok("receive", "--as", "bob", "--limit", "3", "--ack", "received", "--json").json()
    got = [m["id"] for m in out["messages"]]
    assert got == [1, 2, 3]
    assert all(
        m["delivery"]["state"] == "acked" and m["delivery"]["ack_status"] == "received"
        for m in out["messages"]
    )
    # a `received` ack holds each delivery for the channel's lease (by default
    # the ack timeout), in the same transaction as the read
    [(lease,)] = query(tracked, "SELECT ack_timeout_ms FROM channels WHERE name = 'team'")
    assert query(
        tracked,
        "SELECT message_id, state, ack_status, read_at IS NOT NULL,"
        " next_timer_at - acked_at FROM deliveries WHERE recipient = 'bob'"
        " AND message_id < 4 ORDER BY message_id",
    ) == [
        (1, "acked", "received", 1, lease),
        (2, "acked", "received", 1, lease),
        (3, "acked", "received", 1, lease),
    ]
    assert query(
        tracked,
        "SELECT state, ack_status, read_at FROM deliveries"
        " WHERE recipient = 'bob' AND message_id = 4",
    ) == [("unread", None, None)]
    assert acks_to_alice(tracked) == [(str(i), "received") for i in got]
    # forward from there as usual; nothing left to receive-and-ack but message 4
    cli.ok("ack", "1", "2", "--as", "bob", "--status", "completed")
    again = cli.ok("receive", "--as", "bob", "--ack", "completed", "--json").json()
    assert [m["id"] for m in again["messages"]] == [4]


def test_receive_ack_with_nothing_unread(cli, tracked):
    cli.ok("receive", "--as", "bob")
    before = snapshot(tracked)
    out = cli.ok("receive", "--as", "bob", "--ack", "completed", "--json").json()
    assert out["messages"] == []
    assert snapshot(tracked) == before


@pytest.mark.parametrize("other", ["--peek", "--follow"])
def test_receive_ack_refuses_peek_and_follow(cli, tracked, other):
    before = snapshot(tracked)
    r = cli("receive", "--as", "bob", "--ack", "completed", other, "--json")
    assert (r.exit_code, r.error["code"], r.error["field"]) == (3, "validation_failed", "ack")
    assert snapshot(tracked) == before


def test_receive_ack_refuses_a_bad_status(cli, tracked):
    before = snapshot(tracked)
    r = cli("receive", "--as", "bob", "--ack", "done", "--json")
    assert r.exit_code == 3
    assert snapshot(tracked) == before


@pytest.mark.process
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_receive_ack_whose_output_fails_acks_nothing(tracked, redirect):
    """The output goes out before the commit: when it cannot be written, neither the read
    marks nor the acks nor the acknowledgement messages are kept (exit 141)."""
    before = snapshot(tracked)
    p = subprocess.run(
        ["bash", "-c", f"{ACOMM} receive --as bob --ack completed --json {redirect}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 141, p.stderr
    assert json.loads(p.stderr)["error"]["code"] == "output_failed"
    assert snapshot(tracked) == before


def test_receive_ack_wait_takes_what_arrives(cli, tracked):
    cli.ok("receive", "--as", "bob")
    r = cli("receive", "--as", "bob", "--ack", "completed", "--wait", "0", "--json")
    assert r.exit_code == 124  # nothing arrived
    cli.ok("send", "team", "late", "--as", "alice")
    out = cli.ok("receive", "--as", "bob", "--ack", "completed", "--wait", "1", "--json").json()
    assert [m["content"] for m in out["messages"]] == ["late"]
    assert query(
        tracked, "SELECT state FROM deliveries WHERE message_id = ?", out["messages"][0]["id"]
    ) == [("acked",)]


def test_receive_ack_is_one_transaction(tracked):
    """The reads, the acks and the acknowledgement messages commit together: one BEGIN, one
    COMMIT, with the output handed over between the last write and the commit."""
    from acomm_cli import clock
    from acomm_cli.engine import acking, opening
    from acomm_cli.model import MessageFilter

    conn = opening.connect(tracked, create=False)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        res = acking.receive_ack(
            conn,
            "bob",
            MessageFilter(),
            "completed",
            clock.now_ms(),
            emit=lambda r: seen.append(f"EMIT {len(r.messages)}"),
        )
    finally:
        conn.close()
    assert len(res.messages) == 4
    begins = [s for s in seen if s.startswith("BEGIN")]
    assert begins == ["BEGIN IMMEDIATE"] and seen.count("COMMIT") == 1
    assert seen.index("EMIT 4") == seen.index("COMMIT") - 1


def test_receive_ack_whose_emit_fails_leaves_everything_as_it_was(tracked):
    from acomm_cli import clock
    from acomm_cli.engine import acking, opening
    from acomm_cli.model import MessageFilter

    before = snapshot(tracked)

    def broken(_):
        raise OSError("the reader went away")

    conn = opening.connect(tracked, create=False)
    try:
        with pytest.raises(OSError):
            acking.receive_ack(
                conn, "bob", MessageFilter(), "completed", clock.now_ms(), emit=broken
            )
    finally:
        conn.close()
    assert snapshot(tracked) == before
