"""Federation's timers in `tick`: retries of an event not accepted, then a
`federation_max_attempts` dead letter; one SLA incident per accepted event; a plain tick
unchanged. Time moves with freezegun."""

from __future__ import annotations

import json

import pytest
from freezegun import freeze_time
from test_federation_routing import linked_pair

pytestmark = pytest.mark.federation


@pytest.fixture
def pair(cli, tmp_path):
    with freeze_time("2030-01-01T00:00:00Z"):
        return linked_pair(cli, tmp_path)


def test_retries_then_max_attempts_dead_letter(pair):
    a, b = pair
    with freeze_time("2030-01-01T00:00:01Z"):
        sent = a.ok("send", "--to", "bob", "hi", "--as", "alice")["results"][0]
    b.path.rename(b.path.with_suffix(".away"))  # nb never reads: nothing is accepted
    totals = {"fed_retried": 0, "fed_dead_lettered": 0}
    for minute in range(1, 12):
        with freeze_time(f"2030-01-01T00:{minute:02d}:01Z"):
            doc = a.ok("tick")
            for k in totals:
                totals[k] += doc[k]
    assert totals == {"fed_retried": 4, "fed_dead_lettered": 1}
    assert a.sql(
        "SELECT attempt FROM fed_outbox WHERE event_id = ? ORDER BY seq", sent["global_id"]
    ) == [(1,), (2,), (3,), (4,), (5,)]
    assert a.sql("SELECT state, attempt FROM fed_sent") == [("dead_letter", 5)]
    assert a.sql("SELECT recipient, reason FROM dead_letters") == [
        ("bob", "federation_max_attempts")
    ]
    assert a.sql("SELECT count(*) FROM fed_outbox WHERE kind = 'dead_letter'") == [(1,)]


def test_retry_times_follow_scheduled_times(pair):
    from acomm_cli.federation.timers import FedConfig, retry_delay

    cfg = FedConfig()
    d1 = retry_delay(cfg, "e", 1)
    assert 31_000 <= d1 <= 31_000 * 1.1 and retry_delay(cfg, "e", 1) == d1
    assert retry_delay(cfg, "e", 3) >= 34_000


def test_accepted_event_gets_one_sla_incident(pair):
    a, b = pair
    a.ok("subscribe", "_system", "_system.#", "--as", "ops")
    with freeze_time("2030-01-01T00:00:01Z"):
        a.ok("send", "--to", "bob", "hi", "--as", "alice")
    with freeze_time("2030-01-01T00:00:02Z"):
        b.ok("fed", "pull")
        a.ok("fed", "pull")
    with freeze_time("2030-01-01T00:11:00Z"):
        assert a.ok("tick")["fed_incidents"] == 1
    with freeze_time("2030-01-01T00:30:00Z"):
        assert a.ok("tick")["fed_incidents"] == 0
    notes = a.ok("receive", "--as", "ops", "--topic", "_system.federation.sla")["messages"]
    assert len(notes) == 1 and json.loads(notes[0]["content"])["reason"] == "federation_sla"
    assert a.sql("SELECT state FROM fed_sent") == [("incident",)]


def test_a_plain_tick_has_no_federation_fields(cli, store):
    doc = cli.ok("tick", "--json").json()
    assert not any(k.startswith("fed_") for k in doc)
