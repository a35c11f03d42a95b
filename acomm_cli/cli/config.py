"""Settings from the command line, the environment and `config.yaml`, and the store's location.

Precedence: flag > environment > config file > default. YAML is imported only when a config
file actually exists.
"""

from __future__ import annotations

import os

from acomm_cli.clock import format_duration, parse_duration, parse_size
from acomm_cli.errors import StoreUnavailable, UsageError, ValidationFailed
from acomm_cli.lite import paths
from acomm_cli.model import MAX_MESSAGE_SIZE_BOUND, Limits, channel_name, whole_number

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from dataclasses import dataclass, field
    from typing import Any
else:  # the same classes, without importing dataclasses
    from acomm_cli.lite.records import dataclass, field

AGENTS = "agents"  # the `agents:` section: agent name -> AgentSpec (see acomm_cli.dispatch.agents)
STORE_DIR = ".acomm"
STORE_FILE = "store.acomm"
CONFIG_FILE = "config.yaml"


def _ms(value: Any, key: str, *, positive: bool = False) -> int:
    """A duration: `500ms`, `30s`, `5m`, `1h30m`, `PT1H30M`..., or a whole number of
    milliseconds (in the file and in the environment alike)."""
    ms = parse_duration(value, key, bare="ms")
    if positive and ms == 0:
        raise ValidationFailed(
            f"{key}: {value!r} is not a duration above 0 (use e.g. 500ms, 30s, 5m)",
            field=key,
            value=str(value),
        )
    return ms


def _positive_ms(value: Any, key: str) -> int:
    return _ms(value, key, positive=True)


