"""The gateway's agent API sends rich messages: `/agent/v1/send` takes `format`, `subject`
and `attachments` ([{name, content_base64}]), stored as `send --attach` stores them; a bad
or oversized file is a JSON 4xx naming the field, answered before the store is touched.
A real gateway (a subprocess on a loopback port)."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import query
from test_gateway import Node, gateway_nodes

pytestmark = pytest.mark.federation

LIMIT = 1000  # limits.max_attachment_bytes of the gateway under test
TOTAL = 1500  # limits.max_message_attachment_bytes


@pytest.fixture
def gw(tmp_path: Path, monkeypatch) -> Iterator[tuple[Node, dict[str, str]]]:
    """Node na's gateway, with small file limits; bob (in `team` with alice, who is a
    person) holds a session token."""
    monkeypatch.setenv("ACOMM_MAX_ATTACHMENT_BYTES", str(LIMIT))
    monkeypatch.setenv("ACOMM_MAX_MESSAGE_ATTACHMENT_BYTES", str(TOTAL))
    with gateway_nodes(tmp_path) as make:
        na = make("na")
        na.ok("agent", "register", "alice", "--kind", "human")
        na.ok("channel", "create", "team", "--as", "alice")
        na.ok("channel", "join", "team", "bob", "--as", "alice")
        token = na.ok("token", "create", "--agent", "bob", "--ttl", "1h")["token"]
        na.start()
        yield na, {"Authorization": f"Bearer {token}"}


def _file(name: str, data: bytes) -> dict[str, str]:
    return {"name": name, "content_base64": base64.b64encode(data).decode()}


def _post(na: Node, auth: dict[str, str], body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{na.url}/agent/v1/send", json=body, headers=auth, timeout=30)


def _counts(na: Node) -> list[tuple[int, ...]]:
    return query(
        na.path,
        "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM message_attachments),"
        " (SELECT count(*) FROM attachments)",
    )


def test_a_rich_send_through_the_gateway_round_trips(gw, tmp_path):
    na, auth = gw
    data = bytes(range(256)) * 3
    body = {
        "to": "alice",
        "body": "# Report\n\nall **green**",
        "format": "markdown",
        "subject": "Nightly",
        "attachments": [_file("report.bin", data), _file("notes.txt", b"ok\n")],
    }
    r = _post(na, auth, body)
    assert r.status_code == 200, r.text
    [sent] = r.json()["results"]
    doc = na.ok("show", str(sent["id"]))
    assert (doc["format"], doc["subject"], doc["direction"]) == ("markdown", "Nightly", "A2U")
    assert [(a["name"], a["size"], a["sha256"], a["content_type"]) for a in doc["attachments"]] == [
        ("notes.txt", 3, hashlib.sha256(b"ok\n").hexdigest(), "text/plain"),
        ("report.bin", 768, hashlib.sha256(data).hexdigest(), "application/octet-stream"),
    ]
    out = tmp_path / "copy.bin"
    na.ok("attachment", "get", str(sent["id"]), "report.bin", "-o", str(out), "--as", "alice")
    assert out.read_bytes() == data
    # on a channel too, and the receive endpoint shows the parts (never the bytes)
    r = _post(na, auth, {"channel": "team", "body": "x", "attachments": [_file("a.txt", b"a")]})
    assert r.status_code == 200, r.text
    got = na.ok("show", str(r.json()["id"]))
    assert [a["name"] for a in got["attachments"]] == ["a.txt"] and got["format"] == "text"


@pytest.mark.parametrize(
    ("extra", "status", "field"),
    [
        ({"format": "html"}, 400, "format"),
        ({"subject": ""}, 400, "subject"),
        ({"subject": 5}, 400, "subject"),
        ({"attachments": "a.txt"}, 400, "attachments"),
        ({"attachments": [{"name": "a.txt"}]}, 400, "attachments"),
        (
            {"attachments": [{"name": "a.txt", "content_base64": "AAAA", "x": 1}]},
            400,
            "attachments",
        ),
        ({"attachments": [{"name": "a.txt", "content_base64": "not base64!"}]}, 400, "attachments"),
        ({"attachments": [{"name": "../up.txt", "content_base64": "AAAA"}]}, 400, "attachments"),
        ({"attachments": [_file("a.txt", b"1"), _file("a.txt", b"2")]}, 400, "attachments"),
        ({"attachments": [_file("big.bin", b"x" * (LIMIT + 1))]}, 413, "attachments"),
        (
            {"attachments": [_file("a.bin", b"x" * LIMIT), _file("b.bin", b"y" * LIMIT)]},
            413,
            "attachments",
        ),
    ],
    ids=[
        "format",
        "empty-subject",
        "subject-type",
        "not-a-list",
        "no-content",
        "extra-key",
        "bad-base64",
        "bad-name",
        "same-name",
        "too-large",
        "too-large-together",
    ],
)
def test_a_bad_rich_send_is_a_4xx_naming_the_field_and_stores_nothing(gw, extra, status, field):
    na, auth = gw
    before = _counts(na)
    r = _post(na, auth, {"to": "alice", "body": "x", **extra})
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["field"] == field and isinstance(err["message"], str)
    if status == 413:
        assert err["code"] == "attachment_too_large"
    assert _counts(na) == before
