"""`acomm mcp`: the server runs as a subprocess, as an MCP client starts it, and the
SDK's own client talks to it over stdio (and once over streamable HTTP). A shell `acomm` on
the same store is the other side of every exchange."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import procs
import pytest
from conftest import ACOMM, run, snapshot

pytestmark = pytest.mark.process

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

TOOLS = {
    "send",
    "publish",
    "receive",
    "ack",
    "nack",
    "query",
    "respond",
    "thread",
    "messages",
    "search",
    "show",
    "channels",
    "subscribe",
    "unsubscribe",
    "deadletters",
    "replay",
    "stats",
    "whois",
    "list_agents",
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
    "cursor_create",
    "cursor_read",
    "cursor_list",
    "schedule_create",
    "schedule_list",
    "schedule_delete",
}
DEADLINE_S = 20.0

# the server's inbox watch records, on its own schedule, that it told its client of a message:
# no refusal's doing
NOTICES = ("notifications",)


def sh(*args: str) -> Any:
    """A shell `acomm ... --json`: its document (the test fails on a non-zero exit)."""
    p = run(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout) if p.stdout.strip() else None


@asynccontextmanager
async def server(
    agent: str,
    *,
    mode: str = "auto",
    on_message: Callable[[Any], None] | None = None,
    args: tuple[str, ...] = (),
) -> AsyncIterator[Client]:
    async def handler(message: Any) -> None:
        if on_message is not None:
            on_message(message)

    params = StdioServerParameters(
        command=ACOMM, args=[*args, "mcp", "--as", agent], env=dict(os.environ)
    )
    async with Client(params, mode=mode, message_handler=handler) as client:
        yield client


async def call(client: Client, tool: str, **args: Any) -> Any:
    """A tool that must succeed: its JSON document."""
    r = await client.call_tool(tool, args)
    doc = json.loads(r.content[0].text)
    assert not r.is_error, f"{tool} failed: {doc}"
    return doc


async def refused(client: Client, tool: str, **args: Any) -> dict[str, Any]:
    """A tool that must fail: acomm's error object from the tool error."""
    r = await client.call_tool(tool, args)
    assert r.is_error, f"{tool} should have failed: {r.content[0].text}"
    doc = json.loads(r.content[0].text)
    assert r.structured_content == doc
    return doc["error"]


@pytest.fixture
def shared(make_channel) -> Path:
    """alice's `team` with bob; `jobs` (at-least-once) with bob; `ci` (pubsub)."""
    make_channel("team", "alice", "bob")
    make_channel("jobs", "alice", "bob", delivery="at-least-once")
    return make_channel("ci", "alice", "bob", type="pubsub")