# key -> (default, parser, environment variable)
KEYS: dict[str, tuple[Any, Any, str]] = {
    "store.busy_timeout": (5000, _ms, "ACOMM_BUSY_TIMEOUT"),
    "store.flush": (
        "batch",
        lambda v, k: _choice(v, k, ("immediate", "batch", "manual")),
        "ACOMM_FLUSH",
    ),
    "store.batch_messages": (100, lambda v, k: _positive_int(v, k), "ACOMM_BATCH_MESSAGES"),
    "store.batch_interval": (5000, _ms, "ACOMM_BATCH_INTERVAL"),
    "limits.max_active_messages": (
        100_000,
        lambda v, k: _positive_int(v, k),
        "ACOMM_MAX_ACTIVE_MESSAGES",
    ),
    "limits.max_store_bytes": (
        2 * 1024**3,
        lambda v, k: _store_bytes(v, k),
        "ACOMM_MAX_STORE_BYTES",
    ),
    # `send --attach`: the largest file, and the most one message's files may add up to
    "limits.max_attachment_bytes": (
        10 * 1024**2,
        lambda v, k: _attachment_bytes(v, k),
        "ACOMM_MAX_ATTACHMENT_BYTES",
    ),
    "limits.max_message_attachment_bytes": (
        25 * 1024**2,
        lambda v, k: _attachment_bytes(v, k),
        "ACOMM_MAX_MESSAGE_ATTACHMENT_BYTES",
    ),
    # `acomm audit`: where Spark runs (local[*], local[N], spark://host:7077, yarn, k8s://...)
    "spark.master": ("local[*]", lambda v, k: _nonempty(v, k), "ACOMM_SPARK_MASTER"),
    # The mailbox bridge: off while none of the three directories is set.
    "bridge.inbox_dir": (None, lambda v, k: _directory(v, k), "ACOMM_BRIDGE_INBOX_DIR"),
    "bridge.outbox_dir": (None, lambda v, k: _directory(v, k), "ACOMM_BRIDGE_OUTBOX_DIR"),
    "bridge.teams_dir": (None, lambda v, k: _directory(v, k), "ACOMM_BRIDGE_TEAMS_DIR"),
    "bridge.read_ttl": (
        24 * 3600 * 1000,
        _positive_ms,
        "ACOMM_BRIDGE_READ_TTL",
    ),
    # where a response object that names no target goes (None: a reply to the agent's latest)
    "bridge.default_channel": (None, lambda v, k: _channel(v, k), "ACOMM_BRIDGE_DEFAULT_CHANNEL"),
    # Federation: read only on a store that is a node.
    "federation.ack_timeout": (
        30_000,
        _positive_ms,
        "ACOMM_FED_ACK_TIMEOUT",
    ),
    "federation.max_attempts": (5, lambda v, k: _positive_int(v, k), "ACOMM_FED_MAX_ATTEMPTS"),
    "federation.retry_backoff": (1000, _ms, "ACOMM_FED_RETRY_BACKOFF"),
    "federation.retry_jitter": (0.1, lambda v, k: _fraction(v, k), "ACOMM_FED_RETRY_JITTER"),
    "federation.sla": (600_000, _positive_ms, "ACOMM_FED_SLA"),
    "federation.offline_after": (
        30_000,
        _positive_ms,
        "ACOMM_FED_OFFLINE_AFTER",
    ),
    # how long an agent's owner must be silent before another node may `agent own` it
    "federation.takeover_grace": (
        600_000,
        _positive_ms,
        "ACOMM_FED_TAKEOVER_GRACE",
    ),
    "federation.pull_pages": (10, lambda v, k: _positive_int(v, k), "ACOMM_FED_PULL_PAGES"),
    # how long one pass may spend on one peer's exchange, however slowly it answers
    "federation.peer_deadline": (
        30_000,
        _positive_ms,
        "ACOMM_FED_PEER_DEADLINE",
    ),
    # production: a node proof at every join and rejoin, no plain-HTTP peer (this can only
    # turn it on: `node init --production` records it in the store, which binds every process)
    "federation.profile": (
        "standard",
        lambda v, k: _choice(v, k, ("standard", "production")),
        "ACOMM_FED_PROFILE",
    ),
    # a CA bundle (PEM) trusted for https:// peers and seeds, besides the usual ones
    "federation.ca_file": (None, lambda v, k: _ca_file(v, k), "ACOMM_FED_CA_FILE"),
    # the NATS server `node init` records when --transport is not given
    "federation.transport": (None, lambda v, k: _nats_url(v, k), "ACOMM_FED_TRANSPORT"),
    # `gateway serve`: the largest request body its endpoints read (a send: at least the
    # largest channel's max_message_size)
    "gateway.max_body": (1024 * 1024, lambda v, k: _body_bytes(v, k), "ACOMM_GATEWAY_MAX_BODY"),
    # `gateway serve` pulls its peers continuously (long polls of `pull_wait`, a pause of
    # `pull_interval` between two reads of a peer), unless `off` (or --no-pull)
    "gateway.pull": (
        "continuous",
        lambda v, k: _choice(v, k, ("continuous", "off")),
        "ACOMM_GATEWAY_PULL",
    ),
    "gateway.pull_wait": (20_000, lambda v, k: _pull_wait(v, k), "ACOMM_GATEWAY_PULL_WAIT"),
    "gateway.pull_interval": (0, _ms, "ACOMM_GATEWAY_PULL_INTERVAL"),
    # the agent directory: strict refuses names nobody registered, open registers them with
    # a note (None: the store's own default: strict for a store made by `acomm init`)
    "identity.directory": (
        None,
        lambda v, k: _choice(v, k, ("open", "strict")),
        "ACOMM_IDENTITY_DIRECTORY",
    ),
    # capabilities: N routing misses within the window open a review incident
    "capabilities.miss_threshold": (
        3,
        lambda v, k: _positive_int(v, k),
        "ACOMM_CAP_MISS_THRESHOLD",
    ),
    "capabilities.miss_window": (
        3_600_000,
        _positive_ms,
        "ACOMM_CAP_MISS_WINDOW",
    ),
    # an event's content_preview: the body's first N characters (200 to 500)
    "events.preview_chars": (280, lambda v, k: _preview_chars(v, k), "ACOMM_EVENTS_PREVIEW_CHARS"),
    # OTLP per hop: where set (and the otel extra installed), every writing command sends the
    # hops it made (messages, acks, dispatch runs) as spans after its commit; an endpoint
    # that does not answer within the timeout drops them, counted as otlp.spans_dropped
    "traces.otlp_endpoint": (
        None,
        lambda v, k: _otlp_endpoint(v, k),
        "OTEL_EXPORTER_OTLP_ENDPOINT",
    ),
    "traces.otlp_timeout": (1000, lambda v, k: _ms(v, k, positive=True), "ACOMM_OTLP_TIMEOUT"),
    # token: acting as an agent needs its secret. This can only turn it on: the store's own
    # setting (`config set identity.auth token`) binds every process, whatever its environment.
    "identity.auth": (
        "none",
        lambda v, k: _choice(v, k, ("none", "token")),
        "ACOMM_IDENTITY_AUTH",
    ),
}


