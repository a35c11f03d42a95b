"""Shared fixtures: every test gets its own real store in tmp_path; nothing is mocked."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import freezegun
import procs
import pytest
import typer
from sqlite_utils import Database
from typer._click.core import Command
from typer.testing import CliRunner

from acomm_cli import clock
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


def pytest_configure(config: pytest.Config) -> None:
    """Test directories in memory where the machine has a tmpfs: every command's commit and
    close syncs the store file, and on a disk those syncs were most of a test's time. The
    suite tests what acomm writes, not that the disk keeps it; PYTEST_DEBUG_TEMPROOT or
    --basetemp choose another place. One directory per checkout: pytest prunes the older
    numbered runs under its root, which must never be another checkout's run in progress."""
    shm = Path("/dev/shm")
    if (
        config.option.basetemp is None
        and "PYTEST_DEBUG_TEMPROOT" not in os.environ
        and shm.is_dir()
        and os.access(shm, os.W_OK)
    ):
        import hashlib

        checkout = hashlib.sha256(str(Path(__file__).resolve().parent).encode()).hexdigest()
        root = shm / f"acomm-tests-{checkout[:12]}"
        root.mkdir(mode=0o700, exist_ok=True)
        os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


def pytest_sessionstart(session: pytest.Session) -> None:
    sweep_stale_faketime()
    procs.install_spawn_watch()
    procs.become_subreaper()  # an orphaned grandchild stays visible to `no_process_outlives`


# ------------------------------------------------------------------------------ test tiers
# Every test is in exactly one tier (docs/TESTING.md): `make test-fast` runs unit and cli.
# A file declares its tier with `pytestmark = pytest.mark.TIER`; a test of another tier in
# it says so on itself (the closest mark wins). A test with none, or with two at one level,
# errors, whatever tiers `-m` selects: a new file cannot slip out of the tiers.
TIERS = ("unit", "cli", "process", "federation", "spark", "ui", "browser")
UNTIERED = pytest.StashKey[str]()


