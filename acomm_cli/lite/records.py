"""`dataclass`, `field`, `replace` and `asdict` for the start-up path, without `dataclasses`.

Importing `dataclasses` imports `inspect` (with `ast`, `dis`, `tokenize`), and each class it
builds compiles five or six methods: together 17-21 ms of an `acomm send` or `acomm receive`
process (bench/lite.py). The modules on the hot path import these names instead, as

    if TYPE_CHECKING:
        from dataclasses import dataclass, field, replace
    else:
        from acomm_cli.lite.records import dataclass, field, replace

so that mypy checks them as the standard dataclasses they mirror, and the class declarations
stay what they were. Only what acomm uses is here: `frozen`, `slots`, defaults,
`field(default_factory=..., compare=..., repr=...)`; anything else is refused when the class is
built. The behaviour kept: the same `__init__` signature (compiled from source on the class's
first use), `__repr__`, `__eq__` over the compared fields, `__hash__` as dataclasses derive it,
assignment refused on a frozen instance (AttributeError), `__match_args__`, and
`__dataclass_fields__` (made on first use) so the standard `dataclasses` functions work on a
record as mypy says they do. tests/test_records.py checks each such class against a real
dataclass of the same fields.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    _T = TypeVar("_T")

_MISSING: Any = object()
_MUTABLE = (list, dict, set)


class _FrozenInstance(AttributeError):
    """An assignment to a field of a frozen instance (dataclasses' FrozenInstanceError): a
    programming error, never one of the error tree's."""


class Field:
    """A field's options, as `field()` gives them; `name` and `default` are set on build."""

    __slots__ = ("name", "default", "default_factory", "compare", "repr")

    def __init__(self, default: Any, default_factory: Any, compare: bool, repr: bool) -> None:
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] = _MISSING,
    compare: bool = True,
    repr: bool = True,
) -> Any:
    if default is not _MISSING and default_factory is not _MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, compare, repr)


def dataclass(cls: Any = None, /, *, frozen: bool = False, slots: bool = False) -> Any:
    """The class with the methods `dataclasses.dataclass` would add (see the module's doc)."""

    def wrap(c: type) -> type:
        return _build(c, frozen, slots)

    return wrap if cls is None else wrap(cls)


