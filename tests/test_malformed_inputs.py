"""A generator of malformed inputs: names, ids, topics, patterns,
durations, sizes, times, priorities, `--meta`, batch lines, YAML, huge bodies, NUL bytes and
invalid UTF-8, fed to the real command line. Every case must end with a documented exit status
other than 1 (2-7), exactly one line on stderr (one JSON object with `error.code` under
--json), and the store exactly as it was (every table dumped before and after).

Every strategy produces only values the validators must refuse (a NUL in a message body is
valid UTF-8 and kept intact: see test_odd_input.py). Deterministic (derandomize, no
example database) and bounded: a few hundred cases in all, in process through CliRunner, a
handful through a real process for raw bytes on argv and stdin. The examples of one test share
its store: every case is refused, so none changes it (each checks that it did not)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ACOMM, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.cli

DOCUMENTED = {2, 3, 4, 5, 6, 7}
ERROR_CODES = {
    "usage",
    "validation_failed",
    "not_found",
    "invalid_state",
    "not_participant",
    "forbidden",
    "duplicate",
    "store_full",
    "store_capacity",
    "channel_full",
    "store_unavailable",
}
SMALL = 64  # max_message_size of the channel `small`: "huge" bodies stay cheap to generate


def fuzz(n: int) -> Any:
    return settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
        ],
    )


@pytest.fixture
def world(cli, store):
    """Channels every case may aim at: a group, a pubsub and one with a tiny size limit."""
    cli.ok("channel", "create", "team", "--as", "alice")
    cli.ok("channel", "join", "team", "--as", "alice", "bob")
    cli.ok("channel", "create", "news", "--type", "pubsub", "--as", "alice")
    cli.ok("subscribe", "news", "build.#", "--as", "bob")
    cli.ok("channel", "create", "small", "--as", "alice", "--max-message-size", str(SMALL))
    cli.ok("channel", "join", "small", "--as", "alice", "bob")
    cli.ok("send", "team", "first", "--as", "alice")
    return store


def refused(cli, store: Path, args: list[str], input: str | bytes | None = None) -> None:
    """The contract for bad input, checked once plain and once with --json."""
    before = snapshot(store)
    r = cli(*args, input=input)
    assert r.exit_code in DOCUMENTED, (args, r.exit_code, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("acomm: error: "), (
        args,
        r.stderr,
    )
    assert snapshot(store) == before, args
    r = cli("--json", *args, input=input)
    assert r.exit_code in DOCUMENTED, (args, r.exit_code, r.stderr)
    assert len(r.stderr.splitlines()) == 1, (args, r.stderr)
    assert json.loads(r.stderr)["error"]["code"] in ERROR_CODES, (args, r.stderr)
    assert snapshot(store) == before, args


# ------------------------------------------------------------------ strategies

# Lone surrogates: what undecodable bytes on argv or stdin become (surrogateescape).
SURROGATES = st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)
ODD = st.sampled_from(
    [
        "\x00",
        "\n",
        "\t",
        " ",
        "/",
        ".",
        "@",
        "#",
        "*",
        "é",
        "\uff11",
        "\u0663",
        "\u200b",
        "\U0001f600",
        "'",
        '"',
        ";",
        "$",
        "\\",
        "%",
    ]
)
ANY_CHAR = st.one_of(st.characters(codec="utf-8"), SURROGATES, ODD)


def no_dash(s: str) -> bool:
    """Values that look like options change what the command line means (`--store X`); they
    get their own explicit cases instead."""
    return not s.startswith("-")


def spoiled(valid: str) -> st.SearchStrategy[str]:
    """A valid value with a bad character put somewhere in it."""
    return st.tuples(st.integers(0, len(valid)), st.one_of(SURROGATES, ODD)).map(
        lambda t: valid[: t[0]] + t[1] + valid[t[0] :]
    )


def bad(rule: re.Pattern[str], valid: str, extra: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(extra),
        spoiled(valid),
        st.text(ANY_CHAR, min_size=0, max_size=40),
        st.text(st.sampled_from("ab_-"), min_size=257, max_size=300),
    ).filter(lambda s: not rule.fullmatch(s) and no_dash(s))


CHANNEL_OK = re.compile(r"[A-Za-z0-9-][A-Za-z0-9_-]{0,127}")  # `_x` is reserved: bad too
TOPIC_OK = re.compile(r"(?!_system(\.|$))(?=.{1,256}$)[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*", re.DOTALL)
PATTERN_OK = re.compile(
    r"(?=.{1,256}$)([A-Za-z0-9_-]+|\*)(\.([A-Za-z0-9_-]+|\*))*(\.#)?|#", re.DOTALL
)


def has_surrogate(s: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def agent_ok(s: str) -> bool:
    return (
        bool(re.fullmatch(r"[A-Za-z0-9_@][A-Za-z0-9._@-]{0,127}", s))
        and ".." not in s
        and s.count("@") <= 1
        and not s.startswith("@")
        and not s.endswith("@")
    )


channel_names = bad(
    CHANNEL_OK,
    "team",
    ["", "_system", "_mine", "a" * 129, "team\n", "te am", "tëam", "team\x00", "\uff54eam"],
)
agent_ids = st.one_of(
    st.sampled_from(
        [
            "",
            ".alice",
            "al..ice",
            "a@b@c",
            "@alice",
            "alice@",
            "a" * 129,
            "alice\n",
            "ali ce",
            "alice\x00",
            "\uff41lice",
        ]
    ),
    spoiled("alice"),
    st.text(ANY_CHAR, max_size=30),
).filter(lambda s: not agent_ok(s) and no_dash(s))
topics = bad(
    TOPIC_OK,
    "build.ok",
    ["", ".", "a..b", "a.", ".a", "_system.x", "a.*", "a.#", "a b", "x" * 257, "build.ok\n"],
)
patterns = bad(
    PATTERN_OK,
    "build.*",
    ["", "#.a", "a.#.b", "a..b", "**", "a.**", "a#", "x" * 257, "build.#\n", "a.*b"],
)
# What a duration may be (clock.parse_duration): a bare number, units from the largest down
# (1h30m), or ISO 8601 (PT1H30M); the strategy below keeps only what is none of them.
_N = r"[0-9]+(\.[0-9]+)?"
_NI = r"[0-9]+([.,][0-9]+)?"
DURATION_OK = re.compile(
    rf"(?=[\s\S]*[0-9])\s*(?:{_N}"
    + rf"|(?:{_N}\s*w\s*)?(?:{_N}\s*d\s*)?(?:{_N}\s*h\s*)?(?:{_N}\s*m\s*)?(?:{_N}\s*s\s*)?"
    + rf"(?:{_N}\s*ms\s*)?"
    + rf"|(?i:p(?:{_NI}w)?(?:{_NI}d)?(?:t(?:{_NI}h)?(?:{_NI}m)?(?:{_NI}s)?)?))\s*",
    re.ASCII,
)
durations = st.one_of(
    st.sampled_from(
        [
            "",
            "s",
            "5x",
            "5 s s",
            "\uff15s",
            "\u0665m",
            "1e3s",
            "5sec",
            ".5s",
            "5..0s",
            "inf",
            "nan",
            "5\x00s",
            "0x10s",
            "1_000ms",
        ]
    ),
    spoiled("30s"),
    st.text(ANY_CHAR, max_size=12),
).filter(lambda s: not DURATION_OK.fullmatch(s) and no_dash(s))
sizes = st.one_of(
    st.sampled_from(
        ["", "KiB", "5XB", "1 MiB MiB", "\uff11KiB", "1e3", "1_000", "5\x00", "0x100", "1.5.5KiB"]
    ),
    spoiled("1MiB"),
).filter(
    lambda s: (
        not re.fullmatch(
            r"\s*[0-9]+(\.[0-9]+)?\s*(b|k|kb|m|mb|g|gb|kib|mib|gib)?"
            r"\s*",
            s,
            re.ASCII | re.IGNORECASE,
        )
        and no_dash(s)
    )
)
priorities = st.one_of(
    st.sampled_from(
        [
            "",
            "5",
            "9",
            "99999999999999999999",
            "1.0",
            "\uff11",
            "\u0662",
            "hi",
            "norm",
            "high\n",
            "HIGH!",
            "0x1",
            "1_0",
            "\x00",
        ]
    ),
    spoiled("high"),
    st.text(ANY_CHAR, max_size=10),
).filter(
    lambda s: (
        s.strip(" \t\r\n").lower()
        not in {"0", "1", "2", "3", "4", "low", "normal", "high", "urgent", "critical"}
        and not re.fullmatch(r"\s*0*[0-4]\s*", s, re.ASCII)
        and no_dash(s)
    )
)
metas = st.one_of(
    st.sampled_from(["", "novalue", "=v", "=", "\udcff=1", "k=\udcff", "k\udcff=v"]),
    st.text(ANY_CHAR.filter(lambda c: c != "="), max_size=10),  # no separator
    st.tuples(st.text(ANY_CHAR, max_size=5), SURROGATES).map(lambda t: f"k={t[0]}{t[1]}"),
).filter(lambda s: ("=" not in s or s.startswith("=") or has_surrogate(s)) and no_dash(s))
message_ids = st.one_of(
    st.sampled_from(
        [
            "",
            "abc",
            "1.5",
            "\uff11",
            "\u0661",
            "1_0",
            "0x1",
            "1e3",
            "\x00",
            "99999999999999999999999",
            "\udcff",
        ]
    ),
    st.text(ANY_CHAR, max_size=8),
).filter(lambda s: not re.fullmatch(r"\s*\+?[0-9]+\s*", s, re.ASCII) and no_dash(s))
times = st.one_of(
    st.sampled_from(
        [
            "yesterday",
            "2026-13-01",
            "2026-01-01T25:00",
            "\uff12\uff10\uff12\uff16",
            "-1x",
            "+",
            "-",
            "2026-01-01\x00",
            "1e3",
            "-\uff11h",
            "\u0661\u0662",
        ]
    ),
    spoiled("2026-01-01T00:00:00Z"),
).filter(lambda s: s not in ("--json", "--no-color"))  # option values: a dash is harmless
# (An empty --since is "not given", as the filters take every empty value: not generated.)


# ------------------------------------------------------------------ cases


@fuzz(40)
@given(name=channel_names)
def test_bad_channel_names(cli, world, name):
    refused(cli, world, ["channel", "create", name, "--as", "alice"])
    refused(cli, world, ["send", name, "hi", "--as", "alice"])
    if name != "_system":  # reserved, yet anyone may read it
        refused(cli, world, ["receive", "--as", "bob", "--channel", name])


@fuzz(30)
@given(agent=agent_ids)
def test_bad_agent_ids(cli, world, agent):
    refused(cli, world, ["channel", "join", "team", "--as", "alice", agent])
    refused(cli, world, ["send", "team", "hi", "--as", agent])
    if not all(agent_ok(a.strip()) for a in agent.split(",")):  # --to takes a list
        refused(cli, world, ["send", "--to", agent, "hi", "--as", "alice"])
    refused(cli, world, ["receive", "--as", agent])


@fuzz(30)
@given(topic=topics)
def test_bad_topics(cli, world, topic):
    refused(cli, world, ["publish", "news", topic, "hi", "--as", "alice"])
    refused(cli, world, ["send", "team", "hi", "--as", "alice", "--topic", topic])


@fuzz(30)
@given(pattern=patterns)
def test_bad_patterns(cli, world, pattern):
    refused(cli, world, ["subscribe", "news", pattern, "--as", "bob"])
    refused(cli, world, ["receive", "--as", "bob", "--topic", pattern])


@fuzz(30)
@given(duration=durations)
def test_bad_durations(cli, world, duration):
    refused(cli, world, ["send", "team", "hi", "--as", "alice", "--delay", duration])
    refused(cli, world, ["channel", "create", "fresh", "--as", "alice", "--ack-timeout", duration])
    refused(cli, world, ["deadletter", "purge", "--older-than", duration])


@fuzz(15)
@given(size=sizes)
def test_bad_sizes(cli, world, size):
    refused(cli, world, ["channel", "create", "fresh", "--as", "alice", "--max-message-size", size])


@fuzz(25)
@given(prio=priorities)
def test_bad_priorities(cli, world, prio):
    refused(cli, world, ["send", "team", "hi", "--as", "alice", "--priority", prio])
    refused(cli, world, ["receive", "--as", "bob", "--priority-min", prio])


@fuzz(15)
@given(meta=metas)
def test_bad_meta(cli, world, meta):
    refused(cli, world, ["send", "team", "hi", "--as", "alice", "--meta", meta])


@fuzz(20)
@given(mid=message_ids)
def test_bad_message_ids(cli, world, mid):
    refused(cli, world, ["show", mid])
    refused(cli, world, ["ack", mid, "--as", "bob"])
    refused(cli, world, ["deadletter", "replay", mid])


@fuzz(15)
@given(when=times)
def test_bad_times(cli, world, when):
    refused(cli, world, ["messages", "--since", when])
    refused(cli, world, ["send", "team", "hi", "--as", "alice", "--deliver-at", when])


@fuzz(15)
@given(extra=st.integers(1, 4000), how=st.sampled_from(["argv", "stdin", "batch"]))
def test_bodies_over_the_channel_limit(cli, world, extra, how):
    body = "x" * (SMALL + extra - 1) + "é"  # one more byte than the limit, at least
    if how == "argv":
        refused(cli, world, ["send", "small", body, "--as", "alice"])
    elif how == "stdin":
        refused(cli, world, ["send", "small", "--as", "alice"], input=body)
    else:
        line = json.dumps({"channel": "small", "from": "alice", "content": body})
        refused(cli, world, ["send", "--batch", "-"], input=line + "\n")


def test_a_body_over_the_default_limit(cli, world):
    """The default max_message_size is 1 MiB of UTF-8: 2 MiB is refused whole."""
    refused(cli, world, ["send", "team", "--as", "alice"], input="é" * (1024 * 1024))


TEXT = st.text(st.characters(codec="utf-8"), max_size=12)


@fuzz(20)
@given(
    body=st.tuples(TEXT, st.lists(SURROGATES, min_size=1, max_size=3), TEXT).map(
        lambda t: t[0] + "".join(t[1]) + t[2]
    ),
    how=st.sampled_from(["argv", "stdin", "batch"]),
)
def test_invalid_utf8_bodies(cli, world, body, how):
    if how == "argv" and no_dash(body):
        refused(cli, world, ["send", "team", body, "--as", "alice"])
    elif how == "stdin":
        raw = body.encode("utf-8", "surrogateescape")
        refused(cli, world, ["send", "team", "--as", "alice"], input=raw)
    elif how == "batch":
        raw = json.dumps(
            {"channel": "team", "from": "alice", "content": body}, ensure_ascii=False
        ).encode("utf-8", "surrogateescape")
        refused(cli, world, ["send", "--batch", "-"], input=raw + b"\n")


# A batch line that is bad by itself; the good line before it must not be sent either.
GOOD_LINE = {"channel": "team", "from": "alice", "content": "fine"}
batch_lines = st.one_of(
    st.sampled_from(
        [
            "not json",
            "{",
            "[]",
            "1",
            "null",
            '"str"',
            "{}",
            '{"channel": "team"}',
            '{"from": "alice", "content": "x"}',
            '{"channel": "team", "to": "bob", "from": "alice", "content": "x"}',
            '{"channel": "team", "from": "alice", "content": ""}',
            '{"channel": "team", "from": "alice", "content": "x", "colour": "red"}',
            '{"channel": 5, "from": "alice", "content": "x"}',
            '{"channel": "team", "from": "alice", "content": 5}',
            '{"channel": "team", "from": "alice", "content": "x", "priority": true}',
            '{"channel": "team", "from": "alice", "content": "x", "priority": 9}',
            '{"channel": "team", "from": "alice", "content": "x", "metadata": []}',
            '{"channel": "team", "from": "alice", "content": "x", "delay": -5}',
            '{"channel": "team", "from": "alice", "content": "x", "delay": "soon"}',
            '{"to": "alice", "from": "alice", "content": "x"}',
            '{"channel": "nowhere", "from": "alice", "content": "x"}',
            '{"channel": "team", "from": "carol", "content": "x"}',
            '{"channel": "news", "from": "alice", "content": "x"}',
            '{"channel": "team", "from": "alice", "content": "x", "type": "response"}',
            '{"channel": "team", "from": "alice", "content": "\\udcff"}',
            "[" * 50_000,
        ]
    ),
    st.builds(lambda c: json.dumps({**GOOD_LINE, "channel": c}), channel_names),
    st.builds(lambda a: json.dumps({**GOOD_LINE, "from": a}), agent_ids),
    st.builds(
        lambda t: json.dumps({"channel": "news", "from": "alice", "content": "x", "topic": t}),
        topics,
    ),
    st.builds(lambda p: json.dumps({**GOOD_LINE, "priority": p}), priorities),
    st.builds(lambda d: json.dumps({**GOOD_LINE, "delay": d}), durations),
    st.builds(
        lambda k: json.dumps({**GOOD_LINE, "correlation_id": k}),
        st.text(ANY_CHAR, min_size=0, max_size=10).filter(
            lambda s: not re.fullmatch(r"[A-Za-z0-9._:-]{1,128}", s)
        ),
    ),
)


@fuzz(40)
@given(line=batch_lines)
def test_bad_batch_lines(cli, world, line):
    text = json.dumps(GOOD_LINE) + "\n" + line + "\n"
    refused(cli, world, ["send", "--batch", "-"], input=text.encode("utf-8", "surrogateescape"))


# ------------------------------------------------------------------ YAML config files

BAD_VALUES = {
    "store": {
        "busy_timeout": [-1, "x", "\uff15s", [1], {"a": 1}, True, "5 parsecs"],
        "flush": ["sometimes", 1, "", None, ["batch"]],
        "batch_messages": [-1, 1.5, True, "\uff11\uff10", "ten", [1]],
        "batch_interval": ["-5s", "x", {"a": 1}, 2.5],
    },
    "limits": {
        "max_active_messages": [-5, "many", 1.5, "\u0661"],
        "max_store_bytes": [5, "1KiB", "huge", -1, True, "\uff12GiB"],
    },
    "bridge": {"read_ttl": [0, "0s", "x", -1], "inbox_dir": [5, ["a"], {"a": 1}]},
    "spark": {"master": ["", "  ", 5, ["local"]]},
}
one_bad_setting = st.sampled_from(
    sorted(
        (section, key, value)
        for section, keys in BAD_VALUES.items()
        for key, values in keys.items()
        for value in map(json.dumps, values)
    )
).map(lambda t: {t[0]: {t[1]: json.loads(t[2])}})
yaml_docs = st.one_of(
    one_bad_setting.map(lambda d: yaml.safe_dump(d).encode()),
    st.sampled_from(
        [
            b"store: [1, 2\n",
            b"store:\n\tflush: batch\n",
            b"- a\n- b\n",
            b"42\n",
            b"just text\n",
            b"colour: red\n",
            b"store:\n  colour: red\n",
            b"store: 5\n",
            b"? [a]\n: b\n",
            b"store:\n  flush: \xff\n",
            b"\xfe\xff\x00s",
            b"store:\n  flush: " + b"[" * 3000 + b"]" * 3000 + b"\n",
            b"store: {flush: batch, flush: manual, oops: 1}\n",
            b"store:\n  flush: &a [*a]\n",
            b"%YAML 9.9\n---\nstore: {}\n",
            b"store:\n  flush: !!python/object:os.system x\n",
        ]
    ),
)


@fuzz(25)
@given(doc=yaml_docs)
def test_bad_config_files(cli, world, tmp_path, doc):
    cfg = tmp_path / "bad-config.yaml"
    cfg.write_bytes(doc)
    refused(cli, world, ["--config", str(cfg), "send", "team", "hi", "--as", "alice"])


# ------------------------------------------------------------------ raw bytes, real processes


@pytest.mark.process
@pytest.mark.parametrize(
    ("args", "stdin"),
    [
        ([b"send", b"team", b"\xc3\x28", b"--as", b"alice"], b""),  # a broken 2-byte sequence
        ([b"send", b"team", b"--as", b"alice"], b"ok \xed\xa0\x80"),  # an encoded surrogate
        ([b"send", b"team", b"--as", b"alice"], b"\xf8\x88\x80\x80\x80"),  # a 5-byte form
        ([b"publish", b"news", b"build.\xff", b"x", b"--as", b"alice"], b""),
        ([b"subscribe", b"news", b"build.\xc0\xaf", b"--as", b"bob"], b""),
        ([b"channel", b"join", b"team", b"b\xffb"], b""),
        ([b"send", b"--batch", b"-"], b'{"channel": "team", "from": "alice", "content": "\x80"}\n'),
        ([b"send", b"team", b"x", b"--as", b"alice", b"--priority", "\uff12".encode()], b""),
        ([b"send", b"team", b"x", b"--as", b"alice", b"--delay", b"\xff"], b""),
        ([b"send", b"team", b"x", b"--as", b"alice", b"--meta", b"k\xff=v"], b""),
    ],
    ids=lambda v: repr(v)[:40],
)
def test_raw_bytes_through_a_real_process(world, args, stdin):
    before = snapshot(world)
    for flags in ([], [b"--json"]):
        r = subprocess.run([ACOMM, *flags, *args], input=stdin, capture_output=True, timeout=60)
        assert r.returncode in DOCUMENTED, (args, r.returncode, r.stderr)
        err = r.stderr.decode("utf-8", "replace")
        assert len(err.splitlines()) == 1, err
        if flags:
            assert json.loads(err)["error"]["code"] in ERROR_CODES
        assert snapshot(world) == before
