"""`acomm send` (and `acomm receive --json`) of this checkout against another git revision's,
interleaved.

    .venv/bin/python bench/versions.py                    # against 62baa54~1; rewrites its section
    .venv/bin/python bench/versions.py --rev v0.1 --no-write   # another revision, print only
    .venv/bin/python bench/versions.py --runs 61          # more rounds per side (default 41)

The other revision is checked out in a throwaway worktree under bench/out/ (`git worktree add
--detach`, removed at the end even when a run fails). Each side gets a venv made alike: `python
-m venv` and `pip install -e` of the core package, no extras (this checkout's venv is kept in
bench/out/venv-this; the other's lives in its worktree and goes with it), so the two differ by
their code alone; both have their bytecode compiled (`compileall`) before any run, as an
installed package has, so that neither pays for compiling its sources (PYTHONDONTWRITEBYTECODE,
when set, would otherwise make every process compile them). Each side makes its own store with
its own `acomm init`, registers alice and bob (`acomm agent register`) and makes a group channel
of the two (`channel create`, `channel join`), so a send reaches a recipient. Then, in rounds
that rotate which side goes first (after two warm-up rounds), each side runs `acomm send team
MSG --as alice` and then `acomm receive --as bob --json` (which reads that one message) as
processes; every run must exit 0.

The verdict is on the median CPU time of the child process (user + system, from the kernel's
accounting of children): the machine is shared with other work, which moves the wall time (shown
beside it) far more than the CPU time. Target: this checkout's plain send within 3% of the other
revision's (CPU time ratio <= 1.03). receive is measured and shown, not judged.

The statements a send runs are counted on each side by running the side's own `acomm send`
entry point in a process of that side's venv with a trace callback on every SQLite connection
it opens (the whole command: opening the store included), once plain and once with
`--correlation-id`, the case where trace inheritance may look a message up. This script owns
the section "## send and receive against an earlier revision" of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter

from harness import DOC, OUT, ROOT, machine, median, rotate, spread, write_section

SECTION = "## send and receive against an earlier revision"
TARGET = 1.03
DEFAULT_REV = "62baa54~1"  # just before migration m021 (events, traces, attachments)
SENDER, RECIPIENT, CHANNEL = "alice", "bob", "team"
WARMUP = 2
PACKAGE_DIRS = ("acomm_cli", "store", "commands")  # pyproject's package-dir

# Runs one command through the side's entry point and prints every SQL statement its
# connections ran, as JSON on the last line of stdout.
PROBE = r"""
import json, sqlite3, sys
seen = []
_connect = sqlite3.connect
def connect(*a, **k):
    c = _connect(*a, **k)
    c.set_trace_callback(seen.append)
    return c
