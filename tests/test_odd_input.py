"""Bad bytes and odd input are validation failures (exit 3 or usage 2), never internal errors,
and leave the store as it was."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import ACOMM, query, snapshot

pytestmark = pytest.mark.cli


@pytest.fixture
def team(make_channel):
    make_channel("team", "alice", "bob")
    return make_channel("news", "alice", type="pubsub")


def run_bytes(
    *args: str | bytes,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """The installed acomm with raw bytes on argv and stdin, as a shell passes them."""
    return subprocess.run(
        [ACOMM, *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def one_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    assert text.count("\n") == 1 and text.endswith("\n"), text
    return text


# ------------------------------------------------------------------------ invalid UTF-8

BAD = b"a\xffb"


@pytest.mark.parametrize(
    ("args", "stdin", "field"),
    [
        ((b"send", b"team", b"--as", b"alice"), BAD, "content"),
        ((b"send", b"team", b"-", b"--as", b"alice"), BAD, "content"),
        ((b"send", b"team", BAD, b"--as", b"alice"), b"", "content"),
        ((b"send", b"--to", b"bob", BAD, b"--as", b"alice"), b"", "content"),
        ((b"send", b"team\xff", b"hi", b"--as", b"alice"), b"", "channel"),
        ((b"send", b"team", b"hi", b"--as", b"alice\xff"), b"", "sender"),
        ((b"send", b"team", b"hi", b"--as", b"alice", b"--topic", b"x\xff"), b"", "topic"),
        (
            (b"send", b"team", b"hi", b"--as", b"alice", b"--dedupe-key", b"k\xff"),
            b"",
            "dedupe_key",
        ),
        ((b"send", b"team", b"hi", b"--as", b"alice", b"--meta", b"k=\xff"), b"", "metadata"),
        ((b"publish", b"news", b"build.ok", BAD, b"--as", b"alice"), b"", "content"),
        ((b"query", b"team", BAD, b"--as", b"alice"), b"", "content"),
        ((b"channel", b"create", b"c\xff", b"--as", b"alice"), b"", "channel"),
        ((b"messages", b"--channel", b"team\xff"), b"", "channel"),
        ((b"receive", b"--as", b"bob", b"--since", b"\xff"), b"", "since"),
    ],
    ids=lambda v: v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v),
)
@pytest.mark.process
def test_invalid_utf8_is_a_validation_failure_naming_the_field(store, team, args, stdin, field):
    before = snapshot(store)
    r = run_bytes(*args, stdin=stdin)
    assert r.returncode == 3, r.stderr
    line = one_line(r.stderr)
    assert line.startswith(f"acomm: error: validation_failed: {field}: not valid UTF-8"), line
    assert snapshot(store) == before
    r = run_bytes("--json", *args, stdin=stdin)
    assert r.returncode == 3
    err = json.loads(one_line(r.stderr))["error"]
    assert (err["code"], err["field"]) == ("validation_failed", field)
    assert snapshot(store) == before


@pytest.mark.process
@pytest.mark.parametrize(
    "line",
    [
        b'{"channel": "team", "from": "alice", "content": "a\xffb"}',  # a raw byte
        b'{"channel": "team", "from": "alice", "content": "a\\udcffb"}',  # a lone surrogate escape
        b'{"channel": "team", "from": "alice", "content": "ok", "metadata": {"k": ["\\ud800"]}}',
        b'{"channel": "team\xff", "from": "alice", "content": "ok"}',
        b'{"to": "bob\xff", "from": "alice", "content": "ok"}',
    ],
)
def test_invalid_utf8_in_a_batch_line_names_the_line(store, team, tmp_path, line):
    good = b'{"channel": "team", "from": "alice", "content": "fine"}'
    batch = tmp_path / "b.jsonl"
    batch.write_bytes(good + b"\n" + line + b"\n")
    before = snapshot(store)
    for source, stdin in ((str(batch), b""), ("-", batch.read_bytes())):
        r = run_bytes("send", "--batch", source, stdin=stdin)
        assert r.returncode == 3, r.stderr
        assert "line 2: " in one_line(r.stderr) and "not valid UTF-8" in r.stderr.decode()
        assert snapshot(store) == before  # all or nothing: line 1 is not sent either


@pytest.mark.process
def test_a_deeply_nested_batch_line_is_refused(store, team):
    before = snapshot(store)
    r = run_bytes("send", "--batch", "-", stdin=b"[" * 100_000 + b"\n")
    assert r.returncode == 3, r.stderr
    assert "line 1: nested too deeply" in one_line(r.stderr)
    assert snapshot(store) == before


@pytest.mark.process
def test_nul_bytes_in_content_are_kept_intact(cli, store, team):
    """NUL is valid UTF-8: the store keeps a body with NULs whole (no SQL function acomm
    uses on content stops at one), and it reads back byte for byte."""
    body = "a\x00b\x00"
    r = run_bytes("send", "team", "--as", "alice", stdin=body.encode())
    assert r.returncode == 0, r.stderr
    mid = int(r.stdout)
    assert query(store, "SELECT content FROM messages WHERE id = ?", mid) == [(body,)]
    got = cli.ok("--json", "receive", "--as", "bob").json()["messages"]
    assert [m["content"] for m in got] == [body]
    assert run_bytes("show", str(mid), "--json").stdout.count(b"a\\u0000b\\u0000") == 1


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("channel", "create", "c\x00", "--as", "alice"), "channel"),
        (("send", "team", "hi", "--as", "ali\x00ce"), "sender"),
        (("send", "team", "hi", "--as", "alice", "--topic", "a\x00"), "topic"),
        (("subscribe", "news", "a.\x00", "--as", "bob"), "pattern"),
    ],
)
def test_nul_in_a_name_is_refused(cli, store, team, args, field):
    before = snapshot(store)
    r = cli(*args)
    assert r.exit_code == 3, r.stderr
    assert r.stderr.startswith(f"acomm: error: validation_failed: {field}: ")
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("channel", "create", "team2\n", "--as", "alice"), "channel"),
        (("channel", "join", "team", "--as", "alice", "carol\n"), "agent"),
        (("send", "team", "hi", "--as", "alice\n"), "sender"),
        (("send", "team", "hi", "--as", "alice", "--topic", "a.b\n"), "topic"),
        (("subscribe", "news", "a.b\n", "--as", "bob"), "pattern"),
        (("send", "team", "hi", "--as", "alice", "--correlation-id", "c1\n"), "correlation_id"),
    ],
)
def test_a_trailing_newline_does_not_slip_through_a_name_rule(cli, store, team, args, field):
    """`^...$` also matched "name\\n": names are matched whole."""
    before = snapshot(store)
    r = cli(*args)
    assert r.exit_code == 3, r.stderr
    assert r.stderr.startswith(f"acomm: error: validation_failed: {field}: ")
    assert snapshot(store) == before


# -------------------------------------------------------------------------- config file


@pytest.mark.process
def test_a_deeply_nested_config_file_is_refused_naming_the_file(store, team, tmp_path):
    cfg = tmp_path / "deep.yaml"
    cfg.write_text("store:\n  flush: " + "[" * 5000 + "]" * 5000 + "\n")
    before = snapshot(store)
    r = run_bytes("--config", str(cfg), "send", "team", "hi", "--as", "alice")
    assert r.returncode == 3, r.stderr
    line = one_line(r.stderr)
    assert line.startswith(f"acomm: error: validation_failed: config: {cfg} is nested too")
    assert snapshot(store) == before


@pytest.mark.process
@pytest.mark.parametrize("text", ["store: [1, 2\n", "store:\n\tflush: batch\n"])
def test_a_config_file_that_is_not_yaml_is_one_line_of_error(store, team, tmp_path, text):
    cfg = tmp_path / "broken.yaml"
    cfg.write_text(text)
    r = run_bytes("--config", str(cfg), "send", "team", "hi", "--as", "alice")
    assert r.returncode == 3, r.stderr
    assert one_line(r.stderr).startswith(
        f"acomm: error: validation_failed: config: {cfg} is not valid YAML: "
    )


@pytest.mark.process
def test_a_config_file_that_is_not_utf8_is_refused_naming_the_file(store, team, tmp_path):
    cfg = tmp_path / "bad.yaml"
    cfg.write_bytes(b"store:\n  flush: \xff\n")
    r = run_bytes("--config", str(cfg), "send", "team", "hi", "--as", "alice")
    assert r.returncode == 3, r.stderr
    assert one_line(r.stderr).startswith(
        f"acomm: error: validation_failed: config: {cfg} is not valid UTF-8"
    )


# -------------------------------------------------------------------- ASCII digits only


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (("send", "team", "hi", "--as", "alice", "--priority", "\uff11"), 3),
        (("send", "team", "hi", "--as", "alice", "--priority", "\u0663"), 3),  # Arabic-Indic 3
        (("send", "team", "hi", "--as", "alice", "--priority", "h\u0131gh"), 3),  # upper(): HIGH
        (("send", "team", "hi", "--as", "alice", "--delay", "\uff11s"), 3),
        (("send", "team", "hi", "--as", "alice", "--deliver-at", "\uff11\uff17\uff10\uff10"), 3),
        (("receive", "--as", "bob", "--limit", "\uff11"), 2),
        (("receive", "--as", "bob", "--limit", "1_0"), 2),
        (("receive", "--as", "bob", "--wait", "\uff11"), 3),  # a duration, as --delay is
        (("receive", "--as", "bob", "--priority-min", "\uff12"), 3),
        (("messages", "--since", "-\uff11h"), 3),
        (("show", "\uff11"), 2),
        (("channel", "create", "c2", "--as", "alice", "--max-message-size", "\uff11KiB"), 3),
        (("channel", "create", "c2", "--as", "alice", "--max-retries", "\uff13"), 2),
        (("channel", "create", "c2", "--as", "alice", "--ack-timeout", "\uff13\uff10s"), 3),
    ],
)
def test_only_ascii_digits_are_numbers(cli, store, team, args, status):
    before = snapshot(store)
    r = cli(*args)
    assert r.exit_code == status, (r.exit_code, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert snapshot(store) == before


def test_only_ascii_digits_in_batch_lines_and_config(cli, store, team, monkeypatch):
    before = snapshot(store)
    line = {"channel": "team", "from": "alice", "content": "x", "priority": "\uff12"}
    r = cli("send", "--batch", "-", input=json.dumps(line) + "\n")
    assert r.exit_code == 3 and "line 1: priority:" in r.stderr
    line = {"channel": "team", "from": "alice", "content": "x", "delay": "\uff12s"}
    r = cli("send", "--batch", "-", input=json.dumps(line) + "\n")
    assert r.exit_code == 3 and "line 1: delay:" in r.stderr
    monkeypatch.setenv("ACOMM_BATCH_MESSAGES", "\uff11\uff10")
    r = cli("send", "team", "x", "--as", "alice")
    assert r.exit_code == 3 and "store.batch_messages" in r.stderr
    monkeypatch.setenv("ACOMM_BATCH_MESSAGES", "10")
    monkeypatch.setenv("ACOMM_BUSY_TIMEOUT", "\uff15\uff10\uff10\uff10")
    r = cli("send", "team", "x", "--as", "alice")
    assert r.exit_code == 3 and "store.busy_timeout" in r.stderr
    assert snapshot(store) == before
    monkeypatch.setenv("ACOMM_BUSY_TIMEOUT", " 5000 ")  # ASCII digits still are numbers
    cli.ok("send", "team", "x", "--as", "alice", "--priority", " 2")


@pytest.mark.parametrize("value", ["\x85", "a\u2028b", "\u2029"])
def test_a_json_error_quoting_a_line_separator_stays_one_line(cli, store, team, value):
    """Found by tests/test_malformed_inputs.py: with ensure_ascii=False, U+0085, U+2028 and
    U+2029 went out raw, and readers that split lines on them saw two lines."""
    r = cli("--json", "send", "team", "hi", "--as", "alice", "--delay", value)
    assert r.exit_code == 3
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert json.loads(r.stderr)["error"]["value"] == value
