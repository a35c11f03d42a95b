"""`acomm mcp`'s tools beyond messaging (tasks, capabilities, channels, traces), its output
schemas, event filters and rich sends: the SDK's own client against a real `acomm mcp`
subprocess over stdio, a shell `acomm` on the same store on the other side. The SDK client
itself checks every successful call's structured content against the tool's declared
output schema; the tests check it again with jsonschema, and the store after each refusal."""

from __future__ import annotations

import base64
import json
import typing
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import run, snapshot

pytestmark = pytest.mark.process

pytest.importorskip("mcp", reason="the mcp extra is not installed")
from test_mcp import refused, server, sh  # noqa: E402

from acomm_cli import model  # noqa: E402
from acomm_cli.engine import directory, events  # noqa: E402
from acomm_cli.mcpserver import schemas, toolset  # noqa: E402

NEW_TOOLS = {
    "channel_create",
    "channel_join",
    "task_create",
    "task_accept",
    "task_update",
    "task_complete",
    "task_fail",
    "task_show",
    "task_list",
    "capability_list",
    "capability_show",
    "trace",
    "search",
}


@pytest.fixture
def team(make_channel) -> Path:
    """alice owns `team`, with bob."""
    return make_channel("team", "alice", "bob")


async def checked(client: Any, tool: str, **args: Any) -> Any:
    """A successful call whose structured content is its text and matches its schema."""
    from jsonschema import Draft202012Validator

    r = await client.call_tool(tool, args)
    doc = json.loads(r.content[0].text)
    assert not r.is_error, f"{tool} failed: {doc}"
    assert r.structured_content == doc
    Draft202012Validator(schemas.output_schema(tool)).validate(doc)
    return doc


# the server's inbox watch records, on its own schedule, that it told its client of a message:
# no refusal's doing
NOTICES = ("notifications",)


def test_every_tool_declares_an_output_schema_with_enums(team):
    async def main() -> None:
        async with server("bob") as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
        assert NEW_TOOLS <= set(listed)
        assert set(listed) == set(schemas.OUTPUT)
        for name, tool in listed.items():
            assert tool.output_schema is not None, name
            assert tool.output_schema["type"] == "object", name
            assert tool.output_schema == schemas.output_schema(name)
        # closed values are enums, not prose
        event = listed["receive"].output_schema["properties"]["messages"]["items"]
        hint = event["properties"]["event"]["anyOf"][0]["properties"]["action_hint"]
        assert hint["anyOf"][0]["enum"] == list(model.ACTION_HINTS)
        ack = listed["ack"].output_schema["anyOf"][0]["properties"]["status"]
        assert ack["enum"] == [s.value for s in model.AckStatus]
        state = listed["task_show"].output_schema["properties"]["state"]
        assert state["enum"] == list(model.TASK_STATES)
        assert listed["query"].output_schema["properties"]["state"]["enum"] == [
            "pending",
            "answered",
            "timed_out",
        ]
        ack_in = listed["ack"].input_schema["properties"]["status"]
        assert ack_in["enum"] == [s.value for s in model.AckStatus]

    anyio.run(main)


def test_the_input_enums_are_the_models_values():
    """The Literal arguments spell the engine's closed sets: a value added there must be
    added here, or the tool would refuse it."""
    assert typing.get_args(toolset.AckStatusArg) == tuple(s.value for s in model.AckStatus)
    assert typing.get_args(toolset.EventTypeArg) == model.EVENT_TYPES
    assert typing.get_args(toolset.TaskStateArg) == model.TASK_STATES
    assert typing.get_args(toolset.ChannelTypeArg) == tuple(t.value for t in model.ChannelType)
    assert typing.get_args(toolset.DeliveryArg) == tuple(d.value for d in model.DeliveryMode)
    assert typing.get_args(toolset.MessageTypeArg) == tuple(t.value for t in model.MessageType)
    assert typing.get_args(toolset.StatusArg) == model.MESSAGE_STATUSES
    assert typing.get_args(toolset.ReasonArg) == model.DEAD_LETTER_REASONS
    assert typing.get_args(toolset.KindArg) == directory.KINDS
    assert typing.get_args(toolset.AckClockArg) == tuple(c.value for c in model.AckClock)
    assert typing.get_args(toolset.AckNotifyArg) == tuple(n.value for n in model.AckNotify)
    event = toolset.EVENT_SCHEMA["properties"]
    assert tuple(event["event_type"]["enum"]) == model.EVENT_TYPES
    assert tuple(event["action_hint"]["enum"]) == model.ACTION_HINTS
    assert set(event) == set(events.FIELDS)
    names = tuple(p.name.lower() for p in model.Priority)
    assert typing.get_args(toolset.PriorityArg) == names + tuple(
        str(p.value) for p in model.Priority
    )


