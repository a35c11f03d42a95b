"""What each of acomm_cli/lite/'s stand-ins saves on `acomm send` and `acomm receive`.

For every stand-in present in the tree, the real command runs twice over: as it is, and with
that one stand-in swapped for its standard-library equivalent (a module put in `sys.modules`
before acomm starts: `dataclasses`, `enum`, `pathlib`; for `records_made`, the module made
unimportable, so each record compiles its `__init__`). Runs are rotated with a bare
`python -c` sqlite3 baseline of the same interpreter; the table gives medians. Because this
machine is shared and noisy, each variant is also run under `python -X importtime`: the sum of
the top-level imports' cumulative times (median of a few runs) is the steadier number.

Processes run on a copy of the installed layout (acomm_cli with store/ and commands/ inside)
with `python -S`: no editable finder (which loads pathlib before acomm runs) and no .pth
files, as a regular install's `acomm` starts. `--ref REF` measures a git ref's tree instead
(`git archive`), for example the commit before a stand-in was removed.

    .venv/bin/python bench/lite.py [--runs 40] [--ref REF] [--no-write]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import stores
from cases import ENV_NOTE, _env
from harness import PYTHON, ROOT, WORK, duration, machine, rotate, write_section
from processes import UNREAD, _unread_again, _unread_store

SECTION = "## Start-up cost of acomm_cli/lite/'s stand-ins"
THRESHOLD_MS = 2.0  # a stand-in stays only where it saves this much on send or receive

_MODULE = "_m = type(sys)({name!r})\n{body}\nsys.modules[{name!r}] = _m\n"
# stand-in -> (its module, the standard-library twin put in its place)
SWAPS: dict[str, tuple[str, str]] = {
    "records": ("acomm_cli/lite/records.py", _MODULE.format(
        name="acomm_cli.lite.records", body="import dataclasses as _d\n"
        "for _n in ('dataclass', 'field', 'fields', 'replace', 'asdict'):\n"
        "    setattr(_m, _n, getattr(_d, _n))")),
    "records_made": ("acomm_cli/lite/records_made.py",
                     "sys.modules['acomm_cli.lite.records_made'] = None\n"),
    "enums": ("acomm_cli/lite/enums.py", _MODULE.format(
        name="acomm_cli.lite.enums", body="from enum import IntEnum, StrEnum\n"
        "_m.IntEnum, _m.StrEnum = IntEnum, StrEnum")),
    "paths": ("acomm_cli/lite/paths.py", _MODULE.format(
        name="acomm_cli.lite.paths", body="from pathlib import Path, PurePosixPath\n"
        "_m.pure = lambda p: str(PurePosixPath(p))\n"
        "_m.expanduser = lambda p: str(Path(p).expanduser())\n"
        "_m.absolute = lambda p: str(Path(p).absolute())\n"
        "_m.sibling = lambda p, name: str(Path(p).parent / name)")),
}
WHAT = {
    "records": "`dataclasses` for the hot path's records",
    "records_made": "each record compiles its `__init__` (no records_made.py)",
    "enums": "`enum` for model.py's enums",
    "paths": "`pathlib` for store paths",
}

RUN = ("import sys\nsys.path.insert(0, {layout!r})\n{prelude}"
       "sys.argv = ['acomm', *{argv!r}]\nfrom acomm_cli.shell.fastpath import main\n"
       "sys.exit(main())\n")


def layout(ref: str | None, into: Path) -> Path:
    """acomm_cli with store/ and commands/ inside it, as setuptools installs them."""
    src = into / "src"
    if ref is None:
        src = ROOT
    else:
        src.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "acomm_cli", "store",
                                  "commands"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    root = into / "layout"
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(src / "acomm_cli", root / "acomm_cli", ignore=skip)
    shutil.copytree(src / "store", root / "acomm_cli" / "store", ignore=skip)
    shutil.copytree(src / "commands", root / "acomm_cli" / "commands", ignore=skip)
    return root


def command(root: Path, argv: list[str], prelude: str, *flags: str) -> list[str]:
    return [str(PYTHON), "-S", *flags, "-c", RUN.format(layout=str(root), prelude=prelude,
                                                        argv=argv)]


def timed(cmd: list[str]) -> float:
    env = _env()
    t0 = _clock()
    done = subprocess.run(cmd, env=env, cwd=WORK, capture_output=True, text=True)
    elapsed = _clock() - t0
    if done.returncode != 0:
        raise RuntimeError(f"exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return elapsed


def _clock() -> float:
    from time import perf_counter
    return perf_counter()


def import_time(cmd: list[str]) -> float:
    """Seconds: the sum of the top-level imports' cumulative times of one run."""
    done = subprocess.run([cmd[0], "-X", "importtime", *cmd[1:]], env=_env(), cwd=WORK,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip()[-400:])
    total = 0
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:"):].split("|")
        if not name[1:2].isspace():  # one space after the bar: a top-level import
            total += int(cumulative)
    return total / 1e6


