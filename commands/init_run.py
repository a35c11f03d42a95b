"""What `acomm init` and `acomm status` do, without typer: `commands/init.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

import os

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.config import DEFAULT_CONFIG, STORE_DIR, STORE_FILE
from acomm_cli.cli.invocation import Invocation
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import opening
else:
    opening = lazy.module("acomm_cli.engine.opening")


def init(
    inv: Invocation,
    directory: str | None,  # a Path from Typer, a str from the fast path
    admin: str | None,
) -> None:
    from pathlib import Path  # here: pathlib costs a start-up several milliseconds

    s = inv.settings
    explicit = s.store or os.environ.get("ACOMM_STORE")
    if directory is not None or not explicit:
        path = (Path.cwd() if directory is None else Path(directory)) / STORE_DIR / STORE_FILE
    else:
        path = Path(explicit).expanduser()
    created = opening.init_store(path, clock.now_ms(), DEFAULT_CONFIG)
    if not created and admin is None:
        render.note(f"a store already exists at {path}; left as it was")
    doc: dict[str, object] = {"path": str(path), "created": created}
    if admin is not None:
        from acomm_cli.engine import credentials
        from acomm_cli.output import render_credentials

        conn = opening.connect(path, create=False, now=clock.now_ms())
        try:
            first = credentials.first_admin(conn, admin, clock.now_ms())
        finally:
            conn.close()
        render_credentials.secret(inv.output(), {**doc, **first})
        return
    render.ok(inv.output(), doc, str(path))


def status(
    inv: Invocation,
) -> None:
    s = inv.settings
    with inv.store(write=False) as conn:
        path, _ = s.store_path(create=False)
        result = opening.status(conn, path, s.value("store.flush"))
    render.status(inv.output(), asdict(result))