def _fields_of(cls: type) -> list[Field]:
    fields: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in getattr(base, "__record_fields__", ()):
            fields[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if not isinstance(annotation, str) or annotation.startswith(
            ("ClassVar", "InitVar", "KW_ONLY")
        ):
            raise TypeError(f"{cls.__name__}.{name}: records.dataclass takes plain fields only")
        value = cls.__dict__.get(name, _MISSING)
        f = value if isinstance(value, Field) else Field(value, _MISSING, True, True)
        f.name = name
        if isinstance(f.default, _MUTABLE):
            raise ValueError(
                f"mutable default {type(f.default)} for field {name} is not "
                "allowed: use default_factory"
            )
        fields[name] = f
    return list(fields.values())


def _build(cls: type, frozen: bool, slots: bool) -> type:
    fields = _fields_of(cls)
    names = tuple(f.name for f in fields)
    ns: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params, body, seen_default = [], [], False
    for f in fields:
        if f.default_factory is not _MISSING:
            ns[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"_f_{f.name}() if {f.name} is _MISSING else {f.name}"
        elif f.default is not _MISSING:
            ns[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
            value = f.name
        else:
            if seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
            params.append(f.name)
            value = f.name
        seen_default = (
            seen_default or f.default is not _MISSING or f.default_factory is not _MISSING
        )
        body.append(f"_set(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    src = (
        f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"])
        if params
        else "def __init__(self):\n    " + "\n    ".join(body or ["pass"])
    )
    shown = tuple(f.name for f in fields if f.repr)
    compared = tuple(f.name for f in fields if f.compare)
    methods: dict[str, Any] = {
        "__repr__": _repr(shown),
        "__eq__": _eq(compared),
        "__match_args__": names,
    }
    if frozen:
        methods["__hash__"] = _hash(compared)
        methods["__setattr__"], methods["__delattr__"] = _refuse(), _refuse()
    elif "__hash__" not in cls.__dict__:
        methods["__hash__"] = None  # eq without frozen: unhashable, as dataclasses make it
    if slots:
        d = {
            k: v
            for k, v in cls.__dict__.items()
            if k not in names and k not in ("__dict__", "__weakref__")
        }
        d["__slots__"] = names
        cls = type(cls)(cls.__name__, cls.__bases__, d)
    else:
        for f in fields:  # dataclasses keep plain defaults as class attributes, not the rest
            if isinstance(cls.__dict__.get(f.name), Field):
                if f.default is _MISSING:
                    delattr(cls, f.name)
                else:
                    setattr(cls, f.name, f.default)
    for name, method in methods.items():
        if name == "__match_args__" or name not in cls.__dict__:
            if callable(method):  # each a fresh function: named for tracebacks and repr
                method.__name__ = name
                method.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, method)
    cls.__init__ = _LazyInit(cls, src, ns)  # type: ignore[misc]
    cls.__dataclass_fields__ = _DataclassFields(cls)  # type: ignore[attr-defined]
    cls.__record_fields__ = tuple(fields)  # type: ignore[attr-defined]
    cls.__record_params__ = {"frozen": frozen, "slots": slots}  # type: ignore[attr-defined]
    return cls


class _LazyInit:
    """A record's `__init__`, compiled from its source on first use (making an instance,
    reading `cls.__init__`, `inspect.signature`), then put on the class in its place: a hot
    command builds few of the classes it defines (bench/lite.py, `lazy_init`)."""

    __slots__ = ("owner", "src", "ns")

    def __init__(self, owner: type, src: str, ns: dict[str, Any]) -> None:
        self.owner, self.src, self.ns = owner, src, ns

    def __get__(self, obj: object, cls: type | None = None) -> Any:
        exec(self.src, self.ns)
        init = self.ns["__init__"]
        init.__module__ = self.owner.__module__
        init.__qualname__ = f"{self.owner.__qualname__}.__init__"
        type.__setattr__(self.owner, "__init__", init)
        return init if obj is None else init.__get__(obj, cls)


class _DataclassFields:
    """`__dataclass_fields__`, made on first use with the real `dataclasses` module: so
    `dataclasses.asdict`, `fields`, `replace` and `is_dataclass` take a record as the
    dataclass mypy checks it as, and only a caller of them pays for importing dataclasses."""

    __slots__ = ("owner",)

    def __init__(self, owner: type) -> None:
        self.owner = owner

    def __get__(self, obj: object, cls: type | None = None) -> Any:
        import dataclasses

        owner = self.owner
        annotations: dict[str, Any] = {}
        for base in reversed(owner.__mro__):
            annotations.update(base.__dict__.get("__annotations__", {}))
        spec = []
        for f in fields(owner):
            kw: dict[str, Any] = {"compare": f.compare, "repr": f.repr}
            if f.default_factory is not _MISSING:
                kw["default_factory"] = f.default_factory
            elif f.default is not _MISSING:
                kw["default"] = f.default
            spec.append((f.name, annotations.get(f.name, "object"), dataclasses.field(**kw)))
        twin: Any = dataclasses.make_dataclass(owner.__name__, spec, **owner.__record_params__)  # type: ignore[attr-defined]
        made = twin.__dataclass_fields__
        type.__setattr__(owner, "__dataclass_fields__", made)
        return made


def _repr(names: tuple[str, ...]) -> Callable[[Any], str]:
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in names)
        return f"{type(self).__qualname__}({inner})"

    return __repr__


def _eq(names: tuple[str, ...]) -> Callable[[Any, object], Any]:
    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in names)

    return __eq__


def _hash(names: tuple[str, ...]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(tuple(getattr(self, n) for n in names))

    return __hash__


def _refuse() -> Callable[..., None]:
    def refuse(self: Any, name: str, *value: Any) -> None:
        raise _FrozenInstance(f"cannot assign to field {name!r}")

    return refuse


def fields(obj: Any) -> tuple[Field, ...]:
    found: tuple[Field, ...] | None = getattr(obj, "__record_fields__", None)
    if found is None:
        raise TypeError("must be called with a records.dataclass type or instance")
    return found


def replace(obj: _T, /, **changes: Any) -> _T:
    """A copy of `obj` with `changes`, built through its `__init__` (dataclasses.replace)."""
    values = {f.name: getattr(obj, f.name) for f in fields(obj)}
    values.update(changes)
    return type(obj)(**values)


def asdict(obj: Any) -> dict[str, Any]:
    """`obj`'s fields as a dict, recursively (dataclasses.asdict)."""
    return {f.name: _plain(getattr(obj, f.name)) for f in fields(obj)}


def _plain(v: Any) -> Any:
    if hasattr(type(v), "__record_fields__"):
        return asdict(v)
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (str, int, float, bool, type(None))):
        return v
    import copy

    return copy.deepcopy(v)
