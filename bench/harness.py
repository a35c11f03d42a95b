"""Timing helpers, results and the machine description shared by the benchmarks."""

from __future__ import annotations

import cProfile
import io
import os
import platform
import pstats
import sqlite3
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PYTHON = BIN / "python"
ACOMM = BIN / "acomm"
OUT = ROOT / "bench" / "out"
WORK = OUT / "work"

Sample = Callable[[], float]  # runs once and returns the seconds it took


@dataclass
class Result:
    """One row of the table: a measured value against a baseline from the same invocation.

    `kind` says how to read the numbers: "time" (lower is better, ratio = measured / baseline,
    target `ratio <= limit`), "rate" (higher is better, ratio = measured / baseline, target
    `ratio >= limit`) or "speedup" (times, ratio = baseline / measured, target
    `ratio >= limit`).
    """

    name: str
    title: str
    kind: str
    measured: float
    baseline: float
    limit: float
    unit: str = "s"
    baseline_title: str = ""
    details: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def ratio(self) -> float:
        if self.kind == "speedup":
            return self.baseline / self.measured
        return self.measured / self.baseline

    @property
    def ok(self) -> bool:
        if self.error is not None:
            return False
        if self.kind == "time":
            return self.ratio <= self.limit
        return self.ratio >= self.limit

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "ERROR"
        return "PASS" if self.ok else "FAIL"

    def value(self, x: float) -> str:
        if self.error is not None:
            return "-"
        if self.unit == "s":
            return duration(x)
        return f"{x:,.0f} {self.unit}"

    def ratio_text(self) -> str:
        if self.error is not None:
            return "-"
        if self.kind == "rate":
            return f"{self.ratio:.0%}"
        if self.kind == "speedup":
            return f"{self.ratio:.1f}x faster"
        return f"{self.ratio:.2f}x"

    def target_text(self) -> str:
        if self.error is not None:
            return "-"
        if self.kind == "rate":
            return f">= {self.limit:.0%}"
        if self.kind == "speedup":
            return f">= {self.limit:g}x faster"
        return f"<= {self.limit:g}x"


def failed(name: str, title: str, exc: BaseException) -> Result:
    return Result(name, title, "time", 0.0, 0.0, 0.0, error=f"{type(exc).__name__}: {exc}")


def duration(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.2f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} µs"


def timed(fn: Callable[[], object]) -> Sample:
    def run() -> float:
        t0 = perf_counter()
        fn()
        return perf_counter() - t0

    return run


def interleave(a: Sample, b: Sample, n: int, warmup: int = 1) -> tuple[list[float], list[float]]:
    """Run `a` and `b` n times each, alternating which goes first (ABBA), after `warmup` runs
    of each that are thrown away; returns the two lists of durations."""
    ta, tb = rotate([a, b], n, warmup)
    return ta, tb


def rotate(samples: list[Sample], n: int, warmup: int = 1) -> list[list[float]]:
    """Run every sample n times, rotating which goes first in each round, after `warmup`
    rounds that are thrown away; returns one list of durations per sample."""
    for _ in range(warmup):
        for s in samples:
            s()
    out: list[list[float]] = [[] for _ in samples]
    k = len(samples)
    for i in range(n):
        for j in range(k):
            idx = (i + j) % k
            out[idx].append(samples[idx]())
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def spread(xs: list[float], fmt: Callable[[float], str] = duration) -> str:
    """median [p10 .. p90] of n samples, for the details section."""
    qs = statistics.quantiles(xs, n=10) if len(xs) >= 2 else [xs[0]] * 9
    return f"median {fmt(median(xs))} [p10 {fmt(qs[0])}, p90 {fmt(qs[-1])}] of {len(xs)}"


def profile(fn: Callable[[], object], top: int = 20) -> str:
    """cProfile one call of `fn`: the functions with the most own time."""
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)
    return buf.getvalue()


def synchronous_name(conn: sqlite3.Connection) -> str:
    value = conn.execute("PRAGMA synchronous").fetchone()[0]
    return {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(value, str(value))


def machine() -> dict[str, str]:
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 0
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    from importlib.metadata import version

    return {
        "nproc": str(cpus) + (f" ({model})" if model else ""),
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": f"{platform.python_version()} ({sys.executable})",
        "sqlite": sqlite3.sqlite_version,
        "typer": version("typer"),
        "load average at start": load,
    }


DOC = ROOT / "docs" / "BENCHMARKS.md"


def write_section(section: str, text: str, doc: Path = DOC) -> None:
    """Replace (or append) the section headed `section` of docs/BENCHMARKS.md with `text`:
    every bench script writes its own section and keeps the others."""
    old = doc.read_text(encoding="utf-8") if doc.exists() else "# Benchmarks\n"
    start = old.find(section)
    if start == -1:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(section))
        new = old[:start] + text.rstrip("\n") + "\n" + ("" if end == -1 else old[end:])
    doc.write_text(new.rstrip("\n") + "\n", encoding="utf-8")
