"""Every listing takes the same output options (--json, --jsonl, --csv, --tsv,
--no-headers), documents its columns in --help, and refuses two formats at once; -q and -v;
the help text's usage lines. Through the command line, on real stores."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest
from conftest import Cli, run, snapshot

pytestmark = pytest.mark.cli

# every listing, with what it needs to list something (or nothing) on a fresh store
LISTINGS = [
    ["channel", "list"],
    ["subscriptions", "ci"],
    ["messages"],
    ["receive", "--as", "bob"],
    ["thread", "CORR"],
    ["deadletter", "list"],
    ["stats"],
    ["doctor"],
    ["config", "show"],
    ["receipts"],
    ["invite", "list"],
    ["task", "list"],
    ["token", "list"],
    ["capability", "list"],
    ["incident", "list"],
]


@pytest.fixture
def busy(cli: Cli, team: Path) -> Path:
    """`team` with two messages whose bodies need quoting, a pubsub `ci` with a subscription,
    and a query's thread."""
    cli.ok("send", "team", "hi, there", "--as", "alice")
    cli.ok("send", "team", 'two\nlines\tand "quotes"', "--as", "bob")
    cli.ok("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    cli.ok("subscribe", "ci", "build.#", "--as", "bob")
    cli.ok("query", "team", "status?", "--as", "alice")
    return team


def _documented(cli: Cli, argv: list[str]) -> list[str]:
    """The column names a listing's --help lists (after `Columns:`)."""
    text = cli.ok(*argv, "--help").stdout
    block = text.split("Columns:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("argv", LISTINGS, ids=" ".join)
def test_every_listing_writes_the_columns_its_help_documents(argv, cli, busy):
    corr = cli.ok("messages", "--type", "query", "--json").json()["messages"][0]
    argv = [corr["correlation_id"] if a == "CORR" else a for a in argv]
    names = _documented(cli, argv)
    for fmt, dialect in (("--csv", "excel"), ("--tsv", "excel-tab")):
        r = cli.ok(*argv, fmt)
        rows = list(csv.reader(io.StringIO(r.stdout), dialect=dialect))
        assert rows[0] == names, fmt
        assert all(len(row) == len(names) for row in rows[1:]), fmt
        headless = cli.ok(fmt, "--no-headers", *argv).stdout  # global: before the command too
        if argv[0] != "receive":  # receive marks read: the second run lists nothing
            assert headless == r.stdout.split("\n", 1)[1]


def test_csv_quotes_what_needs_quoting_and_reads_back(cli, busy):
    r = cli.ok("messages", "--channel", "team", "--csv", "--sort", "id", "--order", "asc")
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [row["content"] for row in rows] == ["hi, there", 'two\nlines\tand "quotes"', "status?"]
    assert rows[0]["from"] == "alice" and rows[0]["created_at"].endswith("Z")


def test_tsv_has_a_header_row_and_the_plain_piped_lines_stay_as_they_were(cli, busy):
    plain = cli.ok("channel", "list").stdout
    tsv = cli.ok("channel", "list", "--tsv").stdout
    assert tsv.split("\n", 1)[0] == "id\tname\ttype\tstate\towner\tdelivery\tparticipants"
    assert tsv.split("\n", 1)[1] == plain  # no header when piped without --tsv, as before


def test_jsonl_prints_the_items_of_the_json_document_one_a_line(cli, busy):
    doc = cli.ok("messages", "--json").json()
    lines = cli.ok("messages", "--jsonl").stdout.splitlines()
    assert [json.loads(line) for line in lines] == doc["messages"]
    channels = cli.ok("channel", "list", "--json").json()["channels"]
    assert [
        json.loads(x) for x in cli.ok("--jsonl", "channel", "list").stdout.splitlines()
    ] == channels
    # a listing without a document per row: each row keyed by its documented columns
    rows = [json.loads(x) for x in cli.ok("stats", "--jsonl").stdout.splitlines()]
    assert list(rows[0]) == _documented(cli, ["stats"])


def test_receive_jsonl_still_prints_what_it_printed(cli, busy):
    """`receive --jsonl` was a receive option; now the global one: the same lines."""
    lines = cli.ok("receive", "--as", "bob", "--jsonl", "--peek").stdout.splitlines()
    doc = cli.ok("receive", "--as", "bob", "--json", "--peek").json()
    assert [json.loads(x) for x in lines] == doc["messages"]


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--json", "--csv"], ("--json", "--csv")),
        (["--csv", "--tsv"], ("--csv", "--tsv")),
        (["--jsonl", "--json"], ("--json", "--jsonl")),
    ],
)
def test_two_formats_are_refused_naming_both(cli, busy, flags, named):
    before = snapshot(busy)
    r = cli("receive", "--as", "bob", *flags)
    assert r.exit_code == 2
    for flag in named:
        assert flag in r.stderr
    assert r.stdout == "" and snapshot(busy) == before  # nothing marked read


def test_no_headers_needs_csv_or_tsv(cli, busy):
    r = cli("messages", "--no-headers")
    assert r.exit_code == 2 and "--no-headers" in r.stderr and "--csv" in r.stderr


@pytest.mark.process
def test_a_command_that_prints_no_rows_refuses_a_row_format(cli, busy):
    before = snapshot(busy)
    r = cli("send", "team", "hello", "--as", "alice", "--csv")
    assert r.exit_code == 2
    assert "--csv is for listings" in r.stderr and "acomm send" in r.stderr
    assert snapshot(busy) == before  # refused before anything was sent
    r = run("send", "team", "hello", "--as", "alice", "--jsonl", env={"ACOMM_STORE": str(busy)})
    assert r.returncode == 2 and "--jsonl is for listings" in r.stderr
    assert snapshot(busy) == before


