"""Topic matching: through the command line, and the index's agreement
with the reference algorithm."""

from __future__ import annotations

import random
import re

import pytest
from conftest import query, snapshot

from acomm_cli.errors import ValidationFailed
from acomm_cli.topics import SubscriptionIndex, matches, validate_pattern, validate_topic

pytestmark = pytest.mark.cli

# The matching examples users are given: (topic, pattern, matches?).
SPEC_TABLE = [
    ("build.frontend.complete", "build.frontend.complete", True),  # exact match
    ("build.frontend.complete", "build.*.complete", True),  # * matches frontend
    ("build.frontend.complete", "build.#", True),  # # matches frontend.complete
    ("build.frontend.complete", "build.backend.complete", False),  # backend != frontend
    ("build.frontend.complete", "build.*.start", False),  # start != complete
    ("build.frontend.test.unit", "build.*.complete", False),  # segment count mismatch
    ("build", "build.#", True),  # # matches zero segments
    ("deploy.staging", "*.staging", True),  # * matches deploy
]

# Edges beyond those examples: `#` and `*` alone, whole segments only, case-sensitive.
EDGES = [
    ("anything.at.all", "#", True),
    ("a", "#", True),
    ("a.b", "*", False),  # * is exactly one segment
    ("a", "*", True),
    ("a.b.c", "a.*", False),
    ("a.b.c", "*.*.*", True),
    ("build", "build.*", False),  # * needs a segment to be there
    ("buildx.y", "build.#", False),  # # works on whole segments, not characters
    ("builds", "build.#", False),
    ("Build.x", "build.#", False),  # matching is case-sensitive
    ("build.X", "build.x", False),
    ("a.b.c.d", "a.*.#", True),
    ("a", "a.*.#", False),
    ("x.b.c", "*.b.#", True),
    ("x.c.b", "*.b.#", False),
]


def _ids(cases):
    return [f"{t} ~ {p}" for t, p, _ in cases]


def _reference(topic: str, pattern: str) -> bool:
    """An independent formulation of the matching rule, as a regular expression."""
    segs = pattern.split(".")
    multi = segs[-1] == "#"
    if multi:
        segs = segs[:-1]
    parts = ["[^.]+" if s == "*" else re.escape(s) for s in segs]
    if not multi:
        rx = r"\.".join(parts)
    elif parts:
        rx = r"\.".join(parts) + r"(\.[^.]+)*"
    else:
        rx = r"[^.]+(\.[^.]+)*"
    return re.fullmatch(rx, topic) is not None


# ---------------------------------------------------------------- through the command line


@pytest.fixture
def events(cli, store):
    cli.ok("channel", "create", "events", "--type", "pubsub", "--as", "publisher")
    return store


@pytest.mark.parametrize(
    ("topic", "pattern", "expected"), SPEC_TABLE + EDGES, ids=_ids(SPEC_TABLE + EDGES)
)
def test_matching_through_the_cli(cli, events, topic, pattern, expected):
    cli.ok("subscribe", "events", pattern, "--as", "sub")
    sent = cli.ok("publish", "events", topic, "the event", "--as", "publisher", "--json").json()
    assert sent["recipients"] == (["sub"] if expected else [])
    got = cli.ok("receive", "--as", "sub", "--json").json()
    assert got["total_count"] == (1 if expected else 0)
    if expected:
        msg = got["messages"][0]
        assert (msg["id"], msg["topic"], msg["content"]) == (sent["id"], topic, "the event")


def test_the_whole_table_on_one_channel(cli, events):
    """All the table's patterns subscribed at once, one agent per row: each topic reaches exactly
    the rows that say Yes."""
    for i, (_, pattern, _) in enumerate(SPEC_TABLE):
        cli.ok("subscribe", "events", pattern, "--as", f"row{i}")
    for topic in sorted({t for t, _, _ in SPEC_TABLE}):
        want = sorted(f"row{i}" for i, (_, p, _) in enumerate(SPEC_TABLE) if _reference(topic, p))
        sent = cli.ok("publish", "events", topic, "x", "--as", "publisher", "--json").json()
        assert sent["recipients"] == want, topic
        rows = query(
            events,
            "SELECT recipient FROM deliveries WHERE message_id = ? ORDER BY recipient",
            sent["id"],
        )
        assert [r[0] for r in rows] == want


