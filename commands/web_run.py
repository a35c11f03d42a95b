"""What `acomm web` does, without typer: `commands/web.py` declares it (options, help) and
runs this; the fast path (`acomm_cli.cli.main`) runs it directly. Starlette, uvicorn and
Jinja2 (the `web` extra) are imported inside the command, and nowhere else."""

from __future__ import annotations

import socket
import sqlite3
from functools import partial
from pathlib import Path

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation, after_write, identity, limits, store
from acomm_cli.errors import MissingExtra, ValidationFailed

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValidationFailed(
            "listen: HOST:PORT, e.g. 127.0.0.1:8321 (port 0: any free port)",
            field="listen",
            value=value,
        )
    return host.strip("[]"), int(port)


def web(
    inv: Invocation,
    listen: str = "127.0.0.1:8321",
    as_: str | None = None,
    read_only: bool = False,
    tls_cert: str | None = None,
    tls_key: str | None = None,
    login: bool = False,
    stale: str = "5m",
) -> None:
    from acomm_cli.web import access

    host, port = parse_listen(listen)
    stale_ms = clock.parse_duration(stale, "stale")
    login = login or not access.is_loopback(host)
    if (tls_cert is None) != (tls_key is None):
        raise ValidationFailed(
            "tls-cert: --tls-cert and --tls-key go together", field="tls-cert", value=tls_cert
        )
    if login and tls_cert is None:
        raise ValidationFailed(
            f"listen: {host} is not a loopback address: serving it needs TLS "
            "(--tls-cert FILE --tls-key FILE), and then a login"
            if not access.is_loopback(host)
            else "login: a login needs TLS (--tls-cert FILE --tls-key FILE): its cookie is Secure",
            field="listen",
            value=listen,
        )
    try:
        import uvicorn

        from acomm_cli.web import app as web_app
    except ImportError as exc:  # starlette, uvicorn, jinja2: the `web` extra
        raise MissingExtra(
            f"web: needs {exc.name}, which the `web` extra installs: pip install 'acomm[web]'",
            extra="web",
            install="pip install 'acomm[web]'",
            missing=[exc.name],
        ) from None
    if as_ is not None and not read_only:  # it sends and acks as --as: proven first
        identity(as_)
        inv.prove_identity()
    s = inv.settings

    def connect() -> AbstractContextManager[sqlite3.Connection]:
        return store(s, write=not read_only, read_fallback=True, hooks=False)

    with connect() as conn:  # the store exists, and whether it can be written
        writable = not getattr(conn, "read_only", False)

    path, _ = s.store_path(create=False)
    cfg = web_app.Config(
        connect=connect,
        title=str(path),
        read_only=read_only or not writable,
        acting=as_,
        login=login,
        limits=limits(s),
        offline_after_ms=s.value("federation.offline_after"),
        stale_after_ms=stale_ms,
        after_write=partial(after_write, s),
        metrics=_scraper(path, s.value("federation.offline_after")),
    )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ValidationFailed(
            f"listen: cannot listen on {listen}: {exc.strerror}", field="listen", value=listen
        ) from None
    sock.listen(128)
    bound = sock.getsockname()[1]
    scheme = "https" if tls_cert else "http"
    shown = f"[{host}]" if ":" in host else host
    from acomm_cli.output import render

    render.note(f"note: acomm web: serving {scheme}://{shown}:{bound}/ (Ctrl-C stops)")
    application = web_app.build(cfg)
    config = uvicorn.Config(
        application,
        log_level="warning",
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=1,
        ssl_certfile=tls_cert,
        ssl_keyfile=tls_key,
    )
    # uvicorn's server, waking once a second rather than ten times (an idle console's CPU);
    # at SIGINT/SIGTERM the event streams end, so the shutdown does not wait for them
    from acomm_cli.federation import quietserver

    server = quietserver.server_class()(config, at_exit=[application.state.live.close])
    server.run(sockets=[sock])


def _scraper(path: str | Path, offline_after_ms: int) -> Callable[[], tuple[bytes, str]] | None:
    """GET /metrics, the gateway's page: None when prometheus-client is not installed."""
    import importlib.util

    if importlib.util.find_spec("prometheus_client") is None:
        return None
    from acomm_cli.monitoring.metrics import metrics_payload

    return partial(metrics_payload, path, offline_after_ms=offline_after_ms)
