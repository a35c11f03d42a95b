"""GET /metrics' body (monitoring/metrics.py): scraped from a real store after known sends,
reads, acks, dead letters and dispatch runs, and read back with prometheus_client's own
parser, as Prometheus would."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import freezegun
import pytest
from conftest import ACOMM
from prometheus_client.parser import text_string_to_metric_families

from acomm_cli.engine import opening
from acomm_cli.monitoring import metrics

pytestmark = pytest.mark.cli

T0 = 1_767_268_800_000  # 2026-01-01T12:00:00Z


def at(ms: int) -> Any:
    return freezegun.freeze_time(datetime.fromtimestamp(ms / 1000, tz=UTC))


def scrape(store: Path | Any, now: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} of one scrape, through prometheus_client's parser."""
    body, ctype = metrics.metrics_payload(store, now=lambda: now)
    assert ctype.startswith("text/plain; version=")
    out = {}
    for family in text_string_to_metric_families(body.decode()):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def families(store: Path, now: int) -> dict[str, str]:
    body, _ = metrics.metrics_payload(store, now=lambda: now)
    return {f.name: f.type for f in text_string_to_metric_families(body.decode())}


@pytest.fixture
def traffic(cli, make_channel, tmp_path) -> Path:
    """team (alice; bob, carol): "hello" read by bob only; "too late" (ttl 1s) dead-lettered
    for bob and carol by a tick. ops (at-least-once, ack timeout 10s; alice, bob):
    "deploy" read and acked by bob, "again" read and not acked (its timer due at T0+70s).
    dispatch: dave's agent run once on the direct message alice sent him."""
    with at(T0):
        store = make_channel("team", "alice", "bob", "carol")
        make_channel("ops", "alice", "bob", delivery="at-least-once", ack_timeout="10s")
        cli.ok("send", "team", "hello", "--as", "alice")
        cli.ok("receive", "--as", "bob")
        deploy = cli.ok("send", "ops", "deploy", "--as", "alice").stdout.strip()
        cli.ok("receive", "--channel", "ops", "--as", "bob")
        cli.ok("ack", deploy, "--as", "bob")
    with at(T0 + 60_000):
        cli.ok("send", "team", "too late", "--ttl", "1s", "--as", "alice")
        cli.ok("send", "ops", "again", "--as", "alice")
        cli.ok("receive", "--channel", "ops", "--as", "bob")
    with at(T0 + 65_000):
        cli.ok("tick")
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\ncat >/dev/null\nexit 0\n")
    script.chmod(0o755)
    (store.parent / "config.yaml").write_text(
        json.dumps({"agents": {"dave": {"run": str(script)}}})
    )
    with at(T0 + 66_000):
        cli.ok("send", "--to", "dave", "run it", "--as", "alice")
        cli.ok("dispatch")
    assert ACOMM  # the agents dispatch runs are plain programs
    return store


def test_counters_by_channel_after_known_sends_reads_acks_and_dead_letters(traffic):
    got = scrape(traffic, T0 + 70_000)
    sent = {k[1][0][1]: v for k, v in got.items() if k[0] == "acomm_messages_sent_total"}
    # on ops, bob's ack went back to alice as a message of its own; each dead letter is
    # announced on _system; alice's direct message to dave has a channel of its own
    assert sent == {"team": 2, "ops": 3, "_system": 2, "_dm:alice:dave": 1}
    received = {k[1][0][1]: v for k, v in got.items() if k[0] == "acomm_messages_received_total"}
    assert received["team"] == 1 and received["ops"] == 2
    acked = {k[1][0][1]: v for k, v in got.items() if k[0] == "acomm_messages_acked_total"}
    assert acked["team"] == 0 and acked["ops"] == 1
    dead = {
        dict(k[1])["channel"] + "/" + dict(k[1])["reason"]: v
        for k, v in got.items()
        if k[0] == "acomm_messages_dead_lettered_total"
    }
    assert dead == {"team/expired": 2}
    runs = {
        (dict(k[1])["agent"], dict(k[1])["status"]): v
        for k, v in got.items()
        if k[0] == "acomm_dispatch_runs_total"
    }
    assert runs == {("dave", "accepted"): 1}