def test_random_topics_through_the_cli_agree_with_reference(cli, events):
    rng = random.Random(2024)
    subs = [(f"agent{i}", _random_pattern(rng)) for i in range(25)]
    for agent, pattern in subs:
        cli.ok("subscribe", "events", pattern, "--as", agent)
    for _ in range(25):
        topic = _random_topic(rng)
        want = sorted({a for a, p in subs if _reference(topic, p)})
        sent = cli.ok("publish", "events", topic, "x", "--as", "publisher", "--json").json()
        assert sent["recipients"] == want, (topic, subs)


def test_topic_filter_on_receive_uses_the_same_matching(cli, events):
    cli.ok("subscribe", "events", "#", "--as", "sub")
    topics = sorted({t for t, _, _ in SPEC_TABLE})
    ids = {t: int(cli.ok("publish", "events", t, "x", "--as", "publisher").stdout) for t in topics}
    for _, pattern, _ in SPEC_TABLE:
        got = cli.ok("receive", "--as", "sub", "--peek", "--topic", pattern, "--json").json()
        want = sorted(ids[t] for t in topics if _reference(t, pattern))
        assert sorted(m["id"] for m in got["messages"]) == want, pattern


# ---------------------------------------------------------------- matches() and the index


@pytest.mark.parametrize(
    ("topic", "pattern", "expected"), SPEC_TABLE + EDGES, ids=_ids(SPEC_TABLE + EDGES)
)
def test_matches_and_index_agree_on_examples(topic, pattern, expected):
    assert _reference(topic, pattern) is expected  # the test's own oracle is right
    assert matches(topic, pattern) is expected
    assert SubscriptionIndex([("a", pattern)]).route(topic) == ({"a"} if expected else set())


def _random_pattern(rng: random.Random) -> str:
    n = rng.randint(0, 4)
    segs = [rng.choice(["a", "b", "c", "*"]) for _ in range(n)]
    if not segs or rng.random() < 0.35:
        segs.append("#")
    return ".".join(segs)


def _random_topic(rng: random.Random) -> str:
    return ".".join(rng.choice(["a", "b", "c"]) for _ in range(rng.randint(1, 5)))


def test_index_agrees_with_matches_on_random_subscriptions():
    rng = random.Random(1)
    for _ in range(40):
        subs = [(f"agent{rng.randrange(60)}", _random_pattern(rng)) for _ in range(120)]
        index = SubscriptionIndex(subs)
        for _ in range(60):
            topic = _random_topic(rng)
            brute = {a for a, p in subs if matches(topic, p)}
            assert index.route(topic) == brute, topic
            assert brute == {a for a, p in subs if _reference(topic, p)}, topic


def test_index_routes_each_agent_once_however_many_patterns_match():
    index = SubscriptionIndex(
        [
            ("x", "build.#"),
            ("x", "build.*.success"),
            ("x", "#"),
            ("x", "build.frontend.success"),
            ("y", "deploy.#"),
        ]
    )
    assert index.route("build.frontend.success") == {"x"}
    assert index.route("deploy") == {"x", "y"}


# ---------------------------------------------------------------- validation


BAD_PATTERNS = [
    "",
    ".",
    "build.",
    ".build",
    "build..x",
    "#.build",
    "build.#.x",
    "#.#",
    "bu*ld",
    "build.#x",
    "build.fr ont",
    "build.$",
    "build/x",
    "a" * 257,
]


