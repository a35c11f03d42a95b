"""The room's write rule (roomsync.RoomGuard) on in-process Yjs documents: what a node's
update may change in the room, and what a refused update leaves behind. The same rule
over real gateways: tests/test_room_trust.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from acomm_cli import clock
from acomm_cli.federation.roomsync import RoomGuard

pytestmark = pytest.mark.unit

GRACE_MS = 600_000


def _doc() -> Any:
    from pycrdt import Doc

    return Doc()


def _map(doc: Any, name: str) -> Any:
    from pycrdt import Map

    return doc.get(name, type=Map)


def seen(ms_ago: int) -> str:
    return json.dumps({"lastSeenAt": clock.iso(clock.now_ms() - ms_ago)})


@pytest.fixture
def room() -> Any:
    """The room: na (live) owns bob and its routing, publishes `review`; nold has been
    silent past the grace and owns olga."""
    doc = _doc()
    with doc.transaction():
        _map(doc, "nodes")["na"] = seen(1_000)
        _map(doc, "nodes")["nold"] = seen(GRACE_MS + 60_000)
        _map(doc, "agents")["bob"] = json.dumps({"ownerNodeId": "na"})
        _map(doc, "routing")["bob"] = json.dumps({"fallbackOwners": ["nc"]})
        _map(doc, "agents")["olga"] = json.dumps({"ownerNodeId": "nold"})
        _map(doc, "capabilities.catalog")["review"] = json.dumps({"ownerNodeId": "na"})
    return doc


def member_update(room: Any, change: Callable[[Any], None]) -> bytes:
    """An update made by a member's copy of the room."""
    copy = _doc()
    copy.apply_update(room.get_update())
    before = copy.get_state()
    with copy.transaction():
        change(copy)
    return bytes(copy.get_update(before))


def message(update: bytes) -> bytes:
    from pycrdt import create_update_message

    return bytes(create_update_message(update))


def put(name: str, key: str, value: dict[str, Any] | None) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        if value is None:
            del _map(doc, name)[key]
        else:
            _map(doc, name)[key] = json.dumps(value)

    return change


@pytest.mark.parametrize(
    ("sender", "change"),
    [
        ("nc", put("nodes", "nc", {"url": "http://nc"})),  # its heartbeat
        ("nc", put("agents", "cat", {"ownerNodeId": "nc"})),  # an agent no one owns
        ("na", put("agents", "bob", None)),  # its own agent, given up
        ("na", put("routing", "bob", {"fallbackOwners": []})),  # its agent's routing
        ("nc", put("agents", "olga", {"ownerNodeId": "nc"})),  # past its silent owner's grace
        ("na", put("capabilities.catalog", "review", {"ownerNodeId": "na", "etaMs": 1})),
        ("nc", put("capabilities.index", "cat", {"capabilities": [], "ownerNodeId": "nc"})),
    ],
)
def test_a_nodes_own_entries_go_through(room, sender, change):
    update = member_update(room, change)
    assert RoomGuard(room, GRACE_MS).foreign_entries(sender, update, clock.now_ms()) == {}
    assert RoomGuard(room, GRACE_MS).allows(sender, message(update))


@pytest.mark.parametrize(
    ("change", "entry"),
    [
        (put("nodes", "na", {"url": "http://evil"}), "nodes.na"),
        (put("nodes", "na", None), "nodes.na"),
        (put("agents", "bob", {"ownerNodeId": "nc"}), "agents.bob"),
        (put("agents", "bob", None), "agents.bob"),
        (put("agents", "eve", {"ownerNodeId": "na"}), "agents.eve"),
        (put("routing", "bob", {"fallbackOwners": ["nc"] * 2}), "routing.bob"),
        (put("routing", "zed", {"fallbackOwners": ["nc"]}), "routing.zed"),
        (
            put("capabilities.catalog", "review", {"ownerNodeId": "nc"}),
            "capabilities.catalog.review",
        ),
    ],
)
def test_another_nodes_entry_is_put_back(room, change, entry):
    before = {m: _map(room, m).to_py() for m in ("nodes", "agents", "routing")}
    update = member_update(room, lambda doc: (change(doc), put("nodes", "nc", {"u": 1})(doc)))
    guard = RoomGuard(room, GRACE_MS)
    assert [f"{m}.{k}" for m, k in guard.foreign_entries("nc", update, clock.now_ms())] == [entry]
    assert not guard.allows("nc", message(update))
    # applied with the foreign entry put back: nc's own heartbeat in the same update counts
    after = {m: _map(room, m).to_py() for m in ("nodes", "agents", "routing")}
    assert json.loads(after["nodes"].pop("nc")) == {"u": 1}
    assert after == before
    assert _map(room, "capabilities.catalog")["review"] == json.dumps({"ownerNodeId": "na"})


def test_an_update_with_a_gap_is_judged_by_what_it_changes(room):
    """A forged entry sent without the update before it (which the room never got) is
    still seen, and put back; an unreadable message is dropped."""
    copy = _doc()
    copy.apply_update(room.get_update())
    _map(copy, "nodes")["nc"] = json.dumps({"u": 1})
    middle = copy.get_state()
    _map(copy, "agents")["bob"] = json.dumps({"ownerNodeId": "nc"})
    later = bytes(copy.get_update(middle))
    guard = RoomGuard(room, GRACE_MS)
    assert list(guard.foreign_entries("nc", later, clock.now_ms()) or {}) == [("agents", "bob")]
    assert not guard.allows("nc", message(later))
    assert _map(room, "agents")["bob"] == json.dumps({"ownerNodeId": "na"})
    assert not guard.allows("nc", b"\x00\x02\xff\xff")  # unreadable: dropped
