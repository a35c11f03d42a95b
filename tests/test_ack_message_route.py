"""The acknowledgement message an ack writes back to the sender goes by its own lean route
(engine/sending.send_acknowledgment), not the general send pipeline: on copies of one store,
both routes write the same rows (message, delivery, exactly-once records, counters, search
index), return the same id and refuse the same cases with the same error, on every channel
type and the configurations that change an acknowledgement."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import snapshot

from acomm_cli.engine import acking, channels, directory, opening, sending
from acomm_cli.engine.sending import Router, persist, plan_message
from acomm_cli.errors import CommError
from acomm_cli.model import AckStatus, ChannelConfig, DeliveryMode, SendRequest
from acomm_cli.store import write

pytestmark = pytest.mark.unit

NOW = 1_800_000_000_000


def _general(
    router: Router,
    channel: str,
    sender: str,
    to: str,
    content: str,
    now: int,
    *,
    ack_for: int,
    status: str,
    extra: dict[str, str] | None = None,
    correlation_id: str | None = None,
    trace_id: str | None = None,
) -> int | None:
    """The acknowledgement as the general pipeline writes it (what tell_sender ran before)."""
    plan = plan_message(
        router,
        SendRequest(
            sender=sender,
            content=content,
            channel=channel,
            type="acknowledgment",
            correlation_id=correlation_id,
            metadata={**extra, "ack_for": str(ack_for), "status": status}
            if extra
            else {"ack_for": str(ack_for), "status": status},
            trace_id=trace_id,
        ),
        now,
        only_to=to,
        internal=True,
    )
    return persist(router, plan, now).id if plan.recipients else None


Setup = Callable[[sqlite3.Connection], tuple[str, int]]  # -> (channel, message id)


def _channel(conn: sqlite3.Connection, name: str, type_: str, *members: str, **cfg: Any) -> None:
    channels.create_channel(conn, name, type_, "alice", ChannelConfig(**cfg), NOW - 10)
    for m in members:
        channels.join_channel(conn, name, m, "member", NOW - 10, by="alice")


def _send(conn: sqlite3.Connection, channel: str, **kw: Any) -> int:
    req = SendRequest(sender="alice", content="job", channel=channel, **kw)
    return sending.send(conn, req, NOW - 5).id


def _made(type_: str, topic: str | None = None, **cfg: Any) -> Setup:
    def setup(conn: sqlite3.Connection) -> tuple[str, int]:
        _channel(conn, "c", type_, *(("bob",) if type_ != "pubsub" else ()), **cfg)
        if type_ == "pubsub":
            channels.subscribe(conn, "c", "a.*", "bob", NOW - 10)
        return "c", _send(conn, "c", topic=topic)

    return setup


def _left(conn: sqlite3.Connection) -> tuple[str, int]:
    channel, mid = _made("group")(conn)
    channels.leave_channel(conn, "c", "bob", NOW - 3, by="bob")
    return channel, mid


def _observer(conn: sqlite3.Connection) -> tuple[str, int]:
    _channel(conn, "c", "group")
    channels.join_channel(conn, "c", "bob", "observer", NOW - 10, by="alice")
    return "c", _send(conn, "c")


def _retired(conn: sqlite3.Connection) -> tuple[str, int]:
    channel, mid = _made("group")(conn)
    directory.retire(conn, "alice", NOW - 3)
    return channel, mid


def _state(action: str) -> Setup:
    def setup(conn: sqlite3.Connection) -> tuple[str, int]:
        channel, mid = _made("group")(conn)
        channels.change_channel_state(conn, "c", action, by="alice")
        return channel, mid

    return setup


def _untraced(conn: sqlite3.Connection) -> tuple[str, int]:
    """A message from before trace ids, in a thread whose question has one."""
    _channel(conn, "c", "group", "bob")
    first = _send(conn, "c", type="query")
    with write(conn):
        corr = conn.execute("SELECT correlation_id FROM messages WHERE id = ?", (first,))
        mid = _send(conn, "c", correlation_id=corr.fetchone()[0])
        conn.execute("UPDATE messages SET trace_id = NULL WHERE id = ?", (mid,))
    return "c", mid


def _backlogged(conn: sqlite3.Connection) -> tuple[str, int]:
    """alice's channel holds back new messages (max_pending): an acknowledgement is not."""
    _channel(conn, "c", "group", "bob", max_pending=1)
    mid = _send(conn, "c")
    _send(conn, "c")
    return "c", mid


