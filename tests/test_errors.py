"""One error tree: every failure a user can meet is a class of acomm_cli/errors.py with a
stable code and exit status, and `man acomm` lists every code under its exit status."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import acomm_cli
from acomm_cli import errors

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parent.parent


def _modules() -> list[str]:
    names = [
        m.name
        for m in pkgutil.walk_packages(acomm_cli.__path__, "acomm_cli.")
        if not m.name.endswith("__main__")
    ]  # importing that one runs the program
    # store/ and commands/ install inside the package through the editable finder
    for sub, package in (("store", "acomm_cli.store"), ("commands", "acomm_cli.cli.commands")):
        names += [f"{package}.{p.stem}" for p in (REPO / sub).glob("*.py") if p.stem != "__init__"]
    return sorted(set(names))


def _tree() -> list[type[errors.CommError]]:
    found, todo = [], [errors.CommError]
    while todo:
        cls = todo.pop(0)
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_exception_class_is_in_the_one_tree():
    """An exception class outside errors.py is either private control flow (a leading
    underscore: it never reaches the user as such) or a narrower CommError with a code of
    the tree (e.g. a stalled reader is `output_failed`)."""
    codes = {c.code for c in _tree() if c.__module__ == errors.__name__}
    outside = []
    for name in _modules():
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if (
                not (
                    isinstance(value, type)
                    and issubclass(value, BaseException)
                    and value.__module__ == name
                )
                or name == errors.__name__
            ):
                continue
            if issubclass(value, errors.CommError):
                assert value.code in codes, f"{name}.{attr}: code {value.code!r} not in errors.py"
            elif not attr.startswith("_"):
                outside.append(f"{name}.{attr}")
    assert outside == [], f"exceptions outside errors.CommError's tree: {outside}"


def test_the_man_page_lists_every_code_under_its_exit_status():
    man = (REPO / "man" / "acomm.1").read_text()
    section = man.split(".SH EXIT STATUS", 1)[1].split(".SH ", 1)[0]
    listed = {int(m.group(1)): m.group(2) for m in re.finditer(r"\\fB(\d+)\\fR\n(.*)", section)}
    for cls in _tree():
        if cls.__module__ != errors.__name__ or cls.code == "internal":
            continue
        assert cls.exit_status in listed, f"{cls.__name__}: exit {cls.exit_status} not listed"
        assert re.search(rf"\b{cls.code}\b", listed[cls.exit_status]), (
            f"{cls.__name__}: {cls.code} not listed under exit {cls.exit_status}"
        )
