"""Start-up benchmarks: `acomm send` and `acomm receive` as processes, on a regular
(non-editable) install of acomm built from this checkout, against bare python+sqlite3
processes of the same interpreter; the editable install (.venv) is reported beside them.

The regular install is built once per run: a wheel of the checkout (`pip wheel`, in a
temporary directory) installed with `--no-deps` into bench/out/installed, a venv whose
dependencies come from .venv's site-packages through a `.pth` line (so the run downloads
nothing; no `.pth` file of .venv is processed, so its editable finder is not installed).
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import stores
from harness import ACOMM, BIN, OUT, PYTHON, ROOT, WORK, Result, Sample, median, rotate, spread

from acomm_cli import clock
from acomm_cli.engine import opening, sending
from acomm_cli.model import SendRequest

if TYPE_CHECKING:
    from cases import Context

INSTALLED = OUT / "installed"
_built: list[Path] = []


def installed() -> Path:
    """The bin directory of a regular install of this checkout, rebuilt once per run."""
    if _built:
        return _built[0]
    py = INSTALLED / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(INSTALLED)], check=True)
        site = subprocess.run(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        Path(site, "_acomm_bench_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "src"  # a clean copy: no stale build/ of an earlier layout
        shutil.copytree(
            ROOT,
            src,
            ignore=shutil.ignore_patterns(
                ".venv",
                "build",
                "bench",
                ".git",
                "*.egg-info",
                "__pycache__",
                ".mypy_cache",
                ".ruff_cache",
                ".pytest_cache",
            ),
        )
        subprocess.run(
            [str(BIN / "pip"), "wheel", "-q", "--no-deps", "-w", tmp, str(src)],
            check=True,
            capture_output=True,
        )
        wheel = next(Path(tmp).glob("acomm-*.whl"))
        subprocess.run(
            [
                str(BIN / "pip"),
                "--python",
                str(py),
                "install",
                "-q",
                "--no-deps",
                "--force-reinstall",
                str(wheel),
            ],
            check=True,
            capture_output=True,
        )
    _built.append(INSTALLED / "bin")
    return _built[0]


def _insert_script(raw: Path, sync: str) -> str:
    return (
        f"import sqlite3; c = sqlite3.connect({str(raw)!r}); "
        f"c.execute('PRAGMA journal_mode = WAL'); c.execute('PRAGMA synchronous = {sync}'); "
        "c.execute('INSERT INTO t (body) VALUES (?)', ('hello from the benchmark',)); "
        "c.commit()"
    )


def send_process(ctx: Context) -> list[Result]:
    from cases import ENV_NOTE, _process, _process_profile, _send_command

    store = stores.group_store(WORK / "send-process.acomm")
    raw = WORK / "send-process-raw.db"
    stores.remove(raw)
    conn = opening.connect(store, create=False)
    sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[
        conn.execute("PRAGMA synchronous").fetchone()[0]
    ]
    conn.close()
    init = sqlite3.connect(raw)
    init.execute("PRAGMA journal_mode = WAL")
    init.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
    init.commit()
    init.close()
    script = _insert_script(raw, sync)
    bin_ = installed()
    regular = [str(bin_ / "acomm"), *_send_command(store)[1:]]
    editable = _send_command(store)
    n = ctx.sizes.process_runs
    t_reg, t_base, t_edit, t_ebase = rotate(
        [
            _process(regular),
            _process([str(bin_ / "python"), "-c", script]),
            _process(editable),
            _process([str(PYTHON), "-c", script]),
        ],
        n,
        warmup=2,
    )
    _process_profile(ctx, "acomm send (editable: --profile runs .venv's python)", editable)
    shown = f"`acomm --store STORE {' '.join(editable[3:])}`"
    baseline = f'`python -c "{script.replace(str(raw), "RAW.db")}"`'
    note = f"{n} runs each, the four rotated, after 2 warm-up runs each; " + ENV_NOTE
    return [
        Result(
            "send_process",
            "`acomm send` process (group channel), regular install",
            "time",
            median(t_reg),
            median(t_base),
            2.0,
            baseline_title="`python -c` import sqlite3, open WAL db, 1 INSERT, commit "
            "(the same venv's python)",
            details=[
                f"acomm send: {spread(t_reg)}",
                f"python -c sqlite3: {spread(t_base)}",
                f"{shown} with bench/out/installed/bin/acomm (a wheel of the checkout, "
                f"`pip install --no-deps`); baseline {baseline} with its python",
                note,
            ],
        ),
        Result(
            "send_process_editable",
            "`acomm send` process, editable install (.venv)",
            "time",
            median(t_edit),
            median(t_ebase),
            4.0,
            baseline_title="the same `python -c` with .venv's python (it pays the editable "
            "finder too)",
            details=[
                f"acomm send: {spread(t_edit)}",
                f"python -c sqlite3: {spread(t_ebase)}",
                f"{shown} with {ACOMM}",
                note,
            ],
        ),
    ]


UNREAD = 10
INBOX = (
    "SELECT m.id, m.channel_id, m.sender, m.type, m.content, m.topic, m.priority, "
    "m.correlation_id, m.dedupe_key, m.metadata, m.created_at, d.state, d.delivered_at "
    "FROM deliveries d JOIN messages m ON m.id = d.message_id "
    "WHERE d.recipient = 'bob' AND d.state = 'unread' ORDER BY d.rank DESC, d.message_id "
    "LIMIT 100"
)


def _receive_script(path: Path, sync: str) -> str:
    """The baseline: the same rows selected and marked read in one transaction, printed."""
    return (
        f"import json, sqlite3; c = sqlite3.connect({str(path)!r}, isolation_level=None); "
        f"c.execute('PRAGMA journal_mode = WAL'); c.execute('PRAGMA synchronous = {sync}'); "
        "c.execute('BEGIN IMMEDIATE'); "
        f"rows = c.execute({INBOX!r}).fetchall(); "
        "c.executemany(\"UPDATE deliveries SET state = 'read', read_at = 1 WHERE "
        "recipient = 'bob' AND message_id = ?\", [(r[0],) for r in rows]); "
        "print(json.dumps([list(r) for r in rows])); c.execute('COMMIT')"
    )


def _unread_store(path: Path) -> Path:
    store = stores.group_store(path)
    conn = opening.connect(store, create=False)
    try:
        now = clock.now_ms()
        for i in range(UNREAD):
            sending.send(
                conn, SendRequest(sender="alice", content=f"message {i}", channel="team"), now
            )
    finally:
        conn.close()
    return store


def _unread_again(store: Path, sample: Sample) -> Sample:
    """Each timed run reads the same 10: they are marked unread again, untimed, first."""

    def run() -> float:
        c = sqlite3.connect(store)
        c.execute("UPDATE deliveries SET state = 'unread', read_at = NULL WHERE recipient = 'bob'")
        c.commit()
        c.close()
        return sample()

    return run


def receive_process(ctx: Context) -> list[Result]:
    from cases import ENV_NOTE, _env, _process, _process_profile

    store = _unread_store(WORK / "receive-process.acomm")
    raw = stores.copy_store(store, WORK / "receive-process-raw.acomm")
    conn = opening.connect(store, create=False)
    sync = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}[
        conn.execute("PRAGMA synchronous").fetchone()[0]
    ]
    conn.close()
    bin_ = installed()
    cmd = [str(bin_ / "acomm"), "--store", str(store), "receive", "--as", "bob", "--json"]
    script = _receive_script(raw, sync)
    check = subprocess.run(cmd, capture_output=True, text=True, env=_env())
    if check.returncode != 0 or check.stdout.count('"id"') < UNREAD:
        raise RuntimeError(f"acomm receive did not return {UNREAD} messages: {check.stderr}")
    n = ctx.sizes.process_runs
    t_acomm, t_base, t_edit = rotate(
        [
            _unread_again(store, _process(cmd)),
            _unread_again(raw, _process([str(bin_ / "python"), "-c", script])),
            _unread_again(store, _process([str(ACOMM), *cmd[1:]])),
        ],
        n,
        warmup=2,
    )
    _process_profile(
        ctx, "acomm receive (editable: --profile runs .venv's python)", [str(ACOMM), *cmd[1:]]
    )
    return [
        Result(
            "receive_process",
            f"`acomm receive --json` process, {UNREAD} unread, regular install",
            "time",
            median(t_acomm),
            median(t_base),
            2.5,
            baseline_title="`python -c` import sqlite3 and json, BEGIN IMMEDIATE, SELECT the same "
            "rows, UPDATE them read, print them as JSON, COMMIT",
            details=[
                f"acomm receive: {spread(t_acomm)}",
                f"python -c: {spread(t_base)}",
                f"(not a target) the editable install: {spread(t_edit)}",
                f"`acomm --store STORE {' '.join(cmd[3:])}` with bench/out/installed/bin/acomm; "
                f"{UNREAD} messages from alice on `team` unread for bob, marked unread again "
                f"(untimed) before each run, on both stores; {n} runs each, rotated, after 2 "
                f"warm-up runs each; " + ENV_NOTE,
            ],
        )
    ]
