"""Topics and patterns: validation, matching, and an index that avoids testing every pattern.

A pattern's segments are literal words or `*` (exactly one segment); `#` may only be the last
segment and matches zero or more segments, so `build.#` matches `build`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from acomm_cli.errors import ValidationFailed
from acomm_cli.model import utf8

# A segment is [A-Za-z0-9_-]+ (whole), checked as a set of characters, without `re`
# (`re` is not imported by `acomm send`)
_SEGMENT_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _segment(s: str) -> bool:
    return s != "" and _SEGMENT_CHARS.issuperset(s)


def validate_topic(topic: str, *, allow_system: bool = False) -> str:
    utf8(topic, "topic")
    segs = topic.split(".") if isinstance(topic, str) else []
    if not (1 <= len(topic or "") <= 256) or not all(_segment(s) for s in segs):
        raise ValidationFailed(
            f"topic: {topic!r} must be 1-256 characters of '.'-separated segments of "
            "A-Z a-z 0-9 _ - with no empty segment",
            field="topic",
            value=topic,
        )
    if segs[0] == "_system" and not allow_system:
        raise ValidationFailed(
            f"topic: {topic!r} is reserved: topics under _system. are published only by acomm",
            field="topic",
            value=topic,
        )
    return topic


def validate_pattern(pattern: str) -> str:
    utf8(pattern, "pattern")
    segs = pattern.split(".") if isinstance(pattern, str) else []
    ok = 1 <= len(pattern or "") <= 256 and all(
        _segment(s) or s == "*" or (s == "#" and i == len(segs) - 1) for i, s in enumerate(segs)
    )
    if not ok:
        raise ValidationFailed(
            f"pattern: {pattern!r} must be '.'-separated segments of A-Z a-z 0-9 _ -, or '*' "
            "for one segment, or '#' as the last segment for any number",
            field="pattern",
            value=pattern,
        )
    return pattern


def matches(topic: str, pattern: str) -> bool:
    """The reference algorithm (docs/spec/message-engine-guide.txt, "Topic Matching"); the
    index must agree with it."""
    t = topic.split(".")
    p = pattern.split(".")
    if p[-1] == "#":
        prefix = p[:-1]
        if len(t) < len(prefix):
            return False
        return all(ps == "*" or ps == ts for ps, ts in zip(prefix, t, strict=False))
    if len(t) != len(p):
        return False
    return all(ps == "*" or ps == ts for ps, ts in zip(p, t, strict=True))


class _Node:
    __slots__ = ("children", "end", "rest")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.end: set[str] = set()  # agents whose pattern ends at this node
        self.rest: set[str] = set()  # agents whose pattern ends with `#` after this node


class SubscriptionIndex:
    """Routes a topic to subscribers without testing every pattern.

    Exact patterns are one dict lookup. Wildcard patterns live in a trie of segments: routing
    walks only the branches a topic can take (its own segment and `*` at each level), and a
    `#` collects every agent below it, so the cost follows the topic, not the pattern count.
    """

    def __init__(self, subscriptions: Iterable[tuple[str, str]] = ()) -> None:
        self._exact: dict[str, set[str]] = defaultdict(set)
        self._root = _Node()
        self._wild = False
        for agent, pattern in subscriptions:
            self.add(agent, pattern)

    def add(self, agent: str, pattern: str) -> None:
        if "*" not in pattern and "#" not in pattern:
            self._exact[pattern].add(agent)
            return
        self._wild = True
        node = self._root
        segs = pattern.split(".")
        hash_tail = segs[-1] == "#"
        for seg in segs[:-1] if hash_tail else segs:
            child = node.children.get(seg)
            if child is None:
                child = node.children[seg] = _Node()
            node = child
        (node.rest if hash_tail else node.end).add(agent)

    def route(self, topic: str) -> set[str]:
        """Every agent with at least one pattern matching `topic` (each once)."""
        found: set[str] = set(self._exact.get(topic, ()))
        if not self._wild:
            return found
        t = topic.split(".")
        n = len(t)
        stack = [(self._root, 0)]
        while stack:
            node, i = stack.pop()
            if node.rest:
                found |= node.rest  # `#` matches the remaining n - i >= 0 segments
            if i == n:
                found |= node.end
                continue
            child = node.children.get(t[i])
            if child is not None:
                stack.append((child, i + 1))
            star = node.children.get("*")
            if star is not None:
                stack.append((star, i + 1))
        return found
