"""What `acomm ui` does, without typer: `commands/ui.py` declares it (options, help) and runs
this; the fast path (`acomm_cli.cli.main`) runs it directly. Textual is imported inside the
command, and nowhere else: no other command pays for it."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from functools import partial

from acomm_cli import clock
from acomm_cli.cli.config import Settings
from acomm_cli.cli.invocation import Invocation, after_write, identity, limits, store
from acomm_cli.errors import UsageError

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from collections.abc import Iterator

    from acomm_cli.ui.app import Session


def ui(
    inv: Invocation,
    as_: str | None = None,
    read_only: bool = False,
    stale: str = "5m",
) -> None:
    stale_ms = clock.parse_duration(stale, "stale")
    if not sys.stdout.isatty() or not sys.stdin.isatty():
        raise UsageError(
            "acomm ui draws on a terminal: run it in one (stdin and stdout must be terminals)",
            field="ui",
        )
    try:
        from acomm_cli.ui.app import DashboardApp
    except ImportError as exc:  # textual is the `ui` extra
        raise UsageError(
            f"acomm ui needs Textual ({exc.name} is missing): pip install 'acomm[ui]'", field="ui"
        ) from None
    if as_ is not None and not read_only:  # it sends and acks as --as: proven first
        identity(as_)
        inv.prove_identity()
    with open_session(
        inv.settings, agent=as_, read_only=read_only, stale_after_ms=stale_ms
    ) as session:
        DashboardApp(session).run()


@contextmanager
def open_session(
    s: Settings, *, agent: str | None, read_only: bool, stale_after_ms: int
) -> Iterator[Session]:
    """The store as every command opens it (a store that cannot be written is opened
    read-only, and the session is then read-only too), with what a writing command does
    after each commit."""
    from acomm_cli.ui.app import Session

    with store(s, write=not read_only, read_fallback=True, hooks=False) as conn:
        path, _ = s.store_path(create=False)
        yield Session(
            conn,
            title=str(path),
            agent=agent,
            read_only=read_only or bool(getattr(conn, "read_only", False)),
            limits=limits(s),
            offline_after_ms=s.value("federation.offline_after"),
            stale_after_ms=stale_after_ms,
            after_write=partial(after_write, s, conn),
        )
