"""Every shell recipe of the README and the docs pages runs as it is written: each ```sh block
(with the blocks that continue it) runs in bash with `set -euo pipefail`, in a fresh empty
directory, with the installed `acomm` first on PATH and no ACOMM_* variables, as a reader who
pastes it would run it. A block that cannot run on one machine without a network says why in
a marker before it (the scheme is in docs/TESTING.md, "Recipes in the docs")."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import procs
import pytest
from conftest import ACOMM

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parent.parent
SHELLS = ("sh", "bash", "shell")  # a ```console block is a transcript, never run
MARKER = re.compile(r"^<!-- recipe: (?P<kind>skip|continue|given)(?::\s*(?P<arg>.*?))?\s*-->$")
FAILED = "acomm-recipe-failed-at-line"
TIMEOUT = 60  # seconds for one chain; every chain together takes a few seconds


@dataclass
class Block:
    page: str  # relative to the repository
    line: int  # the line of its opening fence
    text: str
    kind: str = "run"  # run | skip | continue | given
    arg: str = ""  # skip: why; given: the shell run before it


@dataclass
class Chain:
    """A block that runs, with the blocks that continue it: one process, one directory."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.blocks[0].page}:{self.blocks[0].line}"


# generated pages: cli.md is --help; BENCHMARKS.md is written by bench/, whose blocks run it
GENERATED = ("cli.md", "BENCHMARKS.md")


def pages() -> list[Path]:
    """README and the docs pages, but the generated ones and the source texts of docs/spec/."""
    docs = sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in GENERATED)
    return [ROOT / "README.md", *docs]


def blocks(page: Path) -> list[Block]:
    """The page's shell blocks, each with the marker on the line before its fence."""
    found, lines, i = [], page.read_text().splitlines(), 0
    rel = str(page.relative_to(ROOT))
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if fence.group(1) in SHELLS:
            block = Block(rel, i + 1, "\n".join(lines[i + 1 : end]) + "\n")
            m = MARKER.match(lines[i - 1].strip()) if i else None
            if m:
                block.kind, block.arg = m.group("kind"), (m.group("arg") or "")
            found.append(block)
        i = end + 1
    return found


def chains() -> list[Chain]:
    out: list[Chain] = []
    for page in pages():
        previous = None
        for b in blocks(page):
            if b.kind == "continue" and previous is not None and previous.kind != "skip":
                out[-1].blocks.append(b)
            elif b.kind != "skip":
                out.append(Chain([b]))
            previous = b
    return out


def script(chain: Chain) -> tuple[str, list[tuple[Block, int] | None]]:
    """The bash script of a chain, and for each of its lines the block and page line it came
    from (None for the lines the harness adds)."""
    text = [f"trap 'echo \"{FAILED} $LINENO\" >&2' ERR"]
    where: list[tuple[Block, int] | None] = [None]
    for b in chain.blocks:
        if b.kind == "given":
            text.append(b.arg)
            where.append((b, b.line - 1))  # the marker's line
        for k, line in enumerate(b.text.splitlines(), 1):
            text.append(line)
            where.append((b, b.line + k))
    return "\n".join(text) + "\n", where


CHAINS = chains()


@pytest.mark.unit
def test_every_marker_is_known_and_every_skip_says_why():
    bad = []
    for page in pages():
        lines = page.read_text().splitlines()
        for n, line in enumerate(lines, 1):
            if line.strip().startswith("<!-- recipe") and not MARKER.match(line.strip()):
                bad.append(f"{page.name}:{n}: unknown marker {line.strip()!r}")
        for b in blocks(page):
            if b.kind in ("skip", "given") and not b.arg:
                needs = "a reason" if b.kind == "skip" else "a command"
                bad.append(f"{b.page}:{b.line}: `{b.kind}` needs {needs}")
            if b.kind == "continue" and not any(b in c.blocks[1:] for c in CHAINS):
                bad.append(f"{b.page}:{b.line}: `continue` follows no block that runs")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: c.name)
def test_the_recipe_runs_as_written(chain, tmp_path):
    body, where = script(chain)
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")}
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp_path),
        PATH=f"{Path(ACOMM).parent}:{env.get('PATH', '/usr/bin:/bin')}",
    )
    # its own process group: a recipe's server started with `&` is stopped with the recipe
    proc = procs.spawn(
        ["bash", "-euo", "pipefail", "-c", body],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        procs.stop(proc, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{chain.name}: still running after {TIMEOUT} s\n{out}{err}")
    finally:
        procs.signal_group(proc, signal.SIGKILL)
    r = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    if r.returncode == 0:
        return
    m = re.search(rf"{FAILED} (\d+)", r.stderr)
    spot = where[int(m.group(1)) - 1] if m and int(m.group(1)) <= len(where) else None
    if spot:
        block, line = spot
        said = (
            block.arg if line == block.line - 1 else block.text.splitlines()[line - block.line - 1]
        )
        at = f"{block.page}, the block at line {block.line}, line {line}: {said.strip()}"
    else:
        at = f"{chain.name} (no line: bash stopped outside a command)"
    stderr = r.stderr.replace(f"{FAILED} ", "at script line ")
    pytest.fail(f"{at}\nexit {r.returncode}\n--- stdout\n{r.stdout}--- stderr\n{stderr}")
