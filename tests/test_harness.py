"""The test harness's shortcuts change nothing a test can see: the `store` fixture's copy of a
template is the store `acomm init` makes, and the session's one command tree answers as a
tree built for each call (Typer's CliRunner on the app) does."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import procs
import pytest
from conftest import Cli, Template, command_tree, copy_store, snapshot
from freezegun import freeze_time
from typer.testing import CliRunner

from acomm_cli.cli.app import app

pytestmark = pytest.mark.cli

T = "2026-03-04 05:06:07"


def _files(directory: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in sorted(directory.iterdir())}


def _schema(path: Path) -> tuple[list[tuple[str, str]], int, str]:
    c = sqlite3.connect(path)
    try:
        return (
            c.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall(),
            c.execute("PRAGMA user_version").fetchone()[0],
            c.execute("PRAGMA journal_mode").fetchone()[0],
        )
    finally:
        c.close()


def test_a_store_copied_from_the_template_is_the_store_init_makes(
    template_store: Template, tmp_path: Path
):
    copied, fresh = tmp_path / "copy" / "store.acomm", tmp_path / "init" / "store.acomm"
    with freeze_time(T):
        copy_store(template_store, copied)
        assert Cli().ok("--store", str(fresh), "init").exit_code == 0
    assert _files(copied.parent) == _files(fresh.parent)  # no WAL or SHM left by either
    assert stat.S_IMODE(copied.parent.stat().st_mode) == 0o700
    assert set(_files(copied.parent).values()) == {0o600}
    assert _schema(copied) == _schema(fresh)
    assert (copied.parent / "config.yaml").read_bytes() == (
        fresh.parent / "config.yaml"
    ).read_bytes()
    a, b = snapshot(copied), snapshot(fresh)
    ids = [[r["value"] for r in s["store_meta"] if r["key"] == "store_id"] for s in (a, b)]
    assert ids[0] != ids[1] and len(ids[0][0]) == len(ids[1][0]) == 32  # each its own store
    directory = [
        [r["value"] for r in s["store_meta"] if r["key"] == "identity.directory_default"]
        for s in (a, b)
    ]
    assert directory == [["open"], ["strict"]]  # the one difference: the tests' stores are open
    for s in (a, b):
        s["store_meta"] = [
            r for r in s["store_meta"] if r["key"] not in ("store_id", "identity.directory_default")
        ]
    assert a == b  # every row, the creation times included (frozen alike)


def test_the_store_fixture_is_a_fresh_store_of_its_own(store: Path, cli: Cli):
    assert stat.S_IMODE(os.stat(store.parent).st_mode) == 0o700
    status = cli.ok("status", "--json").json()
    assert status["path"] == str(store) and status["messages"] == 0


# Global options before and after the subcommand, the lazy registry's groups and aliases,
# usage errors, eager --version, input on stdin, and an error rendered as JSON.
CALLS = [
    ("--help",),
    ("channel", "--help"),
    ("--version",),
    ("init",),
    ("channel", "create", "team", "--as", "alice", "--json"),
    ("--json", "channel", "join", "team", "bob", "--as", "alice"),
    ("send", "team", "-", "--as", "alice"),
    ("send", "team", "hi", "--as", "alice", "-q"),
    ("receive", "--as", "bob", "--jsonl"),
    ("messages", "--channel", "team", "--csv"),
    ("dead-letters", "list", "--json"),
    ("send",),
    ("show", "999", "--json"),
    ("nosuch",),
    ("stats", "--csv"),
    ("status", "--jsonl"),
]


def test_the_session_command_tree_answers_as_one_built_for_each_call(tmp_path: Path, monkeypatch):
    assert command_tree() is command_tree()
    runner, ours = CliRunner(), Cli()
    monkeypatch.setenv("ACOMM_STORE", str(tmp_path / "store" / "store.acomm"))
    # one trace for both runs: else each send starts a random one, which receive prints
    monkeypatch.setenv("TRACEPARENT", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
    for run in ("fresh", "cached"):
        shutil.rmtree(tmp_path / "store", ignore_errors=True)  # the same path, made anew
        answers = []
        with freeze_time(T):
            for args in CALLS:
                if run == "fresh":  # Typer builds the tree again for this call
                    r = runner.invoke(app, list(args), input="from stdin")
                    answers.append((r.exit_code, r.stdout, r.stderr))
                else:
                    answers.append(ours.invoke(list(args), input="from stdin"))
        if run == "fresh":
            expected = answers
    for args, want, got in zip(CALLS, expected, answers, strict=True):
        assert got == want, args
    assert {code for code, _, _ in answers} == {0, 2, 4}  # the refusals were reached


@pytest.mark.process
def test_a_wrappers_orphaned_child_is_seen_and_killed_with_its_group():
    """What `no_process_outlives` checks after every test: killing a wrapper (faketime, sh)
    by its pid leaves its child running, re-parented to pytest, and the check names it;
    stopping the wrapper's process group kills both."""
    before = procs.descendants()
    wrapper = procs.spawn(
        ["sh", "-c", "sleep 600 & echo $!; wait"], stdout=subprocess.PIPE, text=True
    )
    assert wrapper.stdout is not None
    child = int(wrapper.stdout.readline())
    os.kill(wrapper.pid, signal.SIGKILL)  # the wrapper only, as a pid-kill did
    wrapper.wait()
    left = procs.outliving(before, polls=2)
    assert child in left and "sleep 600" in left[child]
    procs.stop(wrapper, signal.SIGKILL)
    assert procs.outliving(before) == {}


