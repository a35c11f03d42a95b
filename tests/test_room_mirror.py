"""How the gateway copies the room into this node's store (roomsync.Mirror), on an
in-process Yjs document and a real store: an agent of this node that no node owns stays
this node's whatever another node writes in the room."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from acomm_cli.engine import opening, remote
from acomm_cli.federation import identity
from acomm_cli.federation.roomsync import Mirror
from acomm_cli.model import ChannelConfig
from acomm_cli.store import channels

pytestmark = pytest.mark.unit

NOW = 1_900_000_000_000


@pytest.fixture
def node(tmp_path: Path) -> Any:
    """nb, with carol in a channel here (owned by no node)."""
    conn = opening.connect(tmp_path / "nb.acomm", create=True)
    with conn:
        me, _ = identity.init_node(conn, "nb", NOW)
        cid = channels.insert_channel(conn, "ops", "group", "carol", ChannelConfig(), NOW)
        channels.insert_participant(conn, cid, "carol", "owner", NOW)
    yield conn, me
    conn.close()


def room(**agents: str) -> Any:
    from pycrdt import Doc, Map

    doc = Doc()
    with doc.transaction():
        for agent, owner in agents.items():
            doc.get("agents", type=Map)[agent] = json.dumps({"ownerNodeId": owner})
            doc.get("routing", type=Map)[agent] = json.dumps({"fallbackOwners": [owner]})
    return doc


def test_another_nodes_claim_on_an_agent_of_this_node_is_not_copied(node):
    conn, me = node
    Mirror(room(carol="nc", dave="nc"), me, "http://nb").sync(conn, NOW, heartbeat=False)
    assert remote.room_value(conn, "agents", "carol") == {}
    assert remote.room_value(conn, "routing", "carol") == {}
    assert remote.route(conn, "nb", "carol", NOW, 30_000).decision == "local"
    # an agent that takes part in nothing here is the room's to say
    assert remote.room_value(conn, "agents", "dave") == {"ownerNodeId": "nc"}


def test_this_nodes_own_claim_and_an_owned_agent_are_copied(node):
    conn, me = node
    remote.claim_speaker(conn, "nd", "carol", NOW, queue=False)  # carol already nd's here
    Mirror(room(carol="nc"), me, "http://nb").sync(conn, NOW, heartbeat=False)
    assert remote.room_value(conn, "agents", "carol") == {"ownerNodeId": "nc"}
    Mirror(room(carol="nb"), me, "http://nb").sync(conn, NOW, heartbeat=False)
    assert remote.room_value(conn, "agents", "carol") == {"ownerNodeId": "nb"}
