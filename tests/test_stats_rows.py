"""`stats --csv/--tsv/--jsonl` carry every fact `stats --json` carries."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time

from acomm_cli.engine import opening
from acomm_cli.store import counters, write
from tests.capfixtures import published

pytestmark = pytest.mark.cli

# How each section of the --json document becomes rows: a list of objects is one row per
# item of that kind (its first field the row's `name`, every other field the column of its
# name); one object of facts is one row per fact (`name` the fact, `total` its value).
LISTS = {"agents": "agent", "channels": "channel", "queues": "queue"}
FACTS = {
    "store": "store",
    "bridge": "bridge",
    "tasks": "task",
    "incidents": "incidents",
    "federation": "federation",
    "counters": "counters",
}


@pytest.fixture
def full(cli, store, make_channel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store where every stats section has something: agents and channels (one a work
    queue), inbox files pending, a failed mirror write, a bad response file, tasks in several
    states and an open incident."""
    dirs = {k: tmp_path / "claude" / k for k in ("inbox", "outbox", "teams")}
    for k, d in dirs.items():
        monkeypatch.setenv(f"ACOMM_BRIDGE_{k.upper()}_DIR", str(d))
    make_channel("team", "alice", "bob")
    make_channel("queue", "boss", "w1", type="queue")
    make_channel("ci", "boss", type="pubsub")
    inbox = dirs["teams"] / "crew" / "inboxes"
    inbox.mkdir(parents=True)
    (inbox / "w.json").write_bytes(b'[{"half')  # never overwritten: a write to retry
    with freeze_time("2030-01-01T00:00:00Z") as frozen:
        cli.ok("channel", "join", "team", "--as", "alice", "w@crew")
        cli.ok("send", "team", "one", "--as", "alice")  # bob's inbox file, w's failed write
        cli.ok("send", "queue", "job", "--as", "boss")
        cli.ok("subscribe", "ci", "job.#", "--group", "builders", "--as", "w1")
        cli.ok("publish", "ci", "job.run", "build", "--as", "boss")  # waits for the pool
        bad = dirs["outbox"] / "bob"
        bad.mkdir(parents=True)
        (bad / "r.json").write_text("{not json")
        cli.ok("tick")
        published(cli, tmp_path, "carol")
        cli.ok("task", "create", "--capability", "review", "PR 1", "--as", "alice")
        task = cli.ok("task", "create", "--to", "bob", "PR 2", "--as", "alice", "--json").json()[
            "id"
        ]
        cli.ok("task", "accept", str(task), "--eta", "1h", "--as", "bob")
        frozen.tick(timedelta(minutes=11))  # review's 10 m ETA passed: an incident
        cli.ok("tick")
        frozen.tick(timedelta(seconds=30))
    conn = opening.connect(store, create=False)
    try:  # what a send whose trace collector was down leaves (tests/test_otlp_hops.py)
        with write(conn):
            counters.add(conn, "otlp.spans_dropped", 3)
    finally:
        conn.close()
    return store


def _csv(text: str, delimiter: str = ",") -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text), delimiter=delimiter))


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _expected(doc: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(kind, name, column, value) of every fact of the document; a section this test does
    not know fails it, so a new one cannot be left out of the rows unnoticed."""
    facts = []
    assert set(doc) == set(LISTS) | set(FACTS) | {"pools"}, "a new stats section: give it rows"
    for p in doc["pools"]:  # a worker pool's row: waiting as `unclaimed`, claimed as `pending`
        name = f"{p['channel']}/{p['group']}"
        facts += [("pool", name, "unclaimed", _cell(p["waiting"]))]
        facts += [("pool", name, "pending", _cell(p["claimed"]))]
    for section, kind in LISTS.items():
        for item in doc[section]:
            name, *fields = item
            facts += [(kind, _cell(item[name]), f, _cell(item[f])) for f in fields]
    for section, kind in FACTS.items():
        facts += [(kind, k, "total", _cell(v)) for k, v in doc[section].items()]
    return facts


def test_every_json_fact_is_in_the_csv_tsv_and_jsonl_rows(cli, full):
    with freeze_time("2030-01-01T00:11:30Z"):
        doc = cli.ok("stats", "--json").json()
        csv_rows = _csv(cli.ok("stats", "--csv").stdout)
        tsv_rows = _csv(cli.ok("stats", "--tsv").stdout, "\t")
        jsonl = [json.loads(x) for x in cli.ok("stats", "--jsonl").stdout.splitlines()]
    # the store has every section filled, so nothing passes for want of rows
    assert all(doc[s] for s in LISTS) and doc["bridge"]["mirror_backlog"] > 0
    assert doc["bridge"]["bad_files"] == 1 and doc["incidents"]["open"] == 1
    assert doc["counters"] == {"otlp.spans_dropped": 3}
    assert any(c.get("unclaimed") == 1 for c in doc["channels"])
    assert doc["pools"] == [{"channel": "ci", "group": "builders", "waiting": 1, "claimed": 0}]
    assert tsv_rows == csv_rows
    assert [{k: _cell(v) for k, v in r.items()} for r in jsonl] == csv_rows
    by_key = {(r["kind"], r["name"]): r for r in csv_rows}
    assert len(by_key) == len(csv_rows), "two rows for one (kind, name)"
    expected = _expected(doc)
    for kind, name, column, value in expected:
        assert (kind, name) in by_key, f"no {kind} row {name!r} in stats --csv"
        assert column in by_key[kind, name], f"no column {column!r} in stats --csv"
        assert by_key[kind, name][column] == value, (kind, name, column)
    # and no row says anything the document does not
    assert {(k, n) for k, n, _, _ in expected} == set(by_key)


def test_the_rows_scripts_read_are_as_they_were(cli, full):
    """Rows are only added after the old ones: agents, channels, inbox queues and the task
    states with tasks come first, in their old shape, as the piped lines do."""
    with freeze_time("2030-01-01T00:11:30Z"):
        rows = list(csv.reader(io.StringIO(cli.ok("stats", "--csv", "--no-headers").stdout)))
    kinds = [r[0] for r in rows]
    first_new = next(i for i, r in enumerate(rows) if r[0] == "task" and r[2] == "0")
    assert set(kinds[first_new:]) == {
        "task",
        "store",
        "bridge",
        "incidents",
        "federation",
        "counters",
    }
    assert "store" not in kinds[:first_new] and all(len(r) == 15 for r in rows)
    [queue] = [r for r in rows[:first_new] if r[:2] == ["queue", "bob"]]
    assert queue[2:12] == [""] * 10 and int(queue[12]) > 0 and int(queue[13]) >= 690
    assert ["task", "incident", "1", *[""] * 12] in rows[:first_new]
    st = {r[1]: r[2] for r in rows if r[0] == "store"}
    assert list(st) == ["path", "bytes", "wal_bytes", "messages"]
    assert Path(st["path"]).resolve() == full.resolve() and int(st["bytes"]) > 0
