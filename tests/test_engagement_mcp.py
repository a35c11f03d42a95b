"""Engagement through `acomm mcp`: the server telling its client that the inbox changed is
the recipient's notice, kept with `how` mcp and shown by `show --json`."""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import pytest
from conftest import ACOMM, run

pytestmark = pytest.mark.process

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

DEADLINE_S = 20.0


def sh(*args: str) -> Any:
    p = run(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def bob(mid: int) -> dict[str, Any]:
    return next(e for e in sh("show", str(mid))["engagement"] if e["recipient"] == "bob")


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
def test_the_client_told_of_a_new_message_makes_its_recipient_notified(make_channel):
    make_channel("team", "alice", "bob")

    async def main() -> int:
        told: list[str] = []

        async def handler(message: Any) -> None:
            uri = getattr(getattr(message, "params", None), "uri", None)
            if uri is not None:
                told.append(str(uri))

        params = StdioServerParameters(
            command=ACOMM, args=["mcp", "--as", "bob"], env=dict(os.environ)
        )
        async with Client(params, mode="legacy", message_handler=handler) as c:
            await c.session.subscribe_resource("acomm://inbox")
            mid = int(sh("send", "team", "ping", "--as", "alice")["id"])
            with anyio.fail_after(DEADLINE_S):
                while "acomm://inbox" not in told:
                    await anyio.sleep(0.05)
                while bob(mid)["notified_by"] is None:  # kept just after the notice went out
                    await anyio.sleep(0.05)
        return mid

    mid = anyio.run(main)
    seen = bob(mid)
    assert (seen["state"], seen["notified_by"]) == ("notified", "mcp")
    assert seen["notified_at"] >= seen["routed_at"]
