"""Rich parts do not travel to another node yet: a direct message with files, a subject or a
format to an agent another node owns is refused for that recipient (nothing is emitted),
and the local recipients of the same send get it."""

from __future__ import annotations

import pytest
from test_federation_routing import linked_pair

pytestmark = pytest.mark.federation


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--attach", "f.txt"], "attach"),
        (["--subject", "hi"], "subject"),
        (["--format", "markdown"], "format"),
    ],
)
def test_rich_parts_to_another_nodes_agent_are_refused_not_dropped(cli, tmp_path, args, field):
    a, _ = linked_pair(cli, tmp_path)
    a.ok("agent", "own", "carol")
    (tmp_path / "f.txt").write_text("x")
    outbox = a.sql("SELECT count(*) FROM fed_outbox")
    r = a("send", "--to", "bob,carol", *args, "body", "--as", "alice")
    assert r.exit_code == 3
    bob, carol = r.json()["results"]
    assert (bob["error"]["field"], bob["error"]["value"]) == (field, "bob")
    assert carol["recipients"] == ["carol"]  # a local agent: sent, with its parts
    assert a.sql("SELECT count(*) FROM fed_outbox") == outbox
    key = {"attach": "attachments"}.get(field, field)
    assert a.ok("show", str(carol["id"]))[key] not in ([], None, "text")
