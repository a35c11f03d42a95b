"""`acomm init` and `acomm status`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import lazy, params
from acomm_cli.cli.config import DEFAULT_CONFIG, STORE_DIR, STORE_FILE
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render

if TYPE_CHECKING:
    from acomm_cli.engine import opening
else:
    opening = lazy.module("acomm_cli.engine.opening")

app = typer.Typer(add_completion=False)


@app.command()
@takes_invocation
def init(
    inv: Invocation,
    directory: Annotated[
        Path | None,
        typer.Argument(
            click_type=params.DIR,
            metavar="DIR",
            help="Project directory; the store goes in DIR/.acomm/ (default: here).",
        ),
    ] = None,
    admin: Annotated[
        str | None,
        typer.Option(
            click_type=params.AGENT,
            help="Register this agent as the store's first admin and print its secret, this "
            "once (a store that has an admin already: exit 5).",
        ),
    ] = None,
) -> None:
    """Create a store and a commented config.yaml beside it.

    With --admin NAME, NAME becomes the first admin: its secret is printed instead of the
    path (with --json, {path, created, agent, admin, token, identity_auth}). Turn
    credentials on for every process with `acomm config set identity.auth token`
    (docs/SECURITY.md).

    Example: acomm init && acomm status

    Example: export ACOMM_AGENT_TOKEN=$(acomm init --admin alice)
    """
    s = inv.settings
    explicit = s.store or os.environ.get("ACOMM_STORE")
    if directory is not None or not explicit:
        path = (directory or Path.cwd()) / STORE_DIR / STORE_FILE
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


@app.command()
@takes_invocation
def status(inv: Invocation) -> None:
    """Show the store's path, schema version, counts, size and flush policy.

    Example: acomm status --json
    """
    s = inv.settings
    with inv.store(write=False) as conn:
        path, _ = s.store_path(create=False)
        result = opening.status(conn, path, s.value("store.flush"))
    render.status(inv.output(), asdict(result))
