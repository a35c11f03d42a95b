"""The fast path (acomm_cli/cli/main.py) against Typer: the same command lines, on copies
of the same store at the same frozen time, must print the same bytes, exit with the same
status and leave the same rows. The table covers what the fast path runs and what it must
hand over to Typer (help, unknown options, values click refuses...)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ACOMM, snapshot

from acomm_cli.cli import fasttree
from acomm_cli.cli import main as fastpath
from acomm_cli.cli.config import Settings
from acomm_cli.cli.invocation import Invocation

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(
        shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
    ),
]

NOW = ["faketime", "-f", "2026-01-02 12:00:00"]  # frozen: both runs write the same times
TYPER = [
    sys.executable,
    "-c",
    "import sys; sys.argv[0] = 'acomm'\nfrom acomm_cli.cli.app import main\nmain()",
]

FAST, HANDED_OVER = True, False
CASES = [
    # send
    (["send", "team", "hello", "--as", "alice"], None, FAST),
    (["send", "team", "hello", "--as", "alice", "--json"], None, FAST),
    (["--json", "send", "team", "hello", "--as", "alice"], None, FAST),
    (["send", "team", "--as", "alice"], "from stdin", FAST),
    (["send", "team", "-", "--as", "alice"], "dash is stdin", FAST),
    (["send", "team", "", "--as", "alice"], None, FAST),  # refused: exit 3
    (["send", "team", "", "--as", "alice", "--json"], None, FAST),
    (
        [
            "send",
            "team",
            "hi",
            "--as",
            "alice",
            "--priority",
            "high",
            "--meta",
            "k=v",
            "--meta",
            "a=b",
            "--type",
            "command",
            "--correlation-id",
            "c1",
            "--dedupe-key",
            "d1",
        ],
        None,
        FAST,
    ),
    (["send", "team", "hi", "--as=alice", "--priority=urgent", "--topic=x.y"], None, FAST),
    (["send", "team", "hi", "-p", "high", "-t", "notification", "--as", "alice"], None, FAST),
    (["send", "--to", "bob", "hi", "--as", "alice"], None, FAST),
    (["send", "--to", "bob,carol", "hi", "--from", "alice"], None, FAST),
    (["send", "team", "hi"], None, FAST),  # no sender: exit 2
    (["send", "nowhere", "hi", "--as", "alice"], None, FAST),  # exit 4
    (["send", "team", "hi", "--as", "alice", "--delay", "30s"], None, FAST),
    (
        ["send", "team", "hi", "--as", "alice", "--delay", "30s", "--deliver-at", "2030-01-01"],
        None,
        FAST,
    ),
    (["send", "team", "hi", "--as", "alice", "--priority", "extreme"], None, FAST),
    # rich parts: a format, a subject, a file (this one), and a refused format
    (
        ["send", "team", "hi", "--as", "alice", "--format", "markdown", "--subject", "s"]
        + ["--attach", str(Path(__file__).resolve())],
        None,
        FAST,
    ),
    (["send", "team", "hi", "--as", "alice", "--format", "html"], None, FAST),
    (["send", "team", "hi", "--as", "bad name"], None, FAST),
    (
        ["send", "--batch", "-"],
        '{"channel": "team", "sender": "alice", "content": "b1"}\n'
        '{"channel": "team", "sender": "alice", "content": "b2"}\n',
        FAST,
    ),
    (["send", "--batch", "-", "team"], "", FAST),
    (["--store", "missing.acomm", "send", "team", "hi", "--as", "alice"], None, FAST),
    (["send", "team", "hi", "--as", "alice", "--no-color"], None, FAST),
    (["send", "team", "hi", "--as", "alice", "--bogus"], None, HANDED_OVER),
    (["send", "team", "hi", "extra", "--as", "alice"], None, HANDED_OVER),
    (["send", "team", "hi", "--as"], None, HANDED_OVER),
    (["send", "team", "hi", "--as", "--json"], None, FAST),  # --as's value: refused, exit 3
    (["send", "team", "hi", "--as", "alice", "--correlation-id", "-q"], None, FAST),
    (["send", "team", "hi", "--as", "alice", "--dedupe-key", "--json", "-q"], None, FAST),
    (["send", "team", "hi", "-t", "-v", "--as", "alice", "--json"], None, FAST),  # exit 3
    (["send", "team", "hi", "--topic", "-x", "--as", "alice"], None, FAST),  # a value, as click
    (["send", "team", "hi", "--as", "alice", "--as", "bob"], None, HANDED_OVER),
    (["send", "team", "hi", "-tnotification", "--as", "alice"], None, HANDED_OVER),
    (["send", "team", "--as", "alice", "--", "-x"], None, HANDED_OVER),
    (["send", "--help"], None, HANDED_OVER),
    (["send", "-h"], None, HANDED_OVER),
    (["--version"], None, HANDED_OVER),
    ([], None, HANDED_OVER),
    # publish
    (["publish", "ci", "build.x", "done", "--as", "ci"], None, FAST),
    (["publish", "ci", "build.y", "--as", "ci", "--json"], "on stdin", FAST),
    (["publish", "ci", "--as", "ci"], None, HANDED_OVER),  # the topic is required
    (["publish", "quiet", "x.y", "nobody hears", "--as", "ci"], None, FAST),  # exit 0, a note
    (["publish", "quiet", "x.y", "hi", "--as", "ci", "--require-recipient"], None, FAST),  # 5
    (["send", "solo", "hi", "--as", "alice", "--json"], None, FAST),  # reaches nobody: exit 5
    # receive
    (["receive", "--as", "bob"], None, FAST),
    (["receive", "--as", "bob", "--json"], None, FAST),
    (["receive", "--recipient", "bob", "--peek", "--limit", "1", "--json"], None, FAST),
    (["receive", "team", "--as", "bob", "--jsonl", "--from", "alice"], None, FAST),
    (
        [
            "receive",
            "--as",
            "bob",
            "--since",
            "-1h",
            "--sort",
            "priority",
            "--order",
            "desc",
            "--json",
        ],
        None,
        FAST,
    ),
    (["receive", "--as", "bob", "--priority-min", "high", "--status", "delivered"], None, FAST),
    (["receive", "--as", "bob", "-t", "text", "--type", "command", "--body"], None, FAST),
    (["receive", "--as", "bob", "--limit", " 2", "--offset", "+1", "--json"], None, FAST),
    (["receive", "--as", "carol", "--wait", "0", "--json"], None, FAST),  # exit 124
    (["receive", "--as", "carol", "--wait", "0ms", "--json"], None, FAST),  # a unit form too
    (["receive", "--as", "bob", "--grep", "(", "--json"], None, FAST),
    (["receive", "--as", "bob", "--grep", "-v", "--peek"], None, FAST),  # a literal "-v"
    (["receive", "--as", "bob", "--grep", "--json", "--peek", "--json"], None, FAST),
    (["receive", "--as", "bob", "--sort", "sideways"], None, FAST),
    (["receive", "--json"], None, FAST),  # no agent
    (["receive", "--as", "bob", "--limit", "x"], None, HANDED_OVER),
    (["receive", "--as", "bob", "--limit", "１"], None, HANDED_OVER),
    (["receive", "--as", "bob", "--wait", "½"], None, FAST),  # a duration: exit 3 naming it
    (["receive", "--as", "bob", "-fj"], None, HANDED_OVER),
    # -q/-v and the output options (global: before or after the command)
    (["-q", "send", "team", "hi", "--as", "alice"], None, FAST),
    (["send", "nowhere", "hi", "--as", "alice", "--quiet"], None, FAST),  # the error stays
    (["send", "--to", "bob,carol", "hi", "--as", "alice", "-q"], None, FAST),
    (["publish", "ci", "build.x", "done", "--as", "ci", "-q"], None, FAST),
    (["-q", "-v", "send", "team", "hi", "--as", "alice"], None, FAST),  # exit 2
    (["send"], None, FAST),  # the missing channel is said before the missing --as
    (["send", "team", "hi", "--as", "alice", "--csv"], None, HANDED_OVER),  # no rows: exit 2
    (["publish", "ci", "build.x", "done", "--as", "ci", "--jsonl"], None, HANDED_OVER),
    (["receive", "--as", "bob", "--csv"], None, FAST),
    (["receive", "--as", "bob", "--tsv", "--no-headers"], None, FAST),
    (["--jsonl", "receive", "--as", "bob", "--peek"], None, FAST),
    (["receive", "--as", "bob", "--csv", "--ack", "completed"], None, FAST),
    (["receive", "--as", "bob", "--json", "--csv"], None, FAST),  # exit 2, naming both
    (["receive", "--as", "bob", "--no-headers"], None, FAST),  # exit 2
    (["receive", "--as", "bob", "-qv"], None, HANDED_OVER),  # clustered: click's
    # the completion scripts' word source, run on every TAB that completes a value
    (["__complete", "agents"], None, FAST),
    (["__complete", "channels"], None, FAST),
    (["__complete", "topics"], None, FAST),  # exit 2, naming the kinds
    (["__complete"], None, HANDED_OVER),  # exit 2: the missing kind, as click says it
    # a group's subcommand, read as one command of two words
    (["channel", "list"], None, FAST),
    (["channel", "list", "--json"], None, FAST),
    (["channel", "--csv", "list"], None, FAST),  # a global between the two words
    (["--tsv", "channel", "list", "--no-headers"], None, FAST),
    (["channel", "list", "extra"], None, HANDED_OVER),  # exit 2: click names the word
    (["channel"], None, HANDED_OVER),  # the group's help
    (["channel", "--help"], None, HANDED_OVER),
    (["channel", "lsit"], None, HANDED_OVER),  # exit 2, with click's suggestion
    # `fed pull` (the store here is not a node: its refusal, exit 3, from both paths)
    (["fed", "pull"], None, FAST),
    (["--json", "fed", "pull", "--max-pages", "100000", "--wait", "0s"], None, FAST),
    (["fed", "pull", "--peer", "nb", "--json"], None, FAST),
    (["fed", "pull", "--max-pages", "0"], None, FAST),  # exit 2, naming the option
    (["fed", "pull", "--wait", "soon"], None, FAST),  # exit 3, naming the duration
    (["fed", "pull", "--max-pages", "x"], None, HANDED_OVER),
    (["fed", "pull", "--csv"], None, HANDED_OVER),  # no rows: exit 2
    (["fed", "status"], None, FAST),
    # a group that runs alone (its own body) and has subcommands
    (["peers", "--json"], None, FAST),  # not a node: exit 3
    (["peers", "add", "n2"], None, HANDED_OVER),  # --url missing: click says so
    (["fed", "status", "--json"], None, FAST),  # not a node: refused
    (["fed", "status", "--latest", "3000"], None, FAST),  # out of bounds: exit 2
    (["fed", "status", "--latest", "x"], None, HANDED_OVER),  # not a number: click's
    (["fed", "migrate", "--to", "nats://127.0.0.1:9"], None, FAST),  # not a node: refused
    # the one command left on Typer: its work is the whole command tree, which Typer holds
    (["completions", "bash"], None, HANDED_OVER),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with `team` (alice, bob), pubsub `ci` (bob subscribed to everything), some
    unread messages for bob, and two channels nothing reaches: `solo` (alice alone) and
    pubsub `quiet` (no subscription)."""
    d = tmp_path_factory.mktemp("fastpath-base")
    store = d / "store.acomm"
    for argv in (
        ["init"],
        ["channel", "create", "team", "--as", "alice"],
        ["channel", "join", "team", "--as", "alice", "bob"],
        ["channel", "create", "ci", "--type", "pubsub", "--as", "ci"],
        ["subscribe", "ci", "#", "--as", "bob"],
        ["send", "team", "one", "--as", "alice"],
        ["send", "team", "two", "--as", "alice", "--priority", "high", "--type", "command"],
        ["send", "--to", "bob", "three", "--as", "alice"],
        ["channel", "create", "solo", "--as", "alice"],
        ["channel", "create", "quiet", "--type", "pubsub", "--as", "ci"],
    ):
        subprocess.run(
            [*NOW, ACOMM, "--store", str(store), *argv], check=True, capture_output=True, env=_env()
        )
    return d


_TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _env() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("ACOMM_") and k not in ("NO_COLOR", "FORCE_COLOR", "TRACEPARENT")
    }
    env["COLUMNS"] = "80"
    return env


def _run(
    cmd: list[str], argv: list[str], stdin: str | None, where: Path, base: Path
) -> tuple[int, str, str, dict[str, object]]:
    shutil.copytree(base, where)
    store = where / "store.acomm"
    # one trace for both paths: else each send starts a random one, and the stores differ
    env = {**_env(), "ACOMM_STORE": str(store), "TRACEPARENT": _TRACEPARENT}
    p = subprocess.run(
        [*NOW, *cmd, *argv],
        input=stdin or "",
        capture_output=True,
        text=True,
        env=env,
        cwd=where,
        timeout=60,
    )
    return p.returncode, p.stdout, p.stderr, snapshot(store)


@pytest.mark.parametrize(("argv", "stdin", "fast"), CASES, ids=lambda v: repr(v)[:60])
def test_both_paths_print_exit_and_store_alike(argv, stdin, fast, base, tmp_path):
    assert (fastpath.plan(argv) is not None) is fast
    typer = _run(TYPER, argv, stdin, tmp_path / "typer", base)
    quick = _run([ACOMM], argv, stdin, tmp_path / "fast", base)
    assert quick[:3] == typer[:3]
    assert quick[3] == typer[3]


