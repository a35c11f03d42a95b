"""What a suppressed resend reports: `deduplicated` and the recipients it was
suppressed for, so that a script can tell a duplicate from "nobody was there to get it"."""

from __future__ import annotations

import json

import pytest
from conftest import query
from freezegun import freeze_time

pytestmark = pytest.mark.cli

T0 = "2026-01-01 00:00:00"


def _send(cli, *args: str) -> dict:
    return cli.ok(
        "send", "once", "x", "--correlation-id", "job-1", "--as", "p", *args, "--json"
    ).json()


def test_an_exactly_once_resend_says_it_was_deduplicated_and_for_whom(cli, store):
    cli.ok(
        "channel",
        "create",
        "once",
        "--as",
        "p",
        "--delivery",
        "exactly-once",
        "--ack-timeout",
        "10s",
    )
    cli.ok("channel", "join", "once", "--as", "p", "w")
    cli.ok("channel", "join", "once", "--as", "p", "v")
    with freeze_time(T0) as clock:
        first = _send(cli)
        assert (first["recipients"], first["deduplicated"], first["suppressed"]) == (
            ["v", "w"],
            False,
            [],
        )
        clock.tick(5)
        again = _send(cli)
        assert (again["recipients"], again["deduplicated"], again["suppressed"]) == (
            [],
            True,
            ["v", "w"],
        )
        assert again["status"] == "sent"
        # nobody there is not a duplicate: a send that reaches nobody is refused
        cli.ok("channel", "create", "empty", "--as", "p", "--delivery", "exactly-once")
        alone = cli("send", "empty", "x", "--correlation-id", "job-1", "--as", "p", "--json")
        assert alone.exit_code == 5 and alone.error["code"] == "no_recipient"
        # a newcomer gets it; those who had it are named
        cli.ok("channel", "join", "once", "--as", "p", "u")
        mixed = _send(cli)
        assert (mixed["recipients"], mixed["deduplicated"], mixed["suppressed"]) == (
            ["u"],
            True,
            ["v", "w"],
        )
        # past twice the ack timeout it is a new message for everyone again
        clock.tick(20)
        later = _send(cli)
        assert (later["recipients"], later["deduplicated"], later["suppressed"]) == (
            ["u", "v", "w"],
            False,
            [],
        )
    # the resends are recorded (history), never delivered to those they were suppressed for
    assert (
        query(store, "SELECT count(*) FROM deliveries WHERE message_id = ?", again["id"])[0][0] == 0
    )


def test_a_batch_and_a_dedupe_key_report_the_same_way(cli, store, tmp_path):
    cli.ok("channel", "create", "once", "--as", "p", "--delivery", "exactly-once")
    cli.ok("channel", "join", "once", "--as", "p", "w")
    line = {"channel": "once", "from": "p", "content": "x", "correlation_id": "job-2"}
    batch = tmp_path / "b.jsonl"
    batch.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    docs = cli.ok("send", "--batch", str(batch), "--json").json()["results"]
    assert [(d["recipients"], d["deduplicated"], d["suppressed"]) for d in docs] == [
        (["w"], False, []),
        ([], True, ["w"]),
    ]
    # a dedupe key: nothing new is created; the first message's recipients are named
    first = cli.ok("send", "once", "y", "--dedupe-key", "k", "--as", "p", "--json").json()
    again = cli.ok("send", "once", "y", "--dedupe-key", "k", "--as", "p", "--json").json()
    assert again["id"] == first["id"]
    assert (again["recipients"], again["deduplicated"], again["suppressed"]) == (["w"], True, ["w"])
