"""Several seeds, on real stores without gateways: `node init --seed`, `--join` lists, the
room's invite registry and where an invite is redeemed, a ticket another seed minted
(verified with that seed's key from the room, redeemed there exactly once), a rejoin by
proof at a seed the node never joined, and the room's cursors and subscriptions as shown by
`peers --json` and `fed status --json`. The gateways themselves: test_gateway_seeds.py."""

from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
from conftest import query

from acomm_cli.engine import opening
from acomm_cli.errors import ValidationFailed
from acomm_cli.federation import handshake, identity, invites, room, seeds
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

pytestmark = pytest.mark.cli

T0 = 1_900_000_000_000
MIN = 60_000


def test_node_init_seed_marks_the_store(cli, store):
    doc = cli.ok("node", "init", "--id", "s1", "--seed", "--json").json()
    assert doc["seed"] is True and doc["node_id"] == "s1"
    assert query(store, "SELECT value FROM store_meta WHERE key = 'federation.seed'") == [("1",)]
    again = cli.ok("node", "init", "--id", "s1", "--json").json()  # unchanged, still a seed
    assert "seed" not in again
    assert query(store, "SELECT value FROM store_meta WHERE key = 'federation.seed'") == [("1",)]


def test_gateway_serve_refuses_a_bad_join_list(cli, store):
    cli.ok("node", "init", "--id", "s1")
    r = cli("gateway", "serve", "--listen", "127.0.0.1:0", "--join", "http://a:1,ftp://b", "--json")
    assert r.exit_code == 3 and r.error["field"] == "join" and r.error["value"] == "ftp://b"


def test_parse_join():
    assert seeds.parse_join(None) == []
    assert seeds.parse_join("http://a:1/, https://b:2,http://a:1") == ["http://a:1", "https://b:2"]
    with pytest.raises(ValidationFailed):
        seeds.parse_join(" , ")


# ---------------------------------------------------------------- two seeds' stores


def node_store(tmp_path, name: str, *, seed: bool = True):
    c = opening.connect(tmp_path / name / "s.acomm", create=True)
    node, _ = identity.init_node(c, name, T0)
    if seed:
        seeds.mark_seed(c)
    return c, node


def announce(conn, node: identity.Node, url: str, **extra: Any) -> None:
    """What the room mirror writes: a node's entry as it announces itself."""
    entry = {"url": url, "publicKey": node.public_paserk, **extra}
    with write(conn):
        sql.room_put(conn, "nodes", node.node_id, json.dumps(entry), T0, queue=False)


def relay(src, dst, map_: str) -> None:
    """The registry entries src's gateway would put into the room, copied to dst's copy."""
    with write(dst):
        for key, value in sql.room_map(src, map_):
            sql.room_put(dst, map_, key, value, T0, queue=False)


@pytest.fixture
def pair(tmp_path):
    a, na = node_store(tmp_path, "s1")
    b, nb = node_store(tmp_path, "s2")
    announce(b, na, "http://s1:1", seed=True)
    announce(a, nb, "http://s2:1", seed=True)
    yield a, na, b, nb
    a.close()
    b.close()


def test_a_seeds_invite_is_in_the_registry_and_found_by_the_other_seed(pair):
    a, na, b, _ = pair
    inv = invites.create(a, expect="nb", ttl_ms=10 * MIN, pin_key=None, now_ms=T0)
    queued = query_changes(a)
    assert [(m, k) for m, k, _ in queued] == [("invites", inv["invite_id"])]
    entry = json.loads(queued[0][2])
    assert entry["ownerNodeId"] == "s1" and entry["expectedNodeId"] == "nb"
    assert inv["invite_token"] not in queued[0][2]  # its hash only
    relay(a, b, "invites")
    assert seeds.invite_home(b, "s2", inv["invite_token"]) == "s1"
    assert seeds.invite_home(a, "s1", inv["invite_token"]) is None  # its own: answered here
    assert seeds.invite_home(b, "s2", "not-a-token") is None
    # revoked: the registry follows
    invites.revoke(a, inv["invite_id"], T0 + 1)
    relay(a, b, "invites")
    shown = room.room_metadata(b, T0 + 2)["invites"]
    assert [(i["invite_id"], i["seed"], i["state"]) for i in shown] == [
        (inv["invite_id"], "s1", "revoked")
    ]


def test_a_plain_nodes_invite_stays_out_of_the_room(tmp_path):
    c, _ = node_store(tmp_path, "n1", seed=False)
    invites.create(c, expect=None, ttl_ms=MIN, pin_key=None, now_ms=T0)
    assert query_changes(c) == []
    c.close()


def query_changes(conn) -> list[tuple[str, str, str]]:
    return conn.execute(
        "SELECT map, key, value FROM fed_room_changes WHERE applied_at IS NULL ORDER BY seq"
    ).fetchall()


