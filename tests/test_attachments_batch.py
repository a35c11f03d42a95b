"""`send --batch` lines with files: `attach` (a list of paths) takes the checks and limits of
`send --attach`; a directory, a FIFO, an unreadable file or one past the limits refuses the
whole batch before anything is written, naming the line and the field."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from conftest import query, snapshot

pytestmark = pytest.mark.cli


@pytest.fixture
def people(cli, store):
    cli.ok("agent", "register", "bob", "--kind", "human")
    return store


def _batch(tmp_path: Path, *lines: dict) -> Path:
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _line(content: str, **extra) -> dict:
    return {"to": "bob", "from": "alice", "content": content, **extra}


def test_batch_lines_attach_files_with_format_and_subject(cli, people, tmp_path):
    report = tmp_path / "report.md"
    report.write_bytes(b"# green\n")
    data = bytes(range(256))
    (tmp_path / "sub").mkdir()
    blob = tmp_path / "sub" / "raw.bin"
    blob.write_bytes(data)
    batch = _batch(
        tmp_path,
        _line("**see**", format="markdown", subject="Build", attach=[str(report), str(blob)]),
        _line("no files"),
        _line("the report again", attach=[str(report)]),
    )
    first, plain, again = (int(x) for x in cli.ok("send", "--batch", str(batch)).stdout.split())
    doc = cli.ok("show", str(first), "--json").json()
    assert (doc["format"], doc["subject"]) == ("markdown", "Build")
    assert [(a["name"], a["size"], a["sha256"]) for a in doc["attachments"]] == [
        ("raw.bin", 256, hashlib.sha256(data).hexdigest()),
        ("report.md", 8, hashlib.sha256(b"# green\n").hexdigest()),
    ]
    assert cli.ok("show", str(plain), "--json").json()["attachments"] == []
    got = cli.ok("attachment", "get", str(again), "report.md", "--as", "bob").stdout
    assert got == "# green\n"
    assert query(people, "SELECT count(*) FROM attachments") == [(2,)]  # report.md once


def _refused(cli, store: Path, batch: Path) -> dict:
    before = snapshot(store)
    r = cli("send", "--batch", str(batch), "--json")
    assert r.exit_code != 0, r.stdout
    assert snapshot(store) == before
    return {"exit": r.exit_code, **r.error}


def test_a_directory_fifo_or_unreadable_file_refuses_the_batch(cli, people, tmp_path):
    ok = tmp_path / "ok.txt"
    ok.write_text("fine")
    (tmp_path / "adir").mkdir()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes to it: a blocking open would hang the batch
    bad = [(str(tmp_path / "adir"), "directory"), (str(fifo), "FIFO"), (str(tmp_path / "no"), "")]
    if os.geteuid() != 0:  # root reads a file whatever its mode
        locked = tmp_path / "locked.txt"
        locked.write_text("secret")
        locked.chmod(0)
        bad.append((str(locked), ""))
    for path, why in bad:
        batch = _batch(tmp_path, _line("first", attach=[str(ok)]), _line("x", attach=[path]))
        err = _refused(cli, people, batch)
        assert (err["exit"], err["field"], err["line"]) == (3, "attach", 2), path
        assert err["message"].startswith("line 2: attach:") and why in err["message"]


def test_files_past_the_limits_refuse_the_batch_with_exit_6(cli, people, tmp_path, monkeypatch):
    monkeypatch.setenv("ACOMM_MAX_ATTACHMENT_BYTES", "10")
    monkeypatch.setenv("ACOMM_MAX_MESSAGE_ATTACHMENT_BYTES", "15")
    ten, also, over = (tmp_path / n for n in ("ten.txt", "also.txt", "over.txt"))
    ten.write_bytes(b"x" * 10)
    also.write_bytes(b"y" * 10)
    over.write_bytes(b"z" * 11)
    err = _refused(cli, people, _batch(tmp_path, _line("a", attach=[str(over)])))
    assert (err["exit"], err["code"], err["field"], err["line"]) == (
        6,
        "attachment_too_large",
        "attach",
        1,
    )
    assert err["limit"] == 10
    # the limit on a message's files together holds per line, not per batch
    err = _refused(
        cli, people, _batch(tmp_path, _line("a"), _line("b", attach=[str(ten), str(also)]))
    )
    assert (err["exit"], err["line"], err["limit"]) == (6, 2, 15)
    lines = _batch(tmp_path, _line("a", attach=[str(ten)]), _line("b", attach=[str(also)]))
    assert len(cli.ok("send", "--batch", str(lines)).stdout.split()) == 2


@pytest.mark.parametrize(
    ("attach", "field"),
    [
        ("one.txt", "attach"),  # a list, not a string
        ([1], "attach"),
        (["a/one.txt", "b/one.txt"], "attach"),  # two files of one name
    ],
)
def test_a_bad_attach_value_is_refused_naming_the_line(cli, people, tmp_path, attach, field):
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "one.txt").write_text(d)
    if isinstance(attach, list) and all(isinstance(p, str) for p in attach):
        attach = [str(tmp_path / p) for p in attach]
    err = _refused(cli, people, _batch(tmp_path, _line("ok"), _line("x", attach=attach)))
    assert (err["exit"], err["field"], err["line"]) == (3, field, 2)


def test_batch_with_attach_on_the_command_line_is_a_usage_error(cli, people, tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    r = cli("send", "--batch", str(_batch(tmp_path, _line("x"))), "--attach", str(f), "--json")
    assert (r.exit_code, r.error["field"]) == (2, "batch")  # a usage error
    assert "attach on its lines" in r.error["message"]
