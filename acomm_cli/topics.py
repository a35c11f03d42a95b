"""Topics and patterns: validation, matching, and an index that avoids testing every pattern.

A pattern's segments are literal words or `*` (exactly one segment); `#` may only be the last
segment and matches zero or more segments, so `build.#` matches `build`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from acomm_cli.errors import ValidationFailed

_SEGMENT = re.compile(r"^[A-Za-z0-9_-]+$")


def validate_topic(topic: str, *, allow_system: bool = False) -> str:
    segs = topic.split(".") if isinstance(topic, str) else []
    if not (1 <= len(topic or "") <= 256) or not all(_SEGMENT.match(s) for s in segs):
        raise ValidationFailed(
            f"topic: {topic!r} must be 1-256 characters of '.'-separated segments of "
            "A-Z a-z 0-9 _ - with no empty segment",
            field="topic", value=topic,
        )
    if segs[0] == "_system" and not allow_system:
        raise ValidationFailed(
            f"topic: {topic!r} is reserved: topics under _system. are published only by acomm",
            field="topic", value=topic,
        )
    return topic


def validate_pattern(pattern: str) -> str:
    segs = pattern.split(".") if isinstance(pattern, str) else []
    ok = 1 <= len(pattern or "") <= 256 and all(
        _SEGMENT.match(s) or s == "*" or (s == "#" and i == len(segs) - 1)
        for i, s in enumerate(segs)
    )
    if not ok:
        raise ValidationFailed(
            f"pattern: {pattern!r} must be '.'-separated segments of A-Z a-z 0-9 _ -, or '*' "
            "for one segment, or '#' as the last segment for any number",
            field="pattern", value=pattern,
        )
    return pattern


def matches(topic: str, pattern: str) -> bool:
    """The reference algorithm (spec 001 "Topic Matching"); the index must agree with it."""
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


class SubscriptionIndex:
    """Routes a topic to subscribers without testing every pattern.

    Exact patterns are a dict lookup. `*` patterns are grouped by segment count and keyed on
    their first literal segment, so only same-length patterns sharing it (or starting with `*`)
    are compared. `#` patterns are keyed on their literal prefix, so only prefixes of the topic
    are looked up; the few `#` patterns with `*` in their prefix are grouped by prefix length.
    """

    def __init__(self, subscriptions: Iterable[tuple[str, str]] = ()) -> None:
        self._exact: dict[str, set[str]] = defaultdict(set)
        # segment count -> first literal segment (or "*") -> [(segments, agent)]
        self._star: dict[int, dict[str, list[tuple[list[str], str]]]] = defaultdict(
            lambda: defaultdict(list))
        self._multi: dict[tuple[str, ...], set[str]] = defaultdict(set)
        self._multi_star: dict[int, list[tuple[list[str], str]]] = defaultdict(list)
        for agent, pattern in subscriptions:
            self.add(agent, pattern)

    def add(self, agent: str, pattern: str) -> None:
        segs = pattern.split(".")
        if segs[-1] == "#":
            prefix = segs[:-1]
            if "*" in prefix:
                self._multi_star[len(prefix)].append((prefix, agent))
            else:
                self._multi[tuple(prefix)].add(agent)
        elif "*" in segs:
            self._star[len(segs)][segs[0]].append((segs, agent))
        else:
            self._exact[pattern].add(agent)

    def route(self, topic: str) -> set[str]:
        """Every agent with at least one pattern matching `topic` (each once)."""
        found: set[str] = set(self._exact.get(topic, ()))
        t = topic.split(".")
        n = len(t)
        by_first = self._star.get(n)
        if by_first:
            for key in (t[0], "*"):
                for segs, agent in by_first.get(key, ()):
                    if agent not in found and all(
                        p == "*" or p == s for p, s in zip(segs, t, strict=True)
                    ):
                        found.add(agent)
        if self._multi:
            for k in range(n + 1):
                agents = self._multi.get(tuple(t[:k]))
                if agents:
                    found.update(agents)
        for k, entries in self._multi_star.items():
            if k <= n:
                for prefix, agent in entries:
                    if agent not in found and all(
                        p == "*" or p == s for p, s in zip(prefix, t, strict=False)
                    ):
                        found.add(agent)
        return found
