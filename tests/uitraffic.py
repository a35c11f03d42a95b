"""A store with a little of everything for `acomm ui`'s tests, made by the commands at fixed
times (so its screens are the same on every run), and helpers to drive the app headless."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import freezegun
from directory_rows import put

from acomm_cli.engine import opening
from acomm_cli.ui.app import DashboardApp, Session

T0 = 1_767_268_800_000  # 2026-01-01T12:00:00Z
NOW = T0 + 10 * 60_000  # the dashboard's "now": ten minutes later


def at(ms: int) -> Any:
    """Commands run at this moment (freezegun: `clock.now_ms` reads `time.time`)."""
    return freezegun.freeze_time(datetime.fromtimestamp(ms / 1000, tz=UTC))


def build(cli: Any, make_channel: Callable[..., Path]) -> dict[str, Any]:
    """team (alice; bob, carol), ops (at-least-once: bob's acks awaited), ci (pubsub):
    a text, a command, a query answered in a thread, a notification, and a message whose
    time to live ran out for both recipients (two dead letters). bob reads nothing: at NOW
    his oldest unread is ten minutes old, so he is stale."""
    with at(T0):
        store = make_channel("team", "alice", "bob", "carol")
        make_channel("ops", "alice", "bob", delivery="at-least-once")
        make_channel("ci", "ci", type="pubsub")
        cli.ok("subscribe", "ci", "build.#", "--as", "carol")
        hello = int(cli.ok("send", "team", "hello team", "--as", "alice").stdout)
    with at(T0 + 5_000):
        deploy = int(
            cli.ok("send", "ops", "deploy v2", "--type", "command", "--as", "alice").stdout
        )
    with at(T0 + 10_000):
        corr = cli.ok("query", "team", "status?", "--as", "bob").stdout.strip()
    with at(T0 + 20_000):
        cli.ok("receive", "--as", "carol")
        answer = int(cli.ok("respond", corr, "all green", "--as", "carol").stdout)
    with at(T0 + 30_000):
        cli.ok("publish", "ci", "build.web.ok", "42 tests passed", "--as", "ci")
        doomed = int(cli.ok("send", "team", "too late", "--as", "alice", "--ttl", "1s").stdout)
    with at(T0 + 40_000):
        cli.ok("tick")
    # the directory as the directory pane shows it: every name above, exactly (whatever the
    # commands registered), a human, a service, and dave, retired
    for name, kind, team, seen in (
        ("alice", "agent", "core", T0 + 30_000),
        ("bob", "agent", "core", T0 + 10_000),
        ("carol", "human", "core", T0 + 20_000),
        ("ci", "service", "build", T0 + 30_000),
        ("dave", "agent", None, None),
    ):
        put(
            store,
            name,
            kind=kind,
            team=team,
            registered_at=T0,
            last_seen_at=seen,
            retired_at=T0 + 40_000 if name == "dave" else None,
        )
    return {
        "store": store,
        "hello": hello,
        "deploy": deploy,
        "corr": corr,
        "answer": answer,
        "doomed": doomed,
    }


def session(path: Path, **options: Any) -> Session:
    conn = opening.connect(path, create=False)
    options.setdefault("now", lambda: NOW)
    return Session(conn, title="store.acomm", **options)


def drive(
    app: DashboardApp, scenario: Callable[[Any], Awaitable[None]], size: tuple[int, int] = (120, 40)
) -> None:
    """Run `scenario(pilot)` against the app headless, then close its connection."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(pilot)

    try:
        asyncio.run(main())
    finally:
        app.session.conn.close()


def cells(table: Any) -> list[list[str]]:
    """A DataTable's rows as the plain text shown."""
    return [
        [str(getattr(c, "plain", c)) for c in table.get_row_at(i)] for i in range(table.row_count)
    ]
