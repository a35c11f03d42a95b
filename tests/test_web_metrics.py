"""`acomm web` serves GET /metrics, the gateway's page: scraped from the running console with
prometheus_client's own parser, and kept behind the console's login where there is one."""

from __future__ import annotations

import pytest
from procs import stop
from webconsole import client, serve

pytestmark = pytest.mark.process

pytest.importorskip("starlette", reason="the web extra is not installed")
pytest.importorskip("prometheus_client", reason="prometheus-client is not installed")


def _families(text: str) -> dict[str, float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {
        s.name: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if not s.labels
    }


def test_the_console_serves_the_stores_metrics(cli, make_channel):
    import httpx

    path = make_channel("team", "op", "alice")
    for n in range(3):
        cli.ok("send", "team", f"note {n}", "--as", "op")
    proc, url = serve(path)
    try:
        r = httpx.get(url + "metrics", timeout=30)
    finally:
        stop(proc)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert _families(r.text)["acomm_store_messages"] == 3.0


def test_behind_a_login_a_scrape_presents_an_agents_secret(cli, make_channel):
    """With a login (any address but loopback), /metrics answers a session or an agent's
    secret as a bearer token (what Prometheus' `authorization` sends), and nothing else."""
    path = make_channel("team", "op", "alice")
    secret = cli.ok("agent", "token", "alice").stdout.strip()
    scraped: list[int] = []

    def scrape() -> tuple[bytes, str]:
        scraped.append(1)
        return b"acomm_store_messages 0.0\n", "text/plain; version=0.0.4; charset=utf-8"

    with client(path, https=True, login=True, acting=None, metrics=scrape) as c:
        r = c.get("/metrics", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login"
        wrong = c.get("/metrics", headers={"authorization": "Bearer acomm_as_" + "x" * 43})
        assert wrong.status_code == 401
        assert scraped == []
        r = c.get("/metrics", headers={"authorization": f"Bearer {secret}"})
        assert r.status_code == 200 and r.text == "acomm_store_messages 0.0\n"
    assert scraped == [1]
    with client(path, metrics=scrape) as c:  # loopback, no login: the page itself
        assert c.get("/metrics").text == "acomm_store_messages 0.0\n"
    assert scraped == [1, 1]
