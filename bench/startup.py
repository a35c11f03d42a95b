"""Start-up of every command against `acomm send`'s, and `acomm --version` against `python -c pass`.

    .venv/bin/python bench/startup.py [--runs 7] [--no-help] [--out docs/BENCHMARKS.md] [--no-write]

A command's start-up is what it pays before its work on the store. Every top-level command and
every group's subcommand runs once a round as one representative command line (its required
arguments and options filled with placeholders: `acomm ack 1`, `acomm cursor create x
--channel x`) under `bench/startup_probe.py`, which runs the `acomm` program's own `main()` and
exits where the command's body would start: after the fast path has read the line and imported
the body's module, or after Typer has built and parsed the command and its callback has made
the Invocation. `acomm send team hello --as alice` under the same probe is the reference;
`acomm send` (a real one-message send on a small store), `acomm --version` and `python -c
pass` run as they are. The `path` column says which way the command line runs (fast, or
Typer); `--help`, always Typer's, is shown beside it (no target). Every case runs once per
round, the order rotated round by round, after a warm-up round; the table gives medians of
the wall time and of the process's CPU time (user + system, from wait4: a loaded machine moves
it much less than the wall time). Targets: every command's probe within 1.3x of the send
probe; `acomm --version` within 1.3x of `python -c pass` plus 10 ms. A row passes when its
wall time and its CPU time both do: on a loaded machine the wall times of short processes are
mostly waiting for a core, and a ratio of them can pass what the CPU times show is not met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import machine, write_section

from acomm_cli.engine import channels, opening
from acomm_cli.model import ChannelConfig

ROOT = Path(__file__).resolve().parent.parent
# what the table shows, under it in docs/BENCHMARKS.md
NOTE = (
    "A command on the fast path (`@runs(body)` in its declaration, its body in a module "
    "without typer, read from the generated tree by `cli/main.py`) starts as a send does: "
    "the tree, the settings, the Invocation and the body's module. A command on Typer pays "
    "for importing typer and its click (with inspect, typing, subprocess, shutil, uuid...) "
    "and building its parser: nearly twice the CPU of a send's start-up, more than the 1.3x "
    "target leaves. Every command has a body of its own but `acomm completions SHELL`, "
    "whose work is walking the whole command tree, which only the Typer app holds (a body "
    "may not import the app). A command line also goes to Typer when an option it gives "
    "converts in click's own way (a path, a date) or is not read exactly as click reads it "
    "(a clustered short option, `--`, a repeated flag); `--help` and every refusal of a "
    "malformed line are Typer's too."
)
ACOMM = str(Path(sys.executable).parent / "acomm")
PROBE = str(Path(__file__).resolve().parent / "startup_probe.py")
SECTION = "## Start-up of every command"
T0 = 1_700_000_000_000
SEND = ["send", "team", "hello", "--as", "alice"]


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{argv} exited {p.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def _placeholder(p: Any) -> str:
    """A value the command's parser accepts (the probe stops before the body reads it)."""
    from typer._click.types import FloatParamType, IntParamType

    choices = getattr(p.type, "choices", None)
    if choices:
        return str(choices[0])
    if isinstance(p.type, IntParamType | FloatParamType):
        return "1"
    return "x"


def _line(path: list[str], cmd: Any) -> list[str]:
    """`path` with the command's required arguments and options filled in."""
    args = list(path)
    for p in cmd.params:
        if not p.required:
            continue
        if p.param_type_name == "argument":
            args.append(_placeholder(p))
        else:
            args += [p.opts[0], _placeholder(p)]
    return args


def command_lines() -> list[list[str]]:
    """One command line for every top-level command and every group's subcommand (and a
    group that runs without one, `acomm dispatch`), in `acomm --help`'s order."""
    import typer
    from typer._click.core import Context
    from typer.core import TyperGroup

    from acomm_cli.cli.app import COMMANDS, app

    root = typer.main.get_command(app)
    ctx = Context(root, info_name="acomm")
    lines = []
    for name in COMMANDS:
        if name.startswith("_"):
            continue
        cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
        if not isinstance(cmd, TyperGroup):
            lines.append(_line([name], cmd))
            continue
        if cmd.invoke_without_command:
            lines.append([name])
        for sub_name, sub in cmd.commands.items():
            lines.append(_line([name, sub_name], sub))
    return lines