def test_the_environment_gives_the_agent_as_click_does(monkeypatch):
    monkeypatch.setenv("ACOMM_AGENT", "alice")
    assert fastpath.plan(["send", "team", "hi"])[2]["as_"] == "alice"
    monkeypatch.setenv("ACOMM_AGENT", "")  # empty: unset, for click too
    assert fastpath.plan(["send", "team", "hi"])[2]["as_"] is None


def test_asking_for_the_help_text_hands_over_to_typer():
    """A refusal that shows the command's help (a body on a terminal) is Typer's to print."""
    inv = Invocation(Settings(), help=fastpath._needs_typer)
    with pytest.raises(fastpath._Typer):
        inv.help_text()


def test_the_tree_is_what_the_typer_app_says():
    """The checked-in tree is regenerated by `make docs` (tests/test_docs.py compares it);
    here: every fast command's body takes exactly the declaration's parameters."""
    import importlib
    import inspect

    from acomm_cli.cli import fastpath_tree

    assert fasttree.render() == Path(fastpath_tree.__file__).read_text()
    for name, cmd in fastpath_tree.COMMANDS.items():
        module, _, function = cmd["body"].partition(":")
        body = getattr(importlib.import_module(module), function)
        names = list(inspect.signature(body).parameters)[1:]
        assert names == [p["name"] for p in cmd["params"]], name


@pytest.mark.parametrize(
    "argv",
    [
        ["-v", "send", "team", "hi", "--as", "alice"],
        ["receive", "--as", "bob", "--verbose", "--csv"],
    ],
)
def test_verbose_says_the_same_on_both_paths_but_the_times(argv, base, tmp_path):
    """-v: the store, how it was found, the config file and timings, on stderr; the times
    differ from run to run, the rest does not."""
    import re

    typer = _run(TYPER, argv, None, tmp_path / "typer", base)
    quick = _run([ACOMM], argv, None, tmp_path / "fast", base)

    def timeless(err: str, where: Path) -> str:
        return re.sub(r"\d+\.\d ms", "T ms", err.replace(str(where), "DIR"))

    assert quick[:2] == typer[:2]
    assert timeless(quick[2], tmp_path / "fast") == timeless(typer[2], tmp_path / "typer")
    lines = timeless(quick[2], tmp_path / "fast").splitlines()
    assert lines[0] == "acomm: verbose: store DIR/store.acomm ($ACOMM_STORE)"
    assert lines[1] == "acomm: verbose: config DIR/config.yaml"
    assert lines[2].startswith("acomm: verbose: store opened in T ms")
    assert lines[-1] == "acomm: verbose: done in T ms"
