"""Output a person can read: lists as words (never Python's `['vps']`), every audit table
headed on a terminal, log lines with an ISO time and a level, Spark's failures on an exit
status of their own, `acomm -V [-v]`, and the closest commands for a mistyped one."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys

import pytest
from conftest import ACOMM, VENV_BIN, run

from acomm_cli import __version__, errors
from acomm_cli.output import render

pytestmark = pytest.mark.cli

ISO = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
REPR = re.compile(r"\[['\"]|['\"]\]|\{['\"]")  # `['vps']`, `{'a': 1}`


# ---------------------------------------------------------------- lists as words


def test_a_list_is_printed_as_comma_separated_words(capsys):
    assert render.words(["vps", "nas"]) == "vps, nas"
    assert render.words({"a": 1, "b": [2, 3]}) == "a=1, b=2, 3"
    assert render.words(frozenset({"b", "a"})) == "a, b"
    assert render.words([]) == ""
    assert render.words("text") == "text" and render.words(7) == 7
    render.status(render.Output(), {"read": 0, "unreachable": ["vps", "nas"]})
    render._kv_line({"written": 1, "unreachable": ["vps", "nas"]})
    render._table(render.Output(), None, ["node", "peers"], [("na", ["nb", "nc"])])
    out = capsys.readouterr().out
    assert "unreachable: vps, nas\n" in out
    assert "written=1 unreachable=vps,nas\n" in out  # one word: key=value lines split on spaces
    assert "na\tnb, nc\n" in out
    assert not REPR.search(out), out


@pytest.mark.federation
def test_fed_pull_names_an_unreachable_peer_in_words(cli, tmp_path):
    """A node whose peer is down: `fed pull` says so, in its lines and its note, no repr."""
    store = tmp_path / "na.acomm"
    cli.ok("--store", store, "node", "init", "--id", "na")
    cli.ok("--store", store, "peers", "add", "vps", "--url", f"store:{tmp_path / 'gone.acomm'}")
    r = cli("--store", store, "fed", "pull")
    assert r.exit_code == 7, r.stderr  # the counts printed, then peer_unreachable
    assert re.search(r"^unreachable: +vps$", r.stdout, re.M), r.stdout
    assert "skipped node vps for this pass" in r.stderr
    assert "peer_unreachable: peer vps could not be pulled" in r.stderr
    assert not REPR.search(r.stdout + r.stderr), r.stdout + r.stderr
    # --json keeps the list a list
    assert cli("--store", store, "--json", "fed", "pull").json()["unreachable"] == ["vps"]


# ---------------------------------------------------------------- did you mean


@pytest.mark.parametrize(
    ("args", "wanted", "help_of"),
    [
        (["recieve"], "Did you mean receive?", "acomm"),
        (["chanel", "list"], "Did you mean one of channel, cancel?", "acomm"),
        (["channel", "craete", "x"], "Did you mean create?", "acomm channel"),
        (["deadletter", "lsit"], "Did you mean list?", "acomm deadletter"),
    ],
)
def test_a_mistyped_command_gets_the_closest_ones(cli, store, args, wanted, help_of):
    r = cli(*args)
    assert r.exit_code == 2
    typo = args[1] if help_of != "acomm" else args[0]
    assert r.stderr == (
        f"acomm: error: usage: No such command: {typo}. {wanted} (see `{help_of} --help`)\n"
    )


def test_several_close_commands_are_all_named_and_none_is_said_plainly(cli, store):
    r = cli("recei")
    assert r.exit_code == 2
    assert "Did you mean one of receive, receipts?" in r.stderr
    r = cli("xyzzy", "--json")
    assert r.exit_code == 2
    assert r.error == {"code": "usage", "message": "No such command: xyzzy. (see `acomm --help`)"}
    assert "__complete" not in cli("__compleet").stderr  # hidden commands are never offered


@pytest.mark.process
def test_a_mistyped_command_in_a_real_process():
    p = run("recieve", "--as", "bob")
    assert p.returncode == 2
    assert "No such command: recieve. Did you mean receive?" in p.stderr


# ---------------------------------------------------------------- --version


def test_version_and_its_verbose_form_through_typer(cli):
    for args in (["--version"], ["-V"], ["--no-color", "--version"]):
        r = cli(*args)
        assert (r.exit_code, r.stdout) == (0, f"acomm {__version__}\n"), args
    for args in (["--version", "-v"], ["-v", "-V"], ["-V", "--verbose", "--no-color"], ["-Vv"]):
        r = cli(*args)
        assert r.exit_code == 0, args
        _check_verbose(r.stdout)


def _check_verbose(out: str) -> None:
    lines = out.splitlines()
    assert lines[0] == f"acomm {__version__}"
    assert lines[1].startswith(f"python {sys.version.split()[0]} ")
    assert lines[2] == f"sqlite {sqlite3.sqlite_version} (library)"
    extras = dict(line.split(": ", 1) for line in lines[3:])
    assert list(extras) == ["federation", "mcp", "ui", "web", "spark", "otel"]
    from importlib import metadata

    # the test environment installs every extra: each line names its libraries' versions
    assert f"pyspark {metadata.version('pyspark')}" in extras["spark"]
    assert f"textual {metadata.version('textual')}" in extras["ui"]
    assert f"mcp {metadata.version('mcp')}" in extras["mcp"]
    assert "not installed" not in out


def test_an_extra_not_installed_says_so(monkeypatch):
    from importlib import metadata

    from acomm_cli.cli import version

    real = metadata.version

    def without_textual(name: str) -> str:
        if name == "textual":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", without_textual)
    assert "\nui: not installed\n" in version.text(verbose=True)


@pytest.mark.process
def test_version_answers_without_typer_in_a_real_process():
    """`acomm -V` is answered before Typer is imported (it runs in shell prompts and probes);
    with -v it also says what it runs on."""
    probe = (
        "import sys\n"
        "sys.argv = ['acomm', *sys.argv[1:]]\n"
        "from acomm_cli.cli import main\n"
        "try:\n    main.main()\n"
        "except SystemExit as exc:\n"
        "    print('typer' in sys.modules, exc.code, file=sys.stderr)\n"
    )
    for args, verbose in ((["-V"], False), (["--version"], False), (["-V", "-v"], True)):
        p = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=60
        )
        assert p.stderr == "False 0\n", (args, p.stderr)
        if verbose:
            _check_verbose(p.stdout)
        else:
            assert p.stdout == f"acomm {__version__}\n"
    p = run("--version", "-v")
    assert p.returncode == 0
    _check_verbose(p.stdout)


# ---------------------------------------------------------------- Spark's exit status


def test_spark_failures_have_their_own_exit_status():
    assert errors.SparkError.exit_status == errors.SparkUnavailable.exit_status == 8
    others = {c.exit_status for c in _tree() if not issubclass(c, errors.SparkError)}
    assert 8 not in others  # 1 stays a bug's; no other failure shares Spark's


def _tree() -> list[type[errors.CommError]]:
    found, todo = [], [errors.CommError]
    while todo:
        cls = todo.pop(0)
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


@pytest.mark.process
def test_audit_without_a_java_exits_8_naming_it(cli, store, tmp_path):
    cli.ok("send", "--to", "bob", "hi", "--as", "alice")
    cli.ok("export", tmp_path / "export")
    env = {"JAVA_HOME": str(tmp_path / "no-java"), "PATH": str(VENV_BIN)}
    p = run("audit", tmp_path / "export", "--out", tmp_path / "audit", "--json", env=env)
    assert p.returncode == 8, p.stderr
    err = json.loads(p.stderr)["error"]
    assert err["code"] == "spark_unavailable" and "Java 17" in err["message"]
    p = run("audit", tmp_path / "export", "--out", tmp_path / "audit", env=env)
    assert p.returncode == 8
    assert p.stderr.startswith("acomm: error: spark_unavailable: ")


# ---------------------------------------------------------------- log lines


@pytest.mark.process
def test_tick_every_writes_log_lines_with_an_iso_time_and_a_level(cli, store, tmp_path):
    """A pass that meets a locked store is a WARNING line; stopped while still locked, the
    worker's last line is the ERROR it exits with; -v lines are DEBUG."""
    lock = sqlite3.connect(store, timeout=5, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    env = {**os.environ, "ACOMM_BUSY_TIMEOUT": "100ms"}
    p = subprocess.Popen(
        [ACOMM, "-v", "tick", "--every", "200ms"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert p.stderr is not None
        seen = []
        while not any(" WARNING " in line for line in seen):
            line = p.stderr.readline()
            assert line, seen
            seen.append(line)
        p.send_signal(signal.SIGINT)
        rest = p.communicate(timeout=30)[1]
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
        lock.execute("ROLLBACK")
        lock.close()
    assert p.returncode == 7
    lines = [*seen, *rest.splitlines(keepends=True)]
    warning = next(line for line in lines if " WARNING " in line)
    assert re.fullmatch(
        rf"{ISO} WARNING acomm: tick: store .* is locked .*; trying again (in [\d.]+s|now)\n",
        warning,
    ), warning
    errors_ = [line for line in lines if " ERROR " in line]
    assert len(errors_) == 1 and re.fullmatch(
        rf"{ISO} ERROR acomm: store_unavailable: store .*\n", errors_[0]
    ), errors_
    # what -v says while the store opens is plain; from then on every line is a log line
    assert lines[0].startswith("acomm: verbose: store ")
    logged = lines[next(i for i, x in enumerate(lines) if re.match(ISO, x)) :]
    assert all(re.match(rf"{ISO} (DEBUG|INFO|WARNING|ERROR) acomm: ", x) for x in logged), lines
    assert any(re.fullmatch(rf"{ISO} DEBUG acomm: done in .*\n", line) for line in logged)


def test_log_lines_only_in_the_worker_that_asked(cli, store, capsys):
    """A note is `acomm: note: ...` as ever; as a log line it gets its time and level, and
    the next command prints plain notes again."""
    render.log_lines()
    render.note("note: tick: trying again", level="WARNING")
    render.note("warning: mailbox bridge: 1 mirror write(s) failed")
    render.note("note: a note")
    render.error(errors.StoreLocked("store x is locked"), as_json=False)
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" ", 1)[1] for line in err] == [
        "WARNING acomm: tick: trying again",
        "WARNING acomm: mailbox bridge: 1 mirror write(s) failed",
        "INFO acomm: a note",
        "ERROR acomm: store_unavailable: store x is locked",
    ]
    assert all(re.match(ISO + " ", line) for line in err)
    render.loudness(quiet=True, verbose=False)  # -q: a worker's INFO lines go, not the rest
    render.log_lines()
    render.note("note: a note")
    render.note("note: tick: trying again", level="WARNING")
    assert capsys.readouterr().err.split(" ", 1)[1] == "WARNING acomm: tick: trying again\n"
    render.loudness(quiet=False, verbose=False)  # what every command starts with
    render.note("note: a note")
    assert capsys.readouterr().err == "acomm: note: a note\n"


def test_the_gateway_log_format(capsys):
    import logging

    from acomm_cli.output import logs

    record = logging.LogRecord(
        "acomm.gateway", logging.WARNING, __file__, 1, "peers: %s", ("vps",), None
    )
    record.created = 1_790_000_000.5
    assert logs.formatter().format(record) == (
        "2026-09-21T14:13:20.500Z WARNING acomm.gateway: peers: vps"
    )


# ---------------------------------------------------------------- the audit on a terminal


@pytest.mark.spark
def test_every_audit_table_has_its_headings_on_a_terminal(
    spark, cli, store, tmp_path, capsys, monkeypatch
):
    from audit_traffic import DAY1, day1
    from freezegun import freeze_time

    from acomm_cli.analytics import audit
    from acomm_cli.analytics.auditsummary import AuditTable
    from acomm_cli.output import render_analytics

    with freeze_time(DAY1) as clock:
        day1(cli, clock)
        cli.ok("export", tmp_path / "export")
    result = audit.run([str(tmp_path / "export")], out=str(tmp_path / "audit"), spark=spark)
    tables: list[AuditTable] = []
    real = render_analytics._table

    def seen(out, title, headers, rows):
        tables.append(AuditTable("", title, list(headers), list(rows)))
        real(out, title, headers, rows)

    monkeypatch.setattr(render_analytics, "_table", seen)
    monkeypatch.setattr(render.Output, "tty", property(lambda self: True))
    monkeypatch.setenv("COLUMNS", "250")
    render_analytics.audit_summary(render.Output(color=False), result)
    shown = capsys.readouterr().out
    assert len(tables) >= 14 and all(t.headers and t.title for t in tables)
    lines = shown.splitlines()
    for t in tables:  # each title (rich may wrap it), then its headings on one line under it
        at = next(i for i, line in enumerate(lines) if t.title[:30] in line)
        heads = next(line for line in lines[at + 1 :] if t.headers[0] in line)
        assert all(h in heads for h in t.headers), (t.title, heads)
    assert "dead letters by reason" in shown and "reason" in shown
    # piped: the `spark` lines name their number, as the `total` lines do
    monkeypatch.setattr(render.Output, "tty", property(lambda self: False))
    render_analytics.audit_summary(render.Output(), result)
    piped = capsys.readouterr().out.splitlines()
    assert "spark\tmaster\tlocal[2]" in piped
    assert any(line.startswith("spark\tversion\t4.") for line in piped)
    assert any(line.startswith("spark\twork_s\t") for line in piped)
    assert not REPR.search("\n".join(piped))
