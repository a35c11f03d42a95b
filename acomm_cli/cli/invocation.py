"""What a command body runs with instead of click's context (commands/_runtime.py)."""

from __future__ import annotations

from collections.abc import Callable

from acomm_cli.cli.config import Settings


class Invocation:
    """What a command body gets instead of click's context: the global settings and the
    command's --help text, asked for only when a refusal shows it (on the fast path, asking
    hands the whole command line over to Typer, which alone can write it)."""

    __slots__ = ("settings", "_help")

    def __init__(self, settings: Settings, help: Callable[[], str] | None = None) -> None:
        self.settings = settings
        self._help = help

    def help_text(self) -> str | None:
        return None if self._help is None else self._help()