def test_a_task_from_creation_to_completion_and_its_refusals(team):
    async def main() -> None:
        async with server("alice") as lead, server("bob") as worker:
            made = await checked(lead, "task_create", to="bob", body="run the tests")
            assert (made["from"], made["to"], made["state"]) == ("alice", "bob", "created")
            tid = made["id"]
            before = snapshot(team, ignore=NOTICES)
            err = await refused(lead, "task_accept", task_id=tid, eta="10m")  # not its owner
            assert err["code"] == "forbidden"
            err = await refused(worker, "task_update", task_id=tid, progress=101)
            assert (err["code"], err["field"]) == ("validation_failed", "progress")
            err = await refused(worker, "task_accept", task_id=tid, eta="yesterday")
            assert (err["code"], err["field"]) == ("validation_failed", "eta")
            err = await refused(lead, "task_create", body="who?")
            assert (err["code"], err["field"]) == ("validation_failed", "to")
            err = await refused(worker, "task_list", state="sleeping")
            assert (err["code"], err["field"]) == ("validation_failed", "state")
            assert snapshot(team, ignore=NOTICES) == before

            took = await checked(worker, "task_accept", task_id=tid, eta="10m", plan="unit first")
            assert (took["state"], took["plan"]) == ("accepted", "unit first")
            step = await checked(worker, "task_update", task_id=tid, progress=40, note="half")
            assert (step["state"], step["progress"]) == ("updated", 40)
            done = await checked(worker, "task_complete", task_id=tid, result="412 pass")
            assert done["state"] == "completed"
            shown = await checked(lead, "task_show", task_id=tid)
            assert [e["event"] for e in shown["history"]][-1] == "completed"
            assert shown == sh("task", "show", str(tid))  # the command's own document

            other = await checked(lead, "task_create", to="bob", body="deploy")
            failed = await checked(worker, "task_fail", task_id=other["id"], reason="no host")
            assert failed["state"] == "failed"
            err = await refused(worker, "task_fail", task_id=other["id"])
            assert (err["code"], err["field"]) == ("validation_failed", "reason")

            mine = await checked(worker, "task_list", mine=True)
            assert [t["id"] for t in mine["tasks"]] == [other["id"], tid]
            assert mine == sh("task", "list", "--as", "bob")
            only = await checked(worker, "task_list", state="failed")
            assert [t["id"] for t in only["tasks"]] == [other["id"]]

    anyio.run(main)


def test_capabilities_are_listed_and_shown(team, tmp_path):
    schema = tmp_path / "review.json"
    schema.write_text(json.dumps({"type": "object", "required": ["verdict"]}))
    sh("capability", "host", "alice", "skills/review-exec@1.0")
    sh(
        "capability",
        "publish",
        "review",
        "--owner",
        "alice",
        "--delegation-skill",
        "skills/review-request@1.2",
        "--executor-skill",
        "skills/review-exec@1.0",
        "--eta",
        "10m",
        "--schema",
        str(schema),
    )

    async def main() -> None:
        async with server("bob") as c:
            listed = await checked(c, "capability_list")
            assert [(x["id"], x["owner"], x["state"]) for x in listed["capabilities"]] == [
                ("review", "alice", "published")
            ]
            assert listed == sh("capability", "list")
            shown = await checked(c, "capability_show", capability_id="review")
            assert shown["schema"] == {"type": "object", "required": ["verdict"]}
            assert shown == sh("capability", "show", "review")
            assert (await checked(c, "capability_list", state="unpublished"))["capabilities"] == []
            err = await refused(c, "capability_show", capability_id="reveiw")
            assert (err["code"], err["field"]) == ("not_found", "capability")
            err = await refused(c, "capability_list", state="gone")
            assert (err["code"], err["field"]) == ("validation_failed", "state")
            # a task to the capability goes to its owner
            task = await checked(c, "task_create", capability="review", body="look at #7")
            assert (task["to"], task["capability"]) == ("alice", "review")

    anyio.run(main)


