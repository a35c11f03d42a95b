"""Agents of the config file (`agents:` in config.yaml): their command and trigger rules.

Parsed and validated only by the commands that use agents (tick, dispatch, config show: a bad
entry is exit 3 naming its key, like every other setting); other commands never import this
module. The rules are pure: `Rules.match` looks at a message's fields (and the event it
carries) and nothing else.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acomm_cli import model
from acomm_cli.clock import parse_duration
from acomm_cli.engine.attachments import DIRECTIONS
from acomm_cli.engine.directory import KINDS
from acomm_cli.engine.eventrules import Facts
from acomm_cli.errors import CommError, ValidationFailed
from acomm_cli.model import EVENT_TYPES
from acomm_cli.topics import matches, validate_pattern

DEFAULT_TIMEOUT_MS = 10 * 60_000
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_BACKOFF_MS = 30_000
DEFAULT_JITTER = 0.1

# the conditions on the event a message carries: the event's field names
EVENT_KEYS = ("event_type", "actor", "target", "target_kind")
AGENT_KEYS = ("run", "on", "timeout", "max_attempts", "backoff", "jitter", "cwd", "unmatched")
# what becomes of a message to the agent that its rules do not let through:
# `ignore` reads it with an `ignored` receipt (reason `filtered`); `keep` leaves it unread
UNMATCHED = ("ignore", "keep")
RULE_KEYS = ("types", "topics", "channels", "from", "metadata", "direction") + EVENT_KEYS


@dataclass(frozen=True)
class Rules:
    """Trigger rules: every condition given must hold; within a list, any value will do.
    An omitted condition matches everything; an empty `on` matches every message (but one
    carrying an event: the default trigger rules decide those). A condition on the event
    matches only a message that carries one, and one on `direction` (the kinds at both ends,
    e.g. U2A) only a direct message."""

    types: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    senders: tuple[str, ...] = ()
    metadata: tuple[tuple[str, tuple[str, ...]], ...] = ()
    directions: tuple[str, ...] = ()
    event_types: tuple[str, ...] = ()
    actors: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    target_kinds: tuple[str, ...] = ()

    @property
    def given(self) -> bool:
        """Any condition at all: the agent's own rules, in place of the defaults."""
        return self != Rules()

    def match(
        self,
        *,
        type_: str,
        topic: str | None,
        channel: str,
        sender: str,
        metadata: dict[str, Any],
        event: Facts | None = None,
        direction: str | None = None,
    ) -> bool:
        if self.types and type_ not in self.types:
            return False
        if self.directions and direction not in self.directions:
            return False
        if self.channels and channel not in self.channels:
            return False
        if self.senders and sender not in self.senders:
            return False
        if self.topics and (topic is None or not any(matches(topic, p) for p in self.topics)):
            return False
        for key, allowed in self.metadata:
            if key not in metadata or _scalar(metadata[key]) not in allowed:
                return False
        for values, field_ in (
            (self.event_types, "event_type"),
            (self.actors, "actor"),
            (self.targets, "target"),
            (self.target_kinds, "target_kind"),
        ):
            if values and (event is None or getattr(event, field_) not in values):
                return False
        return True

    def doc(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, values in (
            ("types", self.types),
            ("topics", self.topics),
            ("channels", self.channels),
            ("from", self.senders),
        ):
            if values:
                out[name] = list(values)
        if self.metadata:
            out["metadata"] = {k: list(v) for k, v in self.metadata}
        if self.directions:
            out["direction"] = list(self.directions)
        for name, values in (
            ("event_type", self.event_types),
            ("actor", self.actors),
            ("target", self.targets),
            ("target_kind", self.target_kinds),
        ):
            if values:
                out[name] = list(values)
        return out


@dataclass(frozen=True)
class AgentSpec:
    name: str
    run: str | tuple[str, ...]  # a string runs through /bin/sh; a list runs as it is
    rules: Rules = field(default_factory=Rules)
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_ms: int = DEFAULT_BACKOFF_MS
    jitter: float = DEFAULT_JITTER
    cwd: str | None = None
    unmatched: str = "ignore"  # one of UNMATCHED

    def doc(self) -> dict[str, Any]:
        return {
            "run": self.run if isinstance(self.run, str) else list(self.run),
            "on": self.rules.doc(),
            "timeout_ms": self.timeout_ms,
            "max_attempts": self.max_attempts,
            "backoff_ms": self.backoff_ms,
            "jitter": self.jitter,
            "cwd": self.cwd,
            "unmatched": self.unmatched,
        }


def _scalar(value: Any) -> str:
    """Metadata values compare as text (`--meta k=v` stores strings; YAML may say 5 or true)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _bad(key: str, value: Any, why: str) -> ValidationFailed:
    return ValidationFailed(f"{key}: {value!r} {why}", field=key, value=str(value))


def _renamed(exc: CommError, key: str, value: Any) -> ValidationFailed:
    """A validator's error, re-labelled with the config key it came from (in place of the
    field name the validator put first, e.g. `type:`, so that no key is said twice)."""
    message = exc.message
    if exc.field and message.startswith(f"{exc.field}: "):
        message = message[len(exc.field) + 2 :]
    return ValidationFailed(f"{key}: {message}", field=key, value=str(value))


def _strings(key: str, value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, str) and v for v in items):
        raise _bad(key, value, "must be a non-empty string or a list of them")
    return items


def _duration(key: str, value: Any, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _bad(key, value, "is not a duration (use e.g. 500ms, 30s, 5m, 2h)")
    ms = parse_duration(value, key)
    if ms < minimum:
        raise _bad(key, value, f"must be at least {minimum} ms")
    return ms


def _rules(key: str, raw: Any) -> Rules:
    if raw is None:
        return Rules()
    if not isinstance(raw, dict):
        raise _bad(key, raw, f"must be a mapping of {', '.join(RULE_KEYS)}")
    for k in raw:
        if k not in RULE_KEYS:
            raise ValidationFailed(
                f"config: unknown key '{key}.{k}' (trigger rules are {', '.join(RULE_KEYS)})",
                field=f"{key}.{k}",
            )
    out: dict[str, Any] = {}
    if "types" in raw:
        try:
            out["types"] = tuple(
                model.message_type(t).value for t in _strings(f"{key}.types", raw["types"])
            )
        except ValidationFailed as exc:
            raise _renamed(exc, f"{key}.types", raw["types"]) from None
    if "topics" in raw:
        topics = _strings(f"{key}.topics", raw["topics"])
        for p in topics:
            try:
                validate_pattern(p)
            except ValidationFailed as exc:
                raise _renamed(exc, f"{key}.topics", p) from None
        out["topics"] = tuple(topics)
    if "channels" in raw:
        channels = _strings(f"{key}.channels", raw["channels"])
        for c in channels:
            try:
                model.channel_name(c, allow_reserved=True)
            except ValidationFailed as exc:
                raise _renamed(exc, f"{key}.channels", c) from None
        out["channels"] = tuple(channels)
    if "from" in raw:
        senders = _strings(f"{key}.from", raw["from"])
        for s in senders:
            model.agent_id(s, f"{key}.from")
        out["senders"] = tuple(senders)
    if "metadata" in raw:
        meta = raw["metadata"]
        if not isinstance(meta, dict) or not meta:
            raise _bad(
                f"{key}.metadata", meta, "must map metadata keys to a value or a list of values"
            )
        pairs = []
        for mk, mv in meta.items():
            values = mv if isinstance(mv, list) else [mv]
            if not values or not all(isinstance(v, (str, int, float, bool)) for v in values):
                raise _bad(f"{key}.metadata.{mk}", mv, "must be a value or a list of values")
            pairs.append((str(mk), tuple(_scalar(v) for v in values)))
        out["metadata"] = tuple(pairs)
    if "direction" in raw:
        values = _strings(f"{key}.direction", raw["direction"])
        for v in values:
            if v not in DIRECTIONS:
                raise _bad(f"{key}.direction", v, f"is not one of {', '.join(DIRECTIONS)}")
        out["directions"] = tuple(values)
    out.update(_event_rules(key, raw))
    return Rules(**out)


def _event_rules(key: str, raw: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """The conditions on a message's event: its type and target kind from closed lists, its
    actor and target agent names."""
    out: dict[str, tuple[str, ...]] = {}
    for name, attr, allowed in (
        ("event_type", "event_types", EVENT_TYPES),
        ("target_kind", "target_kinds", KINDS),
    ):
        if name in raw:
            values = _strings(f"{key}.{name}", raw[name])
            for v in values:
                if v not in allowed:
                    raise _bad(f"{key}.{name}", v, f"is not one of {', '.join(allowed)}")
            out[attr] = tuple(values)
    for name, attr in (("actor", "actors"), ("target", "targets")):
        if name in raw:
            values = _strings(f"{key}.{name}", raw[name])
            for v in values:
                model.agent_id(v, f"{key}.{name}")
            out[attr] = tuple(values)
    return out


def parse_agent(name: Any, raw: Any, base: Path | None) -> AgentSpec:
    """One `agents.NAME` entry; `base` (the config file's directory) is the default working
    directory and anchors a relative cwd."""
    key = f"agents.{name}"
    if base is not None:
        base = Path(os.path.abspath(base))
    try:
        model.agent_id(name, key)
    except ValidationFailed as exc:
        raise _renamed(exc, key, name) from None
    if not isinstance(raw, dict):
        raise _bad(key, raw, "must be a mapping with at least `run`")
    # YAML 1.1 reads a bare `on:` key as the boolean true (and `off:` as false)
    raw = {("on" if k is True else "off" if k is False else k): v for k, v in raw.items()}
    for k in raw:
        if k not in AGENT_KEYS:
            raise ValidationFailed(
                f"config: unknown key '{key}.{k}' (an agent has {', '.join(AGENT_KEYS)})",
                field=f"{key}.{k}",
            )
    if "run" not in raw:
        raise ValidationFailed(f"{key}.run: every agent needs a command to run", field=f"{key}.run")
    run = raw["run"]
    if isinstance(run, list):
        if not run or not all(isinstance(a, str) for a in run) or not run[0]:
            raise _bad(f"{key}.run", run, "must be a command line or a non-empty list of arguments")
        run = tuple(run)
    elif not isinstance(run, str) or not run.strip():
        raise _bad(f"{key}.run", run, "must be a command line or a non-empty list of arguments")
    spec: dict[str, Any] = {"name": name, "run": run, "rules": _rules(f"{key}.on", raw.get("on"))}
    if "timeout" in raw:
        spec["timeout_ms"] = _duration(f"{key}.timeout", raw["timeout"], minimum=1)
    if "backoff" in raw:
        spec["backoff_ms"] = _duration(f"{key}.backoff", raw["backoff"], minimum=0)
    if "max_attempts" in raw:
        n = raw["max_attempts"]
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise _bad(f"{key}.max_attempts", n, "must be a whole number >= 1")
        spec["max_attempts"] = n
    if "jitter" in raw:
        j = raw["jitter"]
        if isinstance(j, bool) or not isinstance(j, (int, float)) or not 0 <= j <= 1:
            raise _bad(f"{key}.jitter", j, "must be a fraction from 0 to 1")
        spec["jitter"] = float(j)
    if "unmatched" in raw:
        u = raw["unmatched"]
        if u not in UNMATCHED:
            raise _bad(f"{key}.unmatched", u, f"must be one of {', '.join(UNMATCHED)}")
        spec["unmatched"] = u
    # the working directory, where a relative `run:` path resolves: the config file's
    # directory unless `cwd:` says otherwise (itself relative to that directory), never
    # wherever acomm happens to run (cron runs it in $HOME)
    if "cwd" in raw:
        cwd = raw["cwd"]
        if not isinstance(cwd, str) or not cwd:
            raise _bad(f"{key}.cwd", cwd, "must be a directory path")
        p = Path(cwd).expanduser()
        spec["cwd"] = os.path.normpath(p if p.is_absolute() or base is None else base / p)
    elif base is not None:
        spec["cwd"] = str(base)
    return AgentSpec(**spec)


def parse_agents(raw: Any, base: Path | None) -> dict[str, AgentSpec]:
    """The whole `agents:` mapping (None or empty: no agents)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise _bad("agents", raw, "must map agent names to their settings")
    return {str(name): parse_agent(name, body, base) for name, body in raw.items()}
