"""A pulled page stages its run of plain messages and inserts their inbound records,
messages and deliveries together at the page's end; none of that may change what a pull
does event by event: a bad event in the middle of a page is refused alone and the staged
messages around it are whole (global id, origin, inbound record pointing at the message);
an event seen twice, on one page or on two, is one delivery; a staged row that meets a
record here refuses that event alone; and a pull that dies between two pages leaves the
cursor at the first page's end, with nothing of the second, to be taken once by the next."""

from __future__ import annotations

import pytest
from test_federation_inbound import _bob, _envelope, _send, nodes  # noqa: F401 (a fixture)

from acomm_cli import clock
from acomm_cli.federation import pull as fed_pull
from acomm_cli.store import federation as fed_sql
from acomm_cli.store.connection import open_store

pytestmark = pytest.mark.federation


def _pull(node, **kw):
    """The engine's pull on `node` (page size and faults set by the test)."""
    conn = open_store(node.path)
    try:
        return fed_pull.pull(conn, clock.now_ms(), **kw)
    finally:
        conn.close()


def _stored(b) -> list[tuple[str, str, int]]:
    """(content, global id, whether the inbound record names the message) of each message
    nb holds from na, in id order."""
    return b.sql(
        "SELECT m.content, m.global_id, i.message_id = m.id FROM messages m"
        " LEFT JOIN fed_inbound i ON i.source_node = m.origin_node AND i.event_id = m.global_id"
        " WHERE m.origin_node = 'na' ORDER BY m.id"
    )


def _cursor(b) -> int:
    return int(b.sql("SELECT position FROM fed_cursors WHERE source_node = 'na'")[0][0])


def test_a_bad_event_mid_page_leaves_the_staged_messages_whole(nodes):  # noqa: F811
    a, b, _ = nodes
    sent = [_send(a, "alice", f"m{i}") for i in range(3)]
    a.append({**_envelope(a, sent[0]), "eventId": "bad", "payload": "not an object"})
    rich = a.ok("send", "--to", "bob", "m3", "--subject", "rich", "--as", "alice")
    sent.append(str(rich["results"][0]["global_id"]))  # not staged: persisted between
    sent += [_send(a, "alice", f"m{i}") for i in range(4, 6)]
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"], got["duplicates"]) == (6, 1, 0)
    assert _stored(b) == [(f"m{i}", e, 1) for i, e in enumerate(sent)]
    assert _bob(b) == [f"m{i}" for i in range(6)]
    assert b.sql("SELECT event_id FROM fed_rejected") == [("bad",)]
    assert b.sql("SELECT count(*) FROM fed_inbound WHERE event_id = 'bad'") == [(0,)]
    assert _cursor(b) == a.head()


def test_an_event_twice_on_one_page_is_one_delivery(nodes):  # noqa: F811
    a, b, _ = nodes
    sent = [_send(a, "alice", f"m{i}") for i in range(3)]
    a.append(_envelope(a, sent[1]))  # the same event again, under a later seq
    got = b.ok("fed", "pull")
    assert (got["read"], got["delivered"], got["duplicates"]) == (4, 3, 1)
    assert _stored(b) == [(f"m{i}", e, 1) for i, e in enumerate(sent)]
    acks = b.sql("SELECT count(*) FROM fed_outbox WHERE kind = 'ack' AND to_node = 'na'")
    assert acks == [(3,)]


def test_an_event_again_on_a_later_page_is_a_duplicate(nodes):  # noqa: F811
    a, b, _ = nodes
    sent = [_send(a, "alice", f"m{i}") for i in range(3)]
    a.append(_envelope(a, sent[0]))
    result = _pull(b, page_size=2, max_pages=10)  # pages: m0 m1 | m2 m0-again
    assert (result.read, result.delivered, result.duplicates) == (4, 3, 1)
    assert _stored(b) == [(f"m{i}", e, 1) for i, e in enumerate(sent)]
    assert _bob(b) == ["m0", "m1", "m2"]


def test_a_staged_message_meeting_a_record_here_is_refused_alone(nodes):  # noqa: F811
    """A message of nb's already carries the id na's event will use: the page's inserts
    fail together, so the page is applied again event by event and only that one is
    refused; the others are delivered."""
    a, b, _ = nodes
    b.ok("send", "--to", "bob", "local", "--as", "carol")
    sent = [_send(a, "alice", f"m{i}") for i in range(3)]
    b.sql(
        "UPDATE messages SET global_id = ?, origin_node = 'na' WHERE content = 'local'",
        sent[1],
    )
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"]) == (2, 1)
    [(event_id, reason)] = b.sql("SELECT event_id, reason FROM fed_rejected")
    assert event_id == sent[1] and "conflicts with a record here" in reason
    assert [m for m in _bob(b) if m != "local"] == ["m0", "m2"]
    assert _cursor(b) == a.head()


def test_a_pull_dying_between_pages_keeps_the_first_page_and_its_cursor(nodes, monkeypatch):  # noqa: F811
    a, b, _ = nodes
    sent = [_send(a, "alice", f"m{i}") for i in range(5)]
    acks_before = b.head()
    calls = {"n": 0}
    append = fed_sql.append_outbox_texts

    def dies_on_the_second_page(*args, **kw):  # the second page's acks, before its commit
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return append(*args, **kw)

    monkeypatch.setattr(fed_sql, "append_outbox_texts", dies_on_the_second_page)
    with pytest.raises(KeyboardInterrupt):
        _pull(b, page_size=2, max_pages=10)
    first_page_end = int(a.sql("SELECT seq FROM fed_outbox WHERE event_id = ?", sent[1])[0][0])
    assert _cursor(b) == first_page_end
    assert _stored(b) == [("m0", sent[0], 1), ("m1", sent[1], 1)]
    assert b.sql("SELECT count(*) FROM fed_inbound WHERE source_node = 'na'") == [(2,)]
    assert b.head() == acks_before + 2
    monkeypatch.setattr(fed_sql, "append_outbox_texts", append)
    result = _pull(b, page_size=2, max_pages=10)
    assert (result.delivered, result.duplicates) == (3, 0)
    assert _stored(b) == [(f"m{i}", e, 1) for i, e in enumerate(sent)]
    assert _bob(b) == [f"m{i}" for i in range(5)]
    assert b.head() == acks_before + 5
    assert _cursor(b) == a.head()


def test_the_gateway_page_texts_read_as_the_parsed_page(nodes):  # noqa: F811
    """The gateway serves stored envelopes as they are; a text that is not JSON, or nests
    deep, is served as the parsed page would give it, so a reader parses the whole page as
    it would the parsed one, and each event is judged alone."""
    import json
    import sqlite3

    a, _, _ = nodes
    _send(a, "alice", "plain")
    a.append(None, raw='{"seq": ')
    a.append(None, raw="[" * 100_000)
    a.append(None, raw=json.dumps({"deep": json.loads("[" * 70 + "]" * 70)}))
    _send(a, "alice", "after")
    c = sqlite3.connect(a.path)
    try:
        parsed, head = fed_sql.outbox_page(c, 0, 1000)
        texts, head2 = fed_sql.outbox_page_texts(c, 0, 1000)
        [(last,)] = c.execute("SELECT envelope FROM fed_outbox WHERE seq = ?", (head,))
    finally:
        c.close()
    assert head2 == head and len(texts) == len(parsed)
    assert json.loads("[" + ",".join(texts) + "]") == parsed
    assert texts[-1] == last  # an honest envelope: served as stored
