"""The everyday commands on the fast path (acomm_cli/cli/main.py) against Typer: ack, nack,
extend, query, respond, thread, messages, show, stats, tick, trace, cancel, deadletter,
cursor, schedule, subscribe, unsubscribe, subscriptions, receipts, flush, compact, doctor,
attachment, dispatch, export, audit, init and status. Each command line runs on copies of one
store at one frozen time, once through the `acomm` program and once through Typer alone: the
same bytes out, the same exit status, the same rows left (the store's directory and a new
query's random correlation id written as placeholders)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ACOMM
from test_fastpath import NOW, TYPER, _env, _run

from acomm_cli.cli import main as fastpath

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(
        shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
    ),
]

FAST, HANDED_OVER = True, False
TRACE = "5bf92f3577b34da6a3ce929d0e0e4737"  # every message of the base store's
CORR = "{corr}"  # the base store's query, asked by alice on team
CASES = [
    # ack: its ids are one argument of several words (the last: it takes every word left)
    (["ack", "1", "--as", "bob", "--json"], FAST),
    (["ack", "1", "3", "--status", "received", "--as", "bob"], FAST),
    (["ack", "99", "--as", "bob"], FAST),  # exit 4
    (["ack", "1", "x", "--as", "bob"], HANDED_OVER),  # click refuses the second id: exit 2
    (["ack", "--as", "bob"], HANDED_OVER),  # no id: click says it is missing
    # nack, extend
    (["nack", "1", "--as", "bob", "--requeue", "--json"], FAST),
    (["nack", "1", "--as", "bob", "--delay", "30s", "--reason", "busy"], FAST),
    (["nack", "99", "--as", "bob"], FAST),  # exit 4
    (["nack", "1", "--as", "bob", "--delay", "soon"], FAST),  # exit 3
    (["nack", "x", "--as", "bob"], HANDED_OVER),  # click refuses the id: exit 2
    (["extend", "1", "--by", "5m", "--as", "bob", "--json"], FAST),  # not held: exit 5
    (["extend", "99", "--by", "5m", "--as", "bob"], FAST),  # exit 4
    (["extend", "1", "--as", "bob"], HANDED_OVER),  # --by is required
    # query, respond, thread
    (["query", "team", "pool size?", "--as", "alice"], FAST),
    (["query", "team", "pool size?", "--as", "alice", "--json", "--priority", "high"], FAST),
    (["query", "--as", "alice"], FAST),  # no channel: exit 2
    (["query", "team", "q", "--as", "alice", "--meta", "final"], FAST),  # without --wait: 2
    (["query", "nowhere", "q", "--as", "alice"], FAST),  # exit 4
    (["query", "--help"], HANDED_OVER),
    (["respond", CORR, "twenty", "--as", "bob", "--json"], FAST),
    (["respond", CORR, "twenty", "--as", "bob", "-p", "urgent"], FAST),
    (["respond", "nope", "x", "--as", "bob"], FAST),  # exit 4
    (["respond"], HANDED_OVER),
    (["thread", CORR, "--json"], FAST),
    (["thread", CORR, "--csv"], FAST),
    (["thread", CORR, "extra"], HANDED_OVER),
    # messages, show
    (["messages"], FAST),
    (["messages", "--json"], FAST),
    (["messages", "--channel", "team", "--type", "command", "--limit", "1", "--jsonl"], FAST),
    (["messages", "--from", "alice", "--sort", "id", "--order", "asc", "--tsv"], FAST),
    (["messages", "--search", "two", "--json"], FAST),
    (["messages", "--follow", "--sort", "id"], FAST),  # exit 2
    (["messages", "--since", "yesterday"], FAST),  # exit 3
    (["messages", "--limit", "x"], HANDED_OVER),
    (["show", "1", "--json"], FAST),
    (["show", "1"], FAST),
    (["show", "99"], FAST),  # exit 4
    (["show", "1", "--csv"], HANDED_OVER),  # not a listing: Typer refuses the row format
    # stats, tick, trace, cancel
    (["stats", "--json"], FAST),
    (["stats", "--as", "bob"], FAST),
    (["stats", "--bogus"], HANDED_OVER),
    (["tick", "--json"], FAST),
    (["tick", "--no-dispatch"], FAST),
    (["tick", "--every", "never"], FAST),  # exit 3
    (["trace", TRACE, "--json"], FAST),
    (["trace", TRACE], FAST),
    (["trace", "not-a-trace"], FAST),  # exit 4
    (["trace"], HANDED_OVER),
    (["cancel", "6", "--as", "alice", "--json"], FAST),
    (["cancel", "1", "--as", "alice"], FAST),  # delivered already: refused
    (["cancel", "99", "--as", "alice"], FAST),  # exit 4
    (["cancel", "--help"], HANDED_OVER),
    # deadletter (bob nacked message 2)
    (["deadletter", "list", "--json"], FAST),
    (["deadletter", "list", "--csv", "--channel", "team"], FAST),
    (["deadletter", "show", "2", "--json"], FAST),
    (["deadletter", "show", "99"], FAST),  # exit 4
    (["deadletter", "replay", "2", "--json"], FAST),
    (["deadletter", "replay", "--all", "--dry-run", "--json"], FAST),
    (["deadletter", "replay"], FAST),  # neither an id nor --all: exit 2
    (["deadletter", "discard", "2", "--json"], FAST),
    (["deadletter", "purge", "--older-than", "0s", "--json"], FAST),
    (["deadletter", "purge", "--older-than", "later"], FAST),  # exit 3
    (["deadletter", "purge"], HANDED_OVER),  # --older-than is required
    (["dead-letters", "list"], HANDED_OVER),  # the alias is Typer's
    # cursor (alice's `audit` on team)
    (["cursor", "create", "c2", "--channel", "team", "--from-start", "--as", "alice"], FAST),
    (["cursor", "create", "c3", "-c", "team", "--from-id", "2", "--json"], FAST),
    (["cursor", "create", "audit", "--channel", "team"], FAST),  # exists: refused
    (["cursor", "create", "c4"], HANDED_OVER),  # --channel is required
    (["cursor", "list", "--json"], FAST),
    (["cursor", "show", "audit", "--json"], FAST),
    (["cursor", "show", "nope"], FAST),  # exit 4
    (["cursor", "seek", "audit", "--from-now", "--json"], FAST),
    (["cursor", "delete", "audit", "--json"], FAST),
    # schedule (alice's schedule 1 on team)
    (["schedule", "create", "team", "hourly", "--every", "1h", "--as", "alice", "--json"], FAST),
    (["schedule", "create", "team", "x", "--as", "alice"], FAST),  # no --every, --cron: 2
    (["schedule", "list", "--json"], FAST),
    (["schedule", "show", "1"], FAST),
    (["schedule", "show", "99", "--json"], FAST),  # exit 4
    (["schedule", "pause", "1", "--as", "alice", "--json"], FAST),
    (["schedule", "pause", "1", "--as", "bob"], FAST),  # not its sender: refused
    (["schedule", "resume", "1", "--as", "alice"], FAST),
    (["schedule", "delete", "1", "--as", "alice", "--json"], FAST),
    (["schedule", "pause", "x", "--as", "alice"], HANDED_OVER),  # exit 2
    # subscribe, unsubscribe, subscriptions (bob has `#` on pubsub ci)
    (["subscribe", "ci", "build.*", "--as", "alice", "--json"], FAST),
    (["subscribe", "nowhere", "#", "--as", "bob"], FAST),  # exit 4
    (["unsubscribe", "ci", "#", "--as", "bob", "--json"], FAST),
    (["unsubscribe", "ci", "--as", "bob", "--delete"], FAST),  # --delete needs --group: 2
    (["subscriptions", "ci", "--json"], FAST),
    (["subscriptions", "ci", "--tsv", "--no-headers"], FAST),
    (["subscriptions"], HANDED_OVER),
    # receipts, flush, compact, doctor
    (["receipts", "--json"], FAST),
    (["receipts", "--status", "nonsense"], FAST),  # exit 3
    (["receipts", "--limit", "-"], HANDED_OVER),
    (["flush", "--json"], FAST),
    (["compact", "--dry-run", "--json"], FAST),
    (["compact", "--older-than", "0s"], FAST),
    (["compact", "--older-than", "ages"], FAST),  # exit 3
    (["doctor", "--json"], FAST),
    (["doctor", "--quick"], FAST),
    (["doctor", "--quik"], HANDED_OVER),
    # attachment (message 7 carries notes.txt)
    (["attachment", "list", "7", "--as", "bob", "--json"], FAST),
    (["attachment", "get", "7", "notes.txt", "--as", "bob"], FAST),
    (["attachment", "get", "7", "notes.txt", "--as", "bob", "--json"], FAST),  # needs -o: 2
    (["attachment", "get", "7", "nope.txt", "--as", "bob"], FAST),  # exit 4
    (["attachment", "list"], HANDED_OVER),
    # dispatch: a group with options of its own, which the fast path does not read
    # dispatch: a group with options of its own, whose body runs alone (a pass)
    (["dispatch", "rules"], FAST),
    (["dispatch", "rules", "--json"], FAST),
    (["dispatch", "--dry-run", "--json"], FAST),
    (["dispatch", "--dry-run", "--max", "5", "--agent", "nobody"], FAST),  # exit 3
    (["dispatch", "--max", "x"], HANDED_OVER),  # click refuses the number: exit 2
    (["dispatch", "--agent", "a", "rules"], HANDED_OVER),  # the group's option, then its sub
    (["dispatch", "rulez"], HANDED_OVER),  # no such subcommand: exit 2
    # export (to a file beside the store), audit (its files: one argument of several words)
    (["export", "out.jsonl", "--format", "jsonl", "--json"], FAST),
    (["export", "out.jsonl", "--format", "jsonl", "--since", "later"], FAST),  # exit 3
    (["export"], HANDED_OVER),
    (["audit", "out.jsonl", "--conf", "nokey"], FAST),
    # init, status
    (["init", "--json"], FAST),  # the store exists: a note, left as it was
    (["init", "sub", "--json"], FAST),
    (["status", "--json"], FAST),
    (["status"], FAST),
    (["status", "--csv"], HANDED_OVER),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """team (alice, bob): messages 1-3 to bob, read; 2 nacked by bob (a dead letter, and
    4, its notice to alice); 5, alice's query (its correlation id in the file `corr`); 6
    delayed an hour; 7 with the file notes.txt; all in one trace (TRACE). Pubsub ci (bob
    subscribed to `#`), alice's cursor `audit` and her schedule 1 on team."""
    d = tmp_path_factory.mktemp("fastpath-ops")
    store = d / "store.acomm"
    notes = d / "notes.txt"
    notes.write_text("the notes\n", encoding="utf-8")

    def acomm(*argv: str) -> str:
        p = subprocess.run(
            [*NOW, ACOMM, "--store", str(store), *argv],
            check=True,
            capture_output=True,
            text=True,
            env={**_env(), "TRACEPARENT": f"00-{TRACE}-00f067aa0ba902b7-01"},
        )
        return p.stdout.strip()

    acomm("init")
    acomm("channel", "create", "team", "--as", "alice")
    acomm("channel", "join", "team", "--as", "alice", "bob")
    acomm("channel", "create", "ci", "--type", "pubsub", "--as", "ci")
    acomm("subscribe", "ci", "#", "--as", "bob")
    acomm("send", "team", "one", "--as", "alice")
    acomm("send", "team", "two", "--as", "alice", "--priority", "high", "--type", "command")
    acomm("send", "--to", "bob", "three", "--as", "alice")
    acomm("receive", "--as", "bob")
    acomm("nack", "2", "--as", "bob")
    (d / "corr").write_text(acomm("query", "team", "pool size?", "--as", "alice"))
    acomm("send", "team", "later", "--as", "alice", "--delay", "1h")
    acomm("send", "team", "see file", "--as", "alice", "--attach", str(notes))
    acomm("cursor", "create", "audit", "--channel", "team", "--from-start", "--as", "alice")
    acomm("schedule", "create", "team", "daily", "--every", "1d", "--as", "alice")
    return d


