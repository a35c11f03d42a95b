"""`acomm mcp`'s consumer tools: `receive`/`messages` with metadata filters, replay cursors
and schedules, through the SDK's own client over stdio against a real `acomm mcp`
subprocess, a shell `acomm` on the same store on the other side. Each successful call's
structured content is checked against the tool's output schema; each refusal leaves the
store as it was."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import snapshot

pytestmark = pytest.mark.process

pytest.importorskip("mcp", reason="the mcp extra is not installed")
from test_mcp import refused, server, sh  # noqa: E402
from test_mcp_tools import checked  # noqa: E402

from acomm_cli import model  # noqa: E402
from acomm_cli.engine import schedules  # noqa: E402
from acomm_cli.mcpserver import schemas  # noqa: E402


@pytest.fixture
def team(make_channel) -> Path:
    """alice owns `team`, with bob; four messages: region eu, us, eu (with n=5), none."""
    store = make_channel("team", "alice", "bob")
    for meta in (["region=eu", "n=5"], ["region=us"], ["region=eu"], []):
        args = [a for m in meta for a in ("--meta", m)]
        sh("send", "team", f"job {' '.join(meta) or 'plain'}", "--as", "alice", *args)
    return store


def test_the_meta_argument_is_a_bounded_list_in_the_input_schema(store):
    async def main() -> None:
        async with server("bob") as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
        for tool in ("receive", "messages", "cursor_create"):
            meta = listed[tool].input_schema["properties"]["meta"]["anyOf"][0]
            assert meta["type"] == "array", tool
            assert meta["maxItems"] == model.META_FILTERS_MAX, tool
            assert meta["items"]["maxLength"] == model.META_KEY_MAX + model.META_VALUE_MAX + 2

    anyio.run(main)


def test_receive_and_messages_take_meta_filters_as_the_command_line_does(team):
    async def main() -> None:
        async with server("bob") as c:
            got = await checked(c, "messages", meta=["region=eu"])
            assert sorted(m["id"] for m in got["messages"]) == [1, 3]
            assert got == sh("messages", "--meta", "region=eu")
            got = await checked(c, "messages", meta=["region!=eu"])
            assert sorted(m["id"] for m in got["messages"]) == [2, 4]
            got = await checked(c, "messages", meta=["region", "n=5"])  # all must hold
            assert [m["id"] for m in got["messages"]] == [1]
            got = await checked(c, "messages", meta=["!region"])
            assert [m["id"] for m in got["messages"]] == [4]

            got = await checked(c, "receive", meta=["region=us"])
            assert [m["content"] for m in got["messages"]] == ["job region=us"]
            left = await checked(c, "receive", peek=True)  # the others stay unread
            assert [m["id"] for m in left["messages"]] == [1, 3, 4]

    anyio.run(main)


@pytest.mark.parametrize(
    "meta",
    [
        ["=eu"],  # no key
        ["region;drop=1"],  # a character a key may not hold
        ["k" * (model.META_KEY_MAX + 1)],
        [f"k{i}" for i in range(model.META_FILTERS_MAX + 1)],  # too many (the schema's bound)
        ["k=" + "v" * (model.META_VALUE_MAX + 1)],
    ],
)
def test_a_malformed_meta_filter_is_refused_naming_it_and_nothing_is_read(team, meta):
    async def main() -> None:
        async with server("bob") as c:
            before = snapshot(team)
            for tool in ("receive", "messages"):
                err = await refused(c, tool, meta=meta)
                assert (err["code"], err["field"]) == ("validation_failed", "meta"), tool
            assert snapshot(team) == before  # receive marked nothing read

    anyio.run(main)


def test_a_cursor_replays_history_without_touching_anyones_messages(team):
    async def main() -> None:
        async with server("bob") as c:
            made = await checked(
                c, "cursor_create", name="audit", channel="team", from_start=True, meta=["region"]
            )
            assert (made["name"], made["position"], made["head"]) == ("audit", 0, 4)
            assert made["filter"] == {"meta": ["region"]}
            assert made == sh("cursor", "show", "audit")  # the command's own document
            assert made["created_by"] == "bob"
            before = snapshot(team)["deliveries"]

            first = await checked(c, "cursor_read", name="audit", limit=2)
            assert [m["id"] for m in first["messages"]] == [1, 2]
            assert (first["moved_from"], first["cursor"]["position"]) == (0, 2)
            peeked = await checked(c, "cursor_read", name="audit", peek=True)
            assert [m["id"] for m in peeked["messages"]] == [3]
            assert peeked["cursor"]["position"] == 2
            rest = await checked(c, "cursor_read", name="audit")
            assert [m["id"] for m in rest["messages"]] == [3]  # 4 has no region
            assert rest["cursor"]["position"] == 4
            assert snapshot(team)["deliveries"] == before  # nobody's read state moved

            listed = await checked(c, "cursor_list")
            assert listed == sh("cursor", "list")
            assert [(x["name"], x["pending"]) for x in listed["cursors"]] == [("audit", 0)]

            state = snapshot(team)
            err = await refused(c, "cursor_create", name="audit", channel="team")
            assert (err["code"], err["field"]) == ("duplicate", "cursor")
            err = await refused(c, "cursor_create", name="x", channel="team", meta=["=1"])
            assert (err["code"], err["field"]) == ("validation_failed", "meta")
            err = await refused(
                c, "cursor_create", name="x", channel="team", from_start=True, from_id=2
            )
            assert (err["code"], err["field"]) == ("usage", "from")
            err = await refused(c, "cursor_read", name="nope")
            assert (err["code"], err["field"]) == ("not_found", "cursor")
            err = await refused(c, "cursor_read", name="audit", limit=0)
            assert (err["code"], err["field"]) == ("validation_failed", "limit")
            assert snapshot(team) == state

    anyio.run(main)


def test_schedules_are_created_listed_and_deleted_by_their_sender(team):
    async def main() -> None:
        async with server("bob") as bob, server("alice") as alice:
            made = await checked(
                bob,
                "schedule_create",
                channel="team",
                body="heartbeat",
                every="5m",
                metadata={"kind": "beat"},
                max_runs=3,
            )
            assert (made["sender"], made["every_ms"], made["state"]) == ("bob", 300_000, "active")
            assert made["metadata"] == {"kind": "beat"}
            assert made == sh("schedule", "show", str(made["id"]))
            cron = await checked(
                bob, "schedule_create", channel="team", body="daily", cron="0 9 * * *"
            )
            listed = await checked(alice, "schedule_list", channel="team")
            assert listed == sh("schedule", "list", "--channel", "team")
            assert [s["id"] for s in listed["schedules"]] == [made["id"], cron["id"]]

            before = snapshot(team)
            err = await refused(alice, "schedule_delete", schedule_id=made["id"])  # not hers
            assert (err["code"], err["field"]) == ("forbidden", "as")
            err = await refused(bob, "schedule_create", channel="team", body="x", cron="61 * * * *")
            assert (err["code"], err["field"]) == ("validation_failed", "cron")
            err = await refused(bob, "schedule_create", channel="team", body="x")
            assert err["field"] == "every"  # one of every and cron
            err = await refused(
                bob, "schedule_create", channel="team", body="x", every="1m", until="-1h"
            )
            assert err["code"] == "validation_failed"  # its next occurrence never comes
            err = await refused(
                bob, "schedule_create", channel="team", body="x", every="1m", **{"as": "alice"}
            )
            assert err["code"] == "forbidden"  # never as another agent
            assert snapshot(team) == before

            gone = await checked(bob, "schedule_delete", schedule_id=made["id"])
            assert (gone["id"], gone["deleted"]) == (made["id"], True)
            left = await checked(bob, "schedule_list")
            assert [s["id"] for s in left["schedules"]] == [cron["id"]]

    anyio.run(main)


def test_the_schedule_states_in_the_output_schema_are_the_engines():
    assert schemas.SCHEDULE_STATES == schedules.STATES
