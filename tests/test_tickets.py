"""A seed's tickets are forgotten once they can never be accepted again (past their
expiry, used or not), by the exchange that writes the next one; a live ticket stays and still
opens the room. And a store too busy to read a signer's key is 503, not a 500. Real stores in
tmp_path; time frozen with freezegun."""

from __future__ import annotations

import sqlite3
import time

import pytest
from freezegun import freeze_time

from acomm_cli import clock
from acomm_cli.federation import handshake, identity, invites, nonces
from tests import test_nonces
from tests.test_nonces import joined, refused, rejoin_request

pytestmark = pytest.mark.unit

DAY = "2030-03-17T10:00:00+00:00"
TTL_S = handshake.TICKET_TTL_MS / 1000


seed, joiner = test_nonces.seed, test_nonces.joiner  # the same seed store and joining node


def rejoin(seed, node: identity.Node) -> tuple[str, str]:
    """A rejoin by node proof: (the ticket, its jti: the exchange's sessionId)."""
    now = clock.now_ms()
    status, body = handshake.exchange(seed, rejoin_request(node, nonces.stamped_nonce(now)), now)
    assert status == 200, body
    return str(body["wsTicket"]), str(body["sessionId"])


def tickets(seed) -> set[str]:
    return {r[0] for r in seed.execute("SELECT jti FROM fed_tickets")}


def test_an_expired_ticket_is_gone_after_the_next_exchange_and_a_live_one_stays_and_works(
    seed, joiner
):
    with freeze_time(DAY) as frozen:
        joined(seed, joiner)  # its ticket used: still kept while it is live
        used = tickets(seed)
        _, unused = rejoin(seed, joiner)  # never presented
        assert tickets(seed) == used | {unused}
        frozen.tick(TTL_S)  # at the expiry itself: refused already, the row still kept
        live, live_id = rejoin(seed, joiner)
        assert tickets(seed) == used | {unused, live_id}
        frozen.tick(0.001)
        _, newer = rejoin(seed, joiner)
        # the used and the unused expired ticket are gone; the live ones stay
        assert tickets(seed) == {live_id, newer}
        frozen.tick(TTL_S / 2)
        now = clock.now_ms()
        assert handshake.authenticate_ticket(seed, live, joiner.node_id, now)[0] == 200
        refused(
            handshake.authenticate_ticket(seed, live, joiner.node_id, now),
            409,
            "ticket_already_used",
        )


def test_an_expired_ticket_presented_after_its_row_is_gone_is_still_refused(seed, joiner):
    with freeze_time(DAY) as frozen:
        joined(seed, joiner)
        old, old_id = rejoin(seed, joiner)
        frozen.tick(TTL_S + 1)
        rejoin(seed, joiner)
        assert old_id not in tickets(seed)
        refused(
            handshake.authenticate_ticket(seed, old, joiner.node_id, clock.now_ms()),
            401,
            "expired_ticket",
        )


def test_an_invite_whose_ticket_expired_unused_is_exchanged_again_and_the_old_row_pruned(
    seed, joiner
):
    with freeze_time(DAY) as frozen:
        now = clock.now_ms()
        inv = invites.create(seed, expect=None, ttl_ms=600_000, pin_key=None, now_ms=now)

        def by_invite() -> tuple[int, dict]:
            t = clock.now_ms()
            return handshake.exchange(
                seed,
                {
                    **rejoin_request(joiner, nonces.stamped_nonce(t)),
                    "inviteToken": inv["invite_token"],
                },
                t,
            )

        status, first = by_invite()
        assert status == 200
        refused(by_invite(), 409, "replay_detected")  # its ticket is still live
        frozen.tick(TTL_S + 1)
        status, second = by_invite()
        assert status == 200
        assert tickets(seed) == {second["sessionId"]}
        assert (
            handshake.authenticate_ticket(seed, second["wsTicket"], joiner.node_id, clock.now_ms())[
                0
            ]
            == 200
        )


def test_the_prune_uses_the_expiry_index(seed):
    plan = seed.execute("EXPLAIN QUERY PLAN DELETE FROM fed_tickets WHERE expires_at < 1")
    assert "fed_tickets_expiry" in " ".join(str(r[-1]) for r in plan)


def test_a_store_too_busy_to_read_the_signers_key_is_503_not_500(seed, joiner, tmp_path):
    """The key lookup of a signed outbox read, with the store locked by another process's
    connection past the gateway's busy timeout: 503 store_unavailable, as the replay guard
    right after it answers."""
    from acomm_cli.federation import gateway
    from acomm_cli.federation.http_transport import signed_headers

    joined(seed, joiner)
    path = tmp_path / "seed" / "s.acomm"
    gw = gateway.Gateway(
        gateway.Options(path, "127.0.0.1", 0, busy_timeout_ms=50),
        identity.require(seed),
        None,
        "http://127.0.0.1:1",
    )
    target = "/acomm/outbox?after=0&nonce=x1"
    assert gw._check_signature(_lower(signed_headers(joiner, target)), target) is None
    # WAL readers are not blocked by a writer: the other process takes the file for itself
    # (locking_mode EXCLUSIVE, which needs the other connections closed first); the
    # gateway's next read opens a fresh connection, as after a restart, and finds it locked
    assert gw.conn is not None
    gw.conn.close()
    gw.conn = None
    seed.close()
    locker = sqlite3.connect(path, timeout=0)
    try:
        locker.execute("PRAGMA locking_mode = EXCLUSIVE")
        locker.execute("BEGIN EXCLUSIVE")
        locker.execute("DELETE FROM fed_request_nonces")
        target = "/acomm/outbox?after=0&nonce=x2"
        t0 = time.monotonic()
        reply = gw._check_signature(_lower(signed_headers(joiner, target)), target)
        assert reply is not None
        refused(reply, 503, "store_unavailable")
        assert time.monotonic() - t0 < 10
    finally:
        locker.rollback()
        locker.close()
    if gw.conn is not None:
        gw.conn.close()


def _lower(headers: dict[str, str]) -> dict[str, str]:
    """Starlette's headers are looked up in lower case."""
    return {k.lower(): v for k, v in headers.items()}
