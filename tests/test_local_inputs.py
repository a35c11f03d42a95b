"""Local inputs that once broke acomm for everyone: a time past the year 9999 (refused, and a
stored one still read), a `--grep` pattern that backtracks for minutes (matched in linear time),
and exports readable by every user (owner-only, like the store). Through the command line and
the MCP toolbox, on real stores."""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from conftest import query, snapshot

from acomm_cli import clock
from acomm_cli.mcpserver import tools
from acomm_cli.output import (
    render_acks,
    render_channels,
    render_deadletters,
    render_messages,
    render_operations,
)

pytestmark = pytest.mark.cli

FAR = 9_000_000_000_000_000_000  # ms: a row written before times were bounded
LATEST = "9999-12-31T23:59:59.999Z"
EARLIEST = "0001-01-01T00:00:00.000Z"


def _toolbox(store: Path, agent: str) -> tools.Toolbox:
    return tools.Toolbox(
        tools.StoreOptions(path=store),
        agent,
        tools.Encoders(
            message=render_messages.message_doc,
            send=render_messages.send_doc,
            channel=render_channels.channel_doc,
            dead_letter=render_deadletters.dead_letter_doc,
            stats=render_operations.stats_doc,
            ack=render_acks.ack_doc,
            nack=render_acks.nack_doc,
        ),
    )


# ---------------------------------------------------------------- times and durations


@pytest.mark.parametrize(
    ("args", "field", "value"),
    [
        (("send", "team", "x", "--as", "alice", "--delay", "99999999999d"), "delay", None),
        (("send", "team", "x", "--as", "alice", "--delay", "9" * 400), "delay", None),
        (("send", "team", "x", "--as", "alice", "--ttl", "365001d"), "ttl", "365001d"),
        (
            ("send", "team", "x", "--as", "alice", "--deliver-at", "253402300800000"),
            "deliver_at",
            "253402300800000",
        ),
        (  # 10:00 UTC on 1 January 10000
            ("send", "team", "x", "--as", "alice", "--deliver-at", "9999-12-31T23:00:00-11:00"),
            "deliver_at",
            "9999-12-31T23:00:00-11:00",
        ),
        (  # each bound alone is fine; the expiry they give is past the year 9999
            ("send", "team", "x", "--as", "alice", "--deliver-at", LATEST, "--ttl", "1s"),
            "ttl",
            None,
        ),
        (("receive", "--as", "bob", "--wait", "31536000001"), "wait", "31536000001"),
        (("receive", "--as", "bob", "--wait", "inf"), "wait", "inf"),
        (("messages", "--since", "+99999999999d"), "since", None),
        (("messages", "--until", "999999999999999999"), "until", "999999999999999999"),
        (
            ("channel", "create", "c2", "--as", "alice", "--ack-timeout", "99999999999d"),
            "ack_timeout",
            "99999999999d",
        ),
    ],
)
def test_a_time_or_duration_past_the_bounds_is_refused_and_changes_nothing(
    cli, team, args, field, value
):
    before = snapshot(team)
    r = cli(*args, "--json")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert r.error["code"] == "validation_failed"
    assert r.error["field"] == field
    if value is not None:
        assert r.error["value"] == value
    assert snapshot(team) == before


def test_a_config_duration_past_the_bound_is_refused(cli, team):
    r = cli("messages", "--json", env={"ACOMM_BUSY_TIMEOUT": str(clock.MAX_DURATION_MS + 1)})
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert r.error["field"] == "store.busy_timeout"


def test_the_bounds_themselves_are_accepted(cli, team):
    mid = cli.ok("send", "team", "last", "--as", "alice", "--deliver-at", LATEST).stdout.strip()
    assert cli.ok("show", mid, "--json").json()["deliver_at"] == LATEST
    mid = cli.ok("send", "team", "long", "--as", "alice", "--delay", "365000d").stdout.strip()
    assert query(team, "SELECT deliver_at - created_at FROM messages WHERE id = ?", int(mid)) == [
        (clock.MAX_DURATION_MS,)
    ]


@pytest.fixture
def far_row(cli, team) -> Iterator[Path]:
    """A message and its delivery with times far past the year 9999 (and before the year 1),
    written straight into the store as an older acomm let them in."""
    cli.ok("send", "team", "from the far future", "--as", "alice")
    cli.ok("send", "team", "an ordinary one", "--as", "alice")
    import sqlite3

    c = sqlite3.connect(team)
    with c:
        c.execute("UPDATE messages SET created_at = ?, expires_at = ? WHERE id = 1", (FAR, FAR))
        c.execute("UPDATE deliveries SET delivered_at = ? WHERE message_id = 1", (FAR,))
        c.execute("UPDATE messages SET created_at = ? WHERE id = 2", (-FAR,))
    c.close()
    yield team


def test_a_stored_far_future_time_still_lists_and_shows(cli, far_row):
    doc = cli.ok("messages", "--json").json()
    created = {m["id"]: m["created_at"] for m in doc["messages"]}
    assert created == {1: LATEST, 2: EARLIEST}
    assert cli.ok("show", "1", "--json").json()["content"] == "from the far future"
    assert "from the far future" in cli.ok("show", "1").stdout
    assert "an ordinary one" in cli.ok("messages").stdout
    assert len(cli.ok("receive", "--as", "bob", "--peek", "--json").json()["messages"]) == 2


