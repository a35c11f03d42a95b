"""Traces: every message carries a trace id, given (--trace-id, $TRACEPARENT) or inherited
by what it causes (replies, acks, dead-letter notices, dispatch runs and what they send,
other nodes' copies), and `acomm trace ID` shows the tree."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from conftest import query, snapshot
from freezegun import freeze_time
from test_dispatch import agent_script, configure
from test_federation_routing import linked_pair

from acomm_cli.engine import envelope, sending, traces
from acomm_cli.errors import EventRejected
from acomm_cli.model import SendRequest

pytestmark = pytest.mark.cli

W3C = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{W3C}-00f067aa0ba902b7-01"
HEX32 = re.compile(r"^[0-9a-f]{32}$")
T0 = "2026-01-01T00:00:00Z"


def trace_of(store: Path, mid: int) -> str | None:
    return query(store, "SELECT trace_id FROM messages WHERE id = ?", mid)[0][0]


def sent(cli, *args: str) -> dict:
    return cli.ok("send", *args, "--json").json()


def tree(cli, trace_id: str) -> dict:
    return cli.ok("trace", trace_id, "--json").json()


def by_id(doc: dict) -> dict:
    return {(h["kind"], h["id"]): h for h in doc["hops"]}


# ---------------------------------------------------------------- where a trace comes from


def test_a_plain_send_starts_a_new_w3c_trace_shown_in_every_document(cli, team):
    first = sent(cli, "team", "one", "--as", "alice")
    second = sent(cli, "team", "two", "--as", "alice")
    assert HEX32.match(first["trace_id"]) and HEX32.match(second["trace_id"])
    assert first["trace_id"] != second["trace_id"]  # unrelated messages: two traces
    assert trace_of(team, first["id"]) == first["trace_id"]
    shown = cli.ok("show", str(first["id"]), "--json").json()
    assert shown["trace_id"] == first["trace_id"]
    got = cli.ok("receive", "--as", "bob", "--json").json()["messages"]
    assert [m["trace_id"] for m in got] == [first["trace_id"], second["trace_id"]]
    listed = cli.ok("messages", "--json").json()["messages"]
    assert {m["trace_id"] for m in listed} == {first["trace_id"], second["trace_id"]}


def test_trace_id_given_is_kept_and_joins_an_existing_trace(cli, team):
    a = sent(cli, "team", "deploy", "--as", "alice", "--trace-id", "build-42")
    b = sent(cli, "--to", "bob", "and this", "--as", "alice", "--trace-id", "build-42")
    assert a["trace_id"] == "build-42"
    assert trace_of(team, a["id"]) == trace_of(team, b["results"][0]["id"]) == "build-42"


def test_acomm_trace_id_in_the_environment_is_the_option(cli, team, monkeypatch):
    monkeypatch.setenv("ACOMM_TRACE_ID", "from_env")
    assert sent(cli, "team", "x", "--as", "alice")["trace_id"] == "from_env"


@pytest.mark.parametrize("bad", ["", "has space", "x" * 65, "dots.are.out", "é"])
def test_a_bad_trace_id_is_refused_naming_the_field_and_nothing_is_written(cli, team, bad):
    before = snapshot(team)
    r = cli("send", "team", "x", "--as", "alice", "--trace-id", bad, "--json")
    assert r.exit_code == 3
    err = json.loads(r.stderr)["error"] if r.stderr.startswith("{") else None
    assert "trace_id" in (json.dumps(err) if err else r.stderr)
    assert snapshot(team) == before


def test_traceparent_is_accepted(cli, team, monkeypatch):
    monkeypatch.setenv("TRACEPARENT", PARENT)
    r = cli.ok("send", "team", "x", "--as", "alice", "--json")
    assert r.json()["trace_id"] == W3C
    assert "TRACEPARENT" not in r.stderr


def test_the_trace_id_option_wins_over_traceparent(cli, team, monkeypatch):
    monkeypatch.setenv("TRACEPARENT", PARENT)
    assert sent(cli, "team", "x", "--as", "alice", "--trace-id", "mine")["trace_id"] == "mine"


@pytest.mark.parametrize(
    "header",
    [
        "garbage",
        f"00-{W3C.upper()}-00f067aa0ba902b7-01",  # upper case
        f"00-{'0' * 32}-00f067aa0ba902b7-01",  # all-zero trace id
        f"00-{W3C}-{'0' * 16}-01",  # all-zero parent id
        f"ff-{W3C}-00f067aa0ba902b7-01",  # version ff
        f"00-{W3C}-00f067aa0ba902b7-01-extra",  # version 00 has four fields
        f"00-{W3C[:-1]}-00f067aa0ba902b7-01",  # short trace id
    ],
)
def test_a_malformed_traceparent_is_ignored_with_a_note_never_fatal(cli, team, monkeypatch, header):
    monkeypatch.setenv("TRACEPARENT", header)
    r = cli.ok("send", "team", "x", "--as", "alice", "--json")
    assert r.json()["trace_id"] != W3C and HEX32.match(r.json()["trace_id"])
    assert "note: TRACEPARENT ignored" in r.stderr


def test_a_later_traceparent_version_may_carry_more_fields():
    assert traces.from_traceparent(f"01-{W3C}-00f067aa0ba902b7-01-what-ever") == (W3C, None)


def test_a_batch_line_names_its_trace_and_the_others_join_the_commands(cli, team):
    lines = "\n".join(
        json.dumps(x)
        for x in (
            {"channel": "team", "from": "alice", "content": "a", "trace_id": "line-own"},
            {"channel": "team", "from": "alice", "content": "b"},
        )
    )
    results = cli.ok("send", "--batch", "-", "--trace-id", "cmd", "--json", input=lines).json()
    ids = [r["id"] for r in results["results"]]
    assert [trace_of(team, i) for i in ids] == ["line-own", "cmd"]


def test_a_send_without_correlation_reads_nothing_to_find_its_trace(team):
    """Inheritance costs a send a query only when it names a correlation id."""
    conn = sqlite3.connect(team, isolation_level=None)
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        sending.send(conn, SendRequest(sender="alice", content="x", channel="team"), 1)
        plain = [s for s in seen if "trace_id FROM messages" in s]
        seen.clear()
        sending.send(
            conn, SendRequest(sender="alice", content="y", channel="team", correlation_id="c9"), 2
        )
        threaded = [s for s in seen if "trace_id FROM messages" in s]
    finally:
        conn.close()
    assert plain == [] and len(threaded) == 1


# ---------------------------------------------------------------- inheritance


def test_a_response_joins_its_querys_trace_and_hangs_under_it(cli, team):
    corr = cli.ok("query", "team", "pool size?", "--as", "alice").stdout.strip()
    asked = cli.ok("thread", corr, "--json").json()["messages"][0]
    cli.ok("respond", corr, "42", "--as", "bob")
    thread = cli.ok("thread", corr, "--json").json()["messages"]
    assert [m["type"] for m in thread] == ["query", "response"]
    assert thread[1]["trace_id"] == asked["trace_id"]
    hops = by_id(tree(cli, asked["trace_id"]))
    reply = hops[("reply", thread[1]["id"])]
    assert reply["parent"] == f"m{asked['id']}" and reply["depth"] == 1
    assert reply["agent"] == "bob"


def test_a_threaded_message_joins_the_threads_trace(cli, team):
    first = sent(cli, "team", "q", "--as", "alice", "--type", "query", "--correlation-id", "t-1")
    first = first["trace_id"]
    later = sent(cli, "team", "more", "--as", "bob", "--correlation-id", "t-1")
    assert later["trace_id"] == first


def test_an_acknowledgement_joins_the_acknowledged_messages_trace(cli, team):
    m = sent(cli, "team", "do it", "--as", "alice", "--trace-id", "ack-trace")
    cli.ok("receive", "--as", "bob")
    cli.ok("ack", str(m["id"]), "--status", "completed", "--as", "bob")
    [ack] = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert ack["type"] == "acknowledgment" and ack["trace_id"] == "ack-trace"
    hops = by_id(tree(cli, "ack-trace"))
    assert hops[("ack", ack["id"])]["parent"] == f"m{m['id']}"
    assert hops[("message", m["id"])]["state"] == "acknowledged"


def test_a_dead_letter_notice_joins_the_dead_messages_trace(cli, team):
    cli.ok("subscribe", "_system", "_system.message.#", "--as", "ops")
    with freeze_time(T0) as clock:
        m = sent(cli, "team", "too late", "--as", "alice", "--ttl", "10s", "--trace-id", "dl")
        clock.tick(11)
        cli.ok("tick")
    [notice] = cli.ok("receive", "--as", "ops", "--json").json()["messages"]
    assert json.loads(notice["content"])["message_id"] == m["id"]
    assert notice["trace_id"] == "dl"
    hops = by_id(tree(cli, "dl"))
    hop = hops[("notice", notice["id"])]
    assert hop["parent"] == f"m{m['id']}" and hop["agent"] == "acomm"
    assert hops[("message", m["id"])]["state"] == "dead_letter"


def test_a_dispatch_run_gets_the_trace_and_what_it_sends_joins_it(cli, team, tmp_path):
    run = agent_script(
        tmp_path,
        "traced.sh",
        """