def test_json_output_of_a_listing_is_unchanged(cli, busy):
    """The --json documents are a contract: the same keys in the same order."""
    doc = cli.ok("channel", "list", "--json").json()
    assert list(doc) == ["channels"]
    assert list(doc["channels"][0]) == [
        "id",
        "name",
        "type",
        "owner",
        "state",
        "created_at",
        "config",
        "participants",
    ]
    doc = cli.ok("messages", "--json").json()
    assert list(doc) == ["messages", "total_count", "has_more"]


# ---------------------------------------------------------------- -q and -v


def test_quiet_silences_notes_but_not_errors(cli, busy):
    noisy = cli.ok("channel", "join", "team", "bob", "--as", "alice")
    assert "acomm: note:" in noisy.stderr
    assert cli.ok("-q", "channel", "join", "team", "bob", "--as", "alice").stderr == ""
    assert cli.ok("channel", "join", "team", "bob", "--as", "alice", "--quiet").stderr == ""
    r = cli("-q", "send", "nowhere", "hi", "--as", "alice")
    assert r.exit_code == 4 and "acomm: error:" in r.stderr


@pytest.mark.process
def test_verbose_says_which_store_and_config_and_how_long(busy):
    r = run("-v", "channel", "list", env={"ACOMM_STORE": str(busy)})
    assert r.returncode == 0
    lines = r.stderr.splitlines()
    assert lines[0] == f"acomm: verbose: store {busy} ($ACOMM_STORE)"
    assert lines[1] == f"acomm: verbose: config {busy.parent / 'config.yaml'}"
    assert re.fullmatch(r"acomm: verbose: store opened in \d+\.\d ms", lines[2])
    assert re.fullmatch(r"acomm: verbose: done in \d+\.\d ms", lines[-1])
    assert r.stdout == run("channel", "list", env={"ACOMM_STORE": str(busy)}).stdout


def test_quiet_and_verbose_together_are_refused(cli, busy):
    r = cli("-q", "-v", "stats")
    assert r.exit_code == 2 and "--quiet" in r.stderr and "--verbose" in r.stderr


# ---------------------------------------------------------------- help text


def test_usage_lines_name_arguments_without_braces_and_say_which_take_several(cli):
    docs = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()
    usage = [line for line in docs.splitlines() if line.startswith("Usage:")]
    assert usage and not [line for line in usage if "{" in line]
    assert "Usage: acomm audit [OPTIONS] EXPORTS..." in usage
    assert "Usage: acomm publish [OPTIONS] CHANNEL TOPIC [BODY]" in usage
    assert "Usage: acomm show [OPTIONS] MSG" in cli.ok("show", "--help").stdout
    assert "--batch FILE" in cli.ok("send", "--help").stdout
    assert "--conf KEY=VALUE" in cli.ok("audit", "--help").stdout
    assert _documented(cli, ["audit"]) == ["kind", "subject", "metric", "value"]


@pytest.mark.process
def test_send_without_arguments_asks_for_the_channel_first(cli, store):
    r = run("send", input="", env={"ACOMM_STORE": str(store)})
    assert r.returncode == 2
    assert "name a channel" in r.stderr and "--as" not in r.stderr.split("name a channel")[0]


def test_an_acknowledgment_takes_an(cli, team):
    r = cli("send", "team", "ok", "--as", "bob", "--type", "ack", "--correlation-id", "nope")
    assert r.exit_code == 3
    assert "an acknowledgment needs the correlation id" in r.stderr


def test_peers_is_a_listing_too(cli, store):
    cli.ok("node", "init", "--id", "na")
    cli.ok("peers", "add", "nb", "--url", "store:elsewhere.acomm")
    rows = list(csv.reader(io.StringIO(cli.ok("peers", "--csv").stdout)))
    assert rows[0] == _documented(cli, ["peers"])
    assert rows[1][0] == "nb" and rows[1][1].endswith("elsewhere.acomm")
    assert rows[1][2] == "false"  # online: JSON's spelling
    assert cli.ok("peers", "--json").json()["peers"][0]["node"] == "nb"  # as it was
    r = cli("peers", "add", "nc", "--url", "store:x", "--csv")  # the verb prints no rows
    assert r.exit_code == 2 and "acomm peers add" in r.stderr


@pytest.mark.process
def test_follow_writes_the_header_row_once(cli, team):
    """`messages --follow --csv`: the header, the history, then each new message as a row."""
    import os
    import select
    import signal
    import subprocess
    import time

    from conftest import ACOMM

    cli.ok("send", "team", "before", "--as", "alice")
    follower = subprocess.Popen(
        [ACOMM, "messages", "--follow", "--channel", "team", "--csv"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    fd, buf = follower.stdout.fileno(), b""

    def line() -> str:
        nonlocal buf
        deadline = time.monotonic() + 20
        while b"\n" not in buf:
            ready, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
            assert ready, "nothing printed in time"
            data = os.read(fd, 65536)
            assert data, "the follower exited"
            buf += data
        first, buf = buf.split(b"\n", 1)
        return first.decode()

    try:
        assert line() == ",".join(_documented(cli, ["messages"]))
        assert line().split(",")[8] == "before"
        assert run("send", "team", "after", "--as", "bob").returncode == 0
        assert line().split(",")[8] == "after"  # a row, no second header
    finally:
        follower.send_signal(signal.SIGINT)
        follower.wait(timeout=10)
    assert follower.returncode == 0
