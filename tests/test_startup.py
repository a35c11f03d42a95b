"""Start-up cost is a feature: `acomm send` runs once per message in shell loops, so it must
not import heavy modules."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import query

pytestmark = pytest.mark.process

HEAVY = (
    "rich",
    "yaml",
    "pyarrow",
    "pyspark",
    "sqlite_utils",
    "pydantic",
    "pandas",
    "textual",
)  # textual: `acomm ui` only

PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""

RUN_MAIN = """
sys.argv = ["acomm", *{argv!r}]
from acomm_cli.cli.app import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(code, file=sys.stderr)
"""


def _probe(body: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1]), p


def test_importing_the_app_loads_no_heavy_module():
    loaded, _ = _probe("import acomm_cli.cli.app")
    assert loaded == []


@pytest.fixture
def team(cli, make_channel):
    make_channel("team", "alice", "bob")
    store = make_channel("ci", "ci", type="pubsub")
    cli.ok("subscribe", "ci", "#", "--as", "bob")
    return store


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello from a script", "--as", "alice"],
        ["send", "team", "hello", "--as", "alice", "--json", "--priority", "high", "--meta", "k=v"],
        ["send", "--to", "carol", "hi", "--as", "alice"],
        ["publish", "ci", "build.x", "done", "--as", "ci"],
        ["receive", "--as", "bob", "--peek"],
        ["send", "team", "", "--as", "alice"],  # a refused send renders its error cheaply too
        ["__complete", "agents"],  # what the shell completion scripts run on a TAB
    ],
)
def test_running_a_command_loads_no_heavy_module(team, argv):
    before = query(team, "SELECT count(*) FROM messages")[0][0]
    loaded, p = _probe(RUN_MAIN.format(argv=argv))
    assert loaded == []
    code = int(p.stderr.strip().splitlines()[-1])
    if argv[2:3] == [""]:
        assert code == 3
        assert query(team, "SELECT count(*) FROM messages")[0][0] == before
    else:
        assert code == 0, p.stderr
        if argv[0] in ("send", "publish"):
            assert query(team, "SELECT count(*) FROM messages")[0][0] == before + 1


@pytest.mark.parametrize(
    "argv",
    [
        ["receive", "--as", "bob"],
        ["ack", "{mid}", "--as", "bob", "--status", "completed"],
        ["tick"],
    ],
)
def test_the_other_hot_commands_load_no_heavy_module(cli, team, argv):
    """receive, ack and tick run as often as send does (sqlite_utils is a test dependency
    only: docs/DECISIONS.md)."""
    mid = cli.ok("send", "team", "to be read and acked", "--as", "alice").stdout.strip()
    if argv[0] == "ack":
        cli.ok("receive", "--as", "bob")
    loaded, p = _probe(RUN_MAIN.format(argv=[a.format(mid=mid) for a in argv]))
    assert loaded == []
    assert int(p.stderr.strip().splitlines()[-1]) == 0, p.stderr
    if argv[0] == "ack":
        assert query(
            team,
            "SELECT ack_status FROM deliveries WHERE message_id = ? AND recipient = 'bob'",
            int(mid),
        ) == [("completed",)]


FEDERATION = (
    "pycrdt",
    "pycrdt_websocket",
    "pycrdt_store",
    "uvicorn",
    "starlette",
    "pyseto",
    "cryptography",
    "nats",
    "acomm_cli",
)


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello", "--as", "alice"],
        ["receive", "--as", "bob"],
        ["ack", "1", "--as", "bob"],
        ["tick"],
    ],
)
def test_a_store_that_is_not_a_node_loads_no_federation_module(cli, team, argv):
    """The acomm[federation] extra is installed here, yet a plain store never imports it."""
    cli.ok("send", "team", "first", "--as", "alice")  # message 1, for `ack`
    p = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=RUN_MAIN.format(argv=argv), heavy=FEDERATION)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    loaded = json.loads(p.stdout.splitlines()[-1])
    assert [m for m in loaded if not m.startswith("acomm_cli")] == []
    assert "acomm_cli.federation" not in loaded
    assert int(p.stderr.strip().splitlines()[-1]) == 0, p.stderr


MCP = ("mcp", "mcp_types", "pydantic", "anyio", "acomm_cli")


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello", "--as", "alice"],
        ["receive", "--as", "bob"],
    ],
)
def test_the_hot_commands_never_load_the_mcp_sdk(cli, team, argv):
    """acomm[mcp] is installed here; only `acomm mcp` imports it."""
    p = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=RUN_MAIN.format(argv=argv), heavy=MCP)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    loaded = json.loads(p.stdout.splitlines()[-1])
    assert [m for m in loaded if not m.startswith("acomm_cli")] == []
    assert "acomm_cli.mcpserver" not in loaded
    assert int(p.stderr.strip().splitlines()[-1]) == 0, p.stderr


def test_send_loads_only_the_engine_it_uses(team):
    """`acomm send` opens a store and sends: the read side, the timers, statistics, doctor and
    compaction stay out of its process (pulling them in made it ~10% slower: DECISIONS.md,
    "The package in subpackages")."""
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            + RUN_MAIN.format(argv=["send", "team", "hi", "--as", "alice"])
            + "print(json.dumps(sorted(m for m in sys.modules"
            " if m.startswith('acomm_cli.engine.'))))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == [
        "acomm_cli.engine.channels",
        "acomm_cli.engine.directory",  # the sender's one-lookup check
        "acomm_cli.engine.opening",
        "acomm_cli.engine.presence",
        "acomm_cli.engine.sending",
    ]


def test_send_on_a_current_store_loads_the_store_sql_it_uses_and_no_migration_body(team):
    """The SQL a plain send runs is in these store modules; m001-m010's bodies are imported
    only to migrate an older store (DECISIONS.md, "store/queries.py and migrations.py split")."""
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, sys\n"
            + RUN_MAIN.format(argv=["send", "team", "hi", "--as", "alice"])
            + "print(json.dumps(sorted(m for m in sys.modules"
            " if m.startswith('acomm_cli.store.'))))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.splitlines()[-1]) == [
        "acomm_cli.store.agents",  # the directory's check
        "acomm_cli.store.backlog",
        "acomm_cli.store.channels",
        "acomm_cli.store.connection",
        "acomm_cli.store.migrations",
        "acomm_cli.store.presence",
        "acomm_cli.store.sending",
    ]


RUN_ACOMM = RUN_MAIN.replace(
    "from acomm_cli.cli.app import main", "from acomm_cli.cli.main import main"
)
TYPER = ("typer", "click")
# what acomm_cli.lite.records and TYPE_CHECKING = False keep out of the hot commands (about a
# fifth of a send). pathlib, re, json... are checked below, on an
# installed layout: the editable finder loads pathlib before acomm runs.
SLOW_STDLIB = ("typing", "dataclasses", "inspect", "ast", "dis", "tokenize")


def _probe_typer(argv: list[str]) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE.format(body=RUN_ACOMM.format(argv=argv), heavy=HEAVY + TYPER + SLOW_STDLIB),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1]), p


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello from a script", "--as", "alice"],
        ["send", "team", "hello", "--as", "alice", "--json", "--priority", "high", "--meta", "k=v"],
        ["send", "--to", "carol", "hi", "--as", "alice"],
        ["send", "team", "", "--as", "alice"],  # a refusal too
        ["publish", "ci", "build.x", "done", "--as", "ci"],
        ["receive", "--as", "bob", "--json"],
    ],
)
def test_the_acomm_command_runs_the_hot_commands_without_typer(team, argv):
    """What the `acomm` program runs (cli/main.py): typer and click are half of a
    send's start-up, so the hot commands' plain calls never import them, nor `dataclasses`
    and `typing` (acomm_cli/lite/records.py)."""
    loaded, p = _probe_typer(argv)
    assert loaded == []
    assert int(p.stderr.strip().splitlines()[-1]) == (3 if argv[2:3] == [""] else 0), p.stderr


def test_the_acomm_command_hands_anything_else_to_typer(team):
    loaded, p = _probe_typer(["send", "--help"])
    assert "typer" in loaded
    assert "Usage: acomm send" in p.stdout


# What a regular install's `acomm send` does not import: each of these cost 0.5-4 ms of a send.
# The editable install's finder loads pathlib (and with it re, fnmatch, urllib) before acomm
# runs, so this is checked on the installed layout (the link tree of `make layout`) without
# site-packages (`python -S`).
STDLIB_OFF_THE_SEND_PATH = (
    "pathlib",
    "re",
    "json",
    "contextlib",
    "importlib",
    "fnmatch",
    "urllib",
    "ipaddress",
    "typing",
    "dataclasses",
    "inspect",
    "threading",
)


@pytest.fixture(scope="module")
def installed_layout():
    """acomm_cli with store/ and commands/ inside it, as setuptools installs them (the strict
    editable link tree of `make layout`)."""
    from test_layers import installed_layout as layout

    return layout()


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello from a script", "--as", "alice"],
        ["send", "team", "", "--as", "alice"],  # a refusal renders its error without them too
        ["publish", "ci", "build.x", "done", "--as", "ci"],
    ],
)
def test_a_plain_send_imports_none_of_the_slow_stdlib_modules(team, installed_layout, argv):
    body = RUN_ACOMM.format(argv=["--store", str(team), *argv])
    p = subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            f"import sys\nsys.path.insert(0, "
            f"{str(installed_layout)!r})\n{body}\nprint(sorted(sys.modules))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=installed_layout,
    )
    assert p.returncode == 0, p.stderr
    loaded = {m.split(".")[0] for m in ast.literal_eval(p.stdout.splitlines()[-1])}
    assert int(p.stderr.strip().splitlines()[-1]) == (3 if argv[2:3] == [""] else 0), p.stderr
    assert sorted(loaded & set(STDLIB_OFF_THE_SEND_PATH)) == []


def _importtime(*args: str, layout: str) -> list[str]:
    p = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": layout},
    )
    assert p.returncode == 0, p.stderr
    return [
        line.rpartition("|")[2].strip()
        for line in p.stderr.splitlines()
        if line.startswith("import time:") and not line.endswith("| imported package")
    ]


def _imported_before_acomm(script: str, layout: str, *args: str) -> list[str]:
    """The modules the installed `acomm` script imports itself before acomm_cli, read from
    `-X importtime`; without site (`-S`, acomm_cli from the installed layout), whose
    editable finder would load re first and hide what the script imports. What a bare
    `python -S -c pass` imports does not count."""
    names = _importtime(script, *args, layout=layout)
    assert "acomm_cli" in names, names
    bare = set(_importtime("-c", "pass", layout=layout))
    return [n for n in names[: names.index("acomm_cli")] if n not in bare]


def test_the_installed_acomm_script_imports_nothing_before_acomm(team, installed_layout):
    """The launcher pip writes for an entry point imports `re` (enum, functools, the regex
    compiler) on many pip versions: a tenth of a send. `acomm` is installed as a script of
    its own (bin/acomm) that imports acomm_cli first, whatever pip installed it."""
    script = shutil.which("acomm", path=os.path.dirname(sys.executable))
    assert script is not None
    layout = str(installed_layout)
    assert _imported_before_acomm(script, layout, "--version") == []
    send = ("--store", str(team), "send", "team", "hi", "--as", "alice")
    assert _imported_before_acomm(script, layout, *send) == []


# What building a command's parser must not import: the engine and the subsystems its body
# calls (bound with cli/lazy.py), and the heavy libraries. `acomm COMMAND --help`, a usage
# error and the root's `--help` build the parser and run no body; importing these made the
# slowest commands' start-up half again as long (docs/BENCHMARKS.md, "Start-up of every
# command").
NOT_FOR_A_PARSER = (
    "acomm_cli.engine",
    "acomm_cli.dispatch",
    "acomm_cli.bridge",
    "acomm_cli.analytics",
    "acomm_cli.worker",
    "acomm_cli.federation",
    "acomm_cli.mcpserver",
    "acomm_cli.monitoring",
    "acomm_cli.ui",
    "acomm_cli.web",
)
HEAVY_FOR_A_PARSER = HEAVY + FEDERATION[:-1] + MCP[:-1] + ("hashlib", "secrets", "tempfile")


def _parser_modules(argv: list[str]) -> list[str]:
    body = RUN_ACOMM.format(argv=argv) + "print(json.dumps(sorted(sys.modules)))"
    p = subprocess.run(
        [sys.executable, "-c", "import json, sys\n" + body],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert int(p.stderr.strip().splitlines()[-1]) == 0, p.stderr
    assert p.stdout.startswith("Usage: acomm"), p.stdout[:200]
    loaded = json.loads(p.stdout.splitlines()[-1])
    return [
        m
        for m in loaded
        if m.split(".")[0] in HEAVY_FOR_A_PARSER
        or any(m == n or m.startswith(n + ".") for n in NOT_FOR_A_PARSER)
    ]


def _commands() -> list[str]:
    from acomm_cli.cli.app import COMMANDS

    return [name for name in COMMANDS if not name.startswith("_")]


@pytest.mark.parametrize("command", _commands())
def test_a_commands_help_builds_its_parser_without_the_engine(command):
    assert _parser_modules([command, "--help"]) == []


def test_the_roots_help_builds_every_parser_without_the_engine():
    assert _parser_modules(["--help"]) == []


def test_a_subcommands_help_builds_its_parser_without_the_engine():
    assert _parser_modules(["capability", "publish", "--help"]) == []
    assert _parser_modules(["dispatch", "rules", "--help"]) == []


def test_receipts_offers_the_dispatchers_statuses():
    """`acomm receipts --status` writes the dispatcher's statuses out (reading them would
    import the dispatcher to build the parser): the two must agree."""
    from acomm_cli.cli.commands import receipts
    from acomm_cli.dispatch import dispatcher

    assert receipts.STATUSES == dispatcher.STATUSES


def test_a_lazy_module_imports_on_first_use_and_stands_for_it():
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from acomm_cli.cli import lazy\n"
            "m = lazy.module('acomm_cli.engine.traces')\n"
            "print('acomm_cli.engine.traces' in sys.modules)\n"
            "f = m.new_id\n"
            "print('acomm_cli.engine.traces' in sys.modules)\n"
            "print(f is sys.modules['acomm_cli.engine.traces'].new_id)\n",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["False", "True", "True"]


def test_a_lazy_module_passes_a_monkeypatch_to_the_module(monkeypatch):
    """A test may patch a command's engine through the name the command module binds."""
    from acomm_cli.cli import lazy
    from acomm_cli.engine import traces

    m = lazy.module("acomm_cli.engine.traces")
    monkeypatch.setattr(m, "new_id", lambda: "patched")
    assert traces.new_id() == "patched"
    monkeypatch.undo()
    assert traces.new_id() != "patched"
