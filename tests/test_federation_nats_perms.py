"""On NATS a node may publish only on its own subject: the per-user permissions
docs/FEDERATION_NATS.md gives ("Who may publish what"), on a real nats-server. A second
node's credentials cannot publish on the first node's subject (nor touch its stream), and the
whole acomm loop still runs under those permissions."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import run
from natsserver import NatsServer, nats_server, needs_nats

from acomm_cli.federation.nats_transport import consumer_name, stream_name, subject

pytestmark = [pytest.mark.federation, needs_nats]


def permissions(node: str) -> dict[str, Any]:
    """What node `node` may do on the server: publish its own subject, run its own stream,
    and read the others' streams through its own durable consumers. Nothing else."""
    own, mine = stream_name(node), consumer_name(node)
    return {
        "publish": {
            "allow": [
                subject(node),
                "$JS.API.INFO",
                "$JS.API.STREAM.INFO.*",
                f"$JS.API.STREAM.CREATE.{own}",
                f"$JS.API.STREAM.UPDATE.{own}",
                f"$JS.API.CONSUMER.INFO.*.{mine}",
                f"$JS.API.CONSUMER.DELETE.*.{mine}",
                f"$JS.API.CONSUMER.CREATE.*.{mine}",
                f"$JS.API.CONSUMER.CREATE.*.{mine}.>",
                f"$JS.API.CONSUMER.DURABLE.CREATE.*.{mine}",
                f"$JS.API.CONSUMER.MSG.NEXT.*.{mine}",
                f"$JS.ACK.*.{mine}.>",
            ]
        },
        "subscribe": {"allow": ["_INBOX.>"]},
    }


def config(path: Path, nodes: list[str]) -> Path:
    """A nats-server configuration (JSON is valid in its format): one user per node."""
    users = [{"user": n, "password": f"{n}-pw", "permissions": permissions(n)} for n in nodes]
    path.write_text(json.dumps({"authorization": {"users": users}}, indent=1))
    return path


@pytest.fixture
def server(tmp_path: Path):
    with nats_server(tmp_path / "nats", config(tmp_path / "nats.conf", ["na", "nb"])) as s:
        yield s


def url(server: NatsServer, node: str) -> str:
    return f"nats://{node}:{node}-pw@127.0.0.1:{server.port}"


async def _attempts(server: NatsServer) -> dict[str, Any]:
    import nats
    from nats.errors import TimeoutError as NatsTimeout

    errors: list[str] = []

    async def noted(e: Exception) -> None:
        errors.append(str(e))

    na = await nats.connect(url(server, "na"), error_cb=noted, allow_reconnect=False)
    nb = await nats.connect(url(server, "nb"), error_cb=noted, allow_reconnect=False)
    try:
        ja, jb = na.jetstream(timeout=2), nb.jetstream(timeout=2)
        await ja.add_stream(name=stream_name("na"), subjects=[subject("na")])
        await ja.publish(subject("na"), b'{"honest": true}')
        refused = []
        try:  # nb's credentials, na's subject: the server drops it, no ack comes back
            await jb.publish(subject("na"), b'{"forged": true}')
        except NatsTimeout:
            refused.append("publish")
        for call in (  # nor may nb rewrite or empty na's stream
            lambda: jb.purge_stream(stream_name("na")),
            lambda: jb.delete_stream(stream_name("na")),
            lambda: jb.add_stream(name=stream_name("na"), subjects=[subject("nb")]),
        ):
            try:
                await call()
            except NatsTimeout:
                refused.append("admin")
        await nb.flush()
        info = await ja.stream_info(stream_name("na"))
        return {"messages": info.state.messages, "refused": refused, "errors": errors}
    finally:
        await na.close()
        await nb.close()


def test_a_node_cannot_publish_on_another_nodes_subject(server):
    got = asyncio.run(_attempts(server))
    assert got["messages"] == 1  # na's own message only
    assert got["refused"] == ["publish", "admin", "admin", "admin"]
    assert any(
        "permissions violation for publish" in e.lower() and subject("na") in e
        for e in got["errors"]
    )


def ok(path: Path, *args: str) -> Any:
    r = run("--store", str(path), "--json", *args)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return json.loads(r.stdout) if r.stdout.strip() else None


def nats_pair(tmp_path: Path, server: NatsServer) -> tuple[Path, Path]:
    """Nodes na and nb, each on its own NATS user: introduced through each other's store file
    (bob owned on nb, the room exchanged), then pointed at each other over NATS."""
    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    ok(a, "node", "init", "--id", "na", "--transport", url(server, "na"))
    ok(b, "node", "init", "--id", "nb", "--transport", url(server, "nb"))
    ok(a, "peers", "add", "nb", "--url", f"store:{b}")
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    ok(b, "agent", "own", "bob")
    ok(b, "fed", "pull")
    ok(a, "fed", "pull")
    ok(a, "peers", "add", "nb", "--url", url(server, "na"))
    ok(b, "peers", "add", "na", "--url", url(server, "nb"))
    return a, b


def test_the_acomm_loop_runs_under_those_permissions(tmp_path, server, monkeypatch):
    monkeypatch.setenv("ACOMM_FED_OFFLINE_AFTER", "1h")  # no gateway heartbeats here
    a, b = nats_pair(tmp_path, server)
    ok(a, "send", "--to", "bob", "over NATS", "--as", "alice")
    got = ok(b, "fed", "pull")
    assert got["delivered"] == 1 and got["unreachable"] == []
    assert [m["content"] for m in ok(b, "receive", "--as", "bob")["messages"]] == ["over NATS"]
    assert ok(a, "fed", "pull")["acks"] == 1
    with sqlite3.connect(a) as conn:
        assert conn.execute("SELECT state FROM fed_sent").fetchall() == [("accepted",)]