sqlite3.connect = connect
sys.argv = ["acomm", *json.loads(sys.argv[1])]
from acomm_cli.cli.main import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"code": code, "statements": seen, "modules": sorted(sys.modules)}))
"""


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _git(*argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(argv)}: {done.stderr.strip()}")
    return done.stdout.strip()


def _base_python() -> str:
    return shutil.which("python3.11") or sys.executable


def make_venv(venv: Path, source: Path) -> Path:
    """A venv with an editable install of `source`'s core package, as the Makefile makes
    .venv but without the extras."""
    if not (venv / "bin" / "python").exists():
        subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-e", str(source)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip install -e {source}: {done.stderr}")
    # An installed package has its bytecode; an editable one writes it on first import,
    # unless PYTHONDONTWRITEBYTECODE is set (it may be, here): compile it once, so that no
    # side pays for compiling its sources, which grow with every change.
    dirs = [str(source / d) for d in PACKAGE_DIRS if (source / d).is_dir()]
    subprocess.run([str(venv / "bin" / "python"), "-m", "compileall", "-q", *dirs], check=True)
    return venv / "bin"


class Side:
    """One build of acomm, its store and the environment its commands run with."""

    def __init__(self, name: str, label: str, bin_dir: Path, work: Path) -> None:
        self.name = name
        self.label = label
        self.bin = bin_dir
        self.store = work / name / "store.acomm"
        self.store.parent.mkdir(parents=True)
        self.env = {
            **{
                k: v
                for k, v in os.environ.items()
                if not k.startswith("ACOMM_") and k != "PYTHONDONTWRITEBYTECODE"
            },
            "ACOMM_STORE": str(self.store),
        }
        self.send_cpu: list[float] = []
        self.send_wall: list[float] = []
        self.recv_cpu: list[float] = []
        self.recv_wall: list[float] = []
        self.statements: dict[str, list[str]] = {}
        self.modules: list[str] = []
        self.commits = 0  # the other side: how many commits this checkout has beyond it

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(self.bin / "acomm"), *argv],
            env=self.env,
            cwd=self.store.parent,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{self.name}: acomm {' '.join(argv)}: exit {done.returncode}: {done.stderr}"
            )
        return done

    def setup(self) -> None:
        self.run("init")
        self.run("agent", "register", SENDER, RECIPIENT)
        self.run("channel", "create", CHANNEL, "--type", "group", "--as", SENDER)
        self.run("channel", "join", CHANNEL, RECIPIENT, "--as", SENDER)

    def _timed(self, argv: list[str], cpu: list[float], wall: list[float]) -> str:
        c0, t0 = _cpu(), perf_counter()
        out = self.run(*argv).stdout
        wall.append(perf_counter() - t0)
        cpu.append(_cpu() - c0)
        return out

    def round(self) -> float:
        """One send, then the receive that reads it."""
        self._timed(["send", CHANNEL, "bench", "--as", SENDER], self.send_cpu, self.send_wall)
        out = self._timed(["receive", "--as", RECIPIENT, "--json"], self.recv_cpu, self.recv_wall)
        if "bench" not in out:
            raise RuntimeError(f"{self.name}: receive --json did not read the send: {out!r}")
        return 0.0

    def drop_warmup(self) -> None:
        for xs in (self.send_cpu, self.send_wall, self.recv_cpu, self.recv_wall):
            del xs[:WARMUP]

    def probe(self, key: str, argv: list[str]) -> None:
        done = subprocess.run(
            [str(self.bin / "python"), "-c", PROBE, json.dumps(argv)],
            env=self.env,
            cwd=self.store.parent,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: probe {argv}: {done.stderr}")
        got = json.loads(done.stdout.strip().splitlines()[-1])
        if got["code"] != 0:
            raise RuntimeError(f"{self.name}: probe {argv} exited {got['code']}: {done.stderr}")
        self.statements[key] = got["statements"]
        if key == "plain":
            self.modules = got["modules"]


def interval(a: list[float], b: list[float], draws: int = 2000) -> tuple[float, float]:
    """A 90% bootstrap interval of median(a) / median(b): how far the ratio could move with
    other runs of the same machine."""
    rng = random.Random(0)
    ratios = sorted(
        median(rng.choices(a, k=len(a))) / median(rng.choices(b, k=len(b))) for _ in range(draws)
    )
    return ratios[int(draws * 0.05)], ratios[int(draws * 0.95) - 1]


def _shape(sql: str) -> str:
    """A statement without its values, to compare two sides' statements."""
    sql = re.sub(r"'(?:[^']|'')*'", "?", sql)
    sql = re.sub(r"\b\d+(?:\.\d+)?\b", "?", sql)
    return " ".join(sql.split())


def _reads(statement: str) -> str:
    """A SELECT without its column list: what it reads, and by which condition."""
    if not statement.startswith("SELECT ") or " FROM " not in statement:
        return statement
    return "SELECT ... FROM " + statement.split(" FROM ", 1)[1]


def _only(a: list[str], b: list[str]) -> list[str]:
    """The statement shapes of `a` that `b` lacks (a multiset difference)."""
    rest = [_shape(s) for s in b]
    out = []
    for s in map(_shape, a):
        if s in rest:
            rest.remove(s)
        else:
            out.append(s)
    return out


