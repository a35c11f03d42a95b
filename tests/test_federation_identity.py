"""Federation foundations: `node init` and invites on a seed, on real stores."""

from __future__ import annotations

import pytest
from conftest import query
from freezegun import freeze_time

from acomm_cli import clock
from acomm_cli.federation import identity

pytestmark = pytest.mark.cli


def test_node_init_creates_a_key_pair_once(cli, store):
    first = cli.ok("node", "init", "--id", "vps-jane", "--json").json()
    assert first["node_id"] == "vps-jane"
    assert first["public_key"].startswith("k4.public.")
    assert len(identity.parse_public_key(first["public_key"])) == 32
    again = cli("node", "init", "--id", "vps-jane", "--json")
    assert again.exit_code == 0 and again.json() == first
    assert query(store, "SELECT count(*) FROM fed_node") == [(1,)]


def test_node_init_refuses_another_id(cli, store):
    cli.ok("node", "init", "--id", "vps-jane")
    r = cli("node", "init", "--id", "mbp-jane", "--json")
    assert r.exit_code == 5 and r.error["code"] == "invalid_state"
    assert query(store, "SELECT node_id FROM fed_node") == [("vps-jane",)]


@pytest.mark.parametrize("bad", ["-x", ".x", "a..b", "a@b", "x" * 65, "é", "a b", ""])
def test_node_init_refuses_a_bad_id(cli, store, bad):
    r = cli("node", "init", "--id", bad, "--json")
    assert r.exit_code == 3 and r.error["code"] == "validation_failed"
    assert query(store, "SELECT count(*) FROM fed_node") == [(0,)]


def test_invites_need_a_node(cli, store):
    r = cli("invite", "create", "--json")
    assert r.exit_code == 5 and "node init" in r.error["message"]


@pytest.fixture
def seed(cli, store):
    cli.ok("node", "init", "--id", "seed")
    return store


def test_invite_create_list_revoke(cli, seed):
    with freeze_time("2030-01-01T00:00:00Z"):
        inv = cli.ok("invite", "create", "--expect", "mbp-jane", "--ttl", "5m", "--json").json()
        other = cli.ok("invite", "create", "--json").json()
    assert set(inv) == {"invite_id", "invite_token", "expires_at"}
    assert inv["expires_at"] == "2030-01-01T00:05:00.000Z"
    assert other["expires_at"] == "2030-01-01T00:10:00.000Z"  # 10m by default
    assert len(inv["invite_token"]) == 43  # 32 random bytes, base64url
    with freeze_time("2030-01-01T00:01:00Z"):
        listed = cli.ok("invite", "list", "--json").json()["invites"]
        assert sorted(
            (i["invite_id"], i["state"], i["expected_node"] or "") for i in listed
        ) == sorted(
            [(inv["invite_id"], "pending", "mbp-jane"), (other["invite_id"], "pending", "")]
        )
        assert inv["invite_token"] not in cli.ok("invite", "list", "--json").stdout
        revoked = cli.ok("invite", "revoke", inv["invite_id"], "--json").json()
        assert revoked["state"] == "revoked" and revoked["changed"] is True
        again = cli.ok("invite", "revoke", inv["invite_id"], "--json").json()
        assert again["changed"] is False
    with freeze_time("2030-01-01T00:11:00Z"):
        states = {
            i["invite_id"]: i["state"] for i in cli.ok("invite", "list", "--json").json()["invites"]
        }
    assert states == {inv["invite_id"]: "revoked", other["invite_id"]: "expired"}
    r = cli("invite", "revoke", "inv-nope", "--json")
    assert r.exit_code == 4 and r.error["code"] == "not_found"


def test_the_token_is_never_stored_in_clear(cli, seed):
    token = cli.ok("invite", "create", "--json").json()["invite_token"]
    cli.ok("status")  # a checkpoint-free read: the WAL may still hold the pages
    for path in seed.parent.iterdir():
        data = path.read_bytes()
        assert token.encode() not in data, path.name
    assert len(query(seed, "SELECT token_sha256 FROM fed_invites")[0][0]) == 64


@pytest.mark.parametrize(
    "args",
    [
        ["--ttl", "0s"],
        ["--ttl", "8d"],
        ["--ttl", "soon"],
        ["--expect", "a@b"],
        ["--pin-key", "k4.public.short"],
        ["--pin-key", "not-a-key"],
    ],
)
def test_invite_create_refuses_bad_options(cli, seed, args):
    r = cli("invite", "create", *args, "--json")
    assert r.exit_code == 3 and r.error["code"] == "validation_failed"
    assert query(seed, "SELECT count(*) FROM fed_invites") == [(0,)]


def test_a_used_invite_cannot_be_revoked(cli, seed, conn):
    import json

    from acomm_cli.federation import handshake

    inv = cli.ok("invite", "create", "--json").json()
    now = clock.now_ms()
    status, body = handshake.exchange(
        conn,
        json.dumps({"inviteToken": inv["invite_token"], "nodeId": "mbp-jane", "nonce": "n" * 24}),
        now,
    )
    assert status == 200
    assert handshake.authenticate_ticket(conn, body["wsTicket"], "mbp-jane", now + 1)[0] == 200
    r = cli("invite", "revoke", inv["invite_id"], "--json")
    assert r.exit_code == 5 and r.error["code"] == "invalid_state"
