"""`acomm init` and `acomm status`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from acomm_cli import clock
from acomm_cli.cli import params
from acomm_cli.cli.config import DEFAULT_CONFIG, STORE_DIR, STORE_FILE
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import takes_invocation
from acomm_cli.engine import opening
from acomm_cli.lite.records import asdict  # the engine's results are records
from acomm_cli.output import render

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
) -> None:
    """Create a store and a commented config.yaml beside it.

    Example: acomm init && acomm status
    """
    s = inv.settings
    explicit = s.store or os.environ.get("ACOMM_STORE")
    if directory is not None or not explicit:
        path = (directory or Path.cwd()) / STORE_DIR / STORE_FILE
    else:
        path = Path(explicit).expanduser()
    created = opening.init_store(path, clock.now_ms(), DEFAULT_CONFIG)
    if not created:
        render.note(f"a store already exists at {path}; left as it was")
    render.ok(inv.output(), {"path": str(path), "created": created}, str(path))


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
