"""OTLP per hop: with `traces.otlp_endpoint` ($OTEL_EXPORTER_OTLP_ENDPOINT) set, each writing
command sends the hops it made as spans after its commit. The receiver here is a small
OTLP/HTTP endpoint in the test (no OpenTelemetry Collector or Jaeger can be installed on
this machine): it decodes the protobuf requests the SDK's exporter sends. An endpoint that
is down drops the spans with a note, counted in `stats`, and never fails the command."""

from __future__ import annotations

import socket
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from test_dispatch import agent_script, configure

pytestmark = pytest.mark.cli

pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: E402
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

W3C = "4bf92f3577b34da6a3ce929d0e0e4736"


@dataclass
class Receiver:
    """What the endpoint got: each span as (name, span id, parent span id, trace id hex),
    and, for each request, how many messages the store had committed when it came."""

    store: Path
    spans: list[tuple[str, bytes, bytes, str]] = field(default_factory=list)
    committed: list[int] = field(default_factory=list)
    url: str = ""

    def names(self) -> list[str]:
        return [s[0] for s in self.spans]

    def span(self, name: str) -> tuple[str, bytes, bytes, str]:
        return next(s for s in self.spans if s[0] == name)


@pytest.fixture
def receiver(team: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    got = Receiver(team)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            ro = sqlite3.connect(f"file:{got.store}?mode=ro", uri=True)
            try:  # what another process sees now: the command's commit, or not yet
                got.committed.append(ro.execute("SELECT count(*) FROM messages").fetchone()[0])
            finally:
                ro.close()
            req = ExportTraceServiceRequest.FromString(body)
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        got.spans.append((s.name, s.span_id, s.parent_span_id, s.trace_id.hex()))
            out = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", got.url)
    try:
        yield got
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_each_command_sends_its_hops_after_its_commit(cli, receiver: Receiver):
    mid = cli.ok("send", "team", "go", "--as", "alice", "--trace-id", W3C, "--json").json()["id"]
    assert receiver.names() == [f"message {mid}"]
    assert receiver.committed == [mid]  # the message was committed when its span went out
    ack = cli.ok("send", "team", "seen", "--as", "bob", "--trace-id", W3C, "--json").json()["id"]
    assert receiver.names() == [f"message {mid}", f"message {ack}"]
    root, second = receiver.spans
    assert {root[3], second[3]} == {W3C}  # the trace's own id
    assert root[2] == b""  # a root
    cli.ok("receive", "--as", "bob")  # makes no hop: sends nothing
    assert len(receiver.spans) == 2
    stats = cli.ok("--json", "stats").json()
    assert stats["counters"] == {}


def test_a_dispatch_run_and_what_the_agent_sends_are_spans_under_the_message(
    cli, team: Path, receiver: Receiver, tmp_path: Path
):
    run = agent_script(tmp_path, "ok.sh", '"$ACOMM" send team "on it" >/dev/null\n')
    configure(team, bob={"run": run})
    mid = cli.ok("send", "team", "go", "--as", "alice", "--trace-id", W3C, "--json").json()["id"]
    cli.ok("dispatch")
    root = receiver.span(f"message {mid}")
    [run_span] = [s for s in receiver.spans if s[0].startswith("dispatch_run ")]
    [reply] = [s for s in receiver.spans if s[0].startswith("message ") and s != root]
    assert run_span[2] == root[1]  # the run's parent: the message it ran on
    assert reply[2] == run_span[1]  # the agent's reply (its own command): the run
    assert {s[3] for s in receiver.spans} == {W3C}


def test_an_endpoint_that_is_down_never_fails_a_send_and_is_counted(cli, team, monkeypatch):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("ACOMM_OTLP_TIMEOUT", "200ms")
    r = cli.ok("send", "team", "go", "--as", "alice")
    assert r.stdout.strip().isdigit()  # sent, exit 0
    assert f"http://127.0.0.1:{port}/v1/traces did not take the spans; 1 dropped" in r.stderr
    cli.ok("send", "team", "again", "--as", "alice")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT")
    assert cli.ok("--json", "stats").json()["counters"] == {"otlp.spans_dropped": 2}
    assert "counters\totlp.spans_dropped\t2" in cli.ok("stats").stdout
    assert [
        m["content"] for m in cli.ok("--json", "receive", "--as", "bob").json()["messages"]
    ] == [
        "go",
        "again",
    ]
