"""The pieces a pull's page is made of, each checked against what it replaced: the page's
envelopes parsed in one parser call (never joining two stored texts into one event), the
`ack accepted` events written from a template (the very text the general append writes),
and the event ids (UUIDv7)."""

from __future__ import annotations

import json
import re
import uuid

import pytest

from acomm_cli.engine import outbox
from acomm_cli.store import federation as fed_sql
from acomm_cli.store.connection import write

pytestmark = pytest.mark.unit

NOW = 1_795_826_356_381


def _outbox(conn) -> list[tuple[int, str, str, str | None, str]]:
    return conn.execute(
        "SELECT seq, event_id, kind, to_node, envelope FROM fed_outbox ORDER BY seq"
    ).fetchall()


@pytest.mark.parametrize(
    ("agent", "corr", "ack_of"),
    [
        ("bob", None, "01a21f97-909d-76e9-9cf9-05cda3fc1531"),
        ("bob.ops-1", "q-1", "evt"),
        ("bob", 'say "hi"\\ \n\t', "é∑😀\u2028"),  # escapes and non-ASCII as json.dumps writes them
    ],
)
def test_the_templated_ack_is_the_text_the_general_append_writes(conn, agent, corr, ack_of):
    with write(conn):
        fed_sql.append_outbox(conn, "first", 1, "message", "na", {"kind": "message"}, NOW)
        [(event_id, kind, to_node, head)] = outbox.accepted_acks(
            "nb", [("na", agent, corr, ack_of)], NOW
        )
        fed_sql.append_outbox_texts(conn, [(event_id, kind, to_node, head)], NOW)
        expected = outbox.envelope(
            event_id,
            "nb",
            "ack",
            source_agent=agent,
            to_agent=None,
            to_node="na",
            corr=corr,
            payload={"ackOf": ack_of, "status": "accepted"},
            attempt=1,
            decision=None,
            now=NOW,
        )
    _, (seq, got_id, got_kind, got_to, text) = _outbox(conn)
    assert (seq, got_id, got_kind, got_to) == (2, event_id, "ack", "na")
    # as append_outbox and append_outbox_many write an envelope: json.dumps, compact
    assert text == json.dumps({**expected, "seq": 2}, separators=(",", ":"))


def test_a_page_is_parsed_as_each_stored_text_alone_would_be(conn):
    texts = [
        '{"kind":"message","seq":1}',
        "1,[2",  # not JSON alone: joined with the next it would read as two values
        "3]",
        "not json",
        "[" * 5000 + "]" * 5000,  # too deep for the parser
        '{"kind":"ack","seq":6}',
    ]
    with write(conn):
        for i, text in enumerate(texts, start=1):
            conn.execute(
                "INSERT INTO fed_outbox (seq, event_id, attempt, kind, to_node, envelope,"
                " created_at) VALUES (?, ?, 1, 'message', 'nb', ?, 0)",
                (i, f"e{i}", text),
            )
    events, head = fed_sql.outbox_page(conn, 0, 10)
    assert head == 6
    assert events == [{"kind": "message", "seq": 1}, "1,[2", "3]", "not json", texts[4], {
        "kind": "ack",
        "seq": 6,
    }]  # fmt: skip
    valid, _ = fed_sql.outbox_page(conn, 5, 10)  # a page of valid texts, in one call
    assert valid == [{"kind": "ack", "seq": 6}]
    assert fed_sql.outbox_page(conn, 6, 10) == ([], 6)


def test_event_ids_are_uuid7_of_the_millisecond_given():
    ids = {outbox.uuid7(NOW + i % 2) for i in range(2000)}
    assert len(ids) == 2000
    shape = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
    for text in ids:
        assert shape.fullmatch(text), text
        u = uuid.UUID(text)
        assert (u.version, u.variant) == (7, uuid.RFC_4122)
        assert u.int >> 80 in (NOW, NOW + 1)
    assert {t[19] for t in ids} == set("89ab")  # the variant's two random bits vary