def test_every_tool_over_stdio_against_a_shell_on_the_same_store(shared):
    async def main() -> None:
        async with server("bob") as c:
            listed = await c.list_tools()
            assert {t.name for t in listed.tools} == TOOLS

            # send, as bob: the shell sees it from bob
            sent = await call(c, "send", channel="team", body="hello from mcp", topic=None)
            assert sh("show", str(sent["id"]))["sender"] == "bob"
            direct = await call(c, "send", to="alice", body="psst")
            assert direct["results"][0]["recipients"] == ["alice"]

            # a shell send arrives through receive; then ack it
            mid = sh("send", "team", "from the shell", "--as", "alice")["id"]
            peeked = await call(c, "receive", peek=True)
            assert [m["id"] for m in peeked["messages"]] == [mid]
            got = await call(c, "receive", wait_seconds=2)
            assert [(m["id"], m["content"], m["sender"]) for m in got["messages"]] == [
                (mid, "from the shell", "alice")
            ]
            assert got["messages"][0]["delivery"]["state"] == "read"
            assert (await call(c, "receive"))["messages"] == []
            acked = await call(c, "ack", message_id=mid, note="seen")
            assert (acked["message_id"], acked["agent"], acked["status"]) == (
                mid,
                "bob",
                "completed",
            )

            # receive with ack: read and acknowledged in one transaction; ack of several
            first = sh("send", "jobs", "one", "--as", "alice")["id"]
            both = await call(c, "receive", channel="jobs", ack="in_progress")
            assert [m["id"] for m in both["messages"]] == [first]
            assert sh("show", str(first))["deliveries"][0]["ack_status"] == "in_progress"
            second = sh("send", "jobs", "two", "--as", "alice")["id"]
            await call(c, "receive", channel="jobs")
            done = await call(c, "ack", message_id=[first, second])
            assert [(d["message_id"], d["status"]) for d in done["acks"]] == [
                (first, "completed"),
                (second, "completed"),
            ]

            # a scheduled send with metadata: not delivered before its time
            later = await call(
                c, "send", channel="team", body="later", delay="1h", metadata={"k": "v"}
            )
            shown = sh("show", str(later["id"]))
            assert (shown["metadata"], shown["deliver_at"] is not None) == ({"k": "v"}, True)

            # nack: dead-letter now; deadletters lists it; replay delivers it again
            job = sh("send", "jobs", "do it", "--as", "alice")["id"]
            await call(c, "receive", channel="jobs")
            nacked = await call(c, "nack", message_id=job, reason="cannot")
            assert nacked["outcome"] == "dead_lettered"
            dead = await call(c, "deadletters", recipient="bob")
            assert [(d["message_id"], d["reason"]) for d in dead["dead_letters"]] == [
                (job, "nacked")
            ]
            replayed = await call(c, "replay", message_id=job)
            assert replayed["dead_letters"][0]["message_id"] == job
            again = await call(c, "receive", channel="jobs")
            assert [m["id"] for m in again["messages"]] == [job]
            requeued = await call(c, "nack", message_id=job, requeue=True)
            assert requeued["outcome"] == "requeued"

            # query from the shell, answered with respond; then bob asks, the shell answers
            asked = sh("query", "team", "pool size?", "--as", "alice")["correlation_id"]
            inbox = await call(c, "receive", type=["query"])
            assert inbox["messages"][0]["correlation_id"] == asked
            answer = await call(c, "respond", correlation_id=asked, body="20")
            assert answer["recipients"] == ["alice"]
            p = run("receive", "--as", "alice", "--type", "response", "--json")
            assert json.loads(p.stdout)["messages"][0]["content"] == "20"
            mine = await call(c, "query", channel="team", body="deploy?")
            assert (mine["state"], mine["answer"]) == ("pending", None)
            corr = mine["correlation_id"]
            assert mine["sent"]["correlation_id"] == corr
            sh("respond", corr, "yes", "--as", "alice")
            thread = await call(c, "thread", correlation_id=corr)
            assert [m["content"] for m in thread["messages"]] == ["deploy?", "yes"]

            # pubsub: subscribe, publish, unsubscribe
            sub = await call(c, "subscribe", channel="ci", pattern="build.*")
            assert (sub["created"], sub["agent"]) == (True, "bob")
            pub = await call(c, "publish", channel="ci", topic="build.web", body="green")
            assert pub["channel"] == "ci"
            assert (await call(c, "unsubscribe", channel="ci", pattern="build.*"))["removed"]

            # the read-only tools
            history = await call(c, "messages", channel="team", limit=2)
            assert len(history["messages"]) == 2 and history["has_more"] is True
            assert (await call(c, "show", message_id=mid))["content"] == "from the shell"
            names = {ch["name"] for ch in (await call(c, "channels"))["channels"]}
            assert {"team", "jobs", "ci"} <= names
            stats = await call(c, "stats", mine=True)
            assert [a["agent"] for a in stats["agents"]] == ["bob"]
            who = await call(c, "whois", name="alice")
            assert who == sh("agent", "show", "alice")  # the command's own document
            assert {"team", "jobs", "ci"} <= {ch["channel"] for ch in who["channels"]}
            listed = await call(c, "list_agents")
            assert listed == sh("agent", "list")
            assert [a["name"] for a in listed["agents"]] == ["alice", "bob"]
            assert (await call(c, "list_agents", kind="human"))["agents"] == []

            # the resources
            sh("send", "team", "unread one", "--as", "alice")
            res = await c.read_resource("acomm://inbox")
            unread = [m["content"] for m in json.loads(res.contents[0].text)["messages"]]
            assert unread == ["do it", "yes", "unread one"]  # requeued, answer, new
            assert (await call(c, "receive", peek=True))["total_count"] == 3  # still unread
            res = await c.read_resource("acomm://channel/team")
            assert json.loads(res.contents[0].text)["messages"][0]["content"] == "unread one"
            res = await c.read_resource(f"acomm://thread/{corr}")
            assert len(json.loads(res.contents[0].text)["messages"]) == 2

    anyio.run(main)


