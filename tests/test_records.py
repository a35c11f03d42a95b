"""acomm_cli.lite.records stands in for `dataclasses` on the start-up path: each class it builds
must behave as the dataclass mypy checks it as, for its own methods and for the standard
`dataclasses` functions."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

from acomm_cli.lite import records

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def _modules() -> list[str]:
    """Every module of acomm_cli that builds classes with records.dataclass."""
    uses = re.compile(r"^\s*from acomm_cli\.lite\.records import [^\n]*\bdataclass\b", re.M)
    paths = [p.relative_to(ROOT) for p in sorted((ROOT / "acomm_cli").rglob("*.py"))]
    return [
        ".".join(p.with_suffix("").parts)
        for p in paths
        if "lite" not in p.parts and uses.search((ROOT / p).read_text(encoding="utf-8"))
    ]


MODULES = _modules()


def _records() -> list[type]:
    found = []
    for name in MODULES:
        mod = importlib.import_module(name)
        found += [
            c
            for c in vars(mod).values()
            if isinstance(c, type) and c.__module__ == name and "__record_fields__" in c.__dict__
        ]
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
    return {
        p.name: f"{p.name}-{salt}"
        for p in inspect.signature(cls).parameters.values()
        if p.default is inspect.Parameter.empty
    }


def test_the_hot_path_builds_its_classes_with_records():
    assert "acomm_cli.model" in MODULES and "acomm_cli.engine.sending" in MODULES
    assert len(_records()) >= 18


@pytest.mark.parametrize("cls", _records(), ids=lambda c: c.__qualname__)
def test_each_record_behaves_as_its_dataclass(cls):
    twin = _twin(cls)
    mine, theirs = inspect.signature(cls), inspect.signature(twin)
    assert [(p.name, p.kind, p.default is p.empty) for p in mine.parameters.values()] == [
        (p.name, p.kind, p.default is p.empty) for p in theirs.parameters.values()
    ]
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
        except TypeError:  # a frozen record holding a list: unhashable as its dataclass is
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


def test_the_standard_dataclasses_functions_take_every_record():
    """mypy checks the records as dataclasses, so `dataclasses.asdict(Limits())` type-checks:
    it must run too, as must `fields`, `replace` and `is_dataclass`, nested records included."""
    from acomm_cli import model

    for cls in _records():
        assert dataclasses.is_dataclass(cls), cls
        assert [f.name for f in dataclasses.fields(cls)] == [f.name for f in records.fields(cls)], (
            cls
        )
        instance = cls(**_sample(cls, 3))
        assert dataclasses.asdict(instance) == records.asdict(instance), cls
        if dataclasses.fields(cls):
            first = dataclasses.fields(cls)[0].name
            changed = dataclasses.replace(instance, **{first: "changed"})
            assert getattr(changed, first) == "changed" and type(changed) is cls
    assert dataclasses.asdict(model.Limits())["max_active_messages"] == 100_000
    assert dataclasses.fields(model.Limits)[0].type == "int"
    inner = model.Participant("bob", model.Role.MEMBER)
    channel = model.Channel(
        1,
        "team",
        model.ChannelType.GROUP,
        "alice",
        model.ChannelState.ACTIVE,
        model.ChannelConfig(),
        0,
        (inner,),
    )
    plain = dataclasses.asdict(channel)
    assert plain["participants"] == ({"agent": "bob", "role": "member", "admin": False},)
    assert plain["config"] == records.asdict(model.ChannelConfig())


def test_a_record_compiles_its_init_on_first_use():
    """A process defines many records and builds few: each `__init__` is compiled only when
    the class is first used, and is then the class's own plain function."""

    @records.dataclass(frozen=True)
    class Fresh:
        a: int
        b: str = "b"

    assert not inspect.isfunction(Fresh.__dict__["__init__"])  # not compiled yet
    assert Fresh(1) == Fresh(1, "b") and Fresh(a=2).a == 2
    init = Fresh.__dict__["__init__"]
    assert inspect.isfunction(init) and init.__qualname__.endswith("Fresh.__init__")
    assert list(inspect.signature(Fresh).parameters) == ["a", "b"]
    with pytest.raises(TypeError):
        Fresh()  # type: ignore[call-arg]

    @records.dataclass
    class Other:
        x: int

    assert list(inspect.signature(Other).parameters) == ["x"]  # reading it compiles it too
    assert Other(3).x == 3
