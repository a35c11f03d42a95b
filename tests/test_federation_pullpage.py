"""A pulled page applies its events in one transaction: each delivered message gets exactly
one `ack accepted` in this node's outbox, in the order of the messages, whether the page went
through whole or was applied again event by event because one of its events was refused."""

from __future__ import annotations

import json

import pytest
from test_federation_inbound import _envelope, _send, nodes  # noqa: F401 (a fixture)

pytestmark = pytest.mark.federation


def _acks(n) -> list[tuple[int, str, str, str]]:
    rows = n.sql("SELECT seq, envelope FROM fed_outbox WHERE kind = 'ack' ORDER BY seq")
    out = []
    for seq, text in rows:
        env = json.loads(text)
        assert env["seq"] == seq and env["kind"] == "ack" and env["toNodeId"] == "na"
        out.append((seq, env["payload"]["ackOf"], env["payload"]["status"], env["eventId"]))
    return out


@pytest.mark.parametrize("refused", [False, True])
def test_every_delivered_message_is_acked_once_in_order(nodes, refused):  # noqa: F811
    a, b, _ = nodes
    before = len(_acks(b))
    sent = [_send(a, "alice", f"m{i}") for i in range(3)]
    if refused:  # a forged event in the middle of the page: the page is applied again
        a.append({**_envelope(a, sent[0]), "eventId": "forged", "sourceAgentId": "acomm"})
    sent += [_send(a, "alice", f"m{i}") for i in range(3, 5)]
    got = b.ok("fed", "pull")
    assert (got["delivered"], got["rejected"], got["duplicates"]) == (5, int(refused), 0)
    acks = _acks(b)[before:]
    assert [(of, status) for _, of, status, _ in acks] == [(e, "accepted") for e in sent]
    seqs = [seq for seq, _, _, _ in acks]
    assert seqs == list(range(seqs[0], seqs[0] + 5))  # appended together, nothing between
    assert len({eid for _, _, _, eid in acks}) == 5
    # and a pull again changes nothing: no second delivery, no second ack
    again = b.ok("fed", "pull")
    assert (again["read"], again["delivered"]) == (0, 0)
    assert len(_acks(b)) == before + 5