def test_a_query_reports_the_state_of_its_answer(shared):
    """timed_out (not an error: the question was asked), then answered with the answer."""

    async def main() -> None:
        async with server("bob") as c:
            late = await call(c, "query", channel="team", body="anyone?", wait_seconds=0.3)
            assert (late["state"], late["answer"]) == ("timed_out", None)
            sh("respond", late["correlation_id"], "late", "--as", "alice")
            got = await call(c, "receive", type=["response"])
            assert got["messages"][0]["content"] == "late"

            def answer() -> None:  # alice answers the next query from her shell
                deadline = time.monotonic() + DEADLINE_S
                while time.monotonic() < deadline:
                    p = run("receive", "--as", "alice", "--type", "query", "--json")
                    msgs = json.loads(p.stdout)["messages"] if p.returncode == 0 else []
                    if msgs:
                        sh("respond", msgs[0]["correlation_id"], "42", "--as", "alice")
                        return

            alice = threading.Thread(target=answer)
            alice.start()
            try:
                done = await call(
                    c, "query", to="alice", body="the answer?", wait_seconds=DEADLINE_S
                )
            finally:
                alice.join()
            assert done["state"] == "answered"
            assert done["sent"]["recipients"] == ["alice"]
            a = done["answer"]
            assert (a["content"], a["sender"], a["type"]) == ("42", "alice", "response")
            assert a["correlation_id"] == done["correlation_id"]

    anyio.run(main)


def test_the_identity_is_fixed_at_start(shared):
    """No tool has an identity argument, and one given anyway is refused: nothing is sent."""

    async def main() -> None:
        before = snapshot(shared, ignore=NOTICES)
        async with server("bob") as c:
            for tool in (await c.list_tools()).tools:
                props = set(tool.input_schema.get("properties", {}))
                assert not props & {"as", "as_", "sender", "agent", "from", "identity"}, tool
            for key in ("as", "sender", "agent", "from"):
                err = await refused(c, "send", channel="team", body="forged", **{key: "alice"})
                assert (err["code"], err["field"]) == ("forbidden", key)
                assert "'bob'" in err["message"]
            err = await refused(c, "ack", message_id=1, **{"as": "alice"})
            assert err["code"] == "forbidden"
        assert snapshot(shared, ignore=NOTICES) == before

    anyio.run(main)


def test_errors_carry_the_code_and_change_nothing(shared):
    async def main() -> None:
        before = snapshot(shared, ignore=NOTICES)
        async with server("bob") as c:
            err = await refused(c, "send", channel="nope", body="x")
            assert (err["code"], err["field"], err["value"]) == ("not_found", "channel", "nope")
            err = await refused(c, "send", channel="team", body=3)
            assert (err["code"], err["field"]) == ("validation_failed", "body")
            err = await refused(c, "send", channel="team")
            assert (err["code"], err["field"]) == ("validation_failed", "body")
            err = await refused(c, "send", channel="team", body="x", colour="red")
            assert (err["code"], err["field"]) == ("validation_failed", "colour")
            err = await refused(c, "send", channel="team", body="x", priority="loud")
            assert (err["code"], err["field"]) == ("validation_failed", "priority")
            err = await refused(c, "receive", wait_seconds=3600)
            assert (err["code"], err["field"]) == ("validation_failed", "wait_seconds")
            err = await refused(c, "ack", message_id=999)
            assert err["code"] == "not_found"
            err = await refused(c, "show", message_id=999)
            assert err["code"] == "not_found"
            err = await refused(c, "whois", name="alica")
            assert (err["code"], err["field"], err["suggestions"]) == (
                "not_found",
                "agent",
                ["alice"],
            )
            err = await refused(c, "list_agents", kind="robot")
            assert (err["code"], err["field"]) == ("validation_failed", "kind")
            err = await refused(c, "list_agents", active="soon")
            assert (err["code"], err["field"]) == ("validation_failed", "active")
            with pytest.raises(Exception, match="not_found"):
                await c.read_resource("acomm://channel/nope")
        assert snapshot(shared, ignore=NOTICES) == before

    anyio.run(main)