def test_channels_are_created_and_joined_by_their_owner(team):
    async def main() -> None:
        async with server("carol") as carol, server("bob") as bob:
            made = await checked(
                carol, "channel_create", name="ops", type="queue", delivery="at-least-once"
            )
            assert (made["name"], made["owner"], made["type"]) == ("ops", "carol", "queue")
            assert made["config"]["delivery"] == "at-least-once"
            joined = await checked(carol, "channel_join", channel="ops", member="bob")
            assert joined["changed"] is True
            assert {(p["agent"], p["role"]) for p in joined["participants"]} == {
                ("carol", "owner"),
                ("bob", "member"),
            }
            again = await checked(carol, "channel_join", channel="ops", member="bob")
            assert again["changed"] is False
            same = await checked(
                carol, "channel_create", name="ops", type="queue", if_not_exists=True
            )
            assert same["id"] == made["id"]

            before = snapshot(team, ignore=NOTICES)
            err = await refused(bob, "channel_join", channel="ops", member="dave")
            assert (err["code"], err["owner"]) == ("forbidden", "carol")
            err = await refused(bob, "channel_join", channel="team")  # alice's channel
            assert err["code"] == "forbidden"
            err = await refused(carol, "channel_create", name="ops")
            assert (err["code"], err["field"]) == ("duplicate", "channel")
            err = await refused(carol, "channel_create", name="bad name")
            assert (err["code"], err["field"]) == ("validation_failed", "channel")
            err = await refused(carol, "channel_create", name="x", type="mesh")
            assert (err["code"], err["field"]) == ("validation_failed", "type")
            err = await refused(carol, "channel_create", name="x", ack_timeout="soon")
            assert (err["code"], err["field"]) == ("validation_failed", "ack_timeout")
            err = await refused(carol, "channel_join", channel="ops", member="dave", role="owner")
            assert (err["code"], err["field"]) == ("validation_failed", "role")
            assert snapshot(team, ignore=NOTICES) == before
        shown = sh("channel", "show", "ops")
        assert {p["agent"] for p in shown["participants"]} == {"carol", "bob"}

    anyio.run(main)


def test_a_trace_is_shown_as_its_tree(team):
    async def main() -> None:
        async with server("alice") as c:
            sent = await checked(c, "send", channel="team", body="traced", trace_id="mcp-tr-1")
            tree = await checked(c, "trace", trace_id="mcp-tr-1")
            assert tree["trace_id"] == "mcp-tr-1"
            assert [(h["kind"], h["id"]) for h in tree["hops"]][0] == ("message", sent["id"])
            assert tree == sh("trace", "mcp-tr-1")
            err = await refused(c, "trace", trace_id="mcp-none")
            assert (err["code"], err["field"]) == ("not_found", "trace_id")
            err = await refused(c, "trace", trace_id="no spaces")
            assert (err["code"], err["field"]) == ("validation_failed", "trace_id")

    anyio.run(main)


