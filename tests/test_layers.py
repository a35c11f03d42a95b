"""The layers of docs/ARCHITECTURE.md are enforced by a tool, not by review: import-linter's
contracts in pyproject.toml, run by `make lint` on the installed layout (store/ and commands/
inside acomm_cli/, as setuptools installs them): the strict editable link tree `make layout`
keeps in build/layout."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def installed_layout() -> Path:
    """The package as installed: setuptools' strict editable link tree (symlinks to the
    repository's files), rebuilt by `make layout` when a module is added or removed."""
    import fcntl

    (REPO / "build").mkdir(exist_ok=True)
    with open(REPO / "build" / ".layout.lock", "w") as lock:  # test processes in parallel
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(
            ["make", "-s", "layout"], cwd=REPO, capture_output=True, text=True, timeout=300
        )
    assert r.returncode == 0, r.stdout + r.stderr
    root = (REPO / "build" / "layout").resolve()
    assert (root / "acomm_cli" / "store" / "__init__.py").exists()
    return root


def edited(tmp_path: Path, module: str, edit: Callable[[str], str]) -> Path:
    """The installed layout with one module edited: links to the link tree's files, and one
    real file, so that the repository is never written to."""
    layout = installed_layout()
    root = tmp_path / "layout"
    for path in (layout / "acomm_cli").rglob("*.py"):
        if "__pycache__" in path.parts:
            continue
        mirror = root / path.relative_to(layout)
        mirror.parent.mkdir(parents=True, exist_ok=True)
        if path.relative_to(layout / "acomm_cli").as_posix() == module:
            mirror.write_text(edit(path.read_text()))
        else:
            mirror.symlink_to(path.resolve())
    edited_file = root / "acomm_cli" / module
    assert edited_file.is_file() and not edited_file.is_symlink()
    return root


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(root)},
    )


def add_import(line: str) -> Callable[[str], str]:
    anchor = "from __future__ import annotations\n"
    return lambda text: text.replace(anchor, anchor + "\n" + line + "\n", 1)


def test_the_tree_keeps_its_layers():
    r = lint_imports(installed_layout())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


@pytest.mark.parametrize(
    "module, line, broken",
    [
        (
            "engine/sending.py",
            "from acomm_cli.output import render",
            "acomm_cli.engine.sending -> acomm_cli.output.render",
        ),
        (
            "store/reads.py",
            "import acomm_cli.engine.channels",
            "acomm_cli.store.reads -> acomm_cli.engine.channels",
        ),
        ("engine/inbox.py", "import typer", "acomm_cli.engine.inbox -> typer"),
        (
            "bridge/sync.py",
            "from acomm_cli.dispatch import agents",
            "acomm_cli.bridge.sync -> acomm_cli.dispatch.agents",
        ),
        (
            "cli/commands/send.py",
            "from acomm_cli.cli import app",
            "acomm_cli.cli.commands.send -> acomm_cli.cli.app",
        ),
        (
            "cli/config.py",
            "import acomm_cli.cli.commands.send",
            "acomm_cli.cli.config -> acomm_cli.cli.commands.send",
        ),
        (
            "output/render.py",
            "from acomm_cli.cli import config",
            "acomm_cli.output.render -> acomm_cli.cli.config",
        ),
    ],
    ids=[
        "engine-imports-cli",
        "store-imports-engine",
        "engine-imports-typer",
        "subsystems-import-each-other",
        "command-imports-the-app",
        "settings-import-a-command",
        "output-imports-the-command-line",
    ],
)
def test_an_import_against_the_layers_fails(tmp_path, module, line, broken):
    r = lint_imports(edited(tmp_path, module, add_import(line)))
    assert r.returncode != 0
    assert broken in r.stdout


def test_importing_sqlite_utils_anywhere_fails_even_inside_a_function(tmp_path):
    """sqlite-utils is a test dependency only (docs/DECISIONS.md): not even a cold command
    such as doctor may load it on demand."""

    def edit(text: str) -> str:
        assert "\ndef doctor(" in text
        return text.replace(
            "\ndef doctor(", "\ndef _schema():\n    import sqlite_utils\n\n\ndef doctor(", 1
        )

    r = lint_imports(edited(tmp_path, "cli/commands/doctor.py", edit))
    assert r.returncode != 0
    assert "acomm_cli.cli.commands.doctor -> sqlite_utils" in r.stdout


def test_the_top_level_stays_small_and_every_subpackage_says_what_it_holds():
    top = sorted(p.name for p in (REPO / "acomm_cli").glob("*.py"))
    assert len(top) <= 8, top
    for init in (REPO / "acomm_cli").glob("*/__init__.py"):
        doc = init.read_text().strip()
        assert doc.startswith('"""') and len(doc) > 60, f"{init} says nothing of its package"


def test_python_dash_m_runs_the_program():
    r = subprocess.run(
        [sys.executable, "-m", "acomm_cli", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (r.returncode, r.stdout.split()[0]) == (0, "acomm")


def test_every_command_body_runs_on_an_invocation():
    """One command style: a command is declared with Typer, and its body takes the same
    `Invocation` the fast path builds (`@takes_invocation`, or `@runs(body)` for the hot
    ones), never click's context. `completions` reads the running program's command tree,
    which only click's context holds."""
    import importlib

    from acomm_cli.cli.app import COMMANDS

    on_context = []
    for module in sorted(set(COMMANDS.values())):
        app = importlib.import_module(f"acomm_cli.cli.commands.{module}").app
        for info in app.registered_commands:
            name = info.name or info.callback.__name__
            if not getattr(info.callback, "__acomm_invocation__", False):
                on_context.append(f"{module}:{name}")
    assert on_context == ["completions:completions"]
