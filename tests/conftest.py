"""Shared fixtures: every test gets its own real store in tmp_path; nothing is mocked."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import freezegun
import pytest
from sqlite_utils import Database
from typer.testing import CliRunner

from acomm_cli.cli.app import app
from acomm_cli.engine import opening

VENV_BIN = Path(sys.executable).parent
ACOMM = shutil.which("acomm", path=str(VENV_BIN)) or "acomm"


def sweep_stale_faketime() -> int:
    """Remove the /dev/shm semaphores and shared memory of `faketime` wrappers that are gone.

    The wrapper names them after its pid and removes them when it exits; one killed outright
    (the crash tests SIGKILL whole process groups) leaves them behind, and a later wrapper
    given the same pid (pid_max is often 32768) fails with "sem_open: File exists" before its
    command runs. Only entries whose process no longer exists are removed."""
    removed = 0
    for entry in Path("/dev/shm").glob("*faketime_*"):
        pid = entry.name.rsplit("_", 1)[-1]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            try:
                entry.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def pytest_sessionstart(session: pytest.Session) -> None:
    sweep_stale_faketime()

# pytest's own clock stays real under freeze_time, so `--durations` reports true times.
freezegun.configure(extend_ignore_list=["_pytest.timing"])


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ACOMM_STORE into tmp_path and clear every other ACOMM_* variable."""
    for key in list(os.environ):
        if key.startswith("ACOMM_") or key in ("NO_COLOR", "FORCE_COLOR"):
            monkeypatch.delenv(key)
    path = tmp_path / "store" / "store.acomm"
    monkeypatch.setenv("ACOMM_STORE", str(path))
    monkeypatch.chdir(tmp_path)
    return path


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def error(self) -> dict[str, Any]:
        return json.loads(self.stderr)["error"]


class Cli:
    """Runs `acomm` in process with Typer's CliRunner; stdout and stderr kept apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str, input: str | None = None, strict: bool = False,
                 env: dict[str, str] | None = None) -> Result:
        r = self.runner.invoke(app, [str(a) for a in args], input=input, env=env)
        if r.exception is not None and not isinstance(r.exception, SystemExit):
            raise r.exception
        res = Result(r.exit_code, r.stdout, r.stderr)
        if strict and res.exit_code != 0:
            shown = " ".join(map(str, args))
            raise AssertionError(f"acomm {shown} exited {res.exit_code}: {res.stderr}")
        return res

    def ok(self, *args: str, input: str | None = None) -> Result:
        return self(*args, input=input, strict=True)


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture
def store(isolated_env: Path, cli: Cli) -> Path:
    """A fresh store, made by `acomm init` as a user would."""
    cli.ok("init")
    return isolated_env


MakeChannel = Callable[..., Path]


@pytest.fixture
def make_channel(cli: Cli, store: Path) -> MakeChannel:
    """`make_channel(name, owner, *members, **flags)`: `acomm channel create NAME --as OWNER`,
    then `acomm channel join NAME MEMBER --as OWNER` for each member; returns the store's path.

    Flags are `channel create` options by parameter name: `type="pubsub"`,
    `delivery="at-least-once"`, `ack_timeout="10s"`, `max_pending=3`; `True`/`False` give
    `--flag`/`--no-flag` (`echo=True`)."""
    def make(name: str, owner: str, *members: str, **flags: Any) -> Path:
        args = ["channel", "create", name, "--as", owner]
        for key, value in flags.items():
            option = key.replace("_", "-")
            if isinstance(value, bool):
                args.append(f"--{option}" if value else f"--no-{option}")
            else:
                args += [f"--{option}", str(value)]
        cli.ok(*args)
        for member in members:
            cli.ok("channel", "join", name, member, "--as", owner)
        return store
    return make


@pytest.fixture
def team(make_channel: MakeChannel) -> Path:
    """The usual group: alice's `team`, which bob has joined; returns the store's path."""
    return make_channel("team", "alice", "bob")


@pytest.fixture
def conn(store: Path):
    """An open connection to the fresh store, for driving the pipeline directly."""
    c = opening.connect(store, create=False)
    yield c
    c.close()


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the installed `acomm` as a separate process, as shell scripts do."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([ACOMM, *map(str, args)], input=input, capture_output=True,
                          text=True, env=full_env, timeout=timeout)


def snapshot(path: Path) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, keyed by column: to prove a refused command changed nothing
    (a failed comparison names the table and the columns that moved)."""
    db = Database(path, recursive_triggers=False, execute_plugins=False)
    try:
        return {t.name: sorted(t.rows, key=repr) for t in db.tables}
    finally:
        db.close()


