"""`acomm --version` / `-V`: the version; with -v also what it runs on (Python, the SQLite
library, the extras installed). Plain functions, no Typer: `acomm -V` answers from the `acomm`
program itself (cli/main.py), and the Typer option calls the same `text`."""

from __future__ import annotations

import sys

from acomm_cli import __version__

FLAGS = frozenset({"--version", "-V"})
VERBOSE = frozenset({"-v", "--verbose"})
# the optional extras a user installs (pyproject.toml); `analytics` is `spark` by another name
EXTRAS = ("federation", "mcp", "ui", "web", "spark", "otel")


def asked(args: list[str]) -> bool | None:
    """For a command line of version and verbose flags alone (`-V`, `--version -v`): whether
    -v was given; None for any other command line (Typer's to read)."""
    if not args or not set(args) <= FLAGS | VERBOSE or not FLAGS & set(args):
        return None
    return bool(VERBOSE & set(args))


def _distributions(extra: str) -> list[str]:
    """The distributions `acomm[extra]` requires, by name, read from the installed metadata."""
    import re
    from importlib import metadata

    try:
        requires = metadata.requires("acomm") or []
    except metadata.PackageNotFoundError:  # run from a source tree without an install
        return []
    names = []
    for req in requires:
        spec, _, marker = req.partition(";")
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker):
            m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names


def extras() -> dict[str, dict[str, str | None]]:
    """Each extra's distributions and their installed versions (None: not installed)."""
    from importlib import metadata

    found: dict[str, dict[str, str | None]] = {}
    for extra in EXTRAS:
        versions: dict[str, str | None] = {}
        for name in _distributions(extra):
            try:
                versions[name] = metadata.version(name)
            except metadata.PackageNotFoundError:
                versions[name] = None
        found[extra] = versions
    return found


def text(verbose: bool) -> str:
    """What `acomm --version` prints; with `verbose`, a line each for Python, SQLite and the
    extras (`not installed` for an extra none of whose libraries is here)."""
    lines = [f"acomm {__version__}"]
    if verbose:
        import platform
        import sqlite3

        lines.append(
            f"python {platform.python_version()} ({platform.python_implementation()}, "
            f"{sys.executable})"
        )
        lines.append(f"sqlite {sqlite3.sqlite_version} (library)")
        for extra, versions in extras().items():
            if not any(versions.values()):
                lines.append(f"{extra}: not installed")
                continue
            shown = ", ".join(f"{n} {v or 'not installed'}" for n, v in versions.items())
            lines.append(f"{extra}: {shown}")
    return "\n".join(lines) + "\n"
