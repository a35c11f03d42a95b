"""How a command prints: the output options and the shared plumbing every render_*.py uses.

JSON documents, `key: value` lines, tables (rich on a terminal, plain lines when piped,
--csv/--tsv/--jsonl), notes and errors on stderr, the progress bar. What each subject prints
is in the `render_*.py` modules beside this one, on these helpers (docs/ARCHITECTURE.md).

stdout carries data; stderr carries diagnostics. rich is imported only when a terminal shows
a table, so scripts never pay for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from types import TracebackType

from acomm_cli.errors import CommError
from acomm_cli.output.columns import Columns, column_names

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses
    from acomm_cli.lite.records import dataclass

if TYPE_CHECKING:  # for the annotations only: none of these loads on a command's path
    from rich.console import Console
    from rich.progress import Progress


@dataclass(frozen=True)
class Output:
    """How a command prints: JSON or text, and whether in colour."""

    json: bool = False
    color: bool | None = None  # False: --no-color; None: the environment decides
    table: str | None = None  # a listing's rows: "jsonl", "csv" or "tsv" (docs/output.md)
    headers: bool = True  # the header row of --csv/--tsv

    @property
    def tty(self) -> bool:
        """Whether people read stdout: rich views there, plain lines for programs."""
        return sys.stdout.isatty()

    def colour(self, stderr: bool = False) -> bool:
        """--no-color, then NO_COLOR (set and not empty: no-color.org), then FORCE_COLOR
        (likewise: force-color.org), then TERM=dumb, then whether the stream is a terminal.
        Colour never changes the layout: piped output stays plain text whatever FORCE_COLOR
        says (CI systems often set it globally, and scripts parse that output)."""
        if self.color is False or os.environ.get("NO_COLOR"):
            return False
        if os.environ.get("FORCE_COLOR"):
            return True
        if os.environ.get("TERM") == "dumb":
            return False
        return (sys.stderr if stderr else sys.stdout).isatty()

    def console(self, stderr: bool = False) -> Console:
        from rich.console import Console

        # markup and emoji off: message content is shown as sent, never read as `[bold]` or
        # `:smile:` (views style with Text objects instead)
        plain = partial(Console, stderr=stderr, highlight=False, markup=False, emoji=False)
        if not self.colour(stderr):  # no escape sequences at all, not even bold
            return plain(color_system=None)
        console = plain(force_terminal=True)
        if console.color_system is None:  # FORCE_COLOR on a terminal rich thinks is dumb
            console = plain(force_terminal=True, color_system="standard")
        return console


def headed(out: Output) -> Output:
    """The output for a stream's next batches: the --csv/--tsv header row only once."""
    return Output(json=out.json, color=out.color, table=out.table, headers=False)


def _dump(doc: Any) -> None:
    import json  # not at the top: `acomm send` prints no JSON unless asked

    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def flush() -> None:
    sys.stdout.flush()


def text(doc: str) -> None:
    """Text that is itself the result (a completion script, a list of names)."""
    sys.stdout.write(doc)


def help(text: str) -> None:  # shadows the builtin: the command's --help, on stderr
    sys.stderr.write(text.rstrip("\n") + "\n\n")


# -1: -q/--quiet, 1: -v/--verbose; set once per command by `loudness` (the root's options)
_LOUDNESS = [0]


def loudness(*, quiet: bool, verbose: bool) -> None:
    """-q silences the notes (warnings and errors still print); -v adds `verbose:` lines.
    Set before each command runs, it also ends the log lines of an earlier one."""
    _LOUDNESS[0] = -1 if quiet else 1 if verbose else 0
    _LOG[0] = False


# True in a process that runs for long (`tick --every`): its stderr is a log
_LOG = [False]


def log_lines(on: bool = True) -> None:
    """From here on, the diagnostics on stderr are log lines: an ISO time (UTC) and a level
    before each (acomm_cli/logs.py), for a worker whose stderr is read later."""
    _LOG[0] = on


def _logged(level: str, text: str) -> None:
    from acomm_cli import logs

    print(logs.line(level, "acomm", text), file=sys.stderr)


def note(text: str, level: str | None = None) -> None:
    """A diagnostic on stderr: `acomm: note: ...` (or `acomm: warning: ...`, never silenced).
    As a log line (`log_lines`), its level is `level`, else WARNING for a warning and INFO
    for a note, the `note:`/`warning:` word gives way to it, and -q drops INFO lines only."""
    warning = text.startswith("warning:")
    if _LOG[0]:
        level = level or ("WARNING" if warning else "INFO")
        if _LOUDNESS[0] < 0 and level == "INFO":
            return
        kind, sep, rest = text.partition(": ")
        _logged(level, rest if sep and kind in ("note", "warning") else text)
        return
    if _LOUDNESS[0] < 0 and not warning:
        return
    print(f"acomm: {text}", file=sys.stderr)


def verbose(text: str) -> None:
    """What -v/--verbose adds on stderr: where the store and config are, and timings."""
    if _LOUDNESS[0] > 0:
        if _LOG[0]:
            _logged("DEBUG", text)
        else:
            print(f"acomm: verbose: {text}", file=sys.stderr)


