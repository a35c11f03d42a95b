"""GET /metrics on a real `gateway serve`: two nodes, a message across, both scraped over
HTTP and read with prometheus_client's parser; the numbers are the ones the commands give."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_gateway import gateway_nodes, invite, wait_until, where

pytestmark = pytest.mark.federation


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    r = httpx.get(url + "/metrics", timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(r.text)
        for s in f.samples
    }


def test_a_gateway_serves_its_stores_metrics(tmp_path):
    with gateway_nodes(tmp_path) as make:
        a, b = make("na"), make("nb")
        a.start("--seed")
        b.start("--join", str(a.url), "--invite", invite(a, "--expect", "nb"))
        b.ok("agent", "own", "bob")
        wait_until("bob owned by nb, seen on na", lambda: where(a, "bob") == "nb")
        for text in ("one", "two"):
            a.ok("send", "--to", "bob", text, "--as", "alice")
        assert b.ok("fed", "pull")["delivered"] == 2
        b.ok("receive", "--as", "bob")
        got_a, got_b = scrape(str(a.url)), scrape(str(b.url))

        def value(got: dict[Any, float], name: str, **labels: str) -> float:
            return got[(name, tuple(sorted(labels.items())))]

        # each side's own copy: alice's on na's _fed: channel, bob's on nb's, read there
        assert value(got_a, "acomm_messages_sent_total", channel="_fed:alice:bob") == 2
        assert value(got_b, "acomm_messages_sent_total", channel="_fed:bob:alice") == 2
        assert value(got_b, "acomm_messages_received_total", channel="_fed:bob:alice") == 2
        assert value(got_b, "acomm_agent_backlog", agent="bob") == 0
        # the outbox head and each peer's lag and liveness, as the commands say
        status = a.ok("gateway", "status")
        assert value(got_a, "acomm_outbox_head") == status["outbox_head"] > 0
        [peer] = b.ok("peers")["peers"]
        assert value(got_b, "acomm_outbox_lag_events", peer="na") == (peer["lag"] or 0)
        assert value(got_b, "acomm_peer_online", peer="na") == 1
        assert value(got_a, "acomm_store_size_bytes") == a.path.stat().st_size
        # only GET
        assert httpx.post(str(a.url) + "/metrics", timeout=10).status_code == 405
