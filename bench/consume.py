"""An at-least-once consumer, per message, against persist-queue's get + ack (`receive_ack`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from time import perf_counter

import peers
from harness import WORK, Result, median, rotate, spread, synchronous_name

from acomm_cli import clock
from acomm_cli.engine import channels, opening, sending, timers
from acomm_cli.model import ChannelConfig, DeliveryMode, MessageFilter, SendRequest

# acomm's receive (limit 1) + ack per message as a share of persist-queue's get + ack, measured
# at db52386, before batch acks existed (`bench/run.py --only receive_ack`, three runs: 27%,
# 25%, 22%; about 1,100 messages/s against 4,400). The target is 3x that rate.
TODAY = 0.25
TODAY_NOTE = (
    "the reference (db52386, before batch acks, `bench/run.py --only receive_ack`): "
    "receive --limit 1 + ack at 25% of persist-queue's get + ack (three runs 27%, "
    "25%, 22%; 1,036-1,206 msg/s against 4,257-4,693)"
)
ONE = MessageFilter(limit=1)
SINGLE = "receive --limit 1, then ack"
BATCHED = "receive --limit 100, then ack of those 100 ids"


def _optional(name: str) -> object:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def tracked_store(path: Path) -> Path:
    """A fresh store with the at-least-once direct channel `dm` (alice -> bob)."""
    from stores import remove

    remove(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    now = clock.now_ms()
    conn = opening.connect(path, create=True, now=now)
    try:
        channels.create_channel(
            conn, "dm", "direct", "alice", ChannelConfig(delivery=DeliveryMode.AT_LEAST_ONCE), now
        )
        channels.join_channel(conn, "dm", "bob", "member", now, by="alice")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return path


def _fill(conn: object, k: int) -> None:
    items = [
        (SendRequest(sender="alice", content=peers.BODY, channel="dm"), None, i + 1)
        for i in range(k)
    ]
    sending.send_batch(conn, items, clock.now_ms())  # type: ignore[arg-type]


def _loop(conn: object, k: int, one: Callable[[], int]) -> Callable[[], float]:
    def run() -> float:
        _fill(conn, k)
        t0 = perf_counter()
        done = 0
        while done < k:
            got = one()
            if not got:
                raise RuntimeError(f"the inbox ran dry after {done} of {k}")
            done += got
        return perf_counter() - t0

    return run


def receive_ack(ctx: object) -> list[Result]:
    sizes = ctx.sizes  # type: ignore[attr-defined]
    k = sizes.inproc_per_round
    conn = opening.connect(tracked_store(WORK / "consume.acomm"), create=False)
    sync = synchronous_name(conn)

    def receive_then_ack() -> int:
        res = timers.receive_due(conn, "bob", ONE, clock.now_ms())
        for m in res.messages:
            acking.ack(conn, m.id, "bob", "completed", None, clock.now_ms())
        return len(res.messages)

    samples: dict[str, Callable[[], float]] = {SINGLE: _loop(conn, k, receive_then_ack)}
    acking = _optional("acomm_cli.engine.acking")  # absent before batch acks (db52386)
    receive_and_ack = getattr(acking, "receive_ack", None)
    if receive_and_ack is not None:

        def in_one(limit: int) -> Callable[[], int]:
            flt = MessageFilter(limit=limit)
            return lambda: len(
                receive_and_ack(conn, "bob", flt, "completed", clock.now_ms()).messages
            )

        batch = MessageFilter(limit=100)

        def receive_then_ack_all() -> int:  # at-least-once: acked after the work is done
            res = timers.receive_due(conn, "bob", batch, clock.now_ms())
            if res.messages:
                acking.ack_many(
                    conn,
                    [m.id for m in res.messages],
                    "bob",  # type: ignore
                    "completed",
                    None,
                    clock.now_ms(),
                )
            return len(res.messages)

        samples[BATCHED] = _loop(conn, k, receive_then_ack_all)
        samples["receive --ack --limit 1"] = _loop(conn, k, in_one(1))
        samples["receive --ack --limit 100"] = _loop(conn, k, in_one(100))
    found, notes = peers.open_peers(WORK, sync, ("persist-queue",))
    for p in found:
        samples[f"{p.name} get + ack"] = peers.take_round(p, k)
    try:
        times = rotate(list(samples.values()), sizes.inproc_rounds)
    finally:
        conn.close()
        for p in found:
            p.close()
    rates = {name: [k / t for t in ts] for name, ts in zip(samples, times, strict=True)}

    def per_s(x: float) -> str:
        return f"{x:,.0f}/s"

    details = [f"{name}: {spread(r, per_s)} rounds of {k}" for name, r in rates.items()]
    details += notes + [
        TODAY_NOTE,
        "acomm: an at-least-once direct channel (alice -> bob; every ack writes the "
        "acknowledgement message routed back to alice, as `acomm ack` does); each round sends "
        f"{k} messages untimed (one send_batch), then times taking them all; receive_due and ack "
        "are one transaction each (two per message), receive_ack one per call",
        f"persist-queue: SQLiteAckQueue, auto_commit, synchronous={sync} like acomm; each round "
        f"puts {k} untimed, then times get(block=False) + ack(item) per message",
    ]
    base = rates.get("persist-queue get + ack")
    # The target row: the at-least-once consumer with batch acks (a batch received, the work
    # done, then one `ack` of all its ids); without them (db52386) the one-by-one loop.
    name = BATCHED if BATCHED in rates else SINGLE
    product = rates[name]
    if base is None:
        return [
            Result(
                "receive_ack",
                "at-least-once receive + ack per message",
                "rate",
                median(product),
                0.0,
                3 * TODAY,
                unit="msg/s",
                details=details,
                error="persist-queue is not installed (pip install -e '.[bench]')",
            )
        ]
    for other in rates:
        if other != "persist-queue get + ack":
            ratio = median(rates[other]) / median(base)
            details.insert(
                0,
                f"{other}: {ratio:.1%} of persist-queue, {ratio / TODAY:.1f}x "
                "the reference's ratio",
            )
    details.insert(
        0,
        f"target: 3 x the reference's ratio ({TODAY:.0%}) = {3 * TODAY:.0%} of "
        "persist-queue's rate in the same run",
    )
    one = rates.get(SINGLE)
    single = (
        []
        if one is None
        else [
            Result(
                "receive1_ack",
                f"one message at a time: {SINGLE}, against persist-queue's get + ack",
                "rate",
                median(one),
                median(base),
                0.5,
                unit="msg/s",
                baseline_title="persist-queue SQLiteAckQueue get + ack per message",
                details=[
                    f"{SINGLE}: {spread(one, per_s)} rounds of {k}; receive_due and ack are "
                    "one transaction each (two per message, persist-queue's are two too), "
                    "every ack writing its acknowledgement message back to the sender",
                    "the same rounds as receive_ack's (one rotation), see it for the rest",
                    "where the time went: the receive as in the `receive` row; an ack runs 9 "
                    "statements (13 before): one read of both tokens first, then the "
                    "channel from the connection's channel cache (two reads before), the "
                    "agent from the directory cache, and of the acked message its sender, "
                    "correlation and trace in one read (its whole row, every delivery and "
                    "its event before)",
                ],
            )
        ]
    )
    return single + [
        Result(
            "receive_ack",
            f"at-least-once consumer per message: {name}",
            "rate",
            median(product),
            median(base),
            3 * TODAY,
            unit="msg/s",
            baseline_title="persist-queue SQLiteAckQueue get + ack per message",
            details=details,
        )
    ]