# Line breaks to readers that split on more than "\n" (Python's splitlines, JavaScript):
# escaped so that an error stays one line whatever value it quotes.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def error(exc: CommError, as_json: bool) -> None:
    if as_json:
        import json  # not at the top: `acomm send` prints no JSON unless asked

        doc = json.dumps({"error": exc.to_dict()}, ensure_ascii=False)
        print(doc.translate(_LINE_BREAKS), file=sys.stderr)
    elif _LOG[0]:
        _logged("ERROR", f"{exc.code}: {exc.message}")
    else:
        print(f"acomm: error: {exc.code}: {exc.message}", file=sys.stderr)


# ---------------------------------------------------------------- printing


def words(v: Any, sep: str = ", ") -> Any:
    """A value as people read it: a list (tuple, set) as comma-separated words, a mapping as
    `key=value` pairs, never Python's brackets and quotes; anything else as it is."""
    if isinstance(v, dict):
        return sep.join(f"{k}={words(x, sep)}" for k, x in v.items())
    if isinstance(v, set | frozenset):
        v = sorted(v, key=str)
    if isinstance(v, list | tuple):
        return sep.join("" if x is None else str(words(x, sep)) for x in v)
    return v


def _table(
    out: Output, title: str | None, headers: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    """A rich table on a terminal; tab-separated lines (no header) when piped; with --csv or
    --tsv, a header row (unless --no-headers) and the rows, quoted as the csv module does."""
    if out.table in ("csv", "tsv"):
        import csv

        writer = csv.writer(
            sys.stdout, dialect="excel" if out.table == "csv" else "excel-tab", lineterminator="\n"
        )
        if out.headers and headers:
            writer.writerow(headers)
        writer.writerows(
            [
                [
                    "" if v is None else str(v).lower() if isinstance(v, bool) else words(v)
                    for v in row
                ]
                for row in rows
            ]
        )  # JSON's true/false
        return
    rows = [["" if v is None else str(words(v)) for v in row] for row in rows]
    if not out.tty:
        for row in rows:
            sys.stdout.write(
                "\t".join(v.replace("\t", " ").replace("\n", "\\n") for v in row) + "\n"
            )
        return
    from rich.table import Table

    table = Table(title=title, show_edge=False, header_style="bold")
    for h in headers:
        table.add_column(h.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*row)
    out.console().print(table)


def listing(
    out: Output,
    title: str | None,
    columns: Columns,
    rows: Iterable[Sequence[Any]],
    docs: Iterable[dict[str, Any]] | None = None,
) -> None:
    """A listing's rows, in the format the output options chose: with --jsonl one JSON
    object a line (`docs`: the items of its --json document; else each row keyed by its
    columns), else `_table` (rich, plain lines, --csv, --tsv). --json is the caller's."""
    names = column_names(columns)
    if out.table == "jsonl":
        for doc in docs if docs is not None else (dict(zip(names, r, strict=True)) for r in rows):
            _dump(doc)
        return
    _table(out, title, names, rows)


def _pairs(out: Output, pairs: Sequence[tuple[str, Any]]) -> None:
    width = max(len(k) for k, _ in pairs)
    for k, v in pairs:
        sys.stdout.write(f"{k + ':':<{width + 1}} {'' if v is None else words(v)}\n")


def _kv_line(doc: dict[str, Any]) -> None:
    sys.stdout.write(
        " ".join(
            f"{k}={str(v).lower() if isinstance(v, bool) else words(v, ',')}"
            for k, v in doc.items()
        )
        + "\n"
    )


def ok(out: Output, doc: dict[str, Any], text: str | None = None) -> None:
    """A command whose result is a small fact: JSON, or one line for people."""
    if out.json:
        _dump(doc)
    elif text is not None:
        sys.stdout.write(text + "\n")


def change(
    out: Output, doc: dict[str, Any], changed: bool, already: str, text: str | None = None
) -> None:
    """A state change that may have been a no-op: `changed` in JSON; without --json, a note
    on stderr saying it was `already` so (stdout stays what it always was)."""
    if not changed and not out.json:
        note(f"note: {already}")
    ok(out, {**doc, "changed": changed}, text)


def status(out: Output, doc: dict[str, Any]) -> None:
    if out.json:
        _dump(doc)
    else:
        _pairs(out, list(doc.items()))


# ---------------------------------------------------------------- progress


class progress:  # lower case: used as `with render.progress(out, label) as start:`
    """A progress bar on stderr when it is a terminal (and output is not JSON).

    `with progress(out, label) as start:` gives None without a terminal, else `start(total)`,
    which returns `advance(n)`."""

    def __init__(self, out: Output, label: str) -> None:
        self.out, self.label = out, label
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[int], Callable[[int], None]] | None:
        if self.out.json or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
            return None  # a dumb terminal cannot redraw a bar in place
        return self._start  # rich is loaded, and the bar drawn, only once there is work

    def _start(self, total: int) -> Callable[[int], None]:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        bar = self.bar
        if bar is None:
            bar = self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self.out.console(stderr=True),
                transient=True,
            )
            bar.__enter__()
        task = bar.add_task(self.label, total=total)
        done = [0]

        def advance(n: int) -> None:  # never past the total (a catch-up tick can exceed it)
            n = max(0, min(n, total - done[0]))
            done[0] += n
            bar.advance(task, n)

        return advance

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.__exit__(exc_type, exc, tb)
