"""A module imported when one of its names is first used, for the command modules.

Every command module is imported to build its parser (`acomm stats --help`, a usage error,
the root's `--help`), and most never run their body in that process: the engine modules a
body calls (operations, the dispatcher, the bridge) cost a command up to half again its
start-up. A command module binds them with `module()` and declares the real import for the
type checker:

    if TYPE_CHECKING:
        from acomm_cli.engine import operations
    else:
        operations = lazy.module("acomm_cli.engine.operations")

No importlib here (`__import__` is a builtin): the send fast path imports this module.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (a send does not load it)
if TYPE_CHECKING:
    from types import ModuleType


class Module:
    """Stands for the module `name`: the first attribute read (or set: a test's monkeypatch)
    imports it, and every later one goes to the module itself."""

    __slots__ = ("_name", "_module")
    _name: str
    _module: ModuleType | None

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def _load(self) -> ModuleType:
        module = self._module
        if module is None:
            # fromlist: the submodule itself, not the top package
            module = __import__(self._name, fromlist=["_"])
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr: str) -> object:
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value: object) -> None:
        setattr(self._load(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._load(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def module(name: str) -> Module:
    return Module(name)