def measure(rev: str, runs: int) -> tuple[Side, Side]:
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    OUT.mkdir(parents=True, exist_ok=True)
    tree = OUT / f"rev-{sha[:10]}"
    if tree.exists():
        _git("worktree", "remove", "--force", str(tree))
    _git("worktree", "add", "--detach", str(tree), sha)
    try:
        this_bin = make_venv(OUT / "venv-this", ROOT)
        other_bin = make_venv(tree / ".venv", tree)
        head = _git("rev-parse", "--short", "HEAD")
        with tempfile.TemporaryDirectory(prefix="acomm-versions-bench-") as tmp:
            this = Side("this", f"this checkout ({head})", this_bin, Path(tmp))
            other = Side("other", f"{rev} ({sha[:7]})", other_bin, Path(tmp))
            other.commits = int(_git("rev-list", "--count", f"{sha}..HEAD"))
            for s in (this, other):
                s.setup()
            rotate([this.round, other.round], runs, warmup=WARMUP)
            for s in (this, other):
                s.drop_warmup()
                s.probe("plain", ["send", CHANNEL, "probe", "--as", SENDER])
                s.probe(
                    "correlated",
                    ["send", CHANNEL, "probe", "--as", SENDER, "--correlation-id", "c-probe"],
                )
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True
        )
    return this, other


