"""Duration and time options take the same forms on every command (500ms, 1h30m, PT1H30M;
ISO 8601 times, relative ones), and refuse a bad one with exit 3 naming it, storing nothing."""

from __future__ import annotations

import pytest
from conftest import query, snapshot
from freezegun import freeze_time

from acomm_cli import clock

pytestmark = pytest.mark.cli

H, M = 3_600_000, 60_000


@pytest.mark.parametrize(
    ("option", "value", "ms"),
    [
        ("--delay", "1h30m", H + 30 * M),
        ("--delay", "PT1H30M", H + 30 * M),
        ("--delay", "P1DT2H", 26 * H),
        ("--delay", "90", 90_000),  # a bare number on the command line: seconds, as always
        ("--delay", "1.5h", H + 30 * M),
    ],
)
def test_send_delay_in_every_form(cli, team, option, value, ms):
    mid = cli.ok("send", "team", "later", "--as", "alice", option, value).stdout.strip()
    got = query(team, "SELECT deliver_at - created_at FROM messages WHERE id = ?", int(mid))
    assert got == [(ms,)]


def test_send_ttl_and_deliver_at_with_an_offset(cli, team):
    with freeze_time("2026-11-27T12:00:00Z"):
        mid = cli.ok(
            "send",
            "team",
            "x",
            "--as",
            "alice",
            "--deliver-at",
            "2026-11-27T14:00:00+01:00",
            "--ttl",
            "PT10M",
            "--json",
        ).json()["id"]
    doc = cli.ok("show", str(mid), "--json").json()
    assert doc["deliver_at"] == "2026-11-27T13:00:00.000Z"
    got = query(team, "SELECT expires_at - deliver_at FROM messages WHERE id = ?", mid)
    assert got == [(10 * M,)]  # the time to live runs from delivery


def test_channel_settings_in_unit_and_iso_forms(cli, store):
    doc = cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "boss",
        "--ack-timeout",
        "1m30s",
        "--lease",
        "PT2M",
        "--dedupe-window",
        "P1D",
        "--json",
    ).json()["config"]
    assert (doc["ack_timeout_ms"], doc["lease_ms"], doc["dedupe_window_ms"]) == (
        90_000,
        120_000,
        86_400_000,
    )


def test_receive_wait_takes_a_unit(cli, team):
    r = cli("receive", "--as", "bob", "--wait", "0s", "--json")
    assert r.exit_code == 124, r.stderr  # nothing arrived within it
    cli.ok("send", "team", "here", "--as", "alice")
    got = cli.ok("receive", "--as", "bob", "--wait", "30s", "--json").json()["messages"]
    assert [m["content"] for m in got] == ["here"]


def test_query_wait_takes_a_unit(cli, team):
    r = cli("query", "team", "anyone?", "--as", "alice", "--wait", "100ms")
    assert r.exit_code == 124
    assert "within 0.1s" in r.stderr


def test_tick_every_and_max_seconds_take_units(cli, team):
    r = cli("tick", "--every", "100ms", "--max-seconds", "0s")
    assert r.exit_code == 0, r.stderr


def test_messages_since_a_relative_compound_time(cli, team):
    with freeze_time("2026-11-27T10:00:00Z"):
        cli.ok("send", "team", "old", "--as", "alice")
    with freeze_time("2026-11-27T12:00:00Z"):
        cli.ok("send", "team", "new", "--as", "alice")
        got = cli.ok("messages", "--channel", "team", "--since", "-1h30m", "--json").json()[
            "messages"
        ]
        assert [m["content"] for m in got] == ["new"]
        got = cli.ok("messages", "--channel", "team", "--since", "-PT3H", "--json").json()[
            "messages"
        ]
        assert sorted(m["content"] for m in got) == ["new", "old"]


@pytest.mark.parametrize(
    ("args", "field", "value"),
    [
        (("send", "team", "x", "--as", "alice", "--delay=-5s"), "delay", "-5s"),
        (("send", "team", "x", "--as", "alice", "--ttl", "P1M"), "ttl", "P1M"),
        (("send", "team", "x", "--as", "alice", "--delay", "5 parsecs"), "delay", "5 parsecs"),
        (("send", "team", "x", "--as", "alice", "--deliver-at", "soon"), "deliver_at", "soon"),
        (("receive", "--as", "bob", "--wait", "1x"), "wait", "1x"),
        (("receive", "--as", "bob", "--wait=-1s"), "wait", "-1s"),
        (("query", "team", "q", "--as", "alice", "--wait", "30m1h"), "wait", "30m1h"),
        (("query", "team", "q", "--as", "alice", "--timeout", "PT"), "timeout", "PT"),
        (
            ("channel", "create", "c2", "--as", "alice", "--ack-timeout", "1h1h"),
            "ack_timeout",
            "1h1h",
        ),
        (("tick", "--every", "1s", "--max-seconds", "forever"), "max_seconds", "forever"),
        (("messages", "--since", "-1y"), "since", "-1y"),
    ],
)
def test_a_bad_duration_or_time_is_exit_3_naming_it_and_stores_nothing(
    cli, team, args, field, value
):
    before = snapshot(team)
    r = cli(*args, "--json")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert r.error["code"] == "validation_failed"
    assert r.error["field"] == field and r.error["value"] == value
    assert repr(value) in r.error["message"]
    forms = clock.TIME_FORMS if field in ("deliver_at", "since") else "1h30m"
    assert forms in r.error["message"]
    assert snapshot(team) == before


@pytest.mark.parametrize(
    "command",
    [
        ("send",),
        ("receive",),
        ("query",),
        ("channel", "create"),
        ("tick",),
        ("nack",),
        ("deadletter", "purge"),
    ],
)
def test_every_duration_option_says_its_forms_in_help(cli, command):
    text = " ".join(cli.ok(*command, "--help").stdout.split())
    assert "1h30m" in text and "PT1H30M" in text and "a bare number is seconds" in text
