"""What every command body runs with: the `Invocation` (the global settings, the output, the
store, the limits, the message body), and the helpers bodies share (identity, filters).

Both ways a command runs build one: the `acomm` program's fast path (`cli/main.py`) from the
command line it read itself, a Typer command from click's context (`params.takes_invocation`).
No typer or click here: the fast path imports this module.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import time

from acomm_cli import clock, model
from acomm_cli.cli import lazy
from acomm_cli.cli.config import Settings
from acomm_cli.errors import CommError, DiskFull, StoreReadOnly, UsageError, ValidationFailed
from acomm_cli.model import MessageFilter
from acomm_cli.output import render
from acomm_cli.output.render import Output
from acomm_cli.store import connection

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

    from acomm_cli.engine import opening, sending
else:  # imported when a command opens its store: a --help or a usage error does not
    opening = lazy.module("acomm_cli.engine.opening")
    sending = lazy.module("acomm_cli.engine.sending")


# The agents this command said it acts as (`identity`): the store proves them when it opens
# (`_Store`), before any engine call. One command runs per Invocation, which starts it empty.
_claimed: list[str] = []


class Invocation:
    """What a command body gets instead of click's context: the global settings and the
    command's --help text, asked for only when a refusal shows it (on the fast path, asking
    hands the whole command line over to Typer, which alone can write it)."""

    __slots__ = ("settings", "_help")

    def __init__(self, settings: Settings, help: Callable[[], str] | None = None) -> None:
        self.settings = settings
        self._help = help
        _claimed.clear()

    def prove_identity(self) -> None:
        """For a command that does not open the store through `store()` (a server): check
        now that the agents it claimed are proven."""
        with self.store(write=False):
            pass

    def help_text(self) -> str | None:
        return None if self._help is None else self._help()

    def output(self) -> Output:
        return output(self.settings)

    def store(
        self,
        *,
        write: bool,
        create: bool = False,
        bridge_hook: bool = True,
        hooks: bool = True,
        read_fallback: bool = False,
    ) -> _Store:
        """The resolved store, opened as `store` says."""
        return _Store(self.settings, write, create, bridge_hook, hooks, read_fallback)

    def limits(self) -> model.Limits:
        return limits(self.settings)

    def stall_s(self) -> float:
        return stall_s(self.settings)

    def read_body(self, body: str | None) -> str:
        return read_body(self, body)

    def refuse_terminal_stdin(self, message: str, field: str) -> None:
        refuse_terminal_stdin(self, message, field)


def output(s: Settings) -> Output:
    return Output(json=s.json, color=s.color, table=s.table, headers=s.headers)


def store(
    s: Settings,
    *,
    write: bool,
    create: bool = False,
    bridge_hook: bool = True,
    hooks: bool = True,
    read_fallback: bool = False,
) -> _Store:
    """Open the resolved store. Only `create` commands (channel create, send --to, agent
    register...) may create a missing store, and only at a path named by --store or
    $ACOMM_STORE (none named and none found is an error for every command but init):
    anywhere else a mistyped path is an error, not an empty new store. A reading command
    (and, with `read_fallback`, one that writes only incidentally: `receive --peek` applying
    due timers) that meets a read-only store or a full disk opens it read-only instead of
    failing. Not read-only from the start: only a writable
    connection removes the -wal/-shm files SQLite makes, so readers would leave them behind.

    After a writing command, a configured mailbox bridge mirrors what the command touched
    (tick and `bridge sync` run the full reconciliation themselves: bridge_hook=False), and
    the capacity warning and the batch checkpoint follow; maintenance commands that write
    (compact, flush, export's watermark) pass hooks=False."""
    return _Store(s, write, create, bridge_hook, hooks, read_fallback)


class _Store:
    """`store(...)`: a class, not a @contextmanager generator, so that contextlib stays out
    of `acomm send` (importing it costs a send about a millisecond)."""

    def __init__(
        self,
        s: Settings,
        write: bool,
        create: bool,
        bridge_hook: bool,
        hooks: bool,
        read_fallback: bool,
    ) -> None:
        self.s, self.write, self.create = s, write, create
        self.bridge_hook, self.hooks, self.read_fallback = bridge_hook, hooks, read_fallback

    def __enter__(self) -> sqlite3.Connection:
        s, write, create = self.s, self.write, self.create
        path, missing = s.store_path(create=create)
        if missing and create:
            render.note(f"note: creating a new store at {path}")
        options = {
            "busy_timeout_ms": s.value("store.busy_timeout"),
            "flush": s.value("store.flush"),
            "now": clock.now_ms(),
            "directory": s.value("identity.directory"),
        }
        if s.verbose:
            _say_where(s, path)
        started = time.perf_counter()
        try:
            conn = opening.connect(path, create=create and missing, **options)
        except (StoreReadOnly, DiskFull):
            if write and not self.read_fallback:
                raise
            conn = opening.connect(path, create=False, read_only=True, **options)
        if s.verbose:
            render.verbose(
                f"store opened in {(time.perf_counter() - started) * 1000:.1f} ms"
                + (" (read-only)" if getattr(conn, "read_only", False) else "")
            )
        self.conn, self.path = conn, path
        self.after = write and self.hooks and not getattr(conn, "read_only", False)
        try:
            if _claimed:
                _check(s, conn, _claimed)
            self.mirror = (
                self.after
                and self.bridge_hook
                and any(s.value(f"bridge.{k}") for k in ("inbox_dir", "outbox_dir", "teams_dir"))
            )
            self.before = None
            # OTLP per hop: keep the hops this command makes (temp triggers of this
            # connection), to send them as spans after its commit; only when configured
            self.otlp = s.value("traces.otlp_endpoint") if self.after else None
            if self.otlp:
                _watch_hops(conn)
            if self.mirror:
                from acomm_cli.bridge import sync as bridge

                self.before = bridge.prepare(conn)  # the watermark; the bridge's triggers exist
        except BaseException:
            conn.close()
            raise
        return conn

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        conn, s = self.conn, self.s
        try:
            if isinstance(exc, sqlite3.DatabaseError):  # a damaged page met mid-command
                from acomm_cli.store.connection import store_error

                raise store_error(exc, self.path) from None  # name the store
            if getattr(conn, "outbox_appended", False) and (
                exc is None or isinstance(exc, CommError)
            ):
                publish_after_commit(conn)
            if exc is not None:
                return
            for text in getattr(conn, "notes", None) or ():
                render.note(text)
            if self.mirror:
                _bridge_after_write(conn, s, self.before)
            if self.otlp:
                _spans_after_write(conn, s, self.otlp)
            if self.after:
                warning = after_write(s, conn)
                if warning:
                    render.note(f"warning: {warning}")
        finally:
            conn.close()


def after_write(s: Settings, conn: sqlite3.Connection) -> str | None:
    """What a writing command does after its commit, the mailbox bridge aside (`tick`
    mirrors it): the batch checkpoint, and the capacity warning it returns (the dashboard
    and the web console run it after each action)."""
    warning = sending.capacity_warning(conn, limits(s))
    if s.value("store.flush") == "batch":
        opening.batch_checkpoint(
            conn,
            s.value("store.batch_messages"),
            s.value("store.batch_interval"),
            clock.now_ms(),
        )
    return warning


def publish_after_commit(conn: sqlite3.Connection) -> None:
    """The command appended to the outbox (a send, ack, reply, nack, task event): on a NATS
    node that goes out now, after the commit, so the peer need not wait for this node's next
    tick; or, where a gateway's publisher runs (`gateway serve --push`), that publisher. A
    plain store never gets here; an HTTP node pays one read (its peers read the outbox from
    the store) and imports nothing."""
    from acomm_cli.store import federation as fsql

    if not fsql.has_nats(conn):
        return
    from acomm_cli.federation import gwstate

    if gwstate.publisher_live(getattr(conn, "path", ""), clock.now_ms()):
        return  # the gateway's warm publisher, woken by this commit, puts it out
    from acomm_cli.federation import nats_transport

    try:
        trouble = nats_transport.publish_after_commit(conn)
    except (CommError, sqlite3.Error) as exc:  # the command's work is committed: it stands
        trouble = f"note: {exc}; it waits in the outbox for the next publish"
    if trouble:
        render.note(trouble)


def _check(s: Settings, conn: sqlite3.Connection, agents: list[str]) -> None:
    """With identity.auth token (the store's, or this process's), the presented secret must
    be every claimed agent's: exit 5 otherwise. Off, it costs one read and no import."""
    if s.value("identity.auth") == "token" or connection.identity_auth(conn) == "token":
        from acomm_cli.engine import credentials

        credentials.verify(conn, agents, presented_secret(s), clock.now_ms())


def identity_check(s: Settings, agent: str) -> Callable[[sqlite3.Connection], None]:
    """The same check for a server that opens a connection per call (`acomm mcp`): each call
    proves `agent` again, so a revoked secret stops it at its next call."""
    return lambda conn: _check(s, conn, [agent])


def presented_secret(s: Settings) -> str | None:
    """The secret this process presents: --token-file FILE (a file only its owner may
    read), else $ACOMM_AGENT_TOKEN. Read only when identity.auth is token."""
    if s.token_file:
        return _read_token_file(s.token_file)
    return os.environ.get("ACOMM_AGENT_TOKEN") or None


def _read_token_file(name: str) -> str:
    import stat

    try:
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block it
    except OSError as exc:
        raise ValidationFailed(
            f"token_file: cannot read {name}: {exc.strerror}", field="token_file", value=name
        ) from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise ValidationFailed(
                f"token_file: {name} is not a regular file", field="token_file", value=name
            )
        if st.st_mode & 0o077:
            raise ValidationFailed(
                f"token_file: {name} may be read or changed by others (mode "
                f"{stat.S_IMODE(st.st_mode):o}): a secret's file must be its owner's alone "
                f"(chmod 600 {name})",
                field="token_file",
                value=name,
            )
        data = fh.read(4097)
    if len(data) > 4096:
        raise ValidationFailed(
            f"token_file: {name} is larger than a secret", field="token_file", value=name
        )
    return data.decode("utf-8", "surrogateescape").strip()


def require_admin(s: Settings, conn: sqlite3.Connection) -> str | None:
    """The admin verbs' check (agent register/update/retire/token, config set): with
    identity.auth token, the presented secret must be an admin's (exit 5 otherwise). Returns
    the admin, or None when auth is off."""
    from acomm_cli.engine import credentials

    return credentials.require_admin(
        conn, presented_secret(s), clock.now_ms(), s.value("identity.auth")
    )


def _say_where(s: Settings, path: object) -> None:
    """-v: the store and the config file this command resolved, and how."""
    from acomm_cli.cli.config import config_file

    how = (
        "--store"
        if s.store
        else "$ACOMM_STORE"
        if os.environ.get("ACOMM_STORE")
        else "found from the current directory"
    )
    render.verbose(f"store {path} ({how})")
    found = config_file(s)
    render.verbose(f"config {found}" if found is not None else "config none (the defaults)")


def _watch_hops(conn: sqlite3.Connection) -> None:
    from acomm_cli.engine import traces

    traces.watch(conn)


def _spans_after_write(conn: sqlite3.Connection, s: Settings, endpoint: str) -> None:
    """The hops the command made, as spans, after its commit (never inside it: a collector
    never holds the write lock). An endpoint that does not take them within
    `traces.otlp_timeout` drops them, with a note, counted as `otlp.spans_dropped`; the
    command's status stays 0."""
    from acomm_cli.engine import traces
    from acomm_cli.errors import CommError

    trees = traces.made(conn)
    if not trees:
        return
    try:
        from acomm_cli.analytics import otel

        otel.ready()
    except ModuleNotFoundError:
        render.note(
            "note: traces.otlp_endpoint is set but the otel extra is not installed "
            "(pip install 'acomm[otel]'); no spans sent"
        )
        return
    _, dropped = otel.send_hops(trees, endpoint, s.value("traces.otlp_timeout"))
    if not dropped:
        return
    render.note(f"note: {otel.traces_url(endpoint)} did not take the spans; {dropped} dropped")
    try:
        with connection.write(conn):
            from acomm_cli.store import counters

            counters.add(conn, "otlp.spans_dropped", dropped)
    except (CommError, sqlite3.Error) as exc:  # a busy store: the note above says it
        render.note(f"note: the dropped spans were not counted: {exc}")


def _bridge_after_write(conn: sqlite3.Connection, s: Settings, before: int | None) -> None:
    """Mirror after the commit; a failure here never fails the command (tick retries)."""
    from acomm_cli.bridge import sync as bridge
    from acomm_cli.output import render_worker

    try:
        result = bridge.sync(
            conn, bridge.config(s.value), clock.now_ms(), after_message_id=before, full=False
        )
    except Exception as exc:  # the command itself succeeded and committed
        render.note(f"warning: mailbox bridge: {exc}; `acomm tick` will retry")
        return
    render_worker.bridge_notes(result)


def limits(s: Settings) -> model.Limits:
    return model.Limits(
        max_active_messages=s.value("limits.max_active_messages"),
        max_store_bytes=s.value("limits.max_store_bytes"),
        fed_offline_after_ms=s.value("federation.offline_after"),
        fed_ack_timeout_ms=s.value("federation.ack_timeout"),
        cap_miss_threshold=s.value("capabilities.miss_threshold"),
        cap_miss_window_ms=s.value("capabilities.miss_window"),
        max_attachment_bytes=s.value("limits.max_attachment_bytes"),
        max_message_attachment_bytes=s.value("limits.max_message_attachment_bytes"),
        preview_chars=s.value("events.preview_chars"),
    )


def stall_s(s: Settings) -> float:
    """How long a reader may take to accept output printed under the write lock: the busy
    timeout, which is as long as other writers wait for that lock."""
    return s.value("store.busy_timeout") / 1000


def read_body(inv: Invocation, body: str | None) -> str:
    """The body argument, or standard input when it is omitted or `-`."""
    if body is not None and body != "-":
        return body
    refuse_terminal_stdin(
        inv, "no message body: give it as an argument or pipe it on stdin", "body"
    )
    return read_stdin()


def read_stdin() -> str:
    """All of standard input as text. Bytes that are not UTF-8 become lone surrogates, as
    they do on argv, whatever the locale: the engine refuses them naming the field (exit 3)
    instead of a decoding error escaping here."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text-only stream (some test harnesses): already decoded
        return sys.stdin.read()
    return raw.read().decode("utf-8", "surrogateescape")


def refuse_terminal_stdin(inv: Invocation, message: str, field: str) -> None:
    """Refuse to read from a terminal: waiting on one would look like a hang. The command's
    help goes to stderr first (not with --json, whose stderr is one JSON document)."""
    if sys.stdin is not None and not sys.stdin.isatty():
        return
    if not inv.settings.json:
        text = inv.help_text()
        if text is not None:
            render.help(text)
    raise UsageError(message, field=field)


def bad_parameter(inv: Invocation, message: str, option: str) -> NoReturn:
    """click's own refusal of an option (exit 2, "Invalid value for OPTION: ...", the usage
    hint), which only Typer writes: on the fast path asking for the help text hands the
    command line over to Typer, which runs the body again and gets here with typer loaded."""
    inv.help_text()
    import typer

    raise typer.BadParameter(message, param_hint=option)


def identity(value: str | None, flag: str = "--as") -> str:
    """The acting agent: no silent default, so a missing one is a usage error. The command
    now acts as it: with identity.auth token the store, once open, refuses it unproven."""
    if not value:
        raise UsageError(
            f"say who is acting with {flag} AGENT (or set ACOMM_AGENT)", field=flag.lstrip("-")
        )
    _claimed.append(value)
    return value


def build_filter(
    *,
    channel: str | None,
    since: str | None,
    until: str | None,
    types: list[str] | None,
    sender: str | None,
    topic: str | None,
    status: list[str] | None,
    grep: str | None,
    priority_min: str | None,
    sort: str | None,
    order: str | None,
    limit: int,
    offset: int,
    now: int,
    event_type: str | None = None,
    thread: str | None = None,
    actor: str | None = None,
    meta: list[str] | None = None,
) -> MessageFilter:
    """The filter options `receive` and `messages` share."""
    return MessageFilter(
        channel=channel,
        since=clock.parse_time(since, "since", now) if since else None,
        until=clock.parse_time(until, "until", now) if until else None,
        types=tuple(model.message_type(t) for t in types or ()),
        sender=sender,
        topic=topic,
        status=tuple(status or ()),
        grep=grep,
        priority_min=model.priority(priority_min) if priority_min is not None else None,
        sort=sort,
        order=order,
        limit=limit,
        offset=offset,
        event_type=event_type,
        thread_id=thread,
        actor=actor,
        meta=model.meta_conditions(meta),
    )