# What each migration after m013 did, undone: a test that makes an older store rewinds the
# later ones with this, then undoes its own (a new migration needs its line here)
UNDO_MIGRATION = {
    "m014_nats_outbox": "DROP TABLE fed_nats;",
    "m015_inbox_indexes": "",  # its re-run drops and rebuilds the indexes it made
    "m016_request_nonces": """
        DROP INDEX fed_nonces_expiry;
        ALTER TABLE fed_nonces DROP COLUMN expires_at;
        DROP TABLE fed_request_nonces;""",
    "m017_ticket_expiry": "DROP INDEX fed_tickets_expiry;",
}


def rewind_migrations(c: sqlite3.Connection, name: str) -> None:
    """The store as it was before migration `name`, as far as the migrations after it go:
    their changes undone, `name` and later unrecorded, user_version set to run them again."""
    from acomm_cli.store.migrations import MIGRATIONS

    names = [fn.__name__ for fn in MIGRATIONS]
    at = names.index(name)
    for later in reversed(names[at + 1:]):
        assert later in UNDO_MIGRATION, f"tests/conftest.py: say how to undo {later}"
        c.executescript(UNDO_MIGRATION[later])
    c.executemany("DELETE FROM _acomm_migrations WHERE name = ?", [(n,) for n in names[at:]])
    c.execute(f"PRAGMA user_version = {at}")


def query(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Read rows straight from the store file, bypassing acomm: what is really there."""
    c = sqlite3.connect(path)
    try:
        return c.execute(sql, params).fetchall()
    finally:
        c.close()


def wait_for(what: Callable[[], bool], within: float = 30.0) -> None:
    """Until another process gets somewhere (an event, not a measured time), polled within a
    bounded deadline."""
    end = time.monotonic() + within
    while not what():
        assert time.monotonic() < end, "the other process never got there"
        time.sleep(0.02)


STATES = {"queued", "waiting", "unread", "read", "acked", "dead"}


def assert_invariants(path: Path, sent_ids: set[int] | None = None) -> None:
    """Every delivery is in exactly one documented state, timers exist where a state needs
    one, dead letters match dead deliveries, and no accepted message has vanished."""
    c = sqlite3.connect(path)
    try:
        states = {r[0] for r in c.execute("SELECT DISTINCT state FROM deliveries")}
        assert states <= STATES, states - STATES
        assert not c.execute(
            "SELECT 1 FROM deliveries WHERE tracked = 1 AND state IN ('unread', 'read',"
            " 'waiting') AND next_timer_at IS NULL AND NOT (recipient = '*' AND state ="
            " 'unread')").fetchall(), "tracked delivery lost its timer"  # '*': in a queue
        assert not c.execute(
            "SELECT 1 FROM deliveries WHERE state = 'waiting' AND next_timer_at IS NULL"
        ).fetchall(), "waiting delivery with no time to wake"
        assert not c.execute(
            "SELECT 1 FROM deliveries WHERE state IN ('acked', 'dead') AND next_timer_at"
            " IS NOT NULL AND NOT (state = 'acked' AND ack_status IN ('received',"
            " 'in_progress'))").fetchall(), "terminal delivery still has a timer"
        assert not c.execute(
            "SELECT 1 FROM dead_letters dl JOIN deliveries d USING (message_id, recipient)"
            " WHERE d.state != 'dead'").fetchall(), "dead letter for a live delivery"
        if sent_ids is not None:
            have = {r[0] for r in c.execute("SELECT id FROM messages")}
            assert sent_ids <= have, sent_ids - have
    finally:
        c.close()


@pytest.fixture(scope="session")
def spark_session():
    """One local[2] Spark session for every in-process audit test (a JVM is slow to start)."""
    from acomm_cli.analytics import audit

    try:
        audit.java_version()
    except audit.SparkUnavailable as exc:
        pytest.skip(f"no Java 17+: {exc.message}")
    session = audit.start_spark("local[2]")
    yield session
    session.stop()


@pytest.fixture
def spark(request):
    """The local Spark session, for tests marked `spark` (which `-m "not spark"` leaves out)."""
    assert request.node.get_closest_marker("spark"), f"{request.node.name}: mark it spark"
    return request.getfixturevalue("spark_session")
