"""The layers of docs/ARCHITECTURE.md are enforced by a tool, not by review: import-linter's
contracts in pyproject.toml, run by `make lint` on the installed layout (store/ and commands/
inside acomm_cli/, as setuptools installs them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def staged(tmp_path: Path) -> Path:
    """The package as installed, in tmp_path."""
    root = tmp_path / "stage"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(REPO / "acomm_cli", root / "acomm_cli", ignore=ignore)
    shutil.copytree(REPO / "store", root / "acomm_cli" / "store", ignore=ignore)
    shutil.copytree(REPO / "commands", root / "acomm_cli" / "cli" / "commands", ignore=ignore)
    return root


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    if not LINT_IMPORTS.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    return subprocess.run([str(LINT_IMPORTS), "--config", str(REPO / "pyproject.toml"),
                           "--no-cache"], cwd=root, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(root)})


def add_import(module: Path, line: str) -> None:
    text = module.read_text()
    anchor = "from __future__ import annotations\n"
    module.write_text(text.replace(anchor, anchor + "\n" + line + "\n", 1))


def test_the_tree_keeps_its_layers(tmp_path):
    r = lint_imports(staged(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


@pytest.mark.parametrize("module, line, broken", [
    ("engine/sending.py", "from acomm_cli.output import render",
     "acomm_cli.engine.sending -> acomm_cli.output.render"),
    ("store/reads.py", "import acomm_cli.engine.channels",
     "acomm_cli.store.reads -> acomm_cli.engine.channels"),
    ("engine/inbox.py", "import typer", "acomm_cli.engine.inbox -> typer"),
    ("bridge/sync.py", "from acomm_cli.dispatch import agents",
     "acomm_cli.bridge.sync -> acomm_cli.dispatch.agents"),
], ids=["engine-imports-cli", "store-imports-engine", "engine-imports-typer",
        "subsystems-import-each-other"])
def test_an_import_against_the_layers_fails(tmp_path, module, line, broken):
    root = staged(tmp_path)
    add_import(root / "acomm_cli" / module, line)
    r = lint_imports(root)
    assert r.returncode != 0
    assert broken in r.stdout


def test_importing_sqlite_utils_anywhere_fails_even_inside_a_function(tmp_path):
    """sqlite-utils is a test dependency only (docs/DECISIONS.md): not even a cold command
    such as doctor may load it on demand."""
    root = staged(tmp_path)
    module = root / "acomm_cli" / "cli" / "commands" / "doctor.py"
    text = module.read_text()
    assert "\ndef doctor(" in text
    module.write_text(text.replace("\ndef doctor(", "\ndef _schema():\n"
                                   "    import sqlite_utils\n\n\ndef doctor(", 1))
    r = lint_imports(root)
    assert r.returncode != 0
    assert "acomm_cli.cli.commands.doctor -> sqlite_utils" in r.stdout


def test_the_top_level_stays_small_and_every_subpackage_says_what_it_holds():
    top = sorted(p.name for p in (REPO / "acomm_cli").glob("*.py"))
    assert len(top) <= 8, top
    for init in (REPO / "acomm_cli").glob("*/__init__.py"):
        doc = init.read_text().strip()
        assert doc.startswith('"""') and len(doc) > 60, f"{init} says nothing of its package"


def test_python_dash_m_runs_the_program():
    r = subprocess.run([sys.executable, "-m", "acomm_cli", "--version"], capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout.split()[0]) == (0, "acomm")
