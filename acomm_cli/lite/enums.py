"""`StrEnum` and `IntEnum` for the start-up path, without the `enum` module.

Importing `enum` and building model.py's eight enums with it cost about 2.5 ms of an `acomm
send` process (issue 17, docs/BENCHMARKS.md). model.py imports these as

    if TYPE_CHECKING:
        from enum import IntEnum, StrEnum
    else:
        from acomm_cli.lite.enums import IntEnum, StrEnum

so mypy checks the classes as the standard enums they mirror. Only what acomm uses is here:
members declared as plain class attributes (no `auto()`, no methods), looked up by value
(`MessageType("text")`) and by name (`Priority["HIGH"]`), iterated in declaration order,
`__members__`, `.name`, `.value`, members that are `str` / `int` instances (comparing, hashing,
printing and serialising as their values, as StrEnum's and IntEnum's do), the standard `repr`,
members kept as singletons by copy and pickle, and the class refusing to rebind a member.
tests/test_lite_names.py checks each of model.py's enums against a real one.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class _EnumType(type):
    """The metaclass: turns the class body's public plain values into members."""

    _member_list_: list[Any]
    _member_map_: dict[str, Any]
    _value2member_map_: dict[Any, Any]

    def __new__(mcs, name: str, bases: tuple[type, ...], ns: dict[str, Any]) -> _EnumType:
        declared = {k: v for k, v in ns.items() if not k.startswith("_")
                    and not callable(v) and not hasattr(v, "__get__")}
        body = {k: v for k, v in ns.items() if k not in declared}
        cls = super().__new__(mcs, name, bases, body)
        members: list[Any] = []
        by_name: dict[str, Any] = {}
        by_value: dict[Any, Any] = {}
        base: Any = cls.__mro__[-2]  # str or int: the type members are instances of
        for key, value in declared.items():
            member = by_value.get(value)
            if member is None:  # an alias (a value given twice) names the first member
                member = base.__new__(cls, value)
                member._name_, member._value_ = key, base(value)
                members.append(member)
                by_value[value] = member
            by_name[key] = member
            type.__setattr__(cls, key, member)
        type.__setattr__(cls, "_member_list_", members)
        type.__setattr__(cls, "_member_map_", by_name)
        type.__setattr__(cls, "_value2member_map_", by_value)
        return cls

    def __call__(cls, value: Any) -> Any:
        try:
            return cls._value2member_map_[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__qualname__}") from None

    def __getitem__(cls, name: str) -> Any:
        return cls._member_map_[name]

    def __iter__(cls) -> Iterator[Any]:
        return iter(cls._member_list_)

    def __len__(cls) -> int:
        return len(cls._member_list_)

    def __bool__(cls) -> bool:
        return True

    def __contains__(cls, member: object) -> bool:
        return isinstance(member, cls) and getattr(member, "_name_", None) in cls._member_map_

    @property
    def __members__(cls) -> dict[str, Any]:
        return dict(cls._member_map_)

    def __setattr__(cls, name: str, value: Any) -> None:
        if name in cls.__dict__.get("_member_map_", ()):
            raise AttributeError(f"cannot reassign member {name!r}")
        super().__setattr__(name, value)

    def __repr__(cls) -> str:
        return f"<enum {cls.__name__!r}>"


class _Member:
    """What every member has, beside its str or int value."""

    _name_: str
    _value_: Any

    @property
    def name(self) -> str:
        return self._name_

    @property
    def value(self) -> Any:
        return self._value_

    def __repr__(self) -> str:
        return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: object) -> Any:
        return self

    def __reduce_ex__(self, protocol: object) -> tuple[Any, tuple[Any]]:
        return type(self), (self._value_,)


class StrEnum(_Member, str, metaclass=_EnumType):
    """Members are strings: `str(m)`, `format(m)` and JSON give the value."""

    __str__ = str.__str__
    __format__ = str.__format__


class IntEnum(_Member, int, metaclass=_EnumType):
    """Members are ints: `str(m)` is `"2"`, as IntEnum's is since Python 3.11."""

    __str__ = int.__repr__
    __format__ = int.__format__
