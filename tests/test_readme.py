"""The README's promises: a new user goes from a clone to a working two-agent
exchange reading only its first screen; every link of the README and the docs pages leads
somewhere; the config file `acomm init` writes calls only defaults defaults."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from conftest import ACOMM

from acomm_cli.cli import config
from acomm_cli.dispatch import agents

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIRST_SCREEN = 45  # lines: what a terminal or a repository page shows before any scrolling


def _tour() -> tuple[int, str]:
    """The fenced block under "Two agents in six commands": (its first line, its text)."""
    text = README.read_text()
    start = text.index("## Two agents in six commands")
    m = re.compile(r"```sh\n(.*?)```", re.S).search(text, start)
    assert m, "the tour has a ```sh block"
    return text.count("\n", 0, m.start()) + 1, m.group(1)


def test_make_demo_and_make_test_come_first():
    """The repository's two entry points, exactly, near the top."""
    head = README.read_text().splitlines()[:20]
    assert "make demo   # creates .venv, installs acomm, runs examples/demo.sh" in head
    assert (
        "make test   # creates .venv, installs acomm with its test extras, runs the linters "
        "and the whole suite"
    ) in head
    assert any("minutes" in line for line in README.read_text().splitlines()[:25]), (
        "the README says how long `make test` takes"
    )


@pytest.mark.process
def test_the_first_screen_two_agent_exchange_works_as_written(tmp_path):
    """The tour's block, run as it is written (bash, from the checkout, PATH to the
    installed acomm): alice's message reaches bob, bob's answer reaches alice, each read
    once; nothing outside the fresh directory is touched."""
    line, block = _tour()
    assert line + block.count("\n") <= FIRST_SCREEN, "the tour must fit on the first screen"
    commands = [c for c in block.splitlines() if c.startswith("acomm ")]
    assert len(commands) == 6, commands
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")}
    env.update(
        TMPDIR=str(tmp_path),
        HOME=str(tmp_path),
        PATH=f"{Path(ACOMM).parent}:{env.get('PATH', '/usr/bin:/bin')}",
    )
    script = block + 'echo "--- store at $PWD"\n'
    r = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    where = Path(out[-1].removeprefix("--- store at "))
    assert where.parent == tmp_path and (where / ".acomm" / "store.acomm").is_file()
    assert out[0] == str(where / ".acomm" / "store.acomm")  # init names the store it made
    assert out[1:3] == ["alice", "bob"]  # registered: a new store refuses other names
    assert out[3] == "1"  # as the comment says: the message id
    bob_reads = [x for x in out if "Build 1.4 is green. Deploy?" in x]
    alice_reads = [x for x in out if "Deploying now" in x]
    assert len(bob_reads) == 1 and "alice" in bob_reads[0].split()
    assert len(alice_reads) == 1 and "bob" in alice_reads[0].split()
    assert out.index(bob_reads[0]) < out.index("2") < out.index(alice_reads[0])
    # both messages were read: a second receive has nothing for either agent
    for who in ("alice", "bob"):
        again = subprocess.run(
            [ACOMM, "receive", "--as", who, "--json"],
            cwd=where,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0 and '"messages": []' in again.stdout, again.stdout


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings (outside fenced blocks)."""
    found, fence = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_heading(page):
    for target in _LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: {target} leads nowhere"
        if anchor and dest.suffix == ".md":
            assert anchor in _anchors(dest), f"{page.name}: no heading #{anchor} in {dest.name}"


def test_the_readme_links_every_reference_page():
    """The reference lives in docs/, one page per area, each linked from the README."""
    text = README.read_text()
    for page in (
        "CONCEPTS",
        "CHANNELS",
        "DELIVERY",
        "SCRIPTING",
        "BRIDGE",
        "DISPATCH",
        "TASKS",
        "CAPABILITIES",
        "EXPORT",
        "FEDERATION",
        "STORE",
        "INSTALL",
        "cli",
    ):
        assert f"(docs/{page}.md)" in text, page


# ---------------------------------------------------------------- the init config file


def _uncommented() -> tuple[dict, set[str]]:
    """config.yaml as `acomm init` writes it, every setting uncommented: (the YAML, the
    dotted keys whose line says it is an example)."""
    lines = config.DEFAULT_CONFIG.splitlines()
    start = lines.index("# store:")
    body, examples, section = [], set(), ""
    for raw in lines[start:]:
        line = raw.removeprefix("# ")
        body.append(line)
        m = re.match(r"^( *)([a-z_]+):", line)
        if m and not m.group(1):
            section = m.group(2)
        elif m and "# example" in line:
            examples.add(f"{section}.{m.group(2)}")
    return yaml.safe_load("\n".join(body)), examples


def test_the_init_config_calls_only_defaults_defaults():
    """Each setting shown is its default, unless its line says "example" (and then it has
    none: showing `inbox_dir: ~/.claude/inbox` as a default would claim the bridge is on)."""
    doc, examples = _uncommented()
    for section, values in doc.items():
        if section == config.AGENTS:
            continue
        for key, value in values.items():
            dotted = f"{section}.{key}"
            default, parse, _env = config.KEYS[dotted]
            if dotted in examples:
                assert default is None, f"{dotted} has a default: do not call it an example"
            else:
                assert parse(value, dotted) == default, f"{dotted}: {value!r} is not its default"
    for dotted, (default, _p, _e) in config.KEYS.items():
        if dotted.split(".")[0] in doc and dotted in examples:
            assert default is None


def test_the_init_config_example_agent_shows_the_agent_defaults(tmp_path):
    doc, examples = _uncommented()
    [(name, raw)] = doc[config.AGENTS].items()
    spec = agents.parse_agent(name, raw, tmp_path)
    plain = agents.AgentSpec(name=name, run="true")
    assert (spec.timeout_ms, spec.max_attempts, spec.backoff_ms, spec.jitter, spec.unmatched) == (
        plain.timeout_ms,
        plain.max_attempts,
        plain.backoff_ms,
        plain.jitter,
        plain.unmatched,
    )
    assert {f"agents.{k}" for k in ("reviewer", "run", "on", "cwd")} <= examples