def _same(where: Path, text: str) -> str:
    """The output with the store's directory and any new correlation id (a query's: random)
    as placeholders."""
    return re.sub(r"\b[0-9a-f]{32}\b", "CORR", text.replace(str(where), "DIR"))


@pytest.mark.parametrize(("argv", "fast"), CASES, ids=lambda v: repr(v)[:60])
def test_both_paths_print_exit_and_store_alike(argv, fast, base, tmp_path):
    corr = (base / "corr").read_text()
    argv = [corr if a == CORR else a for a in argv]
    assert (fastpath.plan(argv) is not None) is fast
    runs = {}
    for name, cmd in (("typer", TYPER), ("fast", [ACOMM])):
        where = tmp_path / name
        code, out, err, rows = _run(cmd, argv, None, where, base)
        runs[name] = (code, _same(where, out), _same(where, err), _same(where, repr(rows)))
    assert runs["fast"] == runs["typer"]


def test_a_refusal_leaves_the_store_as_it_was(base, tmp_path):
    """What the table compares between the paths, held against the store itself once: a
    refused fast command changes nothing."""
    before = _run([ACOMM], ["stats", "--json"], None, tmp_path / "a", base)[3]
    code, _, err, after = _run([ACOMM], ["nack", "99", "--as", "bob"], None, tmp_path / "b", base)
    assert code == 4, err
    assert after == before


def test_no_body_module_imports_typer_or_the_engine():
    """The fast path's price is what a body's module imports: never typer (nor its click),
    and the engine only when the body runs (`cli/lazy.py`)."""
    from acomm_cli.cli import fastpath_tree

    modules = sorted({c["body"].partition(":")[0] for c in fastpath_tree.COMMANDS.values()})
    probe = (
        "import sys\n"
        f"for m in {modules!r}: __import__(m)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click')"
        " or m.startswith('acomm_cli.engine')))"
    )
    p = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert len(modules) > 20
    assert p.stdout.strip() == "[]"