def test_receive_and_messages_take_the_event_filters(team):
    sh(
        "send",
        "team",
        "@bob look",
        "--event-type",
        "mention.created",
        "--target",
        "bob",
        "--thread",
        "t1",
        "--as",
        "alice",
    )
    sh("send", "team", "liked", "--event-type", "like.created", "--thread", "t2", "--as", "alice")
    sh("send", "team", "plain", "--as", "alice")

    async def main() -> None:
        async with server("bob") as c:
            got = await checked(c, "messages", event_type="mention.created")
            assert [m["content"] for m in got["messages"]] == ["@bob look"]
            got = await checked(c, "messages", thread="t2")
            assert [m["content"] for m in got["messages"]] == ["liked"]
            got = await checked(c, "messages", actor="alice")
            assert {m["content"] for m in got["messages"]} == {"@bob look", "liked"}
            err = await refused(c, "receive", event_type="poke.created")
            assert (err["code"], err["field"]) == ("validation_failed", "event_type")
            # the event's closed fields are enums in send's schema, named in JSON's words
            err = await refused(
                c, "send", channel="team", body="x", event={"event_type": "poke.created"}
            )
            assert (err["code"], err["field"]) == ("validation_failed", "event")
            assert '"poke.created" is not one of "comment.created"' in err["message"]
            err = await refused(c, "send", channel="team", body="x", priority="loud")
            assert "['" not in err["message"] and '"loud"' in err["message"]
            got = await checked(c, "receive", event_type="like.created")
            assert [m["content"] for m in got["messages"]] == ["liked"]
            left = await checked(c, "receive", peek=True)
            assert [m["content"] for m in left["messages"]] == ["@bob look", "plain"]

    anyio.run(main)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_a_send_carries_format_subject_and_files(team, tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_MAX_ATTACHMENT_BYTES", "10")
    monkeypatch.setenv("ACOMM_MAX_MESSAGE_ATTACHMENT_BYTES", "15")

    async def main() -> None:
        async with server("alice") as c:
            files = [{"name": "ten.txt", "content_base64": _b64(b"0123456789")}]
            sent = await checked(
                c,
                "send",
                to="bob",
                body="**green**",
                format="markdown",
                subject="Build report",
                attachments=files,
            )
            mid = sent["results"][0]["id"]
            before = snapshot(team, ignore=NOTICES)
            for args, code, field in [
                (
                    {"attachments": [{"name": "a", "content_base64": "!!!"}]},
                    "validation_failed",
                    "attachments",
                ),
                (
                    {"attachments": [{"name": "a/b", "content_base64": _b64(b"x")}]},
                    "validation_failed",
                    "attachments",
                ),
                (
                    {"attachments": [{"name": "big", "content_base64": _b64(b"x" * 11)}]},
                    "attachment_too_large",
                    "attachments",
                ),
                (
                    {"attachments": [{"name": "huge", "content_base64": "QUFB" * 1000}]},
                    "attachment_too_large",
                    "attachments",
                ),
                (
                    {
                        "attachments": [
                            {"name": "a", "content_base64": _b64(b"x" * 8)},
                            {"name": "b", "content_base64": _b64(b"y" * 8)},
                        ]
                    },
                    "attachment_too_large",
                    "attachments",
                ),
                (
                    {
                        "attachments": [
                            {"name": "a", "content_base64": _b64(b"x")},
                            {"name": "a", "content_base64": _b64(b"y")},
                        ]
                    },
                    "validation_failed",
                    "attachments",
                ),
                ({"attachments": [{"name": "a"}]}, "validation_failed", "attachments"),
                ({"format": "html"}, "validation_failed", "format"),
                ({"subject": "two\nlines"}, "validation_failed", "subject"),
            ]:
                err = await refused(c, "send", channel="team", body="x", **args)
                assert (err["code"], err["field"]) == (code, field), (args, err)
            assert snapshot(team, ignore=NOTICES) == before
        shown = sh("show", str(mid))
        assert (shown["format"], shown["subject"]) == ("markdown", "Build report")
        assert [(a["name"], a["size"]) for a in shown["attachments"]] == [("ten.txt", 10)]
        out = tmp_path / "got.txt"
        sh("attachment", "get", str(mid), "ten.txt", "-o", str(out), "--as", "bob")
        assert out.read_bytes() == b"0123456789"

    anyio.run(main)


def test_a_query_to_one_agent_is_pending_until_answered(team):
    async def main() -> None:
        async with server("bob") as c:
            asked = await checked(c, "query", to="alice", body="ready?")
            assert (asked["state"], asked["answer"]) == ("pending", None)
            assert asked["sent"]["recipients"] == ["alice"]
            p = run("receive", "--as", "alice", "--type", "query", "--json")
            assert json.loads(p.stdout)["messages"][0]["correlation_id"] == asked["correlation_id"]
            before = snapshot(team, ignore=NOTICES)
            err = await refused(c, "query", body="x")
            assert (err["code"], err["field"]) == ("validation_failed", "channel")
            err = await refused(c, "query", body="x", channel="team", to="alice")
            assert (err["code"], err["field"]) == ("validation_failed", "channel")
            err = await refused(c, "query", body="x", to="bob")  # itself
            assert (err["code"], err["field"]) == ("validation_failed", "to")
            assert snapshot(team, ignore=NOTICES) == before

    anyio.run(main)


def test_search_finds_ranks_and_refuses_over_stdio(team):
    sh("send", "team", "the deploy failed twice: deploy again", "--as", "alice")
    sh("send", "team", "a deploy note", "--subject", "weekly", "--as", "alice")
    sh(
        "send",
        "team",
        "look",
        "--event-type",
        "mention.created",
        "--target",
        "bob",
        "--as",
        "alice",
    )

    async def main() -> None:
        async with server("bob") as c:
            got = await checked(c, "search", query="deploy")
            assert [m["content"] for m in got["messages"]] == [
                "the deploy failed twice: deploy again",
                "a deploy note",
            ]
            assert got["messages"][0]["search"]["snippet"].startswith("the [deploy]")
            assert got == sh("messages", "--search", "deploy", "--limit", "20")
            got = await checked(c, "search", query="fts:deploy NOT weekly", channel="team")
            assert [m["content"] for m in got["messages"]] == [
                "the deploy failed twice: deploy again"
            ]
            got = await checked(c, "search", query="bob", event_type="mention.created")
            assert [m["content"] for m in got["messages"]] == ["look"]
            before = snapshot(team)
            err = await refused(c, "search", query="fts:deploy AND")
            assert (err["code"], err["field"]) == ("validation_failed", "search")
            err = await refused(c, "search", query="x" * 501)
            assert err["code"] == "validation_failed"
            assert snapshot(team) == before

    anyio.run(main)
