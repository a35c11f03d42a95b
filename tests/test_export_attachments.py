"""Rich messages in export and audit: the messages dataset's `format` and `subject`, the
`attachments` dataset (what files messages name, never their bytes), and the audit's
attachment volume per channel and content type and its messages per format."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from datetime import datetime

import pyarrow.compute  # imported before freezegun fakes datetime
import pyarrow.dataset as ds
import pyarrow.fs  # noqa: F401
import pyarrow.parquet as pq
import pytest
from conftest import query
from freezegun import freeze_time

from acomm_cli.analytics import audit
from acomm_cli.analytics.datasets import DATASET_VERSION
from acomm_cli.output import render, render_analytics

pytestmark = pytest.mark.cli

T0 = datetime(2026, 1, 1, 10, 0, 0)
NOTES = b"the notes\n"
BLOB = bytes(range(256)) * 4


@pytest.fixture
def exported(cli, make_channel, tmp_path):
    """alice (an agent) sends bob (a person) a markdown DM with two files, then the team a
    plain message carrying the same notes (stored once) and one with a subject only."""
    store = make_channel("team", "alice", "bob")
    cli.ok("agent", "update", "bob", "--kind", "human")
    notes, blob = tmp_path / "notes.txt", tmp_path / "data.bin"
    notes.write_bytes(NOTES)
    blob.write_bytes(BLOB)
    out = tmp_path / "export"
    with freeze_time(T0):
        dm = cli.ok(
            "send", "--to", "bob", "--format", "markdown", "--subject", "Plan",
            "--attach", str(notes), "--attach", str(blob), "**read**", "--as", "alice",
        ).stdout.strip()  # fmt: skip
        team = cli.ok("send", "team", "again", "--attach", str(notes), "--as", "alice").stdout
        titled = cli.ok("send", "team", "hi", "--subject", "Hello", "--as", "alice").stdout
        cli.ok("export", out)
    return store, out, int(dm), int(team), int(titled)


def _read(out, dataset: str) -> list[dict]:
    return ds.dataset(out / dataset, format="parquet", partitioning="hive").to_table().to_pylist()


def test_the_export_carries_formats_subjects_and_the_files_named(exported):
    store, out, dm, team, titled = exported
    man = json.loads((out / "manifest.json").read_text())
    assert man["dataset_version"] == DATASET_VERSION >= 6
    assert man["rows"]["attachments"] == 3
    messages = {m["id"]: m for m in _read(out, "messages")}
    assert (messages[dm]["format"], messages[dm]["subject"]) == ("markdown", "Plan")
    assert (messages[team]["format"], messages[team]["subject"]) == ("text", None)
    assert (messages[titled]["format"], messages[titled]["subject"]) == ("text", "Hello")
    files = sorted(_read(out, "attachments"), key=lambda r: (r["message_id"], r["name"]))
    assert [
        (r["message_id"], r["channel"], r["name"], r["sha256"], r["size"], r["content_type"])
        for r in files
    ] == [
        (dm, "_dm:alice:bob", "data.bin", hashlib.sha256(BLOB).hexdigest(), 1024,
         "application/octet-stream"),
        (dm, "_dm:alice:bob", "notes.txt", hashlib.sha256(NOTES).hexdigest(), 10, "text/plain"),
        (team, "team", "notes.txt", hashlib.sha256(NOTES).hexdigest(), 10, "text/plain"),
    ]  # fmt: skip
    assert str(files[0]["date"]) == "2026-01-01"
    # never the bytes: no column holds them, and no file of the export contains them
    assert set(files[0]) == {
        "message_id", "channel_id", "channel", "name", "sha256", "size", "content_type",
        "created_at", "exported_at", "date",
    }  # fmt: skip
    assert not any(BLOB[:64] in p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert query(store, "SELECT count(*) FROM attachments") == [(2,)]


@pytest.mark.spark
def test_the_audit_counts_files_and_formats(spark, exported, tmp_path, capsys):
    _store, out, _dm, _team, _titled = exported
    result = audit.run([str(out)], out=str(tmp_path / "audit"), spark=spark)
    volume = result.summary["attachments"]["volume"]
    assert [
        (r["channel"], r["content_type"], r["files"], r["bytes"], r["messages"], r["blobs"])
        for r in volume
    ] == [
        ("_dm:alice:bob", "application/octet-stream", 1, 1024, 1, 1),
        ("_dm:alice:bob", "text/plain", 1, 10, 1, 1),
        ("team", "text/plain", 1, 10, 1, 1),
    ]
    formats = {r["format"]: r for r in result.summary["attachments"]["formats"]}
    assert set(formats) == {"markdown", "text"}
    assert (formats["markdown"]["messages"], formats["markdown"]["with_subject"]) == (1, 1)
    assert formats["markdown"]["with_files"] == 1
    # text: the team's two messages and the acks/notices none of which has a subject or file
    assert (formats["text"]["with_subject"], formats["text"]["with_files"]) == (1, 1)
    table = pq.read_table(result.tables["attachment_volume"]).to_pylist()
    assert sum(r["bytes"] for r in table) == 1044
    # piped: a line per row led by its kind; --csv: long rows
    render_analytics.audit_summary(render.Output(), result)
    lines = capsys.readouterr().out.splitlines()
    assert any(x.startswith("attachments\t") and "\tteam\ttext/plain\t1\t10\t" in x for x in lines)
    assert any(x.startswith("formats\t") and "\tmarkdown\t1\t1\t1" in x for x in lines)
    render_analytics.audit_summary(render.Output(table="csv"), result)
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert any(r[0] == "attachments" and r[1].endswith("/team/text/plain") for r in rows)
