"""`acomm web`: the operator's console in a browser. Starlette, uvicorn and Jinja2 (the `web`
extra) are imported here, inside the command, and nowhere else."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import web_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import AsAgent, ReadOnly, runs

app = typer.Typer(add_completion=False)


@app.command()
@runs(web_run.web)
def web(
    inv: Invocation,
    listen: Annotated[
        str,
        typer.Option(
            metavar="HOST:PORT",
            help="Where to listen (port 0: any free port, printed at start). An address "
            "other than loopback needs --tls-cert and --tls-key, and a login.",
        ),
    ] = "127.0.0.1:8321",
    as_: AsAgent = None,
    read_only: ReadOnly = False,
    tls_cert: Annotated[
        str | None,
        typer.Option("--tls-cert", metavar="FILE", help="The TLS certificate chain (PEM)."),
    ] = None,
    tls_key: Annotated[
        str | None,
        typer.Option("--tls-key", metavar="FILE", help="The TLS private key (PEM)."),
    ] = None,
    login: Annotated[
        bool,
        typer.Option(
            "--login",
            help="Require the login on loopback too (any other address always does); "
            "needs --tls-cert and --tls-key.",
        ),
    ] = False,
    stale: Annotated[
        str,
        typer.Option(
            click_type=params.DURATION,
            help="Show an agent in red when its oldest unread message is older than this. "
            + params.DURATION_HELP,
        ),
    ] = "5m",
) -> None:
    """Serve the operator's web console on the store (the `web` extra).

    Pages: agents, channels and queues, a live feed, each message, dead letters, tasks and
    incidents, federation peers and outbox lag, charts. Pages update by themselves as other
    processes commit (server-sent events; one watch of the store for every open browser).
    Actions (send, team broadcast, ack, replay or discard a dead letter, pause or resume a
    channel) each show the command they equal before they run, and run the same engine
    function; refused with --read-only.

    On loopback (the default) there is no login and actions act as --as. On any other
    address TLS is required, each browser logs in with an agent's secret (`acomm agent
    token NAME`), and only agents with the admin role may act. docs/WEB.md has more.

    Example: acomm web --as operator

    Example (shared): acomm web --listen 0.0.0.0:8321 --tls-cert cert.pem --tls-key key.pem
    """
