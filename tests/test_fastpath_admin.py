"""The administrative commands (channel, agent, task, capability, incident, invite, token,
config, node, gateway...) on the fast path against Typer: the same command lines, on copies
of the same store at the same frozen time, print the same bytes, exit with the same status
and leave the same rows (tests/test_fastpath.py does the same for the hot commands)."""

from __future__ import annotations

import shutil
import subprocess
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
CASES = [
    # channel
    (["channel", "create", "ops", "--as", "alice"], FAST),
    (["channel", "create", "ops", "--type", "queue", "--as", "alice", "--json"], FAST),
    (
        ["channel", "create", "ops", "--as", "alice", "--ack-timeout", "2m", "--max-retries", "3"]
        + ["--retry-jitter", "0.2", "--max-message-size", "1MiB", "--ack-clock", "read"],
        FAST,
    ),
    (["channel", "create", "team", "--as", "alice"], FAST),  # exists: exit 5
    (["channel", "create", "team", "--as", "alice", "--if-not-exists", "--json"], FAST),
    (["channel", "create", "ops", "--as", "alice", "--type", "circle"], FAST),  # exit 3
    (["channel", "create", "ops", "--as", "alice", "--ack-timeout", "soon"], FAST),  # exit 3
    (["channel", "create", "ops", "--as", "alice", "--no-echo"], HANDED_OVER),  # a secondary
    (["channel", "create", "ops", "--as", "alice", "--max-retries", "x"], HANDED_OVER),
    (["channel", "create", "--help"], HANDED_OVER),
    (["channel", "join", "team", "carol", "--as", "alice"], FAST),
    (["channel", "join", "team", "bob", "--as", "alice", "--json"], FAST),  # no change
    (["channel", "join", "team", "carol", "--as", "bob"], FAST),  # not the owner: exit 5
    (["channel", "join", "nowhere", "carol", "--as", "alice"], FAST),  # exit 4
    (["channel", "join", "team", "--as", "alice"], HANDED_OVER),  # the agent is missing
    (["channel", "leave", "team", "bob", "--as", "alice", "--json"], FAST),
    (["channel", "leave", "team", "carol", "--as", "alice"], FAST),  # not in it: exit 0
    (["channel", "show", "team"], FAST),
    (["channel", "show", "team", "--json"], FAST),
    (["channel", "show", "nowhere"], FAST),  # exit 4
    (["channel", "pause", "team", "--as", "alice"], FAST),
    (["channel", "resume", "team", "--as", "alice", "--json"], FAST),  # active already
    (["channel", "drain", "team", "--as", "bob"], FAST),  # exit 5
    (["channel", "close", "solo", "--as", "alice", "--json"], FAST),
    (["channel", "close", "--help"], HANDED_OVER),
    (["channel", "admin", "team", "bob", "--as", "alice"], FAST),
    (["channel", "admin", "team", "bob", "--revoke", "--as", "alice", "--json"], FAST),
    (["channel", "admin", "team", "carol", "--as", "alice"], FAST),  # not a member: exit 5
    (
        ["channel", "update", "team", "--as", "alice", "--ack-timeout", "2m"]
        + ["--max-pending", "10", "--index-meta", "k", "--index-meta", "j"],
        FAST,
    ),
    (["channel", "update", "team", "--as", "alice", "--retention-age", "7d", "--json"], FAST),
    (["channel", "update", "team", "--as", "bob", "--max-pending", "1"], FAST),  # exit 5
    (["channel", "update", "team", "--as", "alice", "--priority-ordering"], HANDED_OVER),
    (["channel", "delete", "solo", "--as", "alice"], FAST),
    (["channel", "delete", "team", "--as", "alice", "--json"], FAST),  # in flight: exit 5
    (["channel", "delete", "team", "--as", "alice", "--force"], FAST),
    (["channel", "delete", "--as", "alice"], HANDED_OVER),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with `team` (alice, bob) and an unread message for bob, `solo` (alice alone)."""
    d = tmp_path_factory.mktemp("fastpath-admin-base")
    store = d / "store.acomm"
    for argv in (
        ["init"],
        ["channel", "create", "team", "--as", "alice"],
        ["channel", "join", "team", "--as", "alice", "bob"],
        ["send", "team", "one", "--as", "alice"],
        ["channel", "create", "solo", "--as", "alice"],
    ):
        subprocess.run(
            [*NOW, ACOMM, "--store", str(store), *argv], check=True, capture_output=True, env=_env()
        )
    return d


@pytest.mark.parametrize(("argv", "fast"), CASES, ids=lambda v: repr(v)[:70])
def test_both_paths_print_exit_and_store_alike(argv, fast, base, tmp_path):
    assert (fastpath.plan(argv) is not None) is fast
    typer = _run(TYPER, argv, None, tmp_path / "typer", base)
    quick = _run([ACOMM], argv, None, tmp_path / "fast", base)
    assert quick[:3] == typer[:3]
    assert quick[3] == typer[3]