def _nats_url(value: Any, key: str) -> str:
    """nats://HOST:PORT or tls://HOST:PORT (HTTP is the default, never named)."""
    text = _nonempty(value, key)
    if not text.startswith(("nats://", "tls://")) or len(text.split("://", 1)[1]) == 0:
        raise ValidationFailed(
            f"{key}: {value!r} is not a NATS url (nats://HOST:PORT)", field=key, value=str(value)
        )
    return text


def _ca_file(value: Any, key: str) -> str | None:
    """A PEM file of CA certificates (~ expanded), or None (empty = none)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationFailed(f"{key}: {value!r} must be a file path", field=key, value=str(value))
    return paths.expanduser(value)


def _pull_wait(value: Any, key: str) -> int:
    """A long poll's wait: 0 to 30 s (what a gateway's outbox endpoint allows)."""
    ms = _ms(value, key)
    if ms > 30_000:
        raise ValidationFailed(
            f"{key}: {value!r} is longer than 30s (the longest a gateway holds a read)",
            field=key,
            value=str(value),
        )
    return ms


def _fraction(value: Any, key: str) -> float:
    """A number from 0 to 1 (a jitter)."""
    try:
        n = float(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        n = -1.0
    if not 0 <= n <= 1:
        raise ValidationFailed(
            f"{key}: {value!r} is not a number from 0 to 1", field=key, value=str(value)
        )
    return n


def _directory(value: Any, key: str) -> str | None:
    """A bridge directory (~ expanded), or None (empty = off)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationFailed(
            f"{key}: {value!r} must be a directory path", field=key, value=str(value)
        )
    return paths.expanduser(value)


def _channel(value: Any, key: str) -> str | None:
    """A channel name, or None (empty = none)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValidationFailed(
            f"{key}: {value!r} must be a channel name", field=key, value=str(value)
        )
    try:
        return channel_name(value)
    except ValidationFailed as exc:
        raise ValidationFailed(
            f"{key}: {exc.message.removeprefix('channel: ')}", field=key, value=value
        ) from None


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValidationFailed(
            f"{key}: {value!r} is not one of {', '.join(allowed)}", field=key, value=str(value)
        )
    return value


def _otlp_endpoint(value: Any, key: str) -> str | None:
    """An OTLP/HTTP base url; empty is unset, as OpenTelemetry reads its variable. Anything
    else is taken as given: an endpoint that cannot take spans drops them with a note, it
    never fails the command that made them."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _nonempty(value, key)


