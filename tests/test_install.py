"""What a plain `pip install acomm` holds, and what its commands do without the extras.

pyarrow and PySpark (about 660 MB) are the `spark` extra: only `export` and `audit` import
them, and without them both exit 3 naming the install command, before opening the store."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from conftest import query, run, snapshot
from packaging.requirements import Requirement

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
INSTALL_SPARK = "pip install 'acomm[spark]'"
# packages that must never be core dependencies again: each is an extra's, or far too big
HEAVY = {
    "pyspark",
    "pyarrow",
    "pandas",
    "numpy",
    "textual",
    "mcp",
    "pydantic",
    "pycrdt",
    "uvicorn",
    "starlette",
    "cryptography",
    "httpx",
    "nats-py",
    "sqlite-utils",
}


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~;\[(]", requirement.strip(), maxsplit=1)[0].lower()


@pytest.mark.unit
def test_the_core_dependencies_hold_no_heavy_package():
    project = _project()
    core = {_name(r) for r in project["dependencies"]}
    assert core & HEAVY == set()
    extras = project["optional-dependencies"]
    assert {_name(r) for r in extras["spark"]} == {"pyarrow", "pyspark", "matplotlib"}
    assert extras["analytics"] == ["acomm[spark]"]


def _closure(names: set[str]) -> set[str]:
    """The distributions `names` need here, transitively, without their optional extras."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        seen.add(key)
        for text in metadata.requires(name) or ():
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


