"""Rich parts between nodes: a format and a subject travel in the message event and the
remote copy keeps them; files do not travel yet, so a direct message with files to an agent
another node owns is refused for that recipient (nothing is emitted) while the local
recipients of the same send get it."""

from __future__ import annotations

import pytest
from test_federation_routing import linked_pair

from acomm_cli.engine import envelope
from acomm_cli.errors import EventRejected

pytestmark = pytest.mark.federation


def test_a_format_and_a_subject_reach_the_other_node(cli, tmp_path):
    a, b = linked_pair(cli, tmp_path)
    b.ok("agent", "update", "bob", "--kind", "human")
    sent = a.ok(
        "send", "--to", "bob", "--format", "markdown", "--subject", "Plan", "**go**",
        "--as", "alice",
    )["results"][0]  # fmt: skip
    assert sent["status"] == "emitted"
    assert b.ok("fed", "pull")["delivered"] == 1
    [got] = b.ok("receive", "--as", "bob")["messages"]
    assert (got["content"], got["format"], got["subject"]) == ("**go**", "markdown", "Plan")
    assert got["direction"] == "A2U"  # alice is not in b's directory: an agent
    mine = a.ok("show", str(sent["id"]))
    assert (mine["format"], mine["subject"]) == ("markdown", "Plan")


def test_files_to_another_nodes_agent_are_refused_not_dropped(cli, tmp_path):
    a, _ = linked_pair(cli, tmp_path)
    a.ok("agent", "own", "carol")
    (tmp_path / "f.txt").write_text("x")
    outbox = a.sql("SELECT count(*) FROM fed_outbox")
    r = a("send", "--to", "bob,carol", "--attach", str(tmp_path / "f.txt"), "body", "--as", "alice")
    assert r.exit_code == 3
    bob, carol = r.json()["results"]
    assert (bob["error"]["field"], bob["error"]["value"]) == ("attach", "bob")
    assert carol["recipients"] == ["carol"]  # a local agent: sent, with its file
    assert a.sql("SELECT count(*) FROM fed_outbox") == outbox
    assert [f["name"] for f in a.ok("show", str(carol["id"]))["attachments"]] == ["f.txt"]


@pytest.mark.parametrize(
    "payload",
    [{"format": "html"}, {"subject": ""}, {"subject": "two\nlines"}, {"subject": "s" * 257}],
)
def test_a_peer_event_with_a_bad_format_or_subject_is_rejected(payload):
    env = {
        "v": 1,
        "kind": "message",
        "eventId": "e1",
        "seq": 1,
        "sourceNodeId": "na",
        "toNodeId": "nb",
        "sourceAgentId": "alice",
        "toAgentId": "bob",
        "createdAt": "2026-01-01T00:00:00Z",
        "payload": {"type": "text", "content": "x", **payload},
    }
    ok = {**env, "payload": {"type": "text", "content": "x", "format": "markdown"}}
    envelope.check(ok)
    with pytest.raises(EventRejected):
        envelope.check(env)
