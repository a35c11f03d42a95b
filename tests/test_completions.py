"""Shell completion: the scripts load in bash, zsh and fish, complete commands, options and
values, and look channel names and agent ids up in the store through `acomm __complete`."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from conftest import VENV_BIN
from directory_rows import put

pytestmark = pytest.mark.process

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = {
    "bash": REPO / "completions" / "acomm.bash",
    "zsh": REPO / "completions" / "_acomm",
    "fish": REPO / "completions" / "acomm.fish",
}


def needs(shell: str):
    return pytest.mark.skipif(
        shutil.which(shell) is None,
        reason=f"{shell} is not installed (make test installs it with apt-get when it can)",
    )


@pytest.fixture
def team(cli, make_channel):
    make_channel("team", "alice", "bob")
    store = make_channel("ci-events", "ci", type="pubsub")
    for name in ("alice", "bob", "carol", "ci"):
        put(store, name)
    put(store, "dana", kind="human")  # registered, in no channel yet: completed all the same
    put(store, "old", retired_at=1)  # retired: nothing new reaches it, so not offered
    cli.ok("send", "--to", "carol", "hi", "--as", "alice")  # an implicit direct channel
    return store


def _shell(argv: list[str], script: str, cwd: Path) -> str:
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    p = subprocess.run(
        [*argv, script], capture_output=True, text=True, timeout=60, env=env, cwd=cwd
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


# ---------------------------------------------------------------- the hidden word source


def test_complete_lists_channels_and_agents_a_user_may_type(cli, team):
    assert cli.ok("__complete", "channels").stdout == "_system\nci-events\nteam\n"
    assert cli.ok("__complete", "agents").stdout == "alice\nbob\ncarol\nci\ndana\n"


def test_complete_offers_registered_names_only(cli, team):
    """A name the store met but never registered is not offered; one registered later is."""
    c = sqlite3.connect(team)
    with c:
        c.execute("DELETE FROM agents WHERE name = 'ci'")
    c.close()
    assert cli.ok("__complete", "agents").stdout == "alice\nbob\ncarol\ndana\n"
    put(team, "zoe", kind="service")
    assert cli.ok("__complete", "agents").stdout.split() == ["alice", "bob", "carol", "dana", "zoe"]


def test_complete_on_a_store_without_a_directory_offers_no_names_and_no_error(cli, team):
    """An older store opened read-only before its migrations ran has no directory table:
    completion offers no names rather than failing."""
    c = sqlite3.connect(team)
    with c:
        c.execute("DROP TABLE agents")
    c.close()
    r = cli("__complete", "agents")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")


def test_complete_without_a_store_prints_nothing_on_stdout(cli, isolated_env):
    r = cli("__complete", "channels")
    assert r.exit_code == 7 and r.stdout == ""
    assert not isolated_env.exists()  # it never creates one


def test_complete_refuses_an_unknown_kind(cli, team):
    r = cli("__complete", "topics")
    assert r.exit_code == 2 and "kind" in r.stderr


def test_completions_prints_the_checked_in_scripts(cli):
    for shell, path in SCRIPTS.items():
        assert cli.ok("completions", shell).stdout == path.read_text(), shell


def test_completions_needs_a_known_shell(cli):
    r = cli("completions", "tcsh")
    assert r.exit_code == 2 and "bash, zsh, fish" in r.stderr
    assert cli("completions").exit_code == 2


def test_what_a_value_completes_to_comes_from_its_declared_type():
    """The same option name takes different values in different commands: each option's
    click type says which (acomm_cli/cli/params.py), not a table keyed by name."""
    from acomm_cli import model
    from acomm_cli.cli import clitree, docgen
    from acomm_cli.dispatch.dispatcher import STATUSES

    cmds = {c.path: c for c in docgen.tree().walk()}

    def param(path: tuple[str, ...], name: str) -> clitree.Param:
        return next(p for p in cmds[path].params if p.name == name)

    assert param(("receipts",), "status").choices == STATUSES
    assert param(("messages",), "status").choices == model.MESSAGE_STATUSES
    assert param(("ack",), "status").choices == tuple(s.value for s in model.AckStatus)
    assert param(("channel", "create"), "type_").choices == tuple(model.ChannelType)
    assert param(("send",), "type_").choices == tuple(model.MessageType)
    assert param(("channel", "create"), "name").kind is None  # a new channel's name
    for verb in (
        "join",
        "leave",
        "show",
        "pause",
        "resume",
        "drain",
        "close",
        "admin",
        "update",
        "delete",
    ):
        assert param(("channel", verb), "name").kind == "channel", verb
    assert param(("channel", "join"), "agent").kind == "agent"
    assert param(("channel", "admin"), "agent").kind == "agent"
    assert param(("deadletter", "list"), "recipient").kind == "agent"
    assert param((), "store").kind == "file" and param(("audit",), "exports").kind == "dir"


# ---------------------------------------------------------------- bash

BASH_PROBE = """
source {script}
t() {{ COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=(); _acomm
      (( ${{#COMPREPLY[@]}} )) && printf '%s|' "${{COMPREPLY[@]}}"; echo; }}
"""


@needs("bash")
def test_bash_script_loads():
    out = _shell(["bash", "-c"], f"source {SCRIPTS['bash']}; complete -p acomm", REPO)
    assert out.strip() == "complete -F _acomm acomm"


@needs("bash")
def test_bash_completes_commands_options_and_store_values(team, tmp_path):
    (tmp_path / "exports").mkdir()
    cases = {
        "acomm ch": "channel|",
        "acomm channel s": "show|",
        "acomm dead-letters p": "purge|",  # an alias
        "acomm channel show ''": "_system|ci-events|team|",
        "acomm channel create ''": "",  # a new name: nothing to offer
        "acomm send t": "team|",
        "acomm send team hi --as ''": "alice|bob|carol|ci|dana|",
        "acomm send --to d": "dana|",  # registered names, not retired ones (`old`)
        "acomm send --to o": "",
        "acomm channel join team c": "carol|ci|",  # an agent argument
        "acomm --json send --type c": "command|",
        "acomm channel create x --type p": "pubsub|",
        "acomm receive --prio": "--priority-min|",
        "acomm receive --channel ''": "_system|ci-events|team|",
        "acomm ack 1 --status in": "in_progress|",
        "acomm audit ex": "exports|",
        "acomm --store /nowhere/store.acomm send ''": "",  # the line's --store is used
    }
    script = BASH_PROBE.format(script=SCRIPTS["bash"]) + "".join(f"t {line}\n" for line in cases)
    got = _shell(["bash", "-c"], script, tmp_path).splitlines()
    assert dict(zip(cases, got, strict=True)) == cases


# ---------------------------------------------------------------- zsh

# _describe, compadd and _files only work inside a completion widget: stand-ins print what
# they are given, so the walk over the command line is checked as the user's zsh runs it.
ZSH_PROBE = """
compdef() {{ : }}
source {script}
_describe() {{ print -r -- "${{(j:|:)${{reply[@]%%:*}}}}|" }}
compadd() {{ local -a w; w=("$@"); [[ $w[1] == -a ]] && w=(${{(P)w[2]}});
            [[ $w[1] == -- ]] && shift w; print -r -- "${{(j:|:)w}}${{w:+|}}" }}
_files() {{ print -r -- "files $*" }}
_call_program() {{ shift; eval "$*" }}
t() {{ words=("$@"); CURRENT=$#; _acomm }}
"""


@needs("zsh")
def test_zsh_script_registers_with_compinit(tmp_path):
    out = _shell(
        ["zsh", "-f", "-c"],
        f"fpath=({SCRIPTS['zsh'].parent} $fpath); autoload -Uz compinit; "
        f"compinit -u -d {tmp_path}/zcompdump; print -r -- $_comps[acomm]",
        REPO,
    )
    assert out.strip() == "_acomm"


@needs("zsh")
def test_zsh_completes_commands_options_and_store_values(team, tmp_path):
    from acomm_cli.cli.app import COMMANDS

    cases = {
        # every command but the hidden ones, in order
        "acomm ch": "".join(f"{name}|" for name in COMMANDS if not name.startswith("_")),
        "acomm channel s": "create|join|leave|list|show|pause|resume|drain|close|admin|update"
        "|delete|",
        "acomm channel show ''": "_system|ci-events|team|",
        "acomm send team hi --as ''": "alice|bob|carol|ci|dana|",
        "acomm send --priority ''": "low|normal|high|urgent|critical|",
        "acomm audit ''": "files -/",
        "acomm --store=/nowhere/store.acomm send ''": "",
    }
    script = ZSH_PROBE.format(script=SCRIPTS["zsh"]) + "".join(f"t {line}\n" for line in cases)
    got = _shell(["zsh", "-f", "-c"], script, tmp_path).splitlines()
    assert dict(zip(cases, got, strict=True)) == cases


# ---------------------------------------------------------------- fish


@needs("fish")
def test_fish_completes_commands_options_and_store_values(team, tmp_path):
    (tmp_path / "exports").mkdir()
    cases = {
        "acomm chan": ["channel"],
        "acomm channel sh": ["show"],
        "acomm channel show ": ["_system", "ci-events", "team"],
        "acomm send ": ["_system", "ci-events", "team"],
        "acomm send team hi --as ": ["alice", "bob", "carol", "ci", "dana"],
        "acomm receive --prio": ["--priority-min"],
        "acomm dead-letters pu": ["purge"],
        "acomm audit ex": ["exports/"],
    }
    script = f"source {SCRIPTS['fish']}\n" + "".join(
        f"complete -C {line!r}; echo ---\n" for line in cases
    )
    out = _shell(["fish", "--no-config", "-c"], script, tmp_path)
    got = [
        sorted(c.split("\t")[0] for c in block.strip().splitlines())
        for block in out.split("---\n")[:-1]
    ]
    assert dict(zip(cases, got, strict=True)) == {k: sorted(v) for k, v in cases.items()}