def test_numbers_too_large_for_the_store_are_validation_failed(shared, tmp_path):
    """An integer past SQLite's 64 bits (or a number past what a time holds) is acomm's
    validation_failed naming the argument, not the SDK's generic error with a traceback."""
    errlog = tmp_path / "mcp.err"
    params = StdioServerParameters(
        command="/bin/sh",
        args=["-c", f'exec "$0" mcp --as bob 2>"{errlog}"', ACOMM],
        env=dict(os.environ),
    )
    huge = 10**30

    async def main() -> None:
        before = snapshot(shared, ignore=NOTICES)
        async with Client(params) as c:
            for tool, args, field in [
                ("ack", {"message_id": huge}, "message_id"),
                ("ack", {"message_id": [1, 2**63]}, "message_id"),
                ("show", {"message_id": -(2**63) - 1}, "message_id"),
                ("nack", {"message_id": huge}, "message_id"),
                ("messages", {"limit": 10, "offset": huge}, "offset"),
                ("receive", {"limit": huge}, "limit"),
                ("deadletters", {"offset": huge}, "offset"),
                ("send", {"channel": "team", "body": "x", "metadata": {"n": [huge]}}, "metadata"),
            ]:
                err = await refused(c, tool, **args)
                assert (err["code"], err["field"]) == ("validation_failed", field), (tool, err)
            # a delay whose milliseconds pass 64 bits: refused, not the SDK's generic error
            err = await refused(c, "send", channel="team", body="x", delay="9" * 25 + "d")
            assert err["code"] == "validation_failed"
            # the largest 64-bit id is an ordinary id that is not there
            err = await refused(c, "ack", message_id=2**63 - 1)
            assert err["code"] == "not_found"
            page = await call(c, "messages", limit=10, offset=2**63 - 1)
            assert page["messages"] == []
        assert snapshot(shared, ignore=NOTICES) == before

    anyio.run(main)
    assert "Traceback" not in errlog.read_text()


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_inbox_change_is_notified(shared, mode):
    """`legacy`: resources/subscribe (protocol <= 2025-11-25, what Claude Code speaks);
    `auto`: the 2026-07-28 subscriptions/listen stream."""

    async def main() -> None:
        seen: list[str] = []

        def note(message: Any) -> None:
            uri = getattr(getattr(message, "params", None), "uri", None)
            if uri is not None:
                seen.append(str(uri))

        async with server("bob", mode=mode, on_message=note) as c:
            if mode == "legacy":
                assert c.server_capabilities.resources.subscribe
                await c.session.subscribe_resource("acomm://inbox")
                sh("send", "team", "ping", "--as", "alice")
                with anyio.fail_after(DEADLINE_S):
                    while "acomm://inbox" not in seen:
                        await anyio.sleep(0.05)
            else:
                async with c.listen(resource_subscriptions=["acomm://inbox"]) as sub:
                    sh("send", "team", "ping", "--as", "alice")
                    with anyio.fail_after(DEADLINE_S):
                        async for event in sub:
                            assert event.uri == "acomm://inbox"
                            break
            got = await call(c, "receive")
            assert [m["content"] for m in got["messages"]] == ["ping"]

    anyio.run(main)


def test_print_config_registers_a_server_that_works(shared, tmp_path):
    p = run("mcp", "--as", "bob", "--print-config", "claude")
    assert p.returncode == 0, p.stderr
    assert "claude mcp add --scope project acomm-bob -- " in p.stdout
    assert f"--store {shared} mcp --as bob" in p.stdout
    p = run("mcp", "--as", "bob", "--print-config", "json")
    entry = json.loads(p.stdout)["mcpServers"]["acomm-bob"]
    assert entry["args"] == ["--store", str(shared), "mcp", "--as", "bob"]

    async def main() -> None:  # started as a client would: elsewhere, no ACOMM_STORE
        env = {k: v for k, v in os.environ.items() if k != "ACOMM_STORE"}
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"], env=env, cwd=str(tmp_path)
        )
        async with Client(params) as c:
            sent = await call(c, "send", channel="team", body="configured")
        assert sh("show", str(sent["id"]))["sender"] == "bob"

    anyio.run(main)


def test_refusals_at_start(shared):
    p = run("mcp")
    assert p.returncode == 2 and "--as" in p.stderr
    p = run("mcp", "--as", "bob", "--http", "0.0.0.0:0", "--json")
    assert p.returncode == 2
    assert json.loads(p.stderr)["error"]["field"] == "http"
    p = run("mcp", "--as", "bob", "--store", str(shared.parent / "missing.acomm"))
    assert p.returncode != 0 and "missing.acomm" in p.stderr


