"""How strict a node is with its peers, and where its gateway may listen.

The `standard` profile (the default) admits a node by invite alone and reads peers over
plain HTTP. The `production` profile makes a node proof (the node's key signing a fresh
nonce) mandatory for every join as well as every rejoin, and refuses every plain `http://`
peer: a seed to join, a peer to pull or fetch a file from, its own gateway's public url.
`node init --production` records it in the store, where it binds every process that opens
the store; `federation.profile: production` in a config (or $ACOMM_FED_PROFILE) turns it on
for the processes that read that config.

Apart from the profile, a gateway never listens beyond loopback in plain HTTP unless told
to (`--insecure-listen`): its outbox reads are signed, but the agent endpoints' bearer
tokens and the room's traffic would cross the network in clear."""

from __future__ import annotations

import ipaddress
import sqlite3

from acomm_cli.errors import InsecurePeer, ValidationFailed
from acomm_cli.store import federation as sql

PRODUCTION = "production"
STANDARD = "standard"


def production(conn: sqlite3.Connection | None, configured: str | None = None) -> bool:
    """Whether this node runs the production profile: its store says so, or this
    process's configuration does (which can only turn it on)."""
    if configured == PRODUCTION:
        return True
    return conn is not None and sql.profile(conn) == PRODUCTION


def record(conn: sqlite3.Connection) -> None:
    """`node init --production`: the store's own setting, in a transaction of its own."""
    from acomm_cli.store.connection import write

    with write(conn):
        sql.set_profile(conn, PRODUCTION)


def require_tls(url: str, what: str, field: str) -> None:
    """Refuse a plain-HTTP url on the production profile (exit 5, naming it)."""
    if url.lower().startswith("http://"):
        raise InsecurePeer(
            f"{what} {url} is plain HTTP and this node runs the production profile "
            "(federation.profile: production): use an https:// url",
            field=field,
            value=url,
        )


def insecure(url: str) -> bool:
    return url.lower().startswith("http://")


def loopback(host: str) -> bool:
    """A host name or address that only this machine can reach."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_listen(host: str, tls: bool, insecure_listen: bool) -> None:
    """A listening address beyond loopback needs TLS (`--tls-cert/--tls-key`) or the
    explicit `--insecure-listen` (exit 3, naming the flag)."""
    if not host or tls or insecure_listen or loopback(host):
        return
    raise ValidationFailed(
        f"listen: {host} is reachable from other machines and the gateway has no TLS: give "
        "--tls-cert FILE --tls-key FILE (or, behind a TLS proxy on another host or on a "
        "trusted network, --insecure-listen)",
        field="insecure_listen",
        value=host,
    )


def check_tls_files(cert: str | None, key: str | None) -> None:
    """`--tls-cert` and `--tls-key` come together and load as a certificate chain and its
    key (exit 3 naming the option otherwise), before anything listens."""
    if cert is None and key is None:
        return
    if cert is None or key is None:
        raise ValidationFailed(
            "tls_cert: give --tls-cert FILE and --tls-key FILE together",
            field="tls_cert" if cert is None else "tls_key",
        )
    import ssl

    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as exc:
        raise ValidationFailed(
            f"tls_cert: {cert} and {key} do not load as a PEM certificate chain and its "
            f"private key ({exc})",
            field="tls_cert",
            value=cert,
        ) from None
