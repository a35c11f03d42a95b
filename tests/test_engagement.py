"""Engagement in `acomm show --json`: for each recipient, routed -> notified (a bridge
mirror, a dispatch run) -> engaged (read, ack, reply), with the time of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0, T1, T2 = "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:05.000Z", "2026-01-01T00:01:00.000Z"


def engagement(cli, mid: int) -> dict[str, dict]:
    doc = cli.ok("show", str(mid), "--json").json()
    return {e["recipient"]: e for e in doc["engagement"]}


def test_a_mirrored_recipient_is_notified_and_a_reader_is_engaged(
    cli, make_channel, tmp_path, monkeypatch
):
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(tmp_path / "inbox"))
    make_channel("team", "alice", "bob", "carol")
    with freeze_time(T0):
        mid = int(cli.ok("send", "team", "review this", "--as", "alice").stdout)
    seen = engagement(cli, mid)
    assert seen["carol"] == {
        "recipient": "carol",
        "state": "notified",
        "routed_at": T0,
        "notified_at": T0,
        "notified_by": "inbox",
        "engaged_at": None,
        "engaged_by": None,
    }
    assert seen["bob"]["state"] == "notified"
    with freeze_time(T2):
        cli.ok("receive", "--as", "bob")
    seen = engagement(cli, mid)
    assert (seen["bob"]["state"], seen["bob"]["engaged_at"], seen["bob"]["engaged_by"]) == (
        "engaged",
        T2,
        "read",
    )
    assert seen["bob"]["routed_at"] == T0
    assert seen["carol"]["state"] == "notified"  # doing nothing changes nothing
    assert "alice" not in seen  # the sender is no recipient


def test_a_dispatched_recipient_is_notified_and_one_left_alone_is_only_routed(
    cli, make_channel, tmp_path
):
    store = make_channel("team", "alice", "bob", "carol")
    run = tmp_path / "ok.sh"
    run.write_text("#!/bin/sh\ncat >/dev/null\n")
    run.chmod(0o755)
    (store.parent / "config.yaml").write_text(json.dumps({"agents": {"bob": {"run": str(run)}}}))
    with freeze_time(T0):
        mid = int(cli.ok("send", "team", "build it", "--as", "alice").stdout)
    assert {e["state"] for e in engagement(cli, mid).values()} == {"routed"}
    with freeze_time(T1):
        cli.ok("dispatch")
    seen = engagement(cli, mid)
    assert (seen["bob"]["notified_at"], seen["bob"]["notified_by"]) == (T1, "dispatch")
    assert seen["bob"]["state"] == "engaged"  # a run that exits 0 reads the message
    assert seen["carol"] == {
        "recipient": "carol",
        "state": "routed",
        "routed_at": T0,
        "notified_at": None,
        "notified_by": None,
        "engaged_at": None,
        "engaged_by": None,
    }


def test_an_ack_and_a_response_engage_their_senders(cli, make_channel):
    make_channel("jobs", "alice", "bob", "carol", delivery="at-least-once")
    with freeze_time(T0):
        mid = int(cli.ok("send", "jobs", "who can?", "--as", "alice", "--type", "query").stdout)
    corr = cli.ok("show", str(mid), "--json").json()["correlation_id"]
    with freeze_time(T1):
        cli.ok("ack", str(mid), "--as", "bob", "--status", "completed")
    with freeze_time(T2):
        cli.ok("respond", corr, "me", "--as", "carol")
    seen = engagement(cli, mid)
    assert (seen["bob"]["engaged_at"], seen["bob"]["engaged_by"]) == (T1, "ack")
    assert (seen["carol"]["engaged_at"], seen["carol"]["engaged_by"]) == (T2, "reply")


def test_piped_show_is_unchanged(cli, team: Path):
    mid = int(cli.ok("send", "team", "hi", "--as", "alice").stdout)
    out = cli.ok("show", str(mid)).stdout
    assert "engagement" not in out and "notified" not in out


def test_the_notified_time_outlives_the_mirror_a_read_takes_away(
    cli, make_channel, tmp_path, monkeypatch
):
    inbox = tmp_path / "inbox"
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(inbox))
    make_channel("team", "alice", "bob", "carol")
    with freeze_time(T0):
        mid = int(cli.ok("send", "team", "review this", "--as", "alice").stdout)
    assert (inbox / "bob" / f"{mid}.json").exists()
    with freeze_time(T2):
        cli.ok("receive", "--as", "bob")
    assert not (inbox / "bob" / f"{mid}.json").exists()  # the read took the mirror away
    seen = engagement(cli, mid)["bob"]
    assert (seen["notified_at"], seen["notified_by"]) == (T0, "inbox")
    assert (seen["state"], seen["engaged_at"]) == ("engaged", T2)


def test_a_team_inbox_entry_notifies_and_only_the_first_notice_is_kept(
    cli, make_channel, tmp_path, monkeypatch
):
    monkeypatch.setenv("ACOMM_BRIDGE_TEAMS_DIR", str(tmp_path / "teams"))
    store = make_channel("team", "alice", "bob@crew", "carol")
    run = tmp_path / "ok.sh"
    run.write_text("#!/bin/sh\ncat >/dev/null\n")
    run.chmod(0o755)
    (store.parent / "config.yaml").write_text(
        json.dumps({"agents": {"bob@crew": {"run": str(run)}}})
    )
    with freeze_time(T0):
        mid = int(cli.ok("send", "team", "build it", "--as", "alice").stdout)
    with freeze_time(T1):
        cli.ok("dispatch")  # a second notice, by a run: the first one stands
    seen = engagement(cli, mid)
    assert (seen["bob@crew"]["notified_at"], seen["bob@crew"]["notified_by"]) == (T0, "team")
    assert seen["bob@crew"]["state"] == "engaged"
    assert seen["carol"]["notified_at"] is None  # no team inbox for a plain name
