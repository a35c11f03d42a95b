"""The kinds of values options and arguments take, as click parameter types.

Each type carries what `--help`, the man pages and the shell completions say about a value:
its metavar (`--as AGENT`) and how a shell completes it (agent ids and channel names from the
store, paths, or a fixed list of choices). Declare an option with `click_type=params.AGENT`;
a declaration may still give its own `metavar=` when its help names the value (INBOX_DIR).

Conversion passes the string through: the engine validates values and its errors name the
field and the value. Numbers are the exception: `Whole` and `Number` accept ASCII digits only.
Cheap to import (`acomm send` imports it): click's types and the model, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from typer._click.types import FloatParamType, IntParamType, ParamType

from acomm_cli import model


class Kind(StrEnum):
    """How a shell completes a value; channel names and agent ids are looked up in the store
    (`acomm __complete channels|agents`)."""

    CHANNEL = "channel"
    AGENT = "agent"
    FILE = "file"
    DIR = "dir"
    CHOICE = "choice"


class Value(ParamType):
    """A string value with a metavar (None: the parameter's own name) and a completion kind."""

    name = "text"  # what the man pages print for a string option: `--as TEXT`

    def __init__(self, metavar: str | None = None, kind: Kind | None = None,
                 choices: Iterable[str] = ()) -> None:
        self.metavar = metavar
        self.choices = tuple(choices)
        self.kind = Kind.CHOICE if self.choices else kind

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        return value

    def __repr__(self) -> str:
        return f"Value({self.metavar!r}, {self.kind!r})"


def choice(values: Iterable[str], metavar: str) -> Value:
    """One of a fixed list, as completion offers it; the engine refuses anything else."""
    return Value(metavar, choices=values)


class Whole(IntParamType):
    """click's INT calls int(), which also takes "１", "٣" or "1_000": ASCII digits only."""

    _OK = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)

    def __init__(self, metavar: str | None = None) -> None:
        self.metavar = metavar

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not self._OK.fullmatch(value):
            self.fail(f"{value!r} is not a whole number (ASCII digits)", param, ctx)
        return super().convert(value, param, ctx)


class Number(FloatParamType):
    """click's FLOAT calls float(), which also takes "１.５": ASCII only."""

    def __init__(self, metavar: str | None = None) -> None:
        self.metavar = metavar

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return self.metavar

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, str) and not value.isascii():
            self.fail(f"{value!r} is not a number (ASCII digits)", param, ctx)
        return super().convert(value, param, ctx)


# Names from the store.
AGENT = Value("AGENT", Kind.AGENT)
AGENTS = Value("AGENT[,AGENT...]", Kind.AGENT)  # `send --to bob,carol`
CHANNEL = Value("CHANNEL", Kind.CHANNEL)

# Paths.
FILE = Value("FILE", Kind.FILE)
DIR = Value("DIR", Kind.DIR)

# Parsed by acomm_cli.clock and the engine.
DURATION = Value("DURATION")     # 30s, 1500ms, 24h, 7d
TIME = Value("TIME")             # ISO 8601, or relative to now: -1h
ETA = Value("DURATION|TIME")     # a task's ETA: 10m from now, or when
SIZE = Value("SIZE")             # 65536, 1MiB

# Numbers.
COUNT = Whole("N")
SECONDS = Number("SECONDS")
FRACTION = Number("FRACTION")

# Choices, from the model's enums.
SHELLS = ("bash", "zsh", "fish")  # what `acomm completions SHELL` writes scripts for
MESSAGE_TYPE = choice((t.value for t in model.MessageType), "TYPE")
CHANNEL_TYPE = choice((t.value for t in model.ChannelType), "TYPE")
DELIVERY_MODE = choice((m.value for m in model.DeliveryMode), "MODE")
PRIORITY = choice((p.name.lower() for p in model.Priority), "PRIORITY")
MESSAGE_STATUS = choice(model.MESSAGE_STATUSES, "STATUS")
DELIVERY_STATE = choice((s.value for s in model.DeliveryState), "STATE")
TASK_STATE = choice(model.TASK_STATES, "STATE")
CAPABILITY_STATE = choice(("published", "unpublished"), "STATE")
INCIDENT_STATE = choice(("open", "resolved"), "STATE")
ACK_STATUS = choice((s.value for s in model.AckStatus), "STATUS")
DEAD_LETTER_REASON = choice(model.DEAD_LETTER_REASONS, "REASON")
ROLE = choice((model.Role.MEMBER.value, model.Role.OBSERVER.value), "ROLE")  # not owner
SORT = choice(("created", "priority", "id"), "SORT")
ORDER = choice(("asc", "desc"), "ORDER")
EXPORT_FORMAT = choice(("parquet", "jsonl"), "FORMAT")
SHELL = choice(SHELLS, "SHELL")