def _tier(item: pytest.Item) -> str:
    """The test's tier, from its closest mark; raises ValueError saying what is wrong."""
    for node in item.listchain()[::-1]:  # the test itself first, then its class, its module
        here = {m.name for m in node.own_markers if m.name in TIERS}
        if len(here) > 1:
            raise ValueError(
                f"{item.nodeid}: marked with {len(here)} tiers at one level "
                f"({', '.join(sorted(here))}); give it one"
            )
        if here:
            return here.pop()
    raise ValueError(
        f"{item.nodeid}: no tier; mark the file (`pytestmark = pytest.mark.unit`)"
        f" or the test with one of {', '.join(TIERS)} (docs/TESTING.md)"
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` selects on the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test carries its own tier only (a module's mark that a test overrides is taken
    off it, so `-m cli` does not select the file's `process` test too). A test without a
    valid tier gets every tier, so any selection keeps it, and errors at setup. Under
    xdist's `--dist loadgroup`, a file's tests run in one worker (its module fixtures start
    once) and all the Spark tests in one worker (one JVM)."""
    tiers: dict[pytest.Item, tuple[str, ...]] = {}
    for item in items:
        try:
            tiers[item] = (_tier(item),)
        except ValueError as exc:
            item.stash[UNTIERED] = str(exc)
            tiers[item] = TIERS
    for item in items:
        for node in item.listchain():
            node.own_markers[:] = [m for m in node.own_markers if m.name not in TIERS]
    xdist = config.pluginmanager.hasplugin("xdist")
    for item, marks in tiers.items():
        for tier in marks:
            item.add_marker(tier)
        if xdist:
            item.add_marker(
                pytest.mark.xdist_group(
                    "spark" if marks == ("spark",) else item.nodeid.split("::", 1)[0]
                )
            )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if UNTIERED in item.stash:
        pytest.fail(item.stash[UNTIERED], pytrace=False)


# pytest's own clock stays real under freeze_time, so `--durations` reports true times.
freezegun.configure(extend_ignore_list=["_pytest.timing"])


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point ACOMM_STORE into tmp_path, clear every other ACOMM_* variable and open the
    agent directory."""
    for key in list(os.environ):
        if key.startswith("ACOMM_") or key in (
            "NO_COLOR",
            "FORCE_COLOR",
            "TRACEPARENT",
            "OTEL_EXPORTER_OTLP_ENDPOINT",
        ):
            monkeypatch.delenv(key)
    path = tmp_path / "store" / "store.acomm"
    monkeypatch.setenv("ACOMM_STORE", str(path))
    # Most tests name agents nobody registered: they run with the directory open, in
    # process and in the programs they start (tests of the strict directory ask for
    # `strict`, which unsets it; the README's tour and `make demo` run without it)
    monkeypatch.setenv("ACOMM_IDENTITY_DIRECTORY", "open")
    # A gateway pulls its peers continuously by default: the gateways tests start do not,
    # unless the test says `--pull`, so that what a `fed pull` brings is the test's to count
    monkeypatch.setenv("ACOMM_GATEWAY_PULL", "off")
    monkeypatch.chdir(tmp_path)
    return path


@pytest.fixture(autouse=True)
def no_process_outlives(request: pytest.FixtureRequest) -> Iterator[None]:
    """No process a test started is alive after it (its fixtures' teardowns included): one
    left behind is killed and the test errors, naming its command line. Servers started by
    a module or session fixture were there before the test and are not its. And a test of
    the in-process tiers (unit, cli) starts no program at all: one that does errors, so it
    is marked `process` and `make test-fast` stays in process."""
    in_process = UNTIERED not in request.node.stash and any(
        request.node.get_closest_marker(tier) for tier in ("unit", "cli")
    )
    if in_process:
        procs.watch_spawns()
    before = procs.descendants()
    yield
    started = procs.spawned() if in_process else []
    left = procs.outliving(before)
    if left:
        procs.kill_all(left)
        pytest.fail(
            "processes outlived the test (start servers with procs.spawn, stop them"
            " with procs.stop):\n" + "\n".join(f"  {pid}: {cmd}" for pid, cmd in left.items()),
            pytrace=False,
        )
    if started:
        pytest.fail(
            "a test of the unit or cli tier started programs; mark it"
            " `@pytest.mark.process` (docs/TESTING.md):\n"
            + "\n".join(f"  {cmd[:200]}" for cmd in started),
            pytrace=False,
        )


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


_COMMAND: list[Command] = []


def command_tree() -> Command:
    """acomm's click command, built from the Typer app once per session: building it is most
    of an in-process call's cost. The root group builds each subcommand on first use and
    keeps it, as one `acomm` process does."""
    if not _COMMAND:
        _COMMAND.append(typer.main.get_command(app))
    return _COMMAND[0]


class Cli:
    """Runs `acomm` in process as Typer's CliRunner does, on the session's one command tree
    (`command_tree`); stdout and stderr kept apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def invoke(
        self, args: list[str], input: str | None = None, env: dict[str, str] | None = None
    ) -> tuple[int, str, str]:
        """CliRunner.invoke without rebuilding the tree: exit status, stdout, stderr; an
        exception other than SystemExit is raised."""
        command = command_tree()
        code: int = 0
        with self.runner.isolation(input=input, env=env) as (out, err, _):
            try:
                command.main(args=args, prog_name=self.runner.get_default_prog_name(command))
            except SystemExit as exc:
                if exc.code is None or isinstance(exc.code, int):
                    code = exc.code or 0
                else:
                    print(exc.code)
                    code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            stdout, stderr = out.getvalue(), err.getvalue()
        text = self.runner.charset
        return (
            code,
            stdout.decode(text, "replace").replace("\r\n", "\n"),
            stderr.decode(text, "replace").replace("\r\n", "\n"),
        )

    def __call__(
        self,
        *args: str,
        input: str | None = None,
        strict: bool = False,
        env: dict[str, str] | None = None,
    ) -> Result:
        res = Result(*self.invoke([str(a) for a in args], input=input, env=env))
        if strict and res.exit_code != 0:
            shown = " ".join(map(str, args))
            raise AssertionError(f"acomm {shown} exited {res.exit_code}: {res.stderr}")
        return res

    def ok(self, *args: str, input: str | None = None) -> Result:
        return self(*args, input=input, strict=True)


@pytest.fixture
def cli() -> Cli:
    return Cli()


@dataclass(frozen=True)
class Template:
    """A store made once by `acomm init`, and where it wrote its creation time."""

    path: Path
    made: int
    stamped: tuple[tuple[str, str], ...]  # (table, column) holding `made` in some row


@pytest.fixture(scope="session")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> Template:
    """One store made by `acomm init` as a user would, for `store` to copy (a copy takes a
    few milliseconds, an init about 150)."""
    path = tmp_path_factory.mktemp("template") / "store" / "store.acomm"
    code, _, err = Cli().invoke(["--store", str(path), "init"])
    assert code == 0, err
    c = sqlite3.connect(path)
    try:
        # open, as a store made before the agent directory: the tests that drive the engine
        # directly name agents nobody registered too (see `isolated_env`)
        with c:
            c.execute(
                "UPDATE store_meta SET value = 'open' WHERE key = 'identity.directory_default'"
            )
        made = int(c.execute("SELECT value FROM store_meta WHERE key = 'created_at'").fetchone()[0])
        stamped = tuple(
            (table, column)
            for (table,) in c.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ).fetchall()
            for column in [r[1] for r in c.execute(f'PRAGMA table_info("{table}")')]
            if c.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}" IN (?, ?)', (made, str(made))
            ).fetchone()
        )
    finally:
        c.close()
    return Template(path, made, stamped)


def copy_store(template: Template, path: Path) -> None:
    """`template`'s directory copied to `path`'s (its files, their modes and the directory's),
    then made its own store: a new store id, and the creation time now by acomm's clock (so
    frozen time holds), as an init at this moment would have written them."""
    shutil.copytree(template.path.parent, path.parent)  # copy2 and copystat: modes kept
    if template.path.name != path.name:
        for suffix in ("", "-wal", "-shm"):
            old = path.parent / (template.path.name + suffix)
            if old.exists():
                old.rename(path.parent / (path.name + suffix))
    now = clock.now_ms()
    c = sqlite3.connect(path)
    try:
        with c:
            tokens = c.execute("SELECT id, token FROM channels_version").fetchall()
            agents_token = c.execute("SELECT token FROM agents_version").fetchall()
            c.execute(
                "UPDATE store_meta SET value = ? WHERE key = 'store_id'", (os.urandom(16).hex(),)
            )
            for table, column in template.stamped:
                c.execute(
                    f'UPDATE "{table}" SET "{column}" = CASE typeof("{column}") WHEN'
                    f" 'text' THEN ? ELSE ? END WHERE \"{column}\" IN (?, ?)",
                    (str(now), now, template.made, str(template.made)),
                )
            # triggers count every change to channels and participants: these were none
            c.executemany(
                "UPDATE channels_version SET token = ? WHERE id = ?",
                [(token, id_) for id_, token in tokens],
            )
            c.executemany("UPDATE agents_version SET token = ?", agents_token)
    finally:
        c.close()


@pytest.fixture
def store(isolated_env: Path, template_store: Template) -> Path:
    """A fresh store, as `acomm init` makes it: a copy of the session's `template_store`."""
    copy_store(template_store, isolated_env)
    return isolated_env


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> None:
    """The directory as a user's new store has it: strict (every name an agent acts as or
    sends to must be registered first), not the open directory the other tests run with."""
    monkeypatch.setenv("ACOMM_IDENTITY_DIRECTORY", "strict")


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


def run(
    *args: str, input: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the installed `acomm` as a separate process, as shell scripts do."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [ACOMM, *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=timeout,
    )


def snapshot(path: Path, ignore: tuple[str, ...] = ()) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, keyed by column: to prove a refused command changed nothing
    (a failed comparison names the table and the columns that moved). `ignore`: tables a
    process running beside the test writes on its own schedule (an MCP server's record that
    it told its client, `notifications`)."""
    db = Database(path, recursive_triggers=False, execute_plugins=False)
    try:
        return {t.name: sorted(t.rows, key=repr) for t in db.tables if t.name not in ignore}
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
    "m018_inbound_by_origin": """
        DROP TABLE fed_rejected;
        CREATE TABLE fed_inbound_old (
            event_id TEXT PRIMARY KEY, source_node TEXT NOT NULL, seq INTEGER NOT NULL,
            kind TEXT NOT NULL, attempt INTEGER NOT NULL, message_id INTEGER,
            received_at INTEGER NOT NULL) WITHOUT ROWID;
        INSERT OR IGNORE INTO fed_inbound_old SELECT event_id, source_node, seq, kind,
            attempt, message_id, received_at FROM fed_inbound;
        DROP TABLE fed_inbound;
        ALTER TABLE fed_inbound_old RENAME TO fed_inbound;
        CREATE INDEX fed_inbound_message ON fed_inbound(message_id)
            WHERE message_id IS NOT NULL;
        DROP INDEX messages_global_id;
        CREATE UNIQUE INDEX messages_global_id ON messages(global_id) WHERE global_id IS NOT NULL;
        DROP INDEX tasks_global_id;
        CREATE UNIQUE INDEX tasks_global_id ON tasks(global_id) WHERE global_id IS NOT NULL;""",
    "m019_task_events_by_origin": """
        DROP INDEX task_events_id;
        CREATE TABLE task_events_old (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT NOT NULL UNIQUE,
            task_id INTEGER NOT NULL, event TEXT NOT NULL, agent TEXT, at INTEGER NOT NULL,
            progress INTEGER, note TEXT, eta_at INTEGER, message_id INTEGER,
            origin_node TEXT, detail TEXT);
        INSERT OR IGNORE INTO task_events_old SELECT * FROM task_events;
        DROP TABLE task_events;
        ALTER TABLE task_events_old RENAME TO task_events;
        CREATE INDEX task_events_task ON task_events(task_id, seq);""",
    "m020_agent_directory": """
        DROP TABLE agents;
        DROP TABLE agent_contacts;
        DELETE FROM store_meta WHERE key = 'identity.directory_default';""",
    "m021_events_traces_attachments": """
        DROP TABLE message_events;
        DROP INDEX messages_trace;
        ALTER TABLE messages DROP COLUMN trace_id;
        ALTER TABLE messages DROP COLUMN format;
        ALTER TABLE messages DROP COLUMN subject;
        DROP TABLE attachments;
        DROP TABLE message_attachments;""",
    "m022_notifications_remote_blobs": """
        DROP TABLE notifications;
        ALTER TABLE message_attachments DROP COLUMN origin_node;
        DROP TABLE counters;""",
    "m023_cursors": "DROP TABLE cursors;",
    "m024_schedules": "DROP TABLE schedules;",
    "m025_consumer_groups": """
        DROP INDEX subscriptions_group;
        ALTER TABLE subscriptions DROP COLUMN grp;
        DROP INDEX deliveries_fifo;
        ALTER TABLE deliveries DROP COLUMN pool;
        ALTER TABLE deliveries DROP COLUMN group_key;""",
    "m026_search": """
        DROP TRIGGER message_search_update;
        DROP TRIGGER message_search_delete;
        DROP TRIGGER message_search_event_insert;
        DROP TRIGGER message_search_event_update;
        DROP TRIGGER message_search_event_delete;
        DROP TABLE message_search;
        DROP VIEW message_search_source;
        DROP TABLE search_state;""",
    "m027_ack_clock": """
        ALTER TABLE channels DROP COLUMN ack_notify;
        ALTER TABLE channels DROP COLUMN ack_clock;""",
    "m028_pool_bindings": "DROP TABLE pool_bindings;",
    "m029_nats_replicas": "ALTER TABLE fed_nats DROP COLUMN replicas;",
    "m030_agents_token_and_pool_index": """
        DROP INDEX deliveries_pool;
        DROP TRIGGER agents_version_insert;
        DROP TRIGGER agents_version_delete;
        DROP TRIGGER agents_version_update;
        DROP TRIGGER agent_contacts_version_insert;
        DROP TRIGGER agent_contacts_version_delete;
        DROP TRIGGER agent_contacts_version_update;
        DROP TABLE agents_version;""",
}


def rewind_migrations(c: sqlite3.Connection, name: str) -> None:
    """The store as it was before migration `name`, as far as the migrations after it go:
    their changes undone, `name` and later unrecorded, user_version set to run them again."""
    from acomm_cli.store.migrations import MIGRATIONS

    names = [fn.__name__ for fn in MIGRATIONS]
    at = names.index(name)
    for later in reversed(names[at + 1 :]):
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
            " 'waiting') AND next_timer_at IS NULL"
            " AND NOT (substr(recipient, 1, 1) = '*' AND state = 'unread')"
            " AND NOT (state = 'unread' AND channel_id IN (SELECT id FROM channels"
            " WHERE ack_clock = 'read'))"
        ).fetchall(), "tracked delivery lost its timer"  # '*', '*NAME': a queue's, a pool's
        assert not c.execute(
            "SELECT 1 FROM deliveries WHERE state = 'waiting' AND next_timer_at IS NULL"
        ).fetchall(), "waiting delivery with no time to wake"
        assert not c.execute(
            "SELECT 1 FROM deliveries WHERE state IN ('acked', 'dead') AND next_timer_at"
            " IS NOT NULL AND NOT (state = 'acked' AND ack_status IN ('received',"
            " 'in_progress'))"
        ).fetchall(), "terminal delivery still has a timer"
        assert not c.execute(
            "SELECT 1 FROM dead_letters dl JOIN deliveries d USING (message_id, recipient)"
            " WHERE d.state != 'dead'"
        ).fetchall(), "dead letter for a live delivery"
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
def spark(request, spark_session):
    """The local Spark session, for tests marked `spark` (which `-m "not spark"` leaves out).
    Asked for by name, not by `getfixturevalue`: a session fixture named so is set up before
    the test's own fixtures, so its JVM is not counted as the test's (`no_process_outlives`)."""
    assert request.node.get_closest_marker("spark"), f"{request.node.name}: mark it spark"
    return spark_session