def report(
    this: Side, other: Side, rev: str, runs: int, info: dict[str, str], argv: list[str]
) -> tuple[bool, str, str]:
    send_ratio = median(this.send_cpu) / median(other.send_cpu)
    recv_ratio = median(this.recv_cpu) / median(other.recv_cpu)
    ok = send_ratio <= TARGET
    lo, hi = interval(this.send_cpu, other.send_cpu)
    rlo, rhi = interval(this.recv_cpu, other.recv_cpu)
    verdict = f"<= {TARGET:g}x: {'PASS' if ok else 'FAIL'}"
    rows = [
        (f"send, {other.label} (CPU)", spread(other.send_cpu), ""),
        (f"send, {this.label} (CPU)", spread(this.send_cpu), ""),
        (
            "send, this / other (CPU)",
            f"{send_ratio:.3f}x (90% interval {lo:.3f} .. {hi:.3f})",
            verdict,
        ),
        (f"send, {other.label} (wall)", spread(other.send_wall), ""),
        (f"send, {this.label} (wall)", spread(this.send_wall), ""),
        (
            "send, this / other (wall)",
            f"{median(this.send_wall) / median(other.send_wall):.3f}x",
            "",
        ),
        (f"receive --json, {other.label} (CPU)", spread(other.recv_cpu), ""),
        (f"receive --json, {this.label} (CPU)", spread(this.recv_cpu), ""),
        (
            "receive --json, this / other (CPU)",
            f"{recv_ratio:.3f}x (90% interval {rlo:.3f} .. {rhi:.3f})",
            "shown, not judged",
        ),
        (f"receive --json, {other.label} (wall)", spread(other.recv_wall), ""),
        (f"receive --json, {this.label} (wall)", spread(this.recv_wall), ""),
        (
            "receive --json, this / other (wall)",
            f"{median(this.recv_wall) / median(other.recv_wall):.3f}x",
            "",
        ),
    ]
    counts = [
        (
            f"{s.label}: a plain send runs {len(s.statements['plain'])} statements, one with "
            f"`--correlation-id` {len(s.statements['correlated'])}"
        )
        for s in (other, this)
    ]
    extra = _only(this.statements["plain"], other.statements["plain"])
    fewer = _only(other.statements["plain"], this.statements["plain"])
    # the correlated send's INSERT names more columns: a different statement, not an added one
    inherit = [
        s
        for s in _only(this.statements["correlated"], this.statements["plain"])
        if not s.startswith("INSERT INTO messages ")
    ]
    # a read whose columns changed (a table grew a column) is the same read, not an added one
    before = {_reads(_shape(s)) for s in other.statements["plain"]}
    reads = [
        s
        for s in extra
        if not s.startswith(("INSERT", "UPDATE", "DELETE")) and _reads(s) not in before
    ]
    no_query = len(this.statements["plain"]) <= len(other.statements["plain"]) and not reads
    diff = [
        "statements of a plain send that only this checkout runs: "
        + ("none" if not extra else "; ".join(f"`{s}`" for s in extra)),
        "statements of a plain send that only the other revision runs: "
        + ("none" if not fewer else "; ".join(f"`{s}`" for s in fewer)),
        "what `--correlation-id` adds to a send of this checkout (besides naming the "
        "correlation in its INSERT): "
        + ("nothing" if not inherit else "; ".join(f"`{s}`" for s in inherit)),
    ]
    inheritance = (
        "trace inheritance adds no query to a send without a correlation: "
        + ("PASS" if no_query else "FAIL")
        + f" ({len(other.statements['plain'])} statements before, "
        f"{len(this.statements['plain'])} now"
        + ("" if not reads else "; reads only here: " + "; ".join(f"`{s}`" for s in reads))
        + ")"
    )
    new = sorted(set(this.modules) - set(other.modules))
    gone = sorted(set(other.modules) - set(this.modules))
    diff.append(
        f"modules loaded by a plain send: {len(other.modules)} on the other revision, "
        f"{len(this.modules)} on this checkout; only here: "
        + (", ".join(f"`{m}`" for m in new) if new else "none")
        + "; only there: "
        + (", ".join(f"`{m}`" for m in gone) if gone else "none")
    )
    width = max(len(r[0]) for r in rows)
    text = [f"{n.ljust(width)}  {v}  {t}".rstrip() for n, v, t in rows]
    text += ["", inheritance, *counts, *diff]
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = ".venv/bin/python bench/versions.py" + "".join(f" {a}" for a in argv)
    md = [
        SECTION,
        "",
        f"Generated by `bench/versions.py` ({runs} rounds per side, {now}); do not edit by hand. "
        f"Reproduce with:",
        "",
        "```sh",
        command,
        "```",
        "",
        f"This checkout ({this.label.split('(')[-1].rstrip(')')}) against `{other.label}`"
        + (
            ", the revision before the events, traces and attachments (migration m021); "
            if rev == DEFAULT_REV
            else "; "
        )
        + f"the comparison covers all {other.commits} commits between the two, not one piece "
        "of work alone. Each side is an editable install of the core package (no extras) in "
        "a venv of its own, its bytecode compiled beforehand (`compileall`: no side pays for "
        "compiling its sources, as an installed package never does), with its own store made "
        "by its own `acomm init`, alice and bob registered and a group channel of the two. "
        "In rounds that rotate which side goes first (after "
        f"{WARMUP} warm-up rounds), each side runs `acomm send {CHANNEL} MSG --as {SENDER}` "
        f"and then `acomm receive --as {RECIPIENT} --json`, which reads that message. The "
        "verdict is on the median CPU time of the command's process (user + system): the "
        "machine is shared (see its load average below), which moves the wall time, shown "
        "under it, far more. Target: a send without event options within 3% of the earlier "
        "revision's. The verdict is on the ratio of the medians; beside it, a 90% bootstrap "
        "interval of that ratio (resampling each side's runs) says how far other runs on this "
        "machine could move it.",
        "",
        "| | median [p10, p90] | target |",
        "|---|---|---|",
        *(f"| {n} | {v} | {t} |" for n, v, t in rows),
        "",
        f"Verdict on the queries: {inheritance}. The SQL statements were counted by a trace "
        "callback on every connection the side's own `acomm send` opens (opening the store "
        "included), after the timed rounds; the `--correlation-id` send names a correlation "
        "no message has:",
        "",
        *(f"- {c}." for c in counts),
        *(f"- {d}." for d in diff),
        "",
        "Machine: " + "; ".join(f"{k}: {v}" for k, v in info.items()),
        "",
    ]
    return ok and no_query, "\n".join(text), "\n".join(md)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default=DEFAULT_REV, help=f"the revision (default {DEFAULT_REV})")
    ap.add_argument("--runs", type=int, default=41, help="rounds per side (default 41)")
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args()
    info = machine()
    this, other = measure(args.rev, args.runs)
    info["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    shown = ([] if args.rev == DEFAULT_REV else ["--rev", args.rev]) + (
        [] if args.runs == 41 else ["--runs", str(args.runs)]
    )
    ok, text, md = report(this, other, args.rev, args.runs, info, shown)
    print(text)
    if not args.no_write:
        write_section(SECTION, md)
        print(f"wrote {SECTION!r} in {DOC}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
