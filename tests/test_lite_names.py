"""The start-up path's stand-ins for `re` and `pathlib` give exactly what the code they
replaced gave: the name rules of model.py and topics.py against the regexes they were,
and acomm_cli/lite/paths.py against pathlib on POSIX."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acomm_cli import clock, model, topics
from acomm_cli.errors import ValidationFailed
from acomm_cli.lite import paths

pytestmark = pytest.mark.unit

# The regexes model.py and topics.py used before their character sets, matched whole.
CHANNEL = re.compile(r"[A-Za-z0-9_-]{1,128}")
AGENT = re.compile(r"[A-Za-z0-9_@][A-Za-z0-9._@-]{0,127}")
CORRELATION = re.compile(r"[A-Za-z0-9._:-]{1,128}")
CAPABILITY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
DEDUPE = re.compile(r"[^\x00-\x1f]{1,256}")
WHOLE = re.compile(r"[0-9]+")
SEGMENT = re.compile(r"[A-Za-z0-9_-]+")

# Near the edges: the allowed characters, their neighbours in ASCII, controls, non-ASCII
# letters and digits that str methods treat as such ("١", "ı", "ß", "\u00a0").
ALPHABET = st.sampled_from(
    list("aZz09_-.@:#*/ ~`[]\\^{}\x00\x1f\x7f\n\t")
    + ["١", "１", "ı", "ß", "é", "\u00a0", "\u2028", "\udcff"]
)
NAMES = st.text(ALPHABET, max_size=6) | st.text(ALPHABET, min_size=120, max_size=260)


def _accepts(check, value: str) -> bool:
    try:
        check(value)
    except ValidationFailed:
        return False
    return True


def _utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@settings(max_examples=400, deadline=None)
@given(NAMES)
def test_the_name_rules_are_the_regexes_they_replaced(value):
    ok = _utf8(value)
    assert _accepts(lambda v: model.channel_name(v, allow_reserved=True), value) == bool(
        ok and CHANNEL.fullmatch(value)
    )
    assert _accepts(model.agent_id, value) == bool(
        ok
        and AGENT.fullmatch(value)
        and ".." not in value
        and value.count("@") <= 1
        and not value.startswith("@")
        and not value.endswith("@")
    )
    assert _accepts(model.correlation_id, value) == bool(ok and CORRELATION.fullmatch(value))
    assert _accepts(model.capability_id, value) == bool(
        ok and CAPABILITY.fullmatch(value) and ".." not in value
    )
    assert _accepts(model.dedupe_key, value) == bool(ok and DEDUPE.fullmatch(value))
    stripped = value.strip(" \t\r\n")
    assert model.whole_number(value) == (int(value) if WHOLE.fullmatch(stripped) else None)
    segs = value.split(".")
    assert _accepts(lambda v: topics.validate_topic(v, allow_system=True), value) == bool(
        ok and 1 <= len(value) <= 256 and all(SEGMENT.fullmatch(s) for s in segs)
    )


@pytest.mark.parametrize("value", ["1", "007", "+5", "-5", "١", "1 ", "", "1.5", "12345678901"])
def test_epoch_milliseconds_are_ascii_digits(value):
    expected = int(value) if WHOLE.fullmatch(value.strip()) else None
    try:
        got = clock.parse_time(value, "since", now=1_000_000)
    except ValidationFailed:
        got = None
    if expected is not None:
        assert got == expected
    elif value in ("+5", "-5"):  # relative offsets in seconds
        assert got == 1_000_000 + (5000 if value[0] == "+" else -5000)
    else:
        assert got is None


PATHS = st.lists(st.sampled_from(["a", "b", ".", "/", "~", "..", "//", "é"]), max_size=8).map(
    "".join
)


@settings(max_examples=400, deadline=None)
@given(PATHS)
def test_path_strings_are_pathlibs(value):
    assert paths.pure(value) == str(PurePosixPath(value))
    assert paths.absolute(value) == str(Path(value).absolute())
    assert paths.sibling(value, "config.yaml") == str(Path(value).parent / "config.yaml")
    try:
        expected = str(Path(value).expanduser())
    except RuntimeError:
        with pytest.raises(RuntimeError):
            paths.expanduser(value)
    else:
        assert paths.expanduser(value) == expected


def test_home_and_another_users_home(monkeypatch):
    monkeypatch.setenv("HOME", "/home/someone/")
    for value in ("~", "~/x", "~//x/./y", "~root/a", "a/~", "/~"):
        assert paths.expanduser(value) == str(Path(value).expanduser())
    assert os.path.isabs(paths.absolute("x"))
