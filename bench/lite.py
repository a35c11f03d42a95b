"""What each of acomm_cli/lite/'s stand-ins saves on `acomm send` and `acomm receive`.

For every stand-in present in the tree, the real command runs twice over: as it is, and with
that one stand-in swapped for its standard-library equivalent (a module put in `sys.modules`
before acomm starts: `dataclasses`, `enum`, `pathlib`; for `records_made`, the module made
unimportable, so each record compiles its `__init__`; for `lazy_init`, each record's
`__init__` compiled when its class is defined rather than on first use). Runs are rotated
with a bare `python -c` sqlite3 baseline of the same interpreter; the tables give medians of
wall time and of CPU time (user + system: waiting for this shared machine's two cores does
not count), which decides. Each variant is also run under `python -X importtime`: the sum of
the top-level imports' cumulative times (the least of a few runs) is a second view.

Processes run on a copy of the installed layout (acomm_cli with store/ and commands/ inside)
with `python -S`: no editable finder (which loads pathlib before acomm runs) and no .pth
files, as a regular install's `acomm` starts. `--ref REF` measures a git ref's tree instead
(`git archive`), for example the commit before a stand-in was removed.

    .venv/bin/python bench/lite.py [--runs 40] [--ref REF] [--no-write]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

import stores
from cases import ENV_NOTE, _env
from harness import PYTHON, ROOT, WORK, duration, machine, rotate, write_section
from processes import UNREAD, _unread_again, _unread_store

SECTION = "## Start-up cost of acomm_cli/lite/'s stand-ins"
THRESHOLD_MS = 2.0  # a stand-in stays only where it saves this much on send or receive

_MODULE = "_m = type(sys)({name!r})\n{body}\nsys.modules[{name!r}] = _m\n"
# stand-in -> (its module, the standard-library twin put in its place)
SWAPS: dict[str, tuple[str, str]] = {
    "records": (
        "acomm_cli/lite/records.py",
        _MODULE.format(
            name="acomm_cli.lite.records",
            body="import dataclasses as _d\n"
            "for _n in ('dataclass', 'field', 'fields', 'replace', 'asdict'):\n"
            "    setattr(_m, _n, getattr(_d, _n))",
        ),
    ),
    "records_made": (
        "acomm_cli/lite/records_made.py",
        "sys.modules['acomm_cli.lite.records_made'] = None\n",
    ),
    "lazy_init": (
        "acomm_cli/lite/records.py",
        "import acomm_cli.lite.records as _r\n"
        "_b = _r._build\n_r._build = lambda c, f, s: _eager(_b(c, f, s))\n"
        "def _eager(c):\n    c.__init__\n    return c\n",
    ),
    "enums": (
        "acomm_cli/lite/enums.py",
        _MODULE.format(
            name="acomm_cli.lite.enums",
            body="from enum import IntEnum, StrEnum\n_m.IntEnum, _m.StrEnum = IntEnum, StrEnum",
        ),
    ),
    "paths": (
        "acomm_cli/lite/paths.py",
        _MODULE.format(
            name="acomm_cli.lite.paths",
            body="from pathlib import Path, PurePosixPath\n"
            "_m.pure = lambda p: str(PurePosixPath(p))\n"
            "_m.expanduser = lambda p: str(Path(p).expanduser())\n"
            "_m.absolute = lambda p: str(Path(p).absolute())\n"
            "_m.sibling = lambda p, name: str(Path(p).parent / name)",
        ),
    ),
}
WHAT = {
    "records": "`dataclasses` for the hot path's records",
    "records_made": "each record compiles its `__init__` (no records_made.py)",
    "lazy_init": "each record compiles its `__init__` when defined, not on first use",
    "enums": "`enum` for model.py's enums",
    "paths": "`pathlib` for store paths",
}

RUN = (
    "import sys\nsys.path.insert(0, {layout!r})\n{prelude}"
    "sys.argv = ['acomm', *{argv!r}]\nfrom {entry} import main\n"
    "sys.exit(main())\n"
)


def layout(ref: str | None, into: Path) -> Path:
    """acomm_cli with store/ and commands/ inside it, as setuptools installs them."""
    src = into / "src"
    if ref is None:
        src = ROOT
    else:
        src.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "acomm_cli", "store", "commands"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    root = into / "layout"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(src / "acomm_cli", root / "acomm_cli", ignore=skip)
    shutil.copytree(src / "store", root / "acomm_cli" / "store", ignore=skip)
    new = (src / "acomm_cli" / "cli" / "main.py").exists()  # older refs: shell/ and app.py
    commands = root / "acomm_cli" / "cli" / "commands" if new else root / "acomm_cli" / "commands"
    shutil.copytree(src / "commands", commands, ignore=skip)
    return root


def _entry(root: Path) -> str:
    """The `acomm` program's module in this layout."""
    new = (root / "acomm_cli" / "cli" / "main.py").exists()
    return "acomm_cli.cli.main" if new else "acomm_cli.shell.fastpath"