def measure(root: Path, runs: int, importtime_runs: int) -> dict[str, object]:
    WORK.mkdir(parents=True, exist_ok=True)
    send_store = stores.group_store(WORK / "lite-send.acomm")
    recv_store = _unread_store(WORK / "lite-receive.acomm")
    present = [k for k, (path, _) in SWAPS.items() if (root / path).exists()]
    variants = {"as is": "", **{k: SWAPS[k][1] for k in present}}
    argvs = {
        "send": ["--store", str(send_store), "send", "team", "hello from the benchmark",
                 "--as", "alice"],
        "receive": ["--store", str(recv_store), "receive", "--as", "bob", "--json"],
    }
    base = WORK / "lite-raw.db"
    stores.remove(base)
    c = sqlite3.connect(base)
    c.execute("PRAGMA journal_mode = WAL")
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    c.commit()
    c.close()
    baseline = [str(PYTHON), "-S", "-c", f"import sqlite3; c = sqlite3.connect({str(base)!r}); "
                "c.execute('INSERT INTO t (body) VALUES (?)', ('hello',)); c.commit()"]
    out: dict[str, object] = {"present": present}
    for cmd_name, argv in argvs.items():
        cmds = {v: command(root, argv, pre) for v, pre in variants.items()}
        samples = [lambda c=c: timed(c) for c in cmds.values()]  # type: ignore[misc]
        if cmd_name == "receive":
            samples = [_unread_again(recv_store, s) for s in samples]
        samples.append(lambda: timed(baseline))
        times = rotate(samples, runs, warmup=2)
        wall = {v: statistics.median(t) for v, t in zip(cmds, times, strict=False)}
        wall["baseline"] = statistics.median(times[-1])
        imp = {v: statistics.median(import_time(c) for _ in range(importtime_runs))
               for v, c in cmds.items()}
        out[cmd_name] = {"wall": wall, "imports": imp}
    return out


def table(results: dict[str, dict[str, object]]) -> list[tuple[str, ...]]:
    """One row per (tree, stand-in): what swapping it for the stdlib costs each command."""
    rows = []
    for tree, r in results.items():
        for k in r["present"]:  # type: ignore[attr-defined]
            cells = [k, tree, WHAT[k]]
            best = 0.0
            for cmd in ("send", "receive"):
                m = r[cmd]
                wall = m["wall"][k] - m["wall"]["as is"]  # type: ignore[index]
                imp = m["imports"][k] - m["imports"]["as is"]  # type: ignore[index]
                cells += [f"{wall * 1e3:+.1f} ms", f"{imp * 1e3:+.1f} ms"]
                best = max(best, min(wall, imp) if wall > 0 else wall)
            cells.append("keep" if best * 1e3 >= THRESHOLD_MS else "remove")
            rows.append(tuple(cells))
    return rows


HEAD = ("stand-in", "tree", "replaced by", "send: wall", "send: imports", "receive: wall",
        "receive: imports", f">= {THRESHOLD_MS:g} ms?")


def markdown(results: dict[str, dict[str, object]], runs: int, when: datetime,
             argv: list[str]) -> str:
    m = machine()
    lines = [SECTION, "",
             f"Run {when:%Y-%m-%d %H:%M} UTC on nproc {m['nproc']}, Python {m['python']}, "
             f"load average at start {m['load average at start']}: "
             f"`.venv/bin/python bench/lite.py {' '.join(argv)}`.", "",
             "What each stand-in in acomm_cli/lite/ saves: the command's median with the "
             "stand-in swapped for the standard library minus its median as it is (positive: "
             "the stand-in saves that much). `wall` is the whole process, `imports` the sum of "
             "the top-level imports under `python -X importtime` (steadier on a shared "
             f"machine). A stand-in stays when it saves at least {THRESHOLD_MS:g} ms on send or "
             "receive in both measures; the conditions under which each may go are in "
             "acomm_cli/lite/__init__.py.", "",
             "| " + " | ".join(HEAD) + " |", "|" + "---|" * len(HEAD)]
    lines += ["| " + " | ".join(row) + " |" for row in table(results)]
    lines += ["", "Medians of the whole processes (ms):", "",
              "| tree | command | " + " | ".join(["as is", "with the stdlib for: ..."]) + " |",
              "|---|---|---|---|"]
    for tree, r in results.items():
        for cmd in ("send", "receive"):
            wall = r[cmd]["wall"]  # type: ignore[index]
            others = ", ".join(f"{k} {wall[k] * 1e3:.1f}" for k in r["present"])  # type: ignore
            lines.append(f"| {tree} | {cmd} | {wall['as is'] * 1e3:.1f} | {others}; bare "
                         f"`python -S -c` sqlite3 insert {wall['baseline'] * 1e3:.1f} |")
    lines += ["", f"{runs} runs of each variant, rotated with the baseline after 2 warm-up "
              f"runs; `receive --json` reads {UNREAD} unread messages, marked unread again "
              "(untimed) before each run. Every process is `python -S` on a copy of the "
              "installed layout (no editable finder, no .pth files); " + ENV_NOTE + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--importtime-runs", type=int, default=7)
    ap.add_argument("--ref", action="append", default=[],
                    help="also measure this git ref's tree (repeatable)")
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
                wall = results[name][cmd]["wall"]  # type: ignore[index]
                print(f"{name} {cmd}: " + ", ".join(f"{k} {duration(v)}"
                                                   for k, v in wall.items()), file=sys.stderr)
    print(" | ".join(HEAD))
    for row in table(results):
        print(" | ".join(row))
    if not args.no_write:
        write_section(SECTION, markdown(results, args.runs, when, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
