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


@pytest.fixture
def builds(make_channel) -> Path:
    """ci's pubsub `builds` (at-least-once); `orders`, shop's at-least-once work queue."""
    make_channel("orders", "shop", type="queue", delivery="at-least-once")
    return make_channel("builds", "ci", type="pubsub", delivery="at-least-once")


def test_subscribe_takes_a_group_and_its_members_share_the_pools_copy(builds):
    async def main() -> None:
        async with server("w1") as w1, server("w2") as w2:
            for c in (w1, w2):
                made = await checked(c, "subscribe", channel="builds", pattern="job.#", group="b")
                assert (made["group"], made["created"]) == ("b", True)
            sh("subscribe", "builds", "job.#", "--as", "auditor")
            listed = sh("subscriptions", "builds")["subscriptions"]
            assert [(s["agent"], s.get("group")) for s in listed] == [
                ("auditor", None),
                ("w1", "b"),
                ("w2", "b"),
            ]
            sent = sh("publish", "builds", "job.test", "run", "--as", "ci")
            assert sorted(sent["recipients"]) == ["*b", "auditor"]
            got = await checked(w2, "receive")
            assert [m["content"] for m in got["messages"]] == ["run"]
            assert (await checked(w1, "receive"))["messages"] == []  # w2 claimed it

            before = snapshot(builds)
            err = await refused(w1, "subscribe", channel="builds", pattern="x", group="no way")
            assert (err["code"], err["field"]) == ("validation_failed", "group")
            # an agent's subscriptions on a channel are all its own or all for one pool
            err = await refused(w1, "subscribe", channel="builds", pattern="x", group="other")
            assert (err["code"], err["field"]) == ("invalid_state", "group")
            err = await refused(w1, "subscribe", channel="builds", pattern="x")
            assert (err["code"], err["field"]) == ("invalid_state", "group")
            assert snapshot(builds) == before

    anyio.run(main)


def test_send_and_publish_take_a_group_key_as_the_command_line_does(builds):
    sh("channel", "join", "orders", "w1", "--as", "shop")
    sh("subscribe", "builds", "job.#", "--group", "b", "--as", "w1")

    async def main() -> None:
        async with server("shop") as shop, server("ci") as ci, server("w1") as w1:
            for body, key in (("charge", "o-7"), ("ship", "o-7"), ("charge 8", "o-8")):
                await checked(shop, "send", channel="orders", body=body, group_key=key)
            got = await checked(w1, "receive", limit=10)  # one of each key in flight
            assert [(m["content"], m["group_key"]) for m in got["messages"]] == [
                ("charge", "o-7"),
                ("charge 8", "o-8"),
            ]
            shown = await checked(shop, "messages", channel="orders")
            assert {m["content"]: m["group_key"] for m in shown["messages"]} == {
                "charge": "o-7",
                "ship": "o-7",
                "charge 8": "o-8",
            }
            await checked(ci, "publish", channel="builds", topic="job.a", body="a1", group_key="k")
            await checked(ci, "publish", channel="builds", topic="job.a", body="a2", group_key="k")
            got = await checked(w1, "receive", channel="builds", limit=10)
            assert [m["content"] for m in got["messages"]] == ["a1"]  # a2 waits for a1

            sh("channel", "create", "room", "--as", "ci")  # a group channel: nothing to order
            sh("channel", "create", "news", "--type", "pubsub", "--as", "ci")
            sh("subscribe", "news", "#", "--as", "w1")  # no worker pool on it
            before = snapshot(builds)
            err = await refused(ci, "send", channel="room", body="x", group_key="k")
            assert (err["code"], err["field"]) == ("validation_failed", "group_key")
            err = await refused(ci, "publish", channel="news", topic="t", body="x", group_key="k")
            assert (err["code"], err["field"]) == ("validation_failed", "group_key")
            long = "k" * (model.NAME_MAX + 1)
            err = await refused(shop, "send", channel="orders", body="x", group_key=long)
            assert (err["code"], err["field"]) == ("validation_failed", "group_key")
            assert snapshot(builds) == before

    anyio.run(main)


def test_channel_create_takes_the_ack_clock_and_ack_notify(store):
    async def main() -> None:
        async with server("boss") as c:
            made = await checked(
                c,
                "channel_create",
                name="reports",
                delivery="at-least-once",
                ack_clock="read",
                ack_notify="failures",
            )
            assert (made["config"]["ack_clock"], made["config"]["ack_notify"]) == (
                "read",
                "failures",
            )
            assert made["config"] == sh("channel", "show", "reports")["config"]
            plain = await checked(c, "channel_create", name="plain")
            assert (plain["config"]["ack_clock"], plain["config"]["ack_notify"]) == ("sent", "all")
            before = snapshot(store)
            for field, value in (("ack_clock", "never"), ("ack_notify", "some")):
                err = await refused(c, "channel_create", name="x", **{field: value})
                assert (err["code"], err["field"]) == ("validation_failed", field)
                assert "is not one of" in err["message"]
            assert snapshot(store) == before

    anyio.run(main)


def test_an_occurrence_the_receive_tool_sends_respects_the_configured_limits(team, monkeypatch):
    """limits.max_active_messages at 4 with team's four messages unread: the schedule's due
    occurrence is refused (the default limit would send it) and the refusal recorded."""
    monkeypatch.setenv("ACOMM_MAX_ACTIVE_MESSAGES", "4")
    sh("schedule", "create", "team", "ping", "--every", "1h", "--start", "-1m", "--as", "alice")

    async def main() -> None:
        async with server("bob") as c:
            got = await checked(c, "receive", peek=True)
            assert [m["content"] for m in got["messages"]] == [
                "job region=eu n=5",
                "job region=us",
                "job region=eu",
                "job plain",
            ]

    anyio.run(main)
    assert "max_active_messages" in sh("schedule", "show", "1")["last_error"]
