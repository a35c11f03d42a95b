"""Generated documentation: man pages, completion scripts and docs/cli.md never drift from the
app, every command's --help has a one-line summary and an example, and the man pages render."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from acomm_cli.cli import docgen
from acomm_cli.cli.commands import send as send_module

pytestmark = pytest.mark.cli

REPO = Path(__file__).resolve().parent.parent

TREE = docgen.tree()
COMMANDS = list(TREE.walk())  # the root first; a test run per command is named by it
by_command = pytest.mark.parametrize("cmd", COMMANDS, ids=[c.name for c in COMMANDS])
MAN_PAGES = ["acomm.1", *(f"acomm-{c.path[0]}.1" for c in TREE.subcommands)]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("generated")
    docgen.write(out, docgen.render_all(TREE))
    return out


@pytest.mark.process
def test_checked_in_files_match_a_fresh_render(generated):
    fresh = sorted(p.relative_to(generated) for p in generated.rglob("*") if p.is_file())
    assert fresh, "the generator wrote nothing"
    differ = [
        str(rel)
        for rel in fresh
        if not (REPO / rel).is_file() or (REPO / rel).read_bytes() != (generated / rel).read_bytes()
    ]
    stale = [
        str(p.relative_to(REPO))
        for p in (REPO / "man").glob("*.1")
        if not (generated / p.relative_to(REPO)).exists()
    ]
    assert not differ + stale, (
        f"out of date: {', '.join(differ + stale)}; run `{docgen.REFRESH}` and commit the result"
    )


@pytest.mark.process
@by_command
def test_every_command_has_a_page_and_a_reference_section(cmd, generated):
    assert f"\n## {cmd.name}\n" in (generated / "docs" / "cli.md").read_text()
    if cmd.path:  # the root's page is acomm(1); every other command is on its group's page
        page = generated / "man" / f"acomm-{cmd.path[0]}.1"
        assert page.is_file()
        assert cmd.name.replace("-", "\\-") in page.read_text()


@pytest.mark.process
def test_a_changed_help_string_is_caught(monkeypatch):
    assert docgen.drift(REPO) == []
    monkeypatch.setattr(
        send_module.send,
        "__doc__",
        send_module.send.__doc__.replace("Send a message", "Post a message"),
    )
    changed = docgen.drift(REPO)
    assert {"docs/cli.md", "man/acomm-send.1", "man/acomm.1"} <= set(changed)
    # ... and the check names the command that refreshes them
    assert docgen.main(["--check", str(REPO)]) == 1


@pytest.mark.process
def test_the_check_names_the_command_to_run(tmp_path, capsys):
    assert docgen.main(["--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "out of date: docs/cli.md" in err and "run `make docs`" in err


@pytest.mark.process
def test_stale_pages_of_removed_commands_are_reported_and_removed(tmp_path):
    files = docgen.render_all()
    docgen.write(tmp_path, files)
    (tmp_path / "man" / "acomm-gone.1").write_text(".TH GONE 1\n")
    assert docgen.drift(tmp_path, files) == ["man/acomm-gone.1"]
    assert docgen.write(tmp_path, files) == ["man/acomm-gone.1"]
    assert docgen.drift(tmp_path, files) == []


@by_command
def test_every_help_has_a_one_line_summary_and_an_example(cli, cmd):
    r = cli(*cmd.path, "--help")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"Usage: {cmd.name}")
    # the summary is the first paragraph and fits on one line of --help
    assert lines[1] == "" and lines[2] == f"  {cmd.summary}"
    assert lines[3] == "", "the summary takes more than one line"
    assert len(lines[2]) <= 80
    assert cmd.examples, "no `Example:` paragraph"
    # every example, whole, on one line: copied from a terminal it is one command
    for _caption, line in cmd.examples:
        assert any(x.strip().endswith(line) for x in lines), line


@by_command
def test_every_option_is_explained(cmd):
    assert [p.opts[-1] for p in cmd.params if not p.help] == []


def test_hidden_commands_are_left_out(cli):
    assert "__complete" not in cli("--help").stdout
    assert all("__complete" not in c.name for c in COMMANDS)


def test_help_is_plain_text_without_colour(cli):
    r = cli("channel", "create", "--help", env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in r.stdout and "╭" not in r.stdout
    assert "Example: acomm channel create" in r.stdout


@pytest.mark.process
@pytest.mark.skipif(
    shutil.which("groff") is None, reason="groff is not installed (make test installs groff-base)"
)
@pytest.mark.parametrize("page", MAN_PAGES)
def test_man_pages_render_without_warnings(page):
    p = subprocess.run(
        ["groff", "-man", "-Tutf8", "-ww", str(REPO / "man" / page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0 and p.stderr == "", p.stderr
    text = re.sub(".\b", "", p.stdout)  # overstruck bold and underline
    assert "NAME" in text and "SYNOPSIS" in text


@pytest.mark.process
@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_reads_the_pages_as_a_user_would():
    p = subprocess.run(
        ["man", "-l", str(REPO / "man" / "acomm-channel.1")],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "MANPAGER": "cat", "MANWIDTH": "80", "LANG": "C.UTF-8"},
    )
    assert p.returncode == 0, p.stderr
    assert "acomm channel create [OPTIONS] NAME" in p.stdout
    assert "--delivery MODE" in p.stdout  # hyphens stay ASCII hyphens: copy-pasteable


def test_version_prints_the_version(cli):
    from acomm_cli import __version__

    r = cli("--version")
    assert r.exit_code == 0 and r.stdout == f"acomm {__version__}\n"
