"""An event past a bound (nesting, values, text) is refused naming the first bound it passes
in the order of the walk, and an event within every bound passes: the quick look at the
bounds decides exactly as the ordered walk does, right at each limit."""

from __future__ import annotations

import json

import pytest

from acomm_cli import jsondepth
from acomm_cli.engine import envelope
from acomm_cli.errors import EventRejected

pytestmark = pytest.mark.unit

MB8 = envelope.MAX_TEXT
ITEMS = envelope.MAX_ITEMS


def nest(n: int) -> object:
    return json.loads("[" * n + "]" * n)


def walked(env: dict) -> str | None:
    """The fault the ordered walk (jsondepth.walk) meets first, or None."""
    items = chars = 0
    try:
        for value, key in jsondepth.walk(env, envelope.MAX_DEPTH):
            items += 1
            if items > ITEMS:
                return "values"
            chars += len(key or "") + (len(value) if isinstance(value, str) else 0)
            if chars > MB8:
                return "text"
    except jsondepth.TooDeep:
        return "deeper"
    return None


CASES = {
    "small": {"a": 1, "b": [1, "x", {"c": None}]},
    "nested to the bound": {"p": nest(63)},
    "nested one past": {"p": nest(64)},
    "text at the bound": {"x": "a" * (MB8 - 1)},
    "text one past": {"x": "a" * MB8},
    "a key's text counts": {"k" * MB8: 1},
    "values at the bound": {"x": [0] * (ITEMS - 2)},
    "values one past": {"x": [0] * (ITEMS - 1)},
    "deep, then long text": {"x": [nest(70), "a" * (MB8 + 1)]},
    "long text, then deep": {"x": ["a" * (MB8 + 1), nest(70)]},
    "many values, then deep": {"x": [[0] * (ITEMS + 1), nest(70)]},
    "empty containers": {"a": [], "b": {}, "c": {"d": {"e": []}}},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_bounds_decide_as_the_ordered_walk(case):
    env = CASES[case]
    expected = walked(env)
    if expected is None:
        envelope._bounded(env)
        return
    with pytest.raises(EventRejected) as err:
        envelope._bounded(env)
    assert expected in err.value.reason