def minted(conn, node: str, joiner: identity.Node | None = None) -> str:
    """A ticket `conn`'s seed mints for `node` by an invite of its own."""
    inv = invites.create(conn, expect=None, ttl_ms=10 * MIN, pin_key=None, now_ms=T0)
    n = secrets.token_urlsafe(18)
    req: dict[str, Any] = {"nodeId": node, "nonce": n, "inviteToken": inv["invite_token"]}
    if joiner is not None:
        req["nodeProof"] = identity.sign_proof(joiner.private_key, node, n)
        req["publicKey"] = joiner.public_paserk
    status, body = handshake.exchange(conn, req, T0)
    assert status == 200, body
    return str(body["wsTicket"])


def test_a_ticket_of_another_seed_is_checked_then_redeemed_once_by_its_minter(pair, tmp_path):
    a, _, b, _ = pair
    _, joiner = node_store(tmp_path, "nx", seed=False)
    ticket = minted(a, "nx", joiner)
    assert seeds.ticket_issuer(ticket) == "s1"
    # on s2: verified with s1's key from the room, its node and expiry checked here
    assert seeds.foreign_ticket(b, ticket, "nx", T0) == (200, {"issuer": "s1"})
    assert seeds.foreign_ticket(b, ticket, "ny", T0)[0] == 403
    assert seeds.foreign_ticket(b, ticket, "nx", T0 + 2 * MIN)[1]["error"]["code"] == (
        "expired_ticket"
    )
    assert seeds.foreign_ticket(a, ticket, "nx", T0) is None  # s1's own: decided by s1
    # a ticket from a seed s2's room does not know, and one that names s1 as its issuer
    # but is signed by another key
    stranger, _ = node_store(tmp_path, "s9")
    unknown = minted(stranger, "nx")
    assert seeds.foreign_ticket(b, unknown, "nx", T0)[1]["error"]["code"] == "invalid_ticket"
    with write(b):  # s9's key announced as s1's
        sql.room_put(b, "nodes", "s9", sql.room_get(b, "nodes", "s1") or "", T0, queue=False)
    assert seeds.foreign_ticket(b, unknown, "nx", T0)[1]["error"]["code"] == "invalid_ticket"
    stranger.close()
    # the minter redeems it once: two seeds asking at once get one admission
    first = seeds.redeem_here(a, {"ticket": ticket, "nodeId": "nx"}, T0)
    second = seeds.redeem_here(a, {"ticket": ticket, "nodeId": "nx"}, T0)
    assert first[0] == 200 and first[1]["claims"]["sub"] == "nx"
    assert first[1]["publicKey"] == joiner.public_paserk
    assert second == handshake.refusal(409, "ticket_already_used", "the ticket was already used")
    assert seeds.redeem_here(a, {"ticket": 1}, T0)[0] == 400


def test_a_node_rejoins_by_proof_at_a_seed_it_never_joined(pair, tmp_path):
    _, _, b, _ = pair
    _, joiner = node_store(tmp_path, "nx", seed=False)
    n = secrets.token_urlsafe(18)
    req = {
        "nodeId": "nx",
        "nonce": n,
        "nodeProof": identity.sign_proof(joiner.private_key, "nx", n),
    }
    assert handshake.exchange(b, dict(req), T0)[1]["error"]["code"] == "invalid_proof"
    announce(b, joiner, "http://nx:1")  # its entry reached s2's room (only nx writes it)
    req["nonce"] = n2 = secrets.token_urlsafe(18)
    req["nodeProof"] = identity.sign_proof(joiner.private_key, "nx", n2)
    assert handshake.exchange(b, dict(req), T0)[0] == 200
    # another key than the one the room announces does not rejoin
    _, other = node_store(tmp_path, "other", seed=False)
    req["nonce"] = n3 = secrets.token_urlsafe(18)
    req["nodeProof"] = identity.sign_proof(other.private_key, "nx", n3)
    assert handshake.exchange(b, dict(req), T0)[1]["error"]["code"] == "invalid_proof"


def test_the_rooms_metadata_in_peers_and_fed_status(cli, store):
    cli.ok("node", "init", "--id", "na")
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ann")
    cli.ok("subscribe", "ci", "build.*", "--as", "ann")
    c = opening.connect(store, create=False)
    try:
        with write(c):
            sql.set_cursor(c, "nb", 7, 9, T0)
            own = room.own_metadata(c, "na")  # what the gateway puts into the room
            for map_, value in own.items():
                sql.room_put(c, map_, "na", value, T0, queue=False)
    finally:
        c.close()
    assert json.loads(own["subscriptions"])["agents"] == {
        "ann": {"subscriptions": [{"channel": "ci", "pattern": "build.*"}], "cursors": []}
    }
    for args in (("peers",), ("fed", "status")):
        shown = cli.ok(*args, "--json").json()["room"]
        assert shown["subscriptions"] == [
            {"node": "na", "agent": "ann", "channel": "ci", "pattern": "build.*"}
        ]
        assert shown["cursors"]["na"] == {"nb": 7}
        assert shown["invites"] == [] and shown["agent_cursors"] == []
    # metadata only: no message content is ever in the room's entries
    cli.ok("send", "ci", "the secret payload", "--topic", "build.x.done", "--as", "ann")
    c = opening.connect(store, create=False)
    try:
        assert "secret" not in json.dumps(room.own_metadata(c, "na"))
    finally:
        c.close()
