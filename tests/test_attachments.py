"""Rich direct messages: a format and a subject, files carried content-addressed (send
--attach, attachment list|get), refusals before anything is written, compact removing the
blobs no message names, the kinds at both ends of a direct message, markdown on a terminal
only."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest
from conftest import query, snapshot

from acomm_cli.output import render

pytestmark = pytest.mark.cli


@pytest.fixture
def people(cli, store):
    """bob and dana are people; alice and carol agents (alice registered on first use)."""
    cli.ok("agent", "register", "bob", "--kind", "human")
    cli.ok("agent", "register", "dana", "--kind", "human")
    cli.ok("agent", "register", "carol", "--kind", "agent")
    return store


def _file(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _send(cli, *args: str) -> int:
    return int(cli.ok("send", *args).stdout.strip())


def test_a_file_round_trips_byte_for_byte_with_its_hash(cli, people, tmp_path):
    data = bytes(range(256)) * 40
    src = _file(tmp_path, "blob.bin", data)
    mid = _send(cli, "--to", "bob", "--attach", str(src), "see attached", "--as", "alice")
    doc = cli.ok("show", str(mid), "--json").json()
    assert doc["attachments"] == [
        {
            "name": "blob.bin",
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "content_type": "application/octet-stream",
        }
    ]
    out = tmp_path / "got" / "copy.bin"
    out.parent.mkdir()
    got = cli.ok("attachment", "get", str(mid), "blob.bin", "-o", str(out), "--as", "bob")
    assert out.read_bytes() == data
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert "sha256" in got.stderr
    assert [p.name for p in out.parent.iterdir()] == ["copy.bin"]  # no temporary file left
    listed = cli.ok("attachment", "list", str(mid), "--as", "bob", "--json").json()
    assert [a["name"] for a in listed["attachments"]] == ["blob.bin"]
    # to stdout: the bytes as they are
    txt = _file(tmp_path, "notes.txt", "héllo\nworld\n".encode())
    mid2 = _send(cli, "--to", "bob", "--attach", str(txt), "notes", "--as", "alice")
    assert cli.ok("attachment", "get", str(mid2), "notes.txt", "--as", "bob").stdout == (
        "héllo\nworld\n"
    )
    assert cli.ok("show", str(mid2), "--json").json()["attachments"][0]["content_type"] == (
        "text/plain"
    )


def test_the_same_file_twice_is_stored_once(cli, people, tmp_path):
    src = _file(tmp_path, "report.txt", b"the same bytes")
    for n in range(2):
        _send(cli, "--to", "bob", "--attach", str(src), f"copy {n}", "--as", "alice")
    assert query(people, "SELECT count(*) FROM attachments") == [(1,)]
    assert query(people, "SELECT count(*) FROM message_attachments") == [(2,)]


def test_get_writes_nothing_over_an_existing_file_unless_forced(cli, people, tmp_path):
    src = _file(tmp_path, "a.txt", b"new bytes")
    mid = _send(cli, "--to", "bob", "--attach", str(src), "x", "--as", "alice")
    target = _file(tmp_path, "target.txt", b"keep me")
    r = cli("attachment", "get", str(mid), "a.txt", "-o", str(target), "--as", "bob", "--json")
    assert r.exit_code == 5 and r.error["field"] == "output"
    assert target.read_bytes() == b"keep me"
    cli.ok("attachment", "get", str(mid), "a.txt", "-o", str(target), "--force", "--as", "bob")
    assert target.read_bytes() == b"new bytes"


def test_only_a_participant_gets_a_file_and_names_must_exist(cli, people, tmp_path):
    src = _file(tmp_path, "a.txt", b"private")
    mid = _send(cli, "--to", "bob", "--attach", str(src), "x", "--as", "alice")
    out = str(tmp_path / "out")
    r = cli("attachment", "get", str(mid), "a.txt", "-o", out, "--as", "carol", "--json")
    assert (r.exit_code, r.error["code"]) == (5, "not_participant")
    assert not os.path.exists(out)
    r = cli("attachment", "get", str(mid), "a.txt", "--as", "carol")
    assert r.exit_code == 5 and r.stdout == ""
    r = cli("attachment", "list", str(mid), "--as", "carol", "--json")
    assert r.exit_code == 5
    r = cli("attachment", "get", str(mid), "b.txt", "-o", out, "--as", "bob", "--json")
    assert (r.exit_code, r.error["field"]) == (4, "name")
    r = cli("attachment", "get", "999", "a.txt", "-o", out, "--as", "bob", "--json")
    assert (r.exit_code, r.error["field"]) == (4, "message")


def test_bytes_that_no_longer_match_their_hash_are_never_written(cli, people, tmp_path):
    import sqlite3

    src = _file(tmp_path, "a.txt", b"original")
    mid = _send(cli, "--to", "bob", "--attach", str(src), "x", "--as", "alice")
    c = sqlite3.connect(people)
    c.execute("UPDATE attachments SET data = ?", (b"tampered",))
    c.commit()
    c.close()
    out = tmp_path / "out.txt"
    r = cli("attachment", "get", str(mid), "a.txt", "-o", str(out), "--as", "bob", "--json")
    assert (r.exit_code, r.error["code"]) == (7, "attachment_corrupt")
    assert not out.exists()
    r = cli("attachment", "get", str(mid), "a.txt", "--as", "bob")
    assert r.exit_code == 7 and r.stdout == ""


# ---------------------------------------------------------------- refusals


def _refused(cli, store: Path, *args: str) -> dict:
    before = snapshot(store)
    r = cli("send", "--to", "bob", *args, "body", "--as", "alice", "--json")
    assert r.exit_code != 0, r.stdout
    assert snapshot(store) == before
    return {"exit": r.exit_code, **r.error}


def test_a_directory_is_refused_before_anything_is_written(cli, people, tmp_path):
    (tmp_path / "adir").mkdir()
    err = _refused(cli, people, "--attach", str(tmp_path / "adir"))
    assert (err["exit"], err["field"]) == (3, "attach")
    assert "directory" in err["message"]


def test_a_fifo_is_refused_without_blocking(cli, people, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes to it: a blocking open would hang the send
    err = _refused(cli, people, "--attach", str(fifo))
    assert (err["exit"], err["field"]) == (3, "attach")
    assert "FIFO" in err["message"]


def test_an_unreadable_or_missing_file_is_refused(cli, people, tmp_path):
    err = _refused(cli, people, "--attach", str(tmp_path / "missing.txt"))
    assert (err["exit"], err["field"]) == (3, "attach")
    src = _file(tmp_path, "a.txt", b"x")
    err = _refused(cli, people, "--attach", str(src / "under-a-file"))
    assert (err["exit"], err["field"]) == (3, "attach")
    if os.geteuid() != 0:  # root reads a file whatever its mode
        locked = _file(tmp_path, "locked.txt", b"secret")
        locked.chmod(0)
        err = _refused(cli, people, "--attach", str(locked))
        assert (err["exit"], err["field"]) == (3, "attach")
    # a file whose read fails after it opened (the kernel refuses reading it at offset 0)
    if Path("/proc/self/mem").exists():
        err = _refused(cli, people, "--attach", "/proc/self/mem")
        assert (err["exit"], err["field"]) == (3, "attach")


def test_a_file_over_the_limits_is_refused_with_exit_6(cli, people, tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_MAX_ATTACHMENT_BYTES", "10")
    monkeypatch.setenv("ACOMM_MAX_MESSAGE_ATTACHMENT_BYTES", "15")
    ok = _file(tmp_path, "ten.txt", b"x" * 10)
    over = _file(tmp_path, "eleven.txt", b"x" * 11)
    err = _refused(cli, people, "--attach", str(over))
    assert (err["exit"], err["code"], err["field"]) == (6, "attachment_too_large", "attach")
    assert err["limit"] == 10
    also = _file(tmp_path, "also.txt", b"y" * 10)
    err = _refused(cli, people, "--attach", str(ok), "--attach", str(also))
    assert (err["exit"], err["code"], err["limit"]) == (6, "attachment_too_large", 15)
    cli.ok("send", "--to", "bob", "--attach", str(ok), "at the limit", "--as", "alice")


def test_two_files_of_one_name_are_refused(cli, people, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = _file(tmp_path / "a", "same.txt", b"1")
    two = _file(tmp_path / "b", "same.txt", b"2")
    err = _refused(cli, people, "--attach", str(one), "--attach", str(two))
    assert (err["exit"], err["field"]) == (3, "attach")


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--format", "html"], "format"),
        (["--subject", ""], "subject"),
        (["--subject", "s" * 257], "subject"),
        (["--subject", "two\nlines"], "subject"),
    ],
)
def test_format_and_subject_are_checked(cli, people, args, field):
    err = _refused(cli, people, *args)
    assert (err["exit"], err["field"]) == (3, field)


def test_format_and_subject_are_stored_and_shown(cli, people):
    mid = _send(
        cli, "--to", "bob", "--format", "markdown", "--subject", "s" * 256, "# hi", "--as", "alice"
    )
    doc = cli.ok("show", str(mid), "--json").json()
    assert (doc["format"], doc["subject"]) == ("markdown", "s" * 256)
    plain = _send(cli, "--to", "bob", "no options", "--as", "alice")
    doc = cli.ok("show", str(plain), "--json").json()
    assert (doc["format"], doc["subject"], doc["attachments"]) == ("text", None, [])
    assert query(people, "SELECT format, subject FROM messages WHERE id = ?", plain) == [
        (None, None)
    ]


def test_batch_lines_carry_a_format_and_a_subject(cli, people, tmp_path):
    lines = tmp_path / "batch.jsonl"
    lines.write_text(
        '{"to": "bob", "from": "alice", "content": "**a**", "format": "markdown",'
        ' "subject": "one"}\n'
        '{"to": "bob", "from": "alice", "content": "plain"}\n'
    )
    first, second = (int(x) for x in cli.ok("send", "--batch", str(lines)).stdout.split())
    assert cli.ok("show", str(first), "--json").json()["subject"] == "one"
    assert cli.ok("show", str(second), "--json").json()["format"] == "text"
    lines.write_text('{"to": "bob", "from": "alice", "content": "x", "format": "rtf"}\n')
    r = cli("send", "--batch", str(lines), "--json")
    assert (r.exit_code, r.error["field"], r.error["line"]) == (3, "format", 1)


# ---------------------------------------------------------------- compact


def test_compact_removes_the_blobs_no_message_names(cli, people, make_channel, tmp_path):
    make_channel("team", "alice", "bob")
    only = _file(tmp_path, "only.txt", b"only in the first")
    shared = _file(tmp_path, "shared.txt", b"in both")
    gone = _send(
        cli, "team", "first", "--attach", str(only), "--attach", str(shared), "--as", "alice"
    )
    cli.ok("receive", "--as", "bob")  # read: terminal on an at-most-once channel
    kept = _send(cli, "team", "second", "--attach", str(shared), "--as", "alice")
    dry = cli.ok("compact", "--dry-run", "--json").json()
    assert dry["removed_attachments"] == 1
    assert query(people, "SELECT count(*) FROM attachments") == [(2,)]
    done = cli.ok("compact", "--json").json()
    assert (done["removed_messages"], done["removed_attachments"]) == (1, 1)
    assert query(people, "SELECT sha256 FROM attachments") == [
        (hashlib.sha256(b"in both").hexdigest(),)
    ]
    assert query(people, "SELECT count(*) FROM message_attachments WHERE message_id = ?", gone) == [
        (0,)
    ]
    got = cli.ok("attachment", "get", str(kept), "shared.txt", "--as", "bob").stdout
    assert got == "in both"
    assert cli.ok("compact", "--json").json()["removed_attachments"] == 0


# ---------------------------------------------------------------- direction


def test_a_direct_message_says_the_kinds_at_both_ends(cli, people, make_channel):
    pairs = {
        ("alice", "bob"): "A2U",
        ("bob", "alice"): "U2A",
        ("alice", "carol"): "A2A",
        ("bob", "dana"): "U2U",
    }
    for (sender, to), want in pairs.items():
        mid = _send(cli, "--to", to, "hi", "--as", sender)
        assert cli.ok("show", str(mid), "--json").json()["direction"] == want
    # in listings and the inbox too
    inbox = cli.ok("receive", "--as", "dana", "--json").json()["messages"]
    assert [m["direction"] for m in inbox] == ["U2U"]
    listed = cli.ok("messages", "--from", "alice", "--json").json()["messages"]
    assert sorted(m["direction"] for m in listed) == ["A2A", "A2U"]
    make_channel("team", "alice", "bob")
    mid = _send(cli, "team", "to a group", "--as", "alice")
    assert cli.ok("show", str(mid), "--json").json()["direction"] is None


def test_a_kind_changed_later_shows_on_read(cli, people):
    mid = _send(cli, "--to", "carol", "hi", "--as", "alice")
    assert cli.ok("show", str(mid), "--json").json()["direction"] == "A2A"
    cli.ok("agent", "update", "carol", "--kind", "human")
    assert cli.ok("show", str(mid), "--json").json()["direction"] == "A2U"


# ---------------------------------------------------------------- markdown


BODY = "# Heading\n\nsome **bold** text\n"


def test_markdown_is_rendered_on_a_terminal_only(cli, people, monkeypatch):
    mid = _send(cli, "--to", "bob", "--format", "markdown", BODY, "--as", "alice")
    piped = cli.ok("show", str(mid)).stdout
    assert piped.endswith("content:\n" + BODY)  # the text as it was sent
    assert cli.ok("show", str(mid), "--json").json()["content"] == BODY
    monkeypatch.setattr(render.Output, "tty", property(lambda self: True))
    shown = cli.ok("show", str(mid), "--no-color").stdout
    assert "bold" in shown and "**bold**" not in shown and "# Heading" not in shown
    assert "A2U" in shown
    text = _send(cli, "--to", "bob", "plain **not markdown**", "--as", "alice")
    assert "**not markdown**" in cli.ok("show", str(text), "--no-color").stdout


# ---------------------------------------------------------------- the mailbox bridge


def test_the_bridge_mirrors_files_beside_the_inbox_file(cli, people, tmp_path, monkeypatch):
    import json

    inbox = tmp_path / "claude" / "inbox"
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(inbox))
    src = _file(tmp_path, "plan.md", b"# plan\n")
    mid = _send(cli, "--to", "bob", "--attach", str(src), "see the plan", "--as", "alice")
    files = inbox / "bob" / f"{mid}.files"
    copy = files / "plan.md"
    assert copy.read_bytes() == b"# plan\n"
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    assert stat.S_IMODE(files.stat().st_mode) == 0o700
    doc = json.loads((inbox / "bob" / f"{mid}.json").read_text())
    assert doc["attachments"] == [
        {
            "name": "plan.md",
            "sha256": hashlib.sha256(b"# plan\n").hexdigest(),
            "size": 7,
            "content_type": "text/markdown",
            "path": str(copy),
        }
    ]
    plain = _send(cli, "--to", "bob", "no files", "--as", "alice")
    assert "attachments" not in json.loads((inbox / "bob" / f"{plain}.json").read_text())
    assert not (inbox / "bob" / f"{plain}.files").exists()
    cli.ok("receive", "--as", "bob")  # read: the mirror goes, files and all
    assert sorted(p.name for p in (inbox / "bob").iterdir()) == []


def test_a_dispatched_agent_reads_the_rich_parts_on_stdin(cli, people, tmp_path):
    import json

    from test_dispatch import agent_script, configure

    run = agent_script(tmp_path, "record.sh", 'cat > "$WORK/stdin.json"\n')
    configure(people, carol={"run": run})
    src = _file(tmp_path, "spec.md", b"# spec\n")
    _send(
        cli, "--to", "carol", "--format", "markdown", "--subject", "Spec", "--attach", str(src),
        "**read me**", "--as", "alice",
    )  # fmt: skip
    expected = cli.ok("receive", "--as", "carol", "--peek", "--json").json()["messages"][0]
    assert cli.ok("dispatch", "--json").json()["accepted"] == 1
    got = json.loads((tmp_path / "stdin.json").read_text())
    assert got == expected
    assert (got["format"], got["subject"], got["direction"]) == ("markdown", "Spec", "A2A")
    assert [a["name"] for a in got["attachments"]] == ["spec.md"]
