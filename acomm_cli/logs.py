"""Log lines of the processes that run for long (`gateway serve`, `tick --every`): each line
`TIME LEVEL SOURCE: text`, the time ISO 8601 in UTC with milliseconds and `Z`, the level one
of DEBUG, INFO, WARNING, ERROR (docs/OUTPUT.md, "Log lines")."""

from __future__ import annotations

from acomm_cli import clock

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    import logging


def line(level: str, source: str, text: str, at_ms: int | None = None) -> str:
    """One log line; `at_ms` defaults to now."""
    return f"{clock.iso_ms(clock.now_ms() if at_ms is None else at_ms)} {level} {source}: {text}"


def formatter() -> logging.Formatter:
    """The stdlib logging formatter writing `line`s (a traceback, when logged, follows)."""
    import logging

    class _Lines(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + self.formatException(record.exc_info)
            return line(record.levelname, record.name, text, int(record.created * 1000))

    return _Lines()


def configure(ours: str, level: int) -> None:
    """stderr gets log lines: the logger `ours` (and below it) from `level`, the libraries'
    loggers (uvicorn's among them) from WARNING."""
    import logging

    handler = logging.StreamHandler()
    handler.setFormatter(formatter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    logging.getLogger(ours).setLevel(level)
