"""`fed pull` over HTTP reads a peer's next page while it applies the one it has: the page
taken is always the one asked for, a page read ahead and not asked for is read again, a
failure of the read ahead is the failure of the read that takes it, and a pass's end waits
for it. Against a small loopback server that serves an outbox as a gateway does (pages,
kept-alive connection), and the transport's own read replaced."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from acomm_cli.federation import http_transport as ht
from acomm_cli.federation import identity
from acomm_cli.federation.transport import Page, Unreachable

pytestmark = pytest.mark.federation

ME = identity.Node("nb", b"\0" * 32, b"\1" * 32, 0)  # a valid seed: reads are signed


def _events(first: int, last: int) -> list[dict[str, object]]:
    return [{"seq": s, "eventId": f"e{s}"} for s in range(first, last + 1)]


class _Fake(ht.HttpTransport):
    """The transport with its network read replaced by an outbox of `head` events."""

    def __init__(self, head: int, fail_after: int | None = None) -> None:
        super().__init__({"na": "http://127.0.0.1:9"}, ME)
        self.head, self.fail_after = head, fail_after
        self.reads: list[int] = []

    def _read(self, source_node: str, after_seq: int, limit: int) -> Page:
        self.reads.append(after_seq)
        if self.fail_after is not None and after_seq >= self.fail_after:
            raise Unreachable(f"node {source_node}: gone at {after_seq}")
        return Page(_events(after_seq + 1, min(after_seq + limit, self.head)), self.head)


def test_the_next_page_is_read_ahead_and_taken_when_asked_for():
    tr = _Fake(head=5)
    pages = [tr.read("na", 0, 2), tr.read("na", 2, 2), tr.read("na", 4, 2)]
    tr.end_peer("na")
    assert [[e["seq"] for e in p.events] for p in pages] == [[1, 2], [3, 4], [5]]
    assert tr.reads == [0, 2, 4]  # each page read once: none after the head
    assert tr.ahead == {}


def test_a_page_read_ahead_and_not_asked_for_is_read_again():
    tr = _Fake(head=6)
    tr.read("na", 0, 2)  # reads 2 ahead
    page = tr.read("na", 3, 2)  # the caller's cursor is elsewhere: read afresh
    tr.end_peer("na")
    assert [e["seq"] for e in page.events] == [4, 5]
    assert tr.reads[:3] == [0, 2, 3]


def test_the_read_aheads_failure_is_the_failure_of_the_read_that_takes_it():
    tr = _Fake(head=6, fail_after=2)
    tr.read("na", 0, 2)
    with pytest.raises(Unreachable, match="gone at 2"):
        tr.read("na", 2, 2)
    tr.end_peer("na")


def test_a_pass_ends_only_after_its_read_ahead():
    release = threading.Event()

    class Slow(_Fake):
        def _read(self, source_node: str, after_seq: int, limit: int) -> Page:
            if after_seq:
                release.wait(30)
            return super()._read(source_node, after_seq, limit)

    tr = Slow(head=4)
    tr.read("na", 0, 2)
    ahead = tr.ahead["na"]
    assert ahead.thread.is_alive()
    threading.Timer(0.05, release.set).start()
    tr.end_peer("na")
    assert not ahead.thread.is_alive() and tr.ahead == {}


@pytest.fixture
def outbox_server():
    """A loopback server of an outbox of 5 events, pages as a gateway serves them (it checks
    no signature); its `requests` list the `after` of each read, `peers` the connections."""
    requests: list[int] = []
    peers: set[tuple[str, int]] = set()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept alive, as uvicorn does

        def do_GET(self) -> None:
            q = parse_qs(urlsplit(self.path).query)
            after, limit = int(q["after"][0]), int(q["limit"][0])
            requests.append(after)
            peers.add(self.client_address)
            events = _events(after + 1, min(after + limit, 5))
            body = json.dumps({"node": "na", "events": events, "head": 5}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", requests, peers
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def test_pages_read_over_one_kept_connection_with_the_next_read_ahead(outbox_server):
    url, requests, peers = outbox_server
    tr = ht.HttpTransport({"na": url}, ME)
    tr.begin_peer("na")
    got = []
    after = 0
    while True:
        page = tr.read("na", after, 2)
        got += [e["seq"] for e in page.events]
        after = page.events[-1]["seq"] if page.events else after
        if after >= page.head:
            break
    tr.end_peer("na")
    assert got == [1, 2, 3, 4, 5]
    assert requests == [0, 2, 4] and len(peers) == 1