env | grep -E '^(ACOMM_TRACE_ID|TRACEPARENT)=' | sort > "$WORK/env.txt"
"$ACOMM" send team "bob is on it" >/dev/null || exit 9
""",
    )
    configure(team, bob={"run": run})
    m = sent(cli, "team", "review PR 7", "--as", "alice")
    trace = m["trace_id"]
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert r["status"] == "accepted"
    env = dict(line.split("=", 1) for line in (tmp_path / "env.txt").read_text().splitlines())
    assert env["ACOMM_TRACE_ID"] == trace
    assert re.match(rf"^00-{trace}-[0-9a-f]{{16}}-01$", env["TRACEPARENT"])
    [reply] = [x for x in cli.ok("messages", "--json").json()["messages"] if x["sender"] == "bob"]
    assert reply["trace_id"] == trace
    doc = tree(cli, trace)
    hops = by_id(doc)
    run_hop = hops[("dispatch_run", r["run_id"])]
    assert run_hop["parent"] == f"m{m['id']}" and run_hop["agent"] == "bob"
    assert run_hop["state"] == "accepted"
    assert hops[("message", reply["id"])]["parent"] == run_hop["key"]
    assert [h["key"] for h in doc["hops"]] == [f"m{m['id']}", run_hop["key"], f"m{reply['id']}"]
    assert [h["depth"] for h in doc["hops"]] == [0, 1, 2]


def test_a_dispatch_run_on_a_non_w3c_trace_gets_the_id_alone(cli, team, tmp_path):
    run = agent_script(
        tmp_path, "env.sh", """env | grep -E '^(ACOMM_TRACE_ID|TRACEPARENT)=' > "$WORK/env.txt"\n"""
    )
    configure(team, bob={"run": run})
    sent(cli, "team", "x", "--as", "alice", "--trace-id", "ticket-9")
    cli.ok("dispatch")
    assert (tmp_path / "env.txt").read_text().splitlines() == ["ACOMM_TRACE_ID=ticket-9"]


def test_a_tasks_messages_and_events_are_one_trace(cli, store):
    tid = cli.ok("task", "create", "--to", "bob", "build it", "--as", "alice").stdout.strip()
    cli.ok("task", "accept", tid, "--as", "bob")
    cli.ok("task", "complete", tid, "built", "--as", "bob")
    msgs = cli.ok("messages", "--json").json()["messages"]
    assert sorted(m["type"] for m in msgs) == ["acknowledgment", "command", "response"]
    [trace] = {m["trace_id"] for m in msgs}
    doc = tree(cli, trace)
    command = next(m for m in msgs if m["type"] == "command")
    events = [h for h in doc["hops"] if h["kind"] == "task_event"]
    assert [h["state"] for h in events] == ["created", "accepted", "completed"]
    assert {h["parent"] for h in events} == {f"m{command['id']}"}
    assert {h["task_id"] for h in events} == {int(tid)}


# ---------------------------------------------------------------- acomm trace


def test_messages_filters_by_trace(cli, team):
    a = sent(cli, "team", "one", "--as", "alice", "--trace-id", "t1")
    sent(cli, "team", "two", "--as", "alice")
    c = sent(cli, "team", "three", "--as", "alice", "--trace-id", "t1")
    got = cli.ok("messages", "--trace", "t1", "--json").json()["messages"]
    assert [m["id"] for m in got] == [c["id"], a["id"]]
    r = cli("messages", "--trace", "no way", "--json")
    assert r.exit_code == 3 and "trace" in r.stderr


def test_trace_prints_the_tree_with_latencies(cli, team):
    with freeze_time(T0) as clock:
        corr = cli.ok("query", "team", "size?", "--as", "alice").stdout.strip()
        clock.tick(2)
        cli.ok("respond", corr, "42", "--as", "bob")
    [q, resp] = cli.ok("thread", corr, "--json").json()["messages"]
    doc = tree(cli, q["trace_id"])
    assert doc["trace_id"] == q["trace_id"]
    assert doc["started_at"] == "2026-01-01T00:00:00.000Z" and doc["duration_ms"] == 2000
    root, reply = doc["hops"]
    assert (root["kind"], root["type"], root["parent"], root["since_root_ms"]) == (
        "message",
        "query",
        None,
        0,
    )
    assert (reply["since_root_ms"], reply["since_parent_ms"]) == (2000, 2000)
    assert root["node"] is None and root["recipients"] == ["bob"]
    text = cli.ok("trace", q["trace_id"]).stdout.splitlines()
    assert text[0].startswith(f"trace {q['trace_id']}: 2 hops, 2000ms end to end")
    assert text[1] == f"query {q['id']} on team: alice -> bob [acknowledged] +0ms"
    assert text[2] == (
        f"  response {resp['id']} on team: bob -> alice [delivered] +2000ms"
        " (+2000ms after its parent)"
    )


def test_trace_of_an_unknown_id_is_exit_4_and_a_bad_one_exit_3(cli, team):
    r = cli("trace", "nobody-has-this", "--json")
    assert r.exit_code == 4 and "trace_id" in r.stderr
    assert cli("trace", "not valid").exit_code == 3


def test_each_hop_becomes_a_span_of_the_trace_in_the_sdks_memory(cli, team, tmp_path):
    """The OpenTelemetry SDK's in-memory exporter (a real collector is not installed here):
    one span per hop, the trace's own id, each span's parent its parent hop's span."""
    pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from acomm_cli.analytics import otel
    from acomm_cli.engine import opening

    run = agent_script(tmp_path, "ok.sh", '"$ACOMM" send team "on it" >/dev/null\n')
    configure(team, bob={"run": run})
    sent(cli, "team", "go", "--as", "alice", "--trace-id", W3C)
    cli.ok("dispatch")
    conn = opening.connect(team, create=False)
    try:
        doc = traces.tree(conn, W3C)
    finally:
        conn.close()
    memory = InMemorySpanExporter()
    assert otel.export(doc, memory) == 3
    spans = memory.get_finished_spans()
    assert {s.context.trace_id for s in spans} == {int(W3C, 16)}
    [root, run_hop, reply] = doc["hops"]
    by_name = {s.name: s for s in spans}
    root_span = by_name[f"message {root['id']}"]
    run_span = by_name[f"dispatch_run {run_hop['id']}"]
    reply_span = by_name[f"message {reply['id']}"]
    assert root_span.parent is None
    assert run_span.parent.span_id == root_span.context.span_id
    assert reply_span.parent.span_id == run_span.context.span_id
    assert run_span.end_time >= run_span.start_time
    assert run_span.attributes["acomm.agent"] == "bob"