def command(root: Path, argv: list[str], prelude: str, *flags: str) -> list[str]:
    return [
        str(PYTHON),
        "-S",
        *flags,
        "-c",
        RUN.format(layout=str(root), prelude=prelude, argv=argv, entry=_entry(root)),
    ]


def timed(cmd: list[str], cpu: list[float]) -> float:
    """Runs `cmd` once: returns its wall time and appends its CPU time (user + system) to
    `cpu`, which waiting for the two shared cores does not inflate."""
    env = _env()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = perf_counter()
    done = subprocess.run(cmd, env=env, cwd=WORK, capture_output=True, text=True)
    elapsed = perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"exited {done.returncode}: {done.stderr.strip()[-400:]}")
    cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def import_time(cmd: list[str]) -> float:
    """Seconds: the sum of the top-level imports' cumulative times of one run."""
    done = subprocess.run(
        [cmd[0], "-X", "importtime", *cmd[1:]], env=_env(), cwd=WORK, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-400:])
    total = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        if not name[1:2].isspace():  # one space after the bar: a top-level import
            total += int(cumulative)
    return total / 1e6


def measure(root: Path, runs: int, importtime_runs: int) -> dict[str, object]:
    WORK.mkdir(parents=True, exist_ok=True)
    send_store = stores.group_store(WORK / "lite-send.acomm")
    recv_store = _unread_store(WORK / "lite-receive.acomm")
    present = [
        k
        for k, (path, _) in SWAPS.items()
        if (root / path).exists() and (k != "lazy_init" or "_LazyInit" in (root / path).read_text())
    ]
    variants = {"as is": "", **{k: SWAPS[k][1] for k in present}}
    argvs = {
        "send": [
            "--store",
            str(send_store),
            "send",
            "team",
            "hello from the benchmark",
            "--as",
            "alice",
        ],
        "receive": ["--store", str(recv_store), "receive", "--as", "bob", "--json"],
    }
    base = WORK / "lite-raw.db"
    stores.remove(base)
    c = sqlite3.connect(base)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    c.commit()
    c.close()
    baseline = [
        str(PYTHON),
        "-S",
        "-c",
        f"import sqlite3; c = sqlite3.connect({str(base)!r}); "
        "c.execute('INSERT INTO t (body) VALUES (?)', ('hello',)); c.commit()",
    ]
    out: dict[str, object] = {"present": present}
    for cmd_name, argv in argvs.items():
        cmds = {v: command(root, argv, pre) for v, pre in variants.items()}
        cpus: dict[str, list[float]] = {v: [] for v in [*cmds, "baseline"]}
        samples = [
            lambda c=c, t=cpus[v]: timed(c, t)  # type: ignore[misc]
            for v, c in cmds.items()
        ]
        if cmd_name == "receive":
            samples = [_unread_again(recv_store, s) for s in samples]
        samples.append(lambda t=cpus["baseline"]: timed(baseline, t))  # type: ignore[misc]
        times = rotate(samples, runs, warmup=2)
        wall = {v: statistics.median(t) for v, t in zip(cmds, times, strict=False)}
        wall["baseline"] = statistics.median(times[-1])
        cpu = {v: statistics.median(t[2:]) for v, t in cpus.items()}  # after the 2 warm-ups
        imp = {
            v: min(import_time(c) for _ in range(importtime_runs)) for v, c in cmds.items()
        }  # the least: other processes only ever add to it
        out[cmd_name] = {"wall": wall, "cpu": cpu, "imports": imp}
    return out


def saving(r: dict[str, object], cmd: str, k: str, measure: str) -> float:
    """Seconds the stand-in `k` saves `cmd` by `measure`: the variant minus `as is`."""
    m: dict[str, dict[str, float]] = r[cmd]  # type: ignore[assignment]
    return m[measure][k] - m[measure]["as is"]


def table(results: dict[str, dict[str, object]]) -> list[tuple[str, ...]]:
    """One row per (tree, stand-in): what swapping it for the stdlib costs each command. The
    verdict: kept when its CPU saving on one command reaches the threshold."""
    rows = []
    for tree, r in results.items():
        present: list[str] = r["present"]  # type: ignore[assignment]
        for k in present:
            cells = [k, tree, WHAT[k]]
            best = 0.0
            for cmd in ("send", "receive"):
                cpu, imp = saving(r, cmd, k, "cpu"), saving(r, cmd, k, "imports")
                cells += [f"{cpu * 1e3:+.1f} ms", f"{imp * 1e3:+.1f} ms"]
                best = max(best, cpu)
            cells.append("yes" if best * 1e3 >= THRESHOLD_MS else "no")
            rows.append(tuple(cells))
    return rows


HEAD = (
    "stand-in",
    "tree",
    "swapped for",
    "send: CPU",
    "send: imports",
    "receive: CPU",
    "receive: imports",
    f"saves >= {THRESHOLD_MS:g} ms?",
)