def _nonempty(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationFailed(
            f"{key}: {value!r} must be a non-empty string", field=key, value=str(value)
        )
    return value.strip()


def _positive_int(value: Any, key: str) -> int:
    """A whole number >= 0, given as one or as ASCII digits (never a bool or a fraction)."""
    n = whole_number(value)
    value = value if n is None else n
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationFailed(
            f"{key}: {value!r} is not a whole number >= 0", field=key, value=str(value)
        )
    return value


def _preview_chars(value: Any, key: str) -> int:
    n = _positive_int(value, key)
    if not 200 <= n <= 500:
        raise ValidationFailed(f"{key}: {n} must be from 200 to 500", field=key, value=str(n))
    return n


def _body_bytes(value: Any, key: str) -> int:
    """A size of at least 1 KiB and at most 1 GiB (a request body held in memory)."""
    n = parse_size(value, key) if isinstance(value, int | str) and value is not True else -1
    if not 1024 <= n <= 1024**3 or isinstance(value, bool):
        raise ValidationFailed(
            f"{key}: {value!r} is not a size from 1KiB to 1GiB (e.g. 1MiB)",
            field=key,
            value=str(value),
        )
    return n


def _attachment_bytes(value: Any, key: str) -> int:
    """A size from 1 byte to the largest value SQLite stores in one row, less a margin."""
    n = parse_size(value, key) if isinstance(value, int | str) and value is not True else -1
    if not 1 <= n <= MAX_MESSAGE_SIZE_BOUND or isinstance(value, bool):
        raise ValidationFailed(
            f"{key}: {value!r} is not a size from 1 byte to {MAX_MESSAGE_SIZE_BOUND} (e.g. 10MiB)",
            field=key,
            value=str(value),
        )
    return n


def _store_bytes(value: Any, key: str) -> int:
    """0 (no limit) or a size above the reserve that sends stop short of."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValidationFailed(
            f"{key}: {value!r} is not a size (use bytes or e.g. 2GiB)", field=key, value=str(value)
        )
    n = parse_size(value, key)
    reserve = Limits().reserve_bytes
    if n < 0 or 0 < n <= reserve:
        raise ValidationFailed(
            f"{key}: {value!r} must be 0 (no limit) or more than the {reserve // 1024**2} MiB "
            "that sends keep in reserve",
            field=key,
            value=str(value),
        )
    return n


@dataclass(frozen=True)
class Settings:
    """Global options, frozen on the Typer context; config loads only when asked for."""

    store: str | None = None
    config: str | None = None
    json: bool = False
    color: bool | None = None  # None: decide from the terminal and NO_COLOR
    table: str | None = None  # a listing's rows as "jsonl", "csv" or "tsv" (docs/output.md)
    headers: bool = True  # --no-headers: --csv/--tsv without their header row
    quiet: bool = False  # -q: no `acomm: note:` lines
    verbose: bool = False  # -v: the store, the config file and timings on stderr
    token_file: str | None = None  # --token-file: the agent's secret (identity.auth token)
    _cache: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_options(
        cls,
        *,
        store: str | None,
        config: str | None,
        json_: bool,
        no_color: bool,
        jsonl: bool = False,
        csv: bool = False,
        tsv: bool = False,
        no_headers: bool = False,
        quiet: bool = False,
        verbose: bool = False,
        token_file: str | None = None,
    ) -> Settings:
        """The settings the root's global options give (the Typer root and the fast path).
        The output formats exclude each other: two of them is a usage error naming both."""
        given = [
            name
            for name, on in (("--json", json_), ("--jsonl", jsonl), ("--csv", csv), ("--tsv", tsv))
            if on
        ]
        if len(given) > 1:
            raise UsageError(
                f"{given[0]} and {given[1]} are different output formats: give one",
                field="format",
                value=" ".join(given),
            )
        if no_headers and not (csv or tsv):
            raise UsageError(
                "--no-headers drops the header row of --csv or --tsv: give one of them",
                field="no_headers",
            )
        if quiet and verbose:
            raise UsageError("-q/--quiet and -v/--verbose: give one", field="quiet")
        table = "jsonl" if jsonl else "csv" if csv else "tsv" if tsv else None
        return cls(
            store=store,
            config=config,
            json=json_,
            color=False if no_color else None,
            table=table,
            headers=not no_headers,
            quiet=quiet,
            verbose=verbose,
            token_file=token_file,
        )

    def store_path(self, *, create: bool = False) -> tuple[str, bool]:
        """The store to use and whether it is still missing. Missing is only ever a path
        named by --store or $ACOMM_STORE, which a command that may create a store (`create`,
        its caller's business) makes there; the answer is the same either way."""
        if "path" not in self._cache:
            self._cache["path"] = resolve_store(self.store)
        return self._cache["path"]

    def value(self, key: str) -> Any:
        if key == AGENTS:  # parsed and validated only by the commands that use agents
            if "agents" not in self._cache:
                self._cache["agents"] = load_agents(self)
            return self._cache["agents"][0]
        values = self._cache.get("values")
        if values is None:
            values = self._cache["values"] = load(self)
        return values[key][0]


def resolve_store(explicit: str | None) -> tuple[str, bool]:
    """--store > $ACOMM_STORE > nearest .acomm/store.acomm upwards. A path string as pathlib
    would write it, without importing pathlib. Where none is named and none is found, no
    command makes one (`acomm init` does, on its own path): a send run in the wrong directory
    must fail, not start an empty store. Both the fast path and Typer's resolve it here."""
    chosen = explicit or os.environ.get("ACOMM_STORE")
    if chosen:
        p = paths.expanduser(chosen)
        return p, not os.path.exists(p)
    here = d = os.getcwd()
    while True:  # here, then each parent up to the root
        candidate = os.path.join(d, STORE_DIR, STORE_FILE)
        if os.path.exists(candidate):
            return candidate, False
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    raise StoreUnavailable(
        f"no store found (searched from {here} up); run `acomm init` here, or pass --store",
        field="store",
        searched_from=here,
    )


def config_file(settings: Settings) -> str | None:
    explicit = settings.config or os.environ.get("ACOMM_CONFIG")
    if explicit:
        p = paths.expanduser(explicit)
        if not os.path.exists(p):
            raise ValidationFailed(f"config: {p} does not exist", field="config", value=str(p))
        return p
    try:  # looking for a config file never announces (or creates) a store
        store, _ = settings.store_path(create=False)
    except StoreUnavailable:
        return None
    p = paths.sibling(store, CONFIG_FILE)
    return p if os.path.exists(p) else None


def load(settings: Settings) -> dict[str, tuple[Any, str]]:
    """Every known key (the flat settings; agents: see load_agents) -> (value, where it came
    from)."""
    path = config_file(settings)
    raw = _raw(settings, path, agents=False)
    out: dict[str, tuple[Any, str]] = {}
    bare: list[tuple[str, Any, str, int]] = []  # durations the file gives without a unit
    for key, (default, parse, env) in KEYS.items():
        if env in os.environ:
            given, source = os.environ[env], f"environment ({env})"
        elif key in raw:
            given, source = raw[key], f"file ({path})"
        else:
            out[key] = (default, "default")
            continue
        try:
            out[key] = (parse(given, key), source)
        except (TypeError, ValueError, AttributeError):  # a list or mapping where a value goes
            raise ValidationFailed(
                f"{key}: {given!r} is not a valid value ({source})", field=key, value=str(given)
            ) from None
        if source.startswith("file") and parse in DURATIONS and whole_number(given) is not None:
            bare.append((key, given, "milliseconds", out[key][0]))
    _note_bare(path, "settings", bare)
    return out


# The settings that are durations: a bare number in the file is milliseconds.
DURATIONS = (_ms, _positive_ms)
# The agents' durations (acomm_cli.dispatch.agents): a bare number there is seconds.
AGENT_DURATIONS = ("timeout", "backoff")
_NOTED: set[tuple[str, str]] = set()  # (file, part) whose bare durations were noted


def _note_bare(path: str | None, part: str, bare: list[tuple[str, Any, str, int]]) -> None:
    """Once per file, part (the settings, the agents) and process: the durations written as
    bare numbers, with their unit form. They keep their meaning; the note says what it is."""
    if not bare or path is None or (path, part) in _NOTED:
        return
    _NOTED.add((path, part))
    from acomm_cli.output import render

    said = "; ".join(
        f"{key}: {given} is {unit}, write {format_duration(ms)}" for key, given, unit, ms in bare
    )
    render.note(f"note: {path}: a duration without a unit: {said}")


def load_agents(settings: Settings) -> tuple[dict[str, Any], str]:
    """The `agents:` section (agent dispatch): name -> AgentSpec, and where it came
    from. Only from the file; parsed and validated only here, i.e. only by the commands that
    use agents (tick, dispatch, config show): `send` does not pay for it."""
    path = config_file(settings)
    raw = _raw(settings, path, agents=True)
    if not raw.get(AGENTS):
        return {}, "default"
    from acomm_cli.dispatch.agents import parse_agents

    assert path is not None
    from pathlib import Path

    specs = parse_agents(raw[AGENTS], Path(path).parent)
    _note_bare(
        path,
        AGENTS,
        [
            (f"{AGENTS}.{name}.{k}", body[k], "seconds", parse_duration(body[k], k))
            for name, body in raw[AGENTS].items()
            for k in AGENT_DURATIONS
            if k in body and whole_number(body[k]) is not None
        ],
    )
    return specs, f"file ({path})"


def _raw(settings: Settings, path: str | None, *, agents: bool) -> dict[str, Any]:
    """The file read once per command (tick reads both the settings and the agents)."""
    if path is None:
        return {}
    cached = settings._cache.get("raw")
    if cached is None:
        cached = _read_yaml(path, agents=agents)
        if cached is None:  # not parsed: nothing but agents, and agents were not asked for
            return {}
        settings._cache["raw"] = cached
    return cached


_AGENTS_LINE = r"agents[ \t]*:[ \t]*(#.*)?"  # `re` imported only when a file is read


def _agents_only(lines: list[str]) -> bool:
    """The file holds nothing but an `agents:` section, in block style: its first line of
    content is `agents:` at the margin and every other line at the margin is blank or a
    comment (anything indented belongs to that section). Then no other setting is in it,
    and reading those needs no YAML parser. Anything else (flow style, `---`, a directive)
    is left to the parser."""
    import re

    content = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return bool(content) and all(
        re.fullmatch(_AGENTS_LINE, line.rstrip()) if not line[0].isspace() else i > 0
        for i, line in enumerate(content)
    )


def _read_yaml(path: str, *, agents: bool) -> dict[str, Any] | None:
    """The file's settings as flat keys, and its `agents:` section as it is (not validated
    here). agents=False: a file with nothing but agents is not parsed (None)."""
    return flat_settings(read_text(path), path, agents=agents)


def read_text(path: str) -> str:
    """A config file's text, or an error naming it (unreadable, not UTF-8)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read().decode("utf-8")
    except OSError as exc:  # e.g. another user's 0600 file beside a store shared read-only
        raise ValidationFailed(
            f"config: cannot read {path}: {exc.strerror}", field="config", value=str(path)
        ) from None
    except UnicodeDecodeError as exc:
        raise ValidationFailed(
            f"config: {path} is not valid UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start})",
            field="config",
            value=str(path),
        ) from None
    return text


def flat_settings(text: str, path: str, *, agents: bool) -> dict[str, Any] | None:
    """`_read_yaml` on a file's text (also what `config set` checks a file it writes with)."""
    lines = text.splitlines()
    if all(not line.strip() or line.lstrip().startswith("#") for line in lines):
        return {}  # only comments (as `acomm init` writes it): no need to load a YAML parser
    if not agents and _agents_only(lines):
        return None
    import yaml

    try:
        doc = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:  # PyYAML's own text spans lines; an error is one line
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        what = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise ValidationFailed(
            f"config: {path} is not valid YAML: {what}{where}", field="config"
        ) from None
    except RecursionError:  # PyYAML's composer recurses once per level of nesting
        raise ValidationFailed(
            f"config: {path} is nested too deeply to be a config file",
            field="config",
            value=str(path),
        ) from None
    if not isinstance(doc, dict):
        raise ValidationFailed(f"config: {path} must hold a mapping", field="config")
    flat: dict[str, Any] = {}
    for section, body in doc.items():
        if section == AGENTS:  # a mapping of agent names, validated by acomm_cli.dispatch.agents
            flat[AGENTS] = body
            continue
        if body is None and any(k.startswith(f"{section}.") for k in KEYS):
            continue  # `store:` with every setting below it commented out
        if not isinstance(body, dict):
            raise ValidationFailed(f"config: unknown key {section!r} in {path}", field=str(section))
        for k, v in body.items():
            key = f"{section}.{k}"
            if key not in KEYS:
                raise ValidationFailed(f"config: unknown key {key!r} in {path}", field=key)
            flat[key] = v
    return flat


DEFAULT_CONFIG = """\
# acomm configuration. Precedence: command-line flag > environment > this file > default.
# Uncomment a line (and its section) to change it. A line shows the setting's default, unless
# it says "example": those settings have no default (the mailbox bridge is off until one of
# its directories is set; no agent is dispatched until one is declared).
# Durations take a unit (500ms, 30s, 5m, 1h30m, 7d, or ISO 8601 such as PT1H30M); a bare
# number is milliseconds here (in agents: seconds).
#
# store:
#   # How long a command waits for another process's write lock before giving up (exit 7).
#   busy_timeout: 5000ms
#   # immediate: survive power loss (synchronous=FULL); batch: synchronous=NORMAL with
#   # periodic checkpoints; manual: checkpoint only on `acomm flush`.
#   flush: batch
#   batch_messages: 100
#   batch_interval: 5000ms
# limits:
#   # Messages with a delivery not yet terminal; beyond this, sends fail with store_full.
#   max_active_messages: 100000
#   # Database plus WAL; within 100 MiB of it, sends fail with store_capacity.
#   max_store_bytes: 2GiB
#   # `send --attach`: the largest file, and the most one message's files may add up to;
#   # past them the send fails with attachment_too_large (exit 6).
#   max_attachment_bytes: 10MiB
#   max_message_attachment_bytes: 25MiB
# spark:
#   # Where `acomm audit` runs its Spark job: local[*] (every core here), local[2],
#   # spark://host:7077 (a cluster; exports and --out must be on storage every node reads).
#   master: local[*]
# identity:
#   # strict: a name nobody registered (`acomm agent register`) is refused where it is
#   # used (exit 4, with the closest registered names); open: it is registered there and
#   # then, with a note. Unset: the store's own default (strict; open for a store made
#   # before the agent directory).
#   directory: strict                    # example (no default: the store's own)
#   # token: acting as an agent needs its secret ($ACOMM_AGENT_TOKEN or --token-file);
#   # here it binds only processes that read this file: `acomm config set identity.auth
#   # token` binds every one (docs/SECURITY.md, "Agent credentials").
#   auth: none
# bridge:
#   # The mailbox bridge: mirror each unread delivery as
#   # {inbox_dir}/{agent}/{message_id}.json; ingest the response files agents write,
#   # {outbox_dir}/{agent}/*.json, at each `acomm tick`; append to Claude Code team inboxes
#   # {teams_dir}/{team}/inboxes/{agent}.json for agent@team recipients.
#   inbox_dir: ~/.claude/inbox           # example (no default: off until set)
#   outbox_dir: ~/.claude/outbox         # example (no default: off until set)
#   teams_dir: ~/.claude/teams           # example (no default: off until set)
#   # Where a response object that names no target goes (unset: a reply to the latest
#   # message its agent received).
#   default_channel: results             # example (no default)
#   # Read team inbox entries older than this are pruned; unread ones never are.
#   read_ttl: 24h
# agents:
#   # `acomm tick` (or `acomm dispatch`) runs an agent's command on each unread message to
#   # it that matches its rules: the message as JSON on stdin; exit 0 = accepted, 3 = ignored,
#   # anything else = failed (retried after backoff x 2^(attempt-1), then dead-lettered).
#   reviewer:                            # example: an agent's name
#     run: "./agents/review.sh"          # example: a shell command line, or a list of
#                                        # arguments
#     on: {types: [command, query], topics: ["review.#"], channels: [code]}   # example
#                                        # (no rules: every message)
#     cwd: ..                            # example: where it runs, relative to this file's
#                                        # directory (by default that directory itself); a
#                                        # relative `run:` resolves there
#     timeout: 10m
#     max_attempts: 3
#     backoff: 30s
#     jitter: 0.1
#     unmatched: ignore                  # messages no rule lets through: read, receipt
#                                        # `ignored` (reason `filtered`); keep: left unread
"""