@pytest.mark.parametrize("pattern", BAD_PATTERNS)
def test_bad_pattern_is_refused_and_changes_nothing(cli, events, pattern):
    with pytest.raises(ValidationFailed):
        validate_pattern(pattern)
    before = snapshot(events)
    r = cli("subscribe", "events", pattern, "--as", "sub", "--json")
    assert r.exit_code == 3, r.stderr
    assert r.error["code"] == "validation_failed"
    assert r.error["field"] == "pattern"
    assert r.stdout == ""
    plain = cli("subscribe", "events", pattern, "--as", "sub")
    assert plain.exit_code == 3
    assert plain.stderr.startswith("acomm: error: validation_failed: pattern")
    assert snapshot(events) == before


@pytest.mark.parametrize("pattern", BAD_PATTERNS[:8])
def test_bad_pattern_in_receive_filter(cli, events, pattern):
    r = cli("receive", "--as", "publisher", "--topic", pattern, "--json")
    assert r.exit_code == 3
    assert r.error["field"] in ("topic", "pattern")


GOOD_PATTERNS = ["#", "*", "build", "build.#", "*.*.#", "A-b_9.*.x", "a" * 256]


@pytest.mark.parametrize("pattern", GOOD_PATTERNS)
def test_good_patterns_are_accepted(cli, events, pattern):
    assert validate_pattern(pattern) == pattern
    cli.ok("subscribe", "events", pattern, "--as", "sub")
    subs = cli.ok("subscriptions", "events", "--json").json()["subscriptions"]
    assert {"agent": "sub", "pattern": pattern} in subs


BAD_TOPICS = [
    "",
    ".",
    "build.",
    ".build",
    "build..x",
    "build.*",
    "build.#",
    "*",
    "#",
    "build.fr ont",
    "build.$",
    "b/x",
    "a" * 257,
]


@pytest.mark.parametrize("topic", BAD_TOPICS)
def test_bad_topic_is_refused_and_changes_nothing(cli, events, topic):
    with pytest.raises(ValidationFailed):
        validate_topic(topic)
    cli.ok("subscribe", "events", "#", "--as", "sub")
    before = snapshot(events)
    r = cli("publish", "events", topic, "body", "--as", "publisher", "--json")
    assert r.exit_code == 3, r.stderr
    assert r.error["code"] == "validation_failed"
    assert r.error["field"] == "topic"
    plain = cli("publish", "events", topic, "body", "--as", "publisher")
    assert plain.exit_code == 3
    assert plain.stderr.startswith("acomm: error: validation_failed: topic")
    assert snapshot(events) == before


def test_longest_topic_is_accepted(cli, events):
    topic = ".".join(["abc"] * 64)  # 255 characters
    topic += "x"
    assert len(topic) == 256
    cli.ok("subscribe", "events", "abc.#", "--as", "sub")
    sent = cli.ok("publish", "events", topic, "x", "--as", "publisher", "--json").json()
    assert sent["recipients"] == ["sub"]


@pytest.mark.parametrize("topic", ["_system.message.deadletter", "_system", "_system.custom"])
def test_system_topics_are_reserved_for_acomm(cli, events, topic):
    cli.ok("subscribe", "events", "#", "--as", "sub")
    before = snapshot(events)
    for channel, sender in (("events", "publisher"), ("_system", "publisher")):
        r = cli("publish", channel, topic, "forged", "--as", sender, "--json")
        assert r.exit_code in (3, 5), r.stderr
        if channel == "events":
            assert r.exit_code == 3
            assert r.error["field"] == "topic"
    r = cli("send", "events", "forged", "--topic", topic, "--as", "publisher", "--json")
    assert r.exit_code == 3
    assert r.error["field"] == "topic"
    assert snapshot(events) == before
    assert validate_topic(topic, allow_system=True) == topic


def test_anyone_may_subscribe_to_system_topics(cli, events):
    r = cli("subscribe", "_system", "_system.message.#", "--as", "watcher", "--json")
    assert r.exit_code == 0, r.stderr
    assert r.json()["created"] is True