def residual(results: dict[str, dict[str, object]]) -> list[str]:
    """What a precompiled `__init__` module (records_made, measured at a ref) would still save
    over the working tree's compiling each `__init__` on first use (lazy_init)."""
    tree = results.get("working tree")
    if tree is None or "lazy_init" not in tree["present"]:  # type: ignore[operator]
        return []
    out = []
    for name, r in results.items():
        if "records_made" not in r["present"]:  # type: ignore[operator]
            continue
        cells = []
        for cmd in ("send", "receive"):
            for measure in ("cpu", "imports"):
                left = saving(r, cmd, "records_made", measure) - saving(
                    tree, cmd, "lazy_init", measure
                )
                cells.append(f"{cmd} {'CPU' if measure == 'cpu' else measure} {left * 1e3:+.1f} ms")
        out += [
            "",
            f"`lazy_init` is part of `records`, not a stand-in: what it saves is most "
            f"of what `records_made` (the generated module of precompiled `__init__`, at "
            f"{name}) saved against compiling every `__init__` when its class is defined. "
            f"What the generated module would still save over compiling on first use: "
            f"{', '.join(cells)}.",
        ]
    return out


def markdown(
    results: dict[str, dict[str, object]],
    runs: int,
    importtime_runs: int,
    when: datetime,
    argv: list[str],
) -> str:
    m = machine()
    lines = [
        SECTION,
        "",
        f"Run {when:%Y-%m-%d %H:%M} UTC on nproc {m['nproc']}, Python "
        f"{m['python'].split(' (')[0]}, "
        f"load average at start {m['load average at start']}: "
        f"`.venv/bin/python bench/lite.py {' '.join(argv)}`.",
        "",
        "What each stand-in in acomm_cli/lite/ saves: the command's median with the "
        "stand-in swapped for the standard library, minus its median as it is (positive: "
        "the stand-in saves that much). `CPU` is the process's user + system time (waiting "
        "for the two shared cores does not count), `imports` the sum of the top-level "
        "imports' cumulative times under `python -X importtime` (the least of "
        f"{importtime_runs} runs; wall time, so noisier). A stand-in stays when its median "
        f"CPU saving on send or receive is at least {THRESHOLD_MS:g} ms; the conditions "
        "under which each may go are in acomm_cli/lite/__init__.py. A tree other than the "
        "working tree is a commit before some stand-ins were removed.",
        "",
        "| " + " | ".join(HEAD) + " |",
        "|" + "---|" * len(HEAD),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in table(results)]
    lines += residual(results)
    lines += [
        "",
        "Medians of the whole processes, wall (CPU), in ms:",
        "",
        "| tree | command | as is | with the standard library for | bare `python -S -c` "
        "sqlite3 insert |",
        "|---|---|---|---|---|",
    ]
    for tree, r in results.items():
        present: list[str] = r["present"]  # type: ignore[assignment]
        for cmd in ("send", "receive"):
            w: dict[str, float] = r[cmd]["wall"]  # type: ignore[index]
            c: dict[str, float] = r[cmd]["cpu"]  # type: ignore[index]

            def ms(v: str, w: dict[str, float] = w, c: dict[str, float] = c) -> str:
                return f"{w[v] * 1e3:.1f} ({c[v] * 1e3:.1f})"

            others = ", ".join(f"{k}: {ms(k)}" for k in present)
            lines.append(f"| {tree} | {cmd} | {ms('as is')} | {others} | {ms('baseline')} |")
    lines += [
        "",
        f"{runs} runs of each variant, rotated with the baseline after 2 warm-up "
        f"runs; `receive --json` reads {UNREAD} unread messages, marked unread again "
        "(untimed) before each run. Every process is `python -S` on a copy of the "
        "installed layout (no editable finder, no .pth files); " + ENV_NOTE + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--importtime-runs", type=int, default=7)
    ap.add_argument(
        "--ref", action="append", default=[], help="also measure this git ref's tree (repeatable)"
    )
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    when = datetime.now(UTC)
    results: dict[str, dict[str, object]] = {}
    for ref in [None, *args.ref]:
        with tempfile.TemporaryDirectory() as tmp:
            root = layout(ref, Path(tmp))
            name = "working tree" if ref is None else f"`{ref}`"
            results[name] = measure(root, args.runs, args.importtime_runs)
            for cmd in ("send", "receive"):
                r = results[name][cmd]
                print(
                    f"{name} {cmd}: "
                    + ", ".join(
                        f"{k} {duration(v)} (CPU {duration(r['cpu'][k])})"  # type: ignore[index]
                        for k, v in r["wall"].items()
                    ),
                    file=sys.stderr,
                )  # type: ignore[index]
    print(" | ".join(HEAD))
    for row in table(results):
        print(" | ".join(row))
    if not args.no_write:
        write_section(SECTION, markdown(results, args.runs, args.importtime_runs, when, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
