"""Whether `export` and `audit` can run here: pyarrow and PySpark are the `spark` extra, not
part of a plain `pip install acomm`, so each command asks before it opens anything."""

from __future__ import annotations

from acomm_cli.errors import MissingExtra, install_command

EXTRA = "spark"
INSTALL = install_command(EXTRA)
# what each command imports; audit reads the export's manifest with pyarrow too, and draws
# report.html's charts with matplotlib
NEEDS = {"export": ("pyarrow",), "audit": ("pyarrow", "pyspark", "matplotlib")}


def require(command: str) -> None:
    """Refuse the command (exit 3, `missing_extra`) when a library it needs is missing,
    naming the install command. Looks the libraries up without importing them: PySpark
    alone takes about a second to import."""
    missing = [name for name in NEEDS[command] if not _installed(name)]
    if missing:
        raise MissingExtra(
            f"{command}: needs {' and '.join(missing)}, which the `{EXTRA}` "
            f"extra installs: {INSTALL}",
            extra=EXTRA,
            install=INSTALL,
            missing=missing,
        )


def _installed(name: str) -> bool:
    from importlib.util import find_spec

    try:
        return find_spec(name) is not None
    except (ImportError, ValueError):  # a broken package, or one blocked in sys.modules
        return False
