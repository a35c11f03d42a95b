"""The basic round trip through the command line."""

import pytest
from conftest import run

pytestmark = pytest.mark.process


def test_group_round_trip(cli, store):
    assert cli.ok("channel", "create", "team", "--as", "alice").stdout.strip().isdigit()
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    mid = int(cli.ok("send", "team", "hello bob", "--as", "alice").stdout)
    got = cli.ok("receive", "--as", "bob", "--json").json()
    assert [m["id"] for m in got["messages"]] == [mid]
    assert got["messages"][0]["delivery"]["state"] == "read"
    assert cli.ok("receive", "--as", "bob", "--json").json()["total_count"] == 0


def test_subprocess_send_reads_stdin(store):
    assert run("channel", "create", "team", "--as", "alice").returncode == 0
    assert run("channel", "join", "team", "--as", "alice", "bob").returncode == 0
    sent = run("send", "team", "--as", "alice", input="from stdin\n")
    assert sent.returncode == 0, sent.stderr
    out = run("receive", "--as", "bob", "--body")
    assert out.stdout == "from stdin\n"