NEW_FILE = """
import pytest

pytestmark = pytest.mark.cli


def test_in_the_files_tier():
    pass


@pytest.mark.process
def test_in_a_tier_of_its_own():
    pass
"""
UNTIERED_FILE = """
import pytest


def test_with_no_tier():
    pass


@pytest.mark.unit
@pytest.mark.cli
def test_with_two():
    pass
"""

SPAWNING_FILE = """
import subprocess

import pytest

pytestmark = pytest.mark.cli


def test_that_starts_a_program():
    subprocess.run(["true"], check=True)
"""


@pytest.mark.process
def test_every_test_has_exactly_one_tier_or_errors_under_any_selection(tmp_path: Path):
    """This suite's own conftest on a new file: a test's mark overrides its file's, `-m`
    selects on the one tier each test has, and a test with none or two errors, naming
    itself, whichever tiers are selected (and with none, as `make test`); a test of the
    in-process tiers that starts a program errors too."""
    here = Path(__file__).parent
    (tmp_path / "tests").mkdir()
    for name in ("conftest.py", "procs.py"):
        shutil.copy(here / name, tmp_path / "tests" / name)
    shutil.copy(here.parent / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "tests" / "test_tiered.py").write_text(NEW_FILE)

    def pytest(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )

    fast = pytest("-m", "unit or cli", "-v")
    assert fast.returncode == 0, fast.stdout
    assert "::test_in_the_files_tier PASSED" in fast.stdout
    assert "test_in_a_tier_of_its_own" not in fast.stdout
    assert "1 passed, 1 deselected" in fast.stdout
    assert "1 passed, 1 deselected" in pytest("-m", "process").stdout

    (tmp_path / "tests" / "test_untiered.py").write_text(UNTIERED_FILE)
    for selection in ("unit or cli", "ui", ""):
        r = pytest(*(("-m", selection) if selection else ()), "tests/test_untiered.py")
        assert r.returncode == 1, (selection, r.stdout)
        assert "test_with_no_tier: no tier" in r.stdout
        assert "test_with_two: marked with 2 tiers at one level (cli, unit)" in r.stdout
        assert "2 errors" in r.stdout

    # an in-process tier that starts a program: `make test-fast` would not stay in process
    (tmp_path / "tests" / "test_spawning.py").write_text(SPAWNING_FILE)
    r = pytest("-m", "cli", "tests/test_spawning.py")
    assert r.returncode == 1, r.stdout
    assert "a test of the unit or cli tier started programs" in r.stdout
    assert "\n  true\n" in r.stdout and "1 passed, 1 error" in r.stdout