def test_backlog_oldest_unread_timers_and_sizes(traffic, cli):
    now = T0 + 70_000
    got = scrape(traffic, now)

    def agent(name: str, a: str) -> float:
        return got[(name, (("agent", a),))]

    # carol never read "hello" (sent at T0); bob read all; "again" awaits bob's ack
    assert agent("acomm_agent_backlog", "carol") == 1
    assert agent("acomm_agent_oldest_unread_seconds", "carol") == 70
    assert agent("acomm_agent_backlog", "bob") == 0
    assert agent("acomm_agent_oldest_unread_seconds", "bob") == 0
    assert agent("acomm_agent_awaiting_ack", "bob") == 1
    # the numbers `acomm stats --json` gives, as a scrape gives them
    with at(now):
        st = cli.ok("stats", "--json").json()
    for a in st["agents"]:
        assert agent("acomm_agent_backlog", a["agent"]) == a["unread"]
    for c in st["channels"]:
        assert got[("acomm_channel_backlog", (("channel", c["channel"]),))] == c["pending"]
    # "again" was read at T0+60s with a 10 s ack timeout: its redelivery is due
    assert got[("acomm_timers_due", ())] == 1
    assert scrape(traffic, T0 + 60_001)[("acomm_timers_due", ())] == 0
    assert got[("acomm_store_size_bytes", ())] == os.stat(traffic).st_size
    wal = Path(str(traffic) + "-wal")
    assert got[("acomm_store_wal_size_bytes", ())] == (wal.stat().st_size if wal.exists() else 0)
    assert got[("acomm_store_messages", ())] == 8
    # a plain store is no node: no peers, no outbox
    assert not [k for k in got if k[0].startswith(("acomm_outbox", "acomm_peer"))]


def test_a_scrape_writes_nothing_and_an_open_connection_is_left_open(traffic):
    before = traffic.read_bytes()
    conn = opening.connect(traffic, create=False)
    try:
        first = scrape(conn, T0 + 70_000)
        assert conn.execute("SELECT 1").fetchone() == (1,)  # still open
    finally:
        conn.close()
    assert scrape(traffic, T0 + 70_000) == first
    assert traffic.read_bytes() == before


def test_every_family_is_typed_and_documented(traffic):
    got = families(traffic, T0 + 70_000)
    declared = {n: t for n, t, _l, _h in metrics.FAMILIES}
    # every family of a plain store's scrape is declared, with its type
    for name, kind in got.items():
        assert declared[name] == kind, name
    doc = (Path(__file__).parent.parent / "docs" / "METRICS.md").read_text()
    for name in metrics.metric_names():
        assert f"`{name}`" in doc, f"docs/METRICS.md does not describe {name}"


def test_the_grafana_dashboard_names_only_metrics_a_scrape_has(traffic):
    """docs/grafana/acomm.json: every panel's expression names metrics that exist (a renamed
    metric would leave an empty panel), every metric is on some panel, and every panel
    reads the dashboard's chosen data source."""
    import re

    dash = json.loads(
        (Path(__file__).parent.parent / "docs" / "grafana" / "acomm.json").read_text()
    )
    known = set(metrics.metric_names())
    used: set[str] = set()
    for panel in dash["panels"]:
        assert panel["title"] and panel["datasource"]["uid"] == "${datasource}"
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            names = set(re.findall(r"\bacomm_[a-z_]+\b", target["expr"]))
            assert names, target["expr"]
            assert names <= known, (panel["title"], names - known)
            used |= names
    for variable in dash["templating"]["list"]:
        used |= set(re.findall(r"\bacomm_[a-z_]+\b", str(variable.get("query", ""))))
    assert used <= known
    # every metric is on some panel, the node-only and dispatch ones included
    assert known == used, known - used
    # and the ones a plain store's scrape gives are there to be read
    got = {k[0] for k in scrape(traffic, T0 + 70_000)}
    assert {"acomm_messages_sent_total", "acomm_agent_backlog", "acomm_timers_due"} <= got
