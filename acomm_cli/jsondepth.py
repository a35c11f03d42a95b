"""Bounded JSON from outside the process (a peer's event, an HTTP body, a bridge file): how
deep arrays and objects nest, checked without recursion, so that a hostile nesting can
neither exhaust the stack nor reach code that recurses over it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from acomm_cli.errors import ValidationFailed

MAX_DEPTH = 64  # arrays and objects within one another; the outermost one is level 1


class TooDeep(ValidationFailed):
    """Arrays and objects nested past the bound; the message says which bound."""


class NotJson(ValidationFailed):
    """Not JSON (or not UTF-8); the message says where."""


def loads(raw: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """`raw` parsed, its nesting within `max_depth`: TooDeep or NotJson otherwise. The parser
    itself refuses a nesting past the interpreter's recursion limit (RecursionError)."""
    try:
        doc = json.loads(raw)
    except RecursionError:
        raise TooDeep(f"nested deeper than {max_depth} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotJson(str(exc)) from None
    for _ in walk(doc, max_depth):
        pass
    return doc


def walk(doc: Any, max_depth: int = MAX_DEPTH) -> Iterator[tuple[Any, str | None]]:
    """Every value of `doc` (with the key it sits under in an object, else None), without
    recursion; TooDeep as soon as an array or object lies deeper than `max_depth`."""
    todo: list[tuple[Any, str | None, int]] = [(doc, None, 1)]
    while todo:
        value, key, depth = todo.pop()
        yield value, key
        if isinstance(value, dict | list):
            if depth > max_depth:
                raise TooDeep(f"nested deeper than {max_depth} levels")
            if isinstance(value, dict):
                todo.extend((v, k, depth + 1) for k, v in value.items())
            else:
                todo.extend((v, None, depth + 1) for v in value)