def test_an_otlp_endpoint_that_is_down_drops_the_spans_with_a_note(cli, team):
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    sent(cli, "team", "go", "--as", "alice", "--trace-id", "down-t")
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    r = cli.ok("trace", "down-t", "--otlp-endpoint", f"http://127.0.0.1:{port}")
    assert r.stdout.startswith("trace down-t: 1 hop")
    assert "did not take the spans; 1 dropped" in r.stderr


# ---------------------------------------------------------------- federation


@pytest.mark.federation
def test_a_federated_hop_keeps_the_trace_both_ways(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    q = a.ok(
        "send",
        "--to",
        "bob",
        "why?",
        "--type",
        "query",
        "--correlation-id",
        "fq",
        "--as",
        "alice",
        "--trace-id",
        W3C,
    )["results"][0]
    assert q["status"] == "emitted" and q["trace_id"] == W3C
    [(env,)] = a.sql("SELECT envelope FROM fed_outbox WHERE kind = 'message'")
    assert json.loads(env)["trace"]["traceId"] == W3C
    b.ok("fed", "pull")
    [copy] = b.ok("receive", "--as", "bob")["messages"]
    assert (copy["trace_id"], copy["origin_node"]) == (W3C, "na")
    b.ok("respond", "fq", "because", "--as", "bob")
    a.ok("fed", "pull")
    [answer] = a.ok("receive", "--as", "alice")["messages"]
    assert answer["type"] == "response" and answer["trace_id"] == W3C
    hops = b.ok("trace", W3C)["hops"]
    assert [(h["kind"], h["node"], h["agent"]) for h in hops] == [
        ("message", "na", "alice"),
        ("reply", "nb", "bob"),
    ]
    assert hops[1]["parent"] == hops[0]["key"]


@pytest.mark.federation
def test_a_federation_sla_notice_joins_the_late_messages_trace(cli, tmp_path):
    with freeze_time("2030-01-01T00:00:00Z"):
        a, b = linked_pair(cli, tmp_path)
    a.ok("subscribe", "_system", "_system.#", "--as", "ops")
    with freeze_time("2030-01-01T00:00:01Z"):
        m = a.ok("send", "--to", "bob", "hi", "--as", "alice", "--trace-id", "sla-t")["results"][0]
    with freeze_time("2030-01-01T00:00:02Z"):
        b.ok("fed", "pull")
        a.ok("fed", "pull")
    with freeze_time("2030-01-01T00:11:00Z"):
        assert a.ok("tick")["fed_incidents"] == 1
    [note] = a.ok("receive", "--as", "ops", "--topic", "_system.federation.sla")["messages"]
    assert note["trace_id"] == "sla-t"
    hops = {h["key"]: h for h in a.ok("trace", "sla-t")["hops"]}
    assert hops[f"m{note['id']}"]["parent"] == f"m{m['id']}"
    assert hops[f"m{note['id']}"]["kind"] == "notice"


def test_the_envelope_check_bounds_the_trace_id():
    base = {
        "seq": 1,
        "eventId": "e1",
        "kind": "ack",
        "payload": {"ackOf": "x", "status": "accepted"},
    }
    assert envelope.check({**base, "trace": {"attempt": 1, "traceId": W3C}})
    for bad in ("x" * 65, "", "no spaces", 7):
        with pytest.raises(EventRejected, match="trace.traceId"):
            envelope.check({**base, "trace": {"traceId": bad}})


def test_a_bridge_response_file_names_its_trace(cli, team, tmp_path, monkeypatch):
    outbox = tmp_path / "outbox"
    monkeypatch.setenv("ACOMM_BRIDGE_OUTBOX_DIR", str(outbox))
    (outbox / "bob").mkdir(parents=True)
    doc = {"channel": "team", "content": "done", "trace_id": "bridge-t1"}
    (outbox / "bob" / "r1.json").write_text(json.dumps(doc))
    q = sent(cli, "team", "status?", "--type", "query", "--as", "alice")
    answer = {"correlation_id": q["correlation_id"], "content": "ok", "trace_id": "other-t"}
    (outbox / "bob" / "r2.json").write_text(json.dumps(answer))
    cli.ok("tick")
    assert query(team, "SELECT sender, content FROM messages WHERE trace_id = 'bridge-t1'") == [
        ("bob", "done")
    ]
    assert (outbox / "bob" / "r2.json").exists()  # a response joins its query's trace: refused
    assert query(team, "SELECT count(*) FROM messages WHERE trace_id = 'other-t'") == [(0,)]