CASES: dict[str, tuple[Setup, str, dict[str, Any]]] = {
    "direct": (_made("direct", delivery=DeliveryMode.AT_LEAST_ONCE), "bob", {}),
    "group": (_made("group"), "bob", {}),
    "broadcast": (_made("broadcast"), "bob", {}),
    "pubsub": (_made("pubsub", topic="a.b"), "bob", {}),
    "queue": (_made("queue", delivery=DeliveryMode.AT_LEAST_ONCE), "bob", {}),
    "exactly-once": (_made("group", delivery=DeliveryMode.EXACTLY_ONCE), "bob", {}),
    "exactly-once, acked twice": (
        _made("group", delivery=DeliveryMode.EXACTLY_ONCE),
        "bob",
        {"twice": True},
    ),
    "acked twice": (_made("group"), "bob", {"twice": True}),
    "priority ordering": (_made("group", priority_ordering=True), "bob", {}),
    "message ttl": (_made("group", message_ttl_ms=60_000), "bob", {}),
    "max_pending": (_backlogged, "bob", {}),
    "own message": (_made("group"), "alice", {}),
    "own message, echo": (_made("group", echo=True), "alice", {}),
    "paused": (_state("pause"), "bob", {}),
    "draining": (_state("drain"), "bob", {}),
    "closed": (_state("close"), "bob", {}),
    "acker left": (_left, "bob", {}),
    "acker observes": (_observer, "bob", {}),
    "sender retired": (_retired, "bob", {}),
    "note": (_made("group"), "bob", {"note": "done, see the log ünïcode"}),
    "note too long": (_made("group", max_message_size=8), "bob", {"note": "x" * 9}),
    "note not utf-8": (_made("group"), "bob", {"note": "bad \udcff"}),
    "extra metadata": (_made("group"), "bob", {"extra": {"eta_at": "12", "ack_for": "0"}}),
    "failed": (_made("group"), "bob", {"status": AckStatus.FAILED}),
    "thread without trace": (_untraced, "bob", {}),
}


def _run(path: Path, route: Callable[..., int | None], acker: str, how: dict[str, Any]) -> Any:
    channel, mid = how["channel"], how["mid"]
    conn = opening.connect(path, create=False)
    out: list[Any] = []
    try:
        for _ in range(2 if how.get("twice") else 1):
            try:
                with write(conn):
                    sender, corr, trace = conn.execute(
                        "SELECT sender, correlation_id, trace_id FROM messages WHERE id = ?",
                        (mid,),
                    ).fetchone()
                    out.append(
                        acking.tell_sender(
                            Router(conn),
                            mid,
                            channel,
                            sender,
                            corr,
                            acker,
                            how.get("status", AckStatus.COMPLETED),
                            how.get("note"),
                            NOW,
                            how.get("extra"),
                            trace,
                        )
                    )
            except CommError as exc:
                out.append((type(exc).__name__, str(exc), exc.field, exc.extra))
    finally:
        conn.close()
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_the_lean_route_writes_what_the_pipeline_writes(
    case: str, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup, acker, how = CASES[case]
    conn = opening.connect(store, create=False)
    try:
        how = {**how, **dict(zip(("channel", "mid"), setup(conn), strict=True))}
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    ids = iter(range(1, 1000))  # the same "random" ids on both copies
    monkeypatch.setattr(os, "urandom", lambda n: next(ids).to_bytes(n, "big"))
    results = {}
    snaps = {}
    for name, route in (("general", _general), ("lean", sending.send_acknowledgment)):
        copy = tmp_path / name / "store.acomm"
        copy.parent.mkdir()
        shutil.copy(store, copy)
        ids = iter(range(1, 1000))
        monkeypatch.setattr(acking, "send_acknowledgment", route)
        results[name] = _run(copy, route, acker, how)
        snaps[name] = snapshot(copy)
    assert results["lean"] == results["general"]
    assert snaps["lean"] == snaps["general"]
    # the case does what it names: an acknowledgement written, or a refusal
    refused = case in ("closed", "acker left", "note too long", "note not utf-8")
    assert all(isinstance(r, tuple) for r in results["lean"]) == refused
    if case == "own message":
        assert results["lean"] == [None]
    elif not refused:
        assert isinstance(results["lean"][0], int)
