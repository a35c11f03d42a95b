"""Start-up cost is a feature: `acomm send` must not import heavy modules (DESIGN.md §2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import query

HEAVY = ("rich", "yaml", "pyarrow", "pyspark", "sqlite_utils", "pydantic", "pandas")

PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""

RUN_MAIN = """
sys.argv = ["acomm", *{argv!r}]
from acomm_cli.app import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(code, file=sys.stderr)
"""


def _probe(body: str) -> tuple[list[str], subprocess.CompletedProcess[str]]:
    p = subprocess.run([sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.splitlines()[-1]), p


def test_importing_the_app_loads_no_heavy_module():
    loaded, _ = _probe("import acomm_cli.app")
    assert loaded == []


@pytest.fixture
def team(cli, make_channel):
    make_channel("team", "alice", "bob")
    store = make_channel("ci", "ci", type="pubsub")
    cli.ok("subscribe", "ci", "#", "--as", "bob")
    return store


@pytest.mark.parametrize("argv", [
    ["send", "team", "hello from a script", "--as", "alice"],
    ["send", "team", "hello", "--as", "alice", "--json", "--priority", "high", "--meta", "k=v"],
    ["send", "--to", "carol", "hi", "--as", "alice"],
    ["publish", "ci", "build.x", "done", "--as", "ci"],
    ["receive", "--as", "bob", "--peek"],
    ["send", "team", "", "--as", "alice"],  # a refused send renders its error cheaply too
    ["__complete", "agents"],  # what the shell completion scripts run on a TAB
])
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
