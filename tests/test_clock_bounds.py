"""The bounds on times and durations (clock.py): every stored integer formats, and every
accepted time formats back to itself."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acomm_cli import clock
from acomm_cli.errors import ValidationFailed

pytestmark = pytest.mark.unit

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
IN_RANGE = st.integers(min_value=clock.MIN_TIME_MS, max_value=clock.MAX_TIME_MS)


@given(INT64)
def test_any_stored_integer_formats_as_a_time(ms):
    """A reader shows what any store holds, never `year ... out of range`."""
    out = clock.iso_ms(ms)
    assert len(out) == 24 and out.endswith("Z")
    assert clock.parse_time(out, "t", 0) == min(max(ms, clock.MIN_TIME_MS), clock.MAX_TIME_MS)


@given(IN_RANGE)
def test_every_accepted_time_round_trips(ms):
    assert clock.parse_time(str(ms) if ms >= 0 else clock.iso_ms(ms), "t", 0) == ms


@pytest.mark.parametrize(
    "value",
    [
        "253402300800000",
        "9999-12-31T23:59:59-00:01",
        "+365000d",  # from now: past 9999 only near the end, so from the largest time
    ],
)
def test_times_past_the_year_9999_are_refused(value):
    with pytest.raises(ValidationFailed) as e:
        clock.parse_time(value, "until", clock.MAX_TIME_MS - 1)
    assert e.value.field == "until" and e.value.extra["value"] == value


@pytest.mark.parametrize("value", ["365001d", "99999999999d", "9" * 400, 31_536_000_001, -(10**30)])
def test_durations_past_the_longest_are_refused(value):
    with pytest.raises(ValidationFailed) as e:
        clock.parse_duration(value, "ttl")
    assert e.value.field == "ttl" and e.value.extra["value"] == value


def test_the_longest_duration_is_accepted():
    assert clock.parse_duration("365000d", "ttl") == clock.MAX_DURATION_MS
    assert clock.parse_duration(31_536_000_000, "ttl") == clock.MAX_DURATION_MS


def test_a_size_past_the_largest_is_refused():
    with pytest.raises(ValidationFailed):
        clock.parse_size("9" * 400, "max_message_size")
