"""acomm_cli.lite.records stands in for `dataclasses` on the start-up path (issue 17): each class it
builds must behave as the dataclass mypy checks it as."""

from __future__ import annotations

import dataclasses
import importlib
import inspect

import pytest

from acomm_cli.lite import records

MODULES = ["acomm_cli.model", "acomm_cli.cli.config", "acomm_cli.output.render",
           "acomm_cli.engine.opening", "acomm_cli.engine.sending", "acomm_cli.engine.timers",
           "acomm_cli.engine.acking", "acomm_cli.engine.deadletters"]


def _records() -> list[type]:
    found = []
    for name in MODULES:
        mod = importlib.import_module(name)
        found += [c for c in vars(mod).values() if isinstance(c, type)
                  and c.__module__ == name and "__record_fields__" in c.__dict__]
    return found


def _twin(cls: type) -> type:
    """A real dataclass of the same fields and options."""
    spec = []
    for f in records.fields(cls):
        kw = {"compare": f.compare, "repr": f.repr}
        if f.default_factory is not records._MISSING:
            kw["default_factory"] = f.default_factory
        elif f.default is not records._MISSING:
            kw["default"] = f.default
        spec.append((f.name, "object", dataclasses.field(**kw)))
    return dataclasses.make_dataclass(cls.__name__, spec, **cls.__record_params__)


def _sample(cls: type, salt: int) -> dict[str, object]:
    return {p.name: f"{p.name}-{salt}" for p in inspect.signature(cls).parameters.values()
            if p.default is inspect.Parameter.empty}


def test_the_hot_path_builds_its_classes_with_records():
    assert len(_records()) >= 18


@pytest.mark.parametrize("cls", _records(), ids=lambda c: c.__qualname__)
def test_each_record_behaves_as_its_dataclass(cls):
    twin = _twin(cls)
    mine, theirs = inspect.signature(cls), inspect.signature(twin)
    assert [(p.name, p.kind, p.default is p.empty) for p in mine.parameters.values()] == \
        [(p.name, p.kind, p.default is p.empty) for p in theirs.parameters.values()]
    for p in mine.parameters.values():
        if p.default is not p.empty and p.default is not records._MISSING:
            assert p.default == theirs.parameters[p.name].default
    a, b = cls(**_sample(cls, 1)), twin(**_sample(cls, 1))
    assert repr(a).replace(cls.__qualname__, "X") == repr(b).replace(twin.__qualname__, "X")
    assert a == cls(**_sample(cls, 1))
    assert (a == cls(**_sample(cls, 2))) == (b == twin(**_sample(cls, 2)))
    assert (cls.__hash__ is None) == (twin.__hash__ is None)
    if cls.__hash__ is not None:
        try:
            hash(b)
        except TypeError:  # frozen with a list field: unhashable, as its dataclass is
            with pytest.raises(TypeError):
                hash(a)
        else:
            assert hash(a) == hash(cls(**_sample(cls, 1)))
    assert hasattr(cls, "__slots__") == hasattr(twin, "__slots__")
    assert cls.__match_args__ == twin.__match_args__
    assert records.asdict(a) == dataclasses.asdict(b)
    first = next(iter(_sample(cls, 1)), None) or records.fields(cls)[0].name
    assert getattr(records.replace(a, **{first: "changed"}), first) == "changed"
    if cls.__record_params__["frozen"]:
        with pytest.raises(AttributeError):
            setattr(a, first, "x")
        with pytest.raises(AttributeError):
            setattr(b, first, "x")


def test_defaults_factories_and_refusals():
    @records.dataclass(frozen=True)
    class Pair:
        """Two values."""

        left: int
        right: list[int] = records.field(default_factory=list)
        note: str = "n"

    p = Pair(1)
    assert p.right == [] and p.right is not Pair(1).right and Pair.note == "n"
    assert repr(p).endswith("<locals>.Pair(left=1, right=[], note='n')")
    with pytest.raises(records._FrozenInstance, match="cannot assign to field 'left'"):
        p.left = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Pair()  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="non-default argument"):
        @records.dataclass
        class Bad:
            a: int = 0
            b: int
    with pytest.raises(ValueError, match="mutable default"):
        @records.dataclass
        class Mutable:
            a: list[int] = []
    assert records.replace(p, note="m") == Pair(1, [], "m")
    assert {Pair(1, (), "m"): 1}[Pair(1, (), "m")] == 1  # type: ignore[arg-type]


def test_the_hot_records_take_their_init_from_records_made():
    """`make docs` writes the hot classes' `__init__` out (records_made.py, issue 17): built
    from the .pyc, not compiled at import. tests/test_docs.py keeps the file fresh."""
    from acomm_cli.lite import records_made

    assert len(records_made.INITS) >= 15
    for key in records_made.INITS:
        parts = key.split(".")
        cls = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], start=2):
            if not hasattr(cls, part):  # a module not imported yet
                importlib.import_module(".".join(parts[:i]))
            cls = getattr(cls, part)
        assert cls.__init__.__code__.co_filename.endswith("records_made.py"), key


def test_a_stale_twin_is_not_used(monkeypatch):
    from acomm_cli.lite import records_made

    def wrong(_MISSING, _set):  # the names records passes
        def __init__(self, a):
            _set(self, "a", "not what the class says")
        return __init__

    key = f"{__name__}.test_a_stale_twin_is_not_used.<locals>.Fresh"
    monkeypatch.setitem(records_made.INITS, key, ("def __init__(self, a): ...", wrong))

    @records.dataclass(frozen=True)
    class Fresh:
        a: int

    assert Fresh(1).a == 1  # compiled from its own source, not the stale twin's
    assert not Fresh.__init__.__code__.co_filename.endswith("records_made.py")