def _http_server(token: str | None) -> tuple[subprocess.Popen[str], str]:
    args = [ACOMM, "mcp", "--as", "bob", "--http", "127.0.0.1:0"]
    env = {**os.environ, **({"ACOMM_MCP_TOKEN": token} if token else {})}
    proc = procs.spawn(args, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if "serving bob at " in line:
            return proc, line.rsplit(" ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    procs.stop(proc, signal.SIGKILL)
    raise AssertionError("acomm mcp --http did not start")


@pytest.mark.parametrize("token", [None, "s3cret"])
def test_streamable_http_with_and_without_the_token(shared, token):
    """With a token, a request without it (or with another) is 401; without one, loopback
    serves anyone on the machine."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    proc, url = _http_server(token)
    try:
        if token is not None:
            assert httpx2.post(url, json={}).status_code == 401
            bad = httpx2.post(url, json={}, headers={"Authorization": "Bearer wrong"})
            assert (bad.status_code, bad.json()["error"]["code"]) == (401, "invalid_token")
        headers = {"Authorization": f"Bearer {token}"} if token else {}

        async def main() -> None:
            async with httpx2.AsyncClient(headers=headers) as http:
                async with Client(streamable_http_client(url, http_client=http)) as c:
                    sent = await call(c, "send", channel="team", body="over http")
                    err = await refused(c, "send", channel="team", body="x", sender="alice")
                    assert err["code"] == "forbidden"
            assert sh("show", str(sent["id"]))["sender"] == "bob"

        anyio.run(main)
    finally:
        procs.stop(proc, timeout=DEADLINE_S)


def test_the_argument_check_names_the_field():
    """The check the server runs before the SDK sees a call, on a tool's schema."""
    from acomm_cli.mcpserver.server import check_arguments

    schema = {
        "type": "object",
        "required": ["body"],
        "properties": {
            "body": {"type": "string"},
            "wait_seconds": {"anyOf": [{"type": "number"}, {"type": "null"}]},
        },
    }
    assert check_arguments("bob", schema, {"body": "hi", "wait_seconds": None}) is None
    err = check_arguments("bob", schema, {"body": "hi", "wait_seconds": "soon"})
    assert err is not None and (err.code, err.field) == ("validation_failed", "wait_seconds")
    assert "number" in err.message
    err = check_arguments("bob", schema, {})
    assert err is not None and (err.code, err.field, err.message) == (
        "validation_failed",
        "body",
        "body: required",
    )
    err = check_arguments("bob", schema, {"body": "hi", "sender": "alice"})
    assert err is not None and (err.code, err.field) == ("forbidden", "sender")
    err = check_arguments("bob", schema, ["hi"])
    assert err is not None and err.field == "arguments"
    err = check_arguments("bob", schema, {"body": "hi", "wait_seconds": 2**63})
    assert err is not None and (err.code, err.field) == ("validation_failed", "wait_seconds")
    err = check_arguments("bob", schema, {"body": "hi", "wait_seconds": float("inf")})
    assert err is not None and (err.code, err.field) == ("validation_failed", "wait_seconds")
    assert check_arguments("bob", schema, {"body": "hi", "wait_seconds": 2**63 - 1}) is None


def test_the_send_tool_carries_an_event_and_listings_show_it(shared):
    async def main() -> None:
        async with server("alice") as c:
            event = {"event_type": "mention.created", "target": "bob", "thread_id": 7}
            sent = await call(
                c, "send", channel="team", body="@bob look", event=event, trace_id="mcp-t1"
            )
            assert sent["trace_id"] == "mcp-t1"
            err = await refused(c, "send", channel="team", body="x", trace_id="no spaces")
            assert (err["code"], err["field"]) == ("validation_failed", "trace_id")
            err = await refused(
                c,
                "send",
                channel="team",
                body="x",
                event={"event_type": "like.created", "depth": 2},
            )
            assert (err["code"], err["field"]) == ("validation_failed", "depth")
        async with server("bob") as c:
            got = await call(c, "receive", peek=True)
            assert [
                (m["id"], m["event"]["thread_id"], m["event"]["content_preview"])
                for m in got["messages"]
            ] == [(sent["id"], "7", "@bob look")]

    anyio.run(main)