def test_a_stored_far_future_time_still_reads_through_mcp(far_row):
    box = _toolbox(far_row, "bob")
    docs = box.messages()["messages"]
    assert {m["id"]: m["created_at"] for m in docs} == {1: LATEST, 2: EARLIEST}
    assert len(box.receive(peek=True)["messages"]) == 2
    assert box.show(message_id=1)["content"] == "from the far future"


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_stored_far_future_time_still_exports(cli, far_row, tmp_path, fmt):
    out = tmp_path / "ex"
    cli.ok("export", str(out), "--format", fmt)
    assert (out / "messages" / "date=9999-12-31").is_dir()
    assert (out / "messages" / "date=0001-01-01").is_dir()
    if fmt == "jsonl":
        rows = [
            json.loads(line)
            for f in sorted((out / "messages").rglob("*.jsonl"))
            for line in f.read_text().splitlines()
        ]
        got = {r["id"]: (r["created_at"], r["expires_at"]) for r in rows}
        assert got == {1: (LATEST, LATEST), 2: (EARLIEST, None)}
    else:
        table = ds.dataset(out / "messages", format="parquet", partitioning="hive").to_table()
        got = {r["id"]: r for r in table.to_pylist()}
        assert got[1]["created_at"].year == 9999
        assert got[2]["content"] == "an ordinary one"


# ---------------------------------------------------------------- --grep


def test_a_catastrophic_pattern_is_answered_promptly_and_correctly(cli, team):
    """`^(a+)+$` backtracks exponentially in Python's re (41 characters: minutes)."""
    cli.ok("send", "team", "a" * 40 + "b", "--as", "alice")
    cli.ok("send", "team", "a" * 41, "--as", "alice")
    start = time.monotonic()
    doc = cli.ok("messages", "--grep", "^(a+)+$", "--json").json()
    got = cli.ok("receive", "--as", "bob", "--peek", "--grep", "^(a+)+$", "--json").json()
    assert time.monotonic() - start < 10
    assert [m["content"] for m in doc["messages"]] == ["a" * 41]
    assert [m["content"] for m in got["messages"]] == ["a" * 41]


def test_the_mcp_grep_argument_is_bounded_too(team, cli):
    cli.ok("send", "team", "a" * 60 + "!", "--as", "alice")
    box = _toolbox(team, "bob")
    start = time.monotonic()
    assert box.messages(grep="^(a|aa)+$")["messages"] == []
    assert box.receive(peek=True, grep="(x+x+)+y")["messages"] == []
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    ("pattern", "matches"),
    [
        (r"^error \d+$", ["error 42"]),
        ("(?i)^error ", ["error 42", "Error 7"]),
        (r"\bdisk\b", ["warning: disk full"]),
        ("(?P<word>full|42)$", ["error 42", "warning: disk full"]),
        ("café", ["café au lait"]),
    ],
)
def test_ordinary_patterns_match_as_before(cli, team, pattern, matches):
    for body in ("error 42", "Error 7", "warning: disk full", "café au lait"):
        cli.ok("send", "team", body, "--as", "alice")
    doc = cli.ok("messages", "--grep", pattern, "--json").json()
    assert sorted(m["content"] for m in doc["messages"]) == sorted(matches)


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)b", "(?<!x)y"])
def test_a_pattern_that_needs_backtracking_is_refused_naming_it(cli, team, pattern):
    r = cli("messages", "--grep", pattern, "--json")
    assert r.exit_code == 3, (r.stdout, r.stderr)
    assert r.error["field"] == "grep" and r.error["value"] == pattern
    assert "bounded time" in r.error["message"]
    assert "re2.cc" not in r.stderr  # RE2's own log line is not shown


# ---------------------------------------------------------------- exports are owner-only


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")]
    }


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_an_export_is_owner_only_whatever_the_umask(cli, team, tmp_path, umask_022, fmt):
    cli.ok("send", "team", "secret", "--as", "alice")
    out = tmp_path / "new" / "ex"
    cli.ok("export", str(out), "--format", fmt)
    modes = _modes(tmp_path / "new")
    assert any(k.endswith("manifest.json") for k in modes)
    assert any(k.startswith("ex/messages/date=") and "part-" in k for k in modes)
    for rel, mode in modes.items():
        p = tmp_path / "new" / rel
        assert mode == (0o700 if p.is_dir() else 0o600), (rel, oct(mode))


def test_an_export_narrows_what_an_older_export_left_open(cli, team, tmp_path, umask_022):
    cli.ok("send", "team", "secret", "--as", "alice")
    out = tmp_path / "ex"
    out.mkdir(mode=0o755)
    cli.ok("export", str(out))
    for p in [out / "manifest.json", out / "messages", *(out / "messages").rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    cli.ok("send", "team", "another", "--as", "alice")
    cli.ok("export", str(out))  # rewrites the manifest and the unsettled chunk
    modes = _modes(out)
    assert modes["."] == 0o755  # the directory named by the user keeps its mode
    assert modes["manifest.json"] == 0o600
    assert modes["messages"] == 0o700
    for rel, mode in modes.items():
        if rel.startswith("messages/"):
            assert mode == (0o700 if (out / rel).is_dir() else 0o600), rel