PLAIN = """
import json, sys
started = set(sys.modules)  # what site loaded (setuptools' distutils shim, say), not acomm
sys.argv = ["acomm", *{argv!r}]
from acomm_cli.cli.app import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(sorted({{m.split(".")[0] for m in set(sys.modules) - started}})))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["send", "team", "hello", "--as", "alice"],
        ["receive", "--as", "bob"],
        ["channel", "create", "other", "--as", "alice"],
        ["stats"],
    ],
)
def test_the_plain_commands_import_only_what_the_core_installs(team, argv):
    """Every library these commands load comes with `pip install acomm` alone: a new import
    of an extra's package on their path fails here, not on a user's machine."""
    p = subprocess.run(
        [sys.executable, "-c", PLAIN.format(argv=argv)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 0, p.stderr
    loaded = set(json.loads(p.stdout.splitlines()[-1]))
    owners = metadata.packages_distributions()
    dists = {d.lower().replace("_", "-") for m in loaded for d in owners.get(m, ())}
    core = _closure({_name(r) for r in _project()["dependencies"]} | {"acomm"})
    assert dists - core == set()


def _blocking(tmp_path: Path, *names: str) -> dict[str, str]:
    """An environment whose Python cannot import `names`, as if they were not installed: a
    sitecustomize on PYTHONPATH marks them absent in sys.modules (import raises ImportError,
    importlib finds no spec)."""
    site = tmp_path / "without"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{n!r}] = None\n" for n in names)
    )
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def _files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(store.parent.iterdir())}


@pytest.mark.parametrize(
    ("command", "blocked", "missing"),
    [
        ("export", ("pyarrow", "pyspark"), ["pyarrow"]),
        ("audit", ("pyarrow", "pyspark"), ["pyarrow", "pyspark"]),
        ("audit", ("pyspark",), ["pyspark"]),
        ("audit", ("matplotlib",), ["matplotlib"]),  # report.html's charts
    ],
)
def test_export_and_audit_without_the_spark_extra_exit_3_naming_the_install(
    team, tmp_path, command, blocked, missing
):
    run("send", "team", "kept as it is", "--as", "alice")
    env = _blocking(tmp_path, *blocked)
    probe = subprocess.run(
        [sys.executable, "-c", f"import {blocked[0]}"],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
    )
    assert "ModuleNotFoundError" in probe.stderr  # the block holds
    before, files = snapshot(team), _files(team)
    arg = tmp_path / "exported"
    if command == "audit":
        arg.mkdir()
    p = run(command, arg, "--json", env=env)
    assert p.returncode == 3, p.stderr
    error = json.loads(p.stderr)["error"]
    assert error == {
        "code": "missing_extra",
        "extra": "spark",
        "install": INSTALL_SPARK,
        "missing": missing,
        "message": error["message"],
    }
    assert INSTALL_SPARK in error["message"] and error["message"].startswith(command)
    assert snapshot(team) == before and _files(team) == files
    assert (list(arg.iterdir()) == []) if command == "audit" else not arg.exists()

    plain = run(command, arg, env=env)
    assert (plain.returncode, plain.stdout) == (3, "")
    assert plain.stderr == f"acomm: error: missing_extra: {error['message']}\n"


def test_export_checks_for_the_extra_before_looking_for_the_store(tmp_path):
    """Without the extra the answer is the install command, even where no store exists yet;
    nothing is created."""
    store = tmp_path / "nowhere" / "store.acomm"
    p = run(
        "export",
        tmp_path / "out",
        "--json",
        env={**_blocking(tmp_path, "pyarrow"), "ACOMM_STORE": str(store)},
    )
    assert p.returncode == 3, p.stderr
    assert json.loads(p.stderr)["error"]["install"] == INSTALL_SPARK
    assert not store.parent.exists() and not (tmp_path / "out").exists()


@pytest.mark.cli
def test_in_process_export_without_pyarrow_changes_nothing(cli, team, monkeypatch):
    cli.ok("send", "team", "hello", "--as", "alice")
    before = snapshot(team)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    r = cli("export", "out", "--json")
    assert (r.exit_code, r.error["code"], r.error["missing"]) == (3, "missing_extra", ["pyarrow"])
    assert snapshot(team) == before and not Path("out").exists()
    assert query(team, "SELECT count(*) FROM messages")[0][0] == 1


def test_a_plain_install_is_small_and_runs_the_messaging_commands(tmp_path):
    """`pip install .` into a fresh venv (about 15 s with pip's cache warm; skipped, saying
    why, where pip can reach no index)."""
    src, venv = tmp_path / "src", tmp_path / "venv"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            ".venv", "build", "*.egg-info", "__pycache__", ".git", "bench", ".pytest_cache"
        ),
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    pip = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--retries",
            "1",
            "--timeout",
            "20",
            str(src),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if pip.returncode != 0 and re.search(
        r"No matching distribution|Could not find a version|"
        r"NewConnectionError|Temporary failure|timed out|"
        r"Max retries",
        pip.stderr,
    ):
        pytest.skip(f"pip cannot fetch the dependencies here: {pip.stderr.strip()[-300:]}")
    assert pip.returncode == 0, pip.stderr
    size = sum(f.stat().st_size for f in venv.rglob("*") if f.is_file() and not f.is_symlink())
    assert size < 150 * 2**20, f"{size / 2**20:.0f} MB"

    acomm = str(venv / "bin" / "acomm")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["ACOMM_STORE"] = str(tmp_path / "store" / "store.acomm")

    def sh(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([acomm, *args], capture_output=True, text=True, env=env, timeout=60)

    assert sh("init").returncode == 0
    assert sh("send", "--to", "bob", "hello", "--as", "alice").stdout.strip() == "1"
    got = sh("receive", "--as", "bob", "--json")
    assert [m["content"] for m in json.loads(got.stdout)["messages"]] == ["hello"]
    refused = sh("export", str(tmp_path / "out"))
    assert refused.returncode == 3 and INSTALL_SPARK in refused.stderr


@pytest.mark.parametrize(
    ("argv", "blocked", "extra"),
    [
        (("node", "init", "--id", "n1"), "cryptography", "federation"),
    ],
)
def test_a_command_whose_extra_is_missing_exits_3_naming_the_install(
    store, tmp_path, argv, blocked, extra
):
    """Any command, not only export and audit: an optional library that is not installed is
    the install command to run (exit 3), never an internal error, and the store is as it was."""
    before = snapshot(store)
    p = run(*argv, "--json", env=_blocking(tmp_path, blocked))
    assert p.returncode == 3, p.stderr
    install = f"pip install 'acomm[{extra}]'"
    assert json.loads(p.stderr)["error"] == {
        "code": "missing_extra",
        "extra": extra,
        "install": install,
        "missing": [blocked],
        "message": json.loads(p.stderr)["error"]["message"],
    }
    assert install in json.loads(p.stderr)["error"]["message"]
    assert snapshot(store) == before