def _path(argv: list[str]) -> str:
    from acomm_cli.cli import main

    return "fast" if main.plan(argv) is not None else "Typer"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--no-help", action="store_true", help="skip the --help column")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "BENCHMARKS.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    info = machine()  # with the load average at the start
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    work = Path(tempfile.mkdtemp(prefix="acomm-startup-"))
    store = work / "store.acomm"
    conn = opening.connect(store, create=True)
    channels.create_channel(conn, "team", "group", "alice", ChannelConfig(), T0)
    channels.join_channel(conn, "team", "bob", "member", T0, by="alice")
    conn.close()
    # bytecode cached (as an installed acomm has it), no ACOMM_* settings but the store
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACOMM_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["ACOMM_STORE"] = str(store)
    env["ACOMM_IDENTITY_DIRECTORY"] = "open"
    os.environ.clear()
    os.environ.update(env)  # plan() below reads the environment as the probes do
    python = [sys.executable, PROBE]
    cases: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "acomm --version": [ACOMM, "--version"],
        "acomm send": [ACOMM, *SEND],
    }
    lines = [SEND, *command_lines()]
    names = [" ".join(line) for line in lines]
    paths = {name: _path(line) for name, line in zip(names, lines, strict=True)}
    for name, line in zip(names, lines, strict=True):
        cases[f"probe {name}"] = [*python, *line]
        if not args.no_help:
            cases[f"help {name}"] = [ACOMM, *line, "--help"]
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
    order = list(cases)
    for i in range(args.runs + 1):
        for case in order:
            sample = _run(cases[case], env)
            if i:
                got[case].append(sample)
        order = order[1:] + order[:1]
    wall = {k: statistics.median(w for w, _ in v) for k, v in got.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in got.items()}
    ref = f"probe {names[0]}"
    send_w, send_c = wall[ref], cpu[ref]
    bare_w, bare_c = wall["python -c pass"], cpu["python -c pass"]

    def ms(case: str) -> str:
        return f"{wall[case] * 1000:.0f} / {cpu[case] * 1000:.0f} ms"

    rows = [
        "| command line | path | start-up, wall / CPU (median) | wall / send's | CPU / send's "
        "| `--help`, wall / CPU | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for case in ("python -c pass", "acomm send"):
        rows.append(f"| `{case}` (whole) | | {ms(case)} | | | | |")
    limit = 1.3 * bare_w + 0.010
    ok = wall["acomm --version"] <= limit and cpu["acomm --version"] <= 1.3 * bare_c + 0.010
    passed, failed = int(ok), int(not ok)
    rows.append(
        f"| `acomm --version` (whole) | | {ms('acomm --version')} | | | | "
        f"{'PASS' if ok else 'FAIL'} (<= 1.3 x python + 10 ms: {limit * 1000:.0f} ms) |"
    )
    for name in names:
        case = f"probe {name}"
        w, c = wall[case] / send_w, cpu[case] / send_c
        reference = case == ref
        ok = w <= 1.3 and c <= 1.3
        if not reference:
            passed, failed = passed + ok, failed + (not ok)
        help_ = "" if args.no_help else ms(f"help {name}")
        verdict = "reference" if reference else "PASS" if ok else "FAIL"
        rows.append(
            f"| `acomm {name}` | {paths[name]} | {ms(case)} | {w:.2f}x | {c:.2f}x | {help_} "
            f"| {verdict} |"
        )
    summary = (
        f"{passed} pass, {failed} fail (target: each command's start-up <= 1.3x the send "
        f"probe's, wall and CPU); send probe {send_w * 1000:.0f} ms wall, "
        f"{send_c * 1000:.0f} ms CPU; "
        f"{sum(p == 'fast' for p in paths.values())} of {len(paths)} lines on the fast path."
    )
    print("\n".join(rows))
    print(f"\n{summary}")
    if args.no_write:
        return
    text = "\n".join(
        [
            SECTION,
            "",
            f"Generated by `bench/startup.py` ({args.runs} runs of each, {started}); do not edit "
            "by hand. " + __doc__.split("\n\n", 2)[2].replace("\n", " ").strip() + " Reproduce:",
            "",
            "```sh",
            ".venv/bin/python bench/startup.py",
            "```",
            "",
            *rows,
            "",
            summary,
            "",
            NOTE,
            "",
            f"Machine: {'; '.join(f'{k}: {v}' for k, v in info.items())}",
        ]
    )
    write_section(SECTION, text, args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
