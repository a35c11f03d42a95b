"""One way to write a duration and a time (clock.parse_duration, clock.parse_time): every
form, every refusal, and the unit form the configuration is shown in."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acomm_cli import clock
from acomm_cli.errors import ValidationFailed

pytestmark = pytest.mark.unit

S, M, H, D = 1000, 60_000, 3_600_000, 86_400_000


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("500ms", 500),
        ("30s", 30 * S),
        ("5m", 5 * M),
        ("2h", 2 * H),
        ("2d", 2 * D),
        ("1w", 7 * D),
        ("1h30m", H + 30 * M),
        ("1d2h3m4s5ms", D + 2 * H + 3 * M + 4 * S + 5),
        ("1m30s", 90 * S),
        ("1h 30m", H + 30 * M),  # spaces between the parts
        (" 30 s ", 30 * S),
        ("1.5h", H + 30 * M),
        ("0.5s", 500),
        ("0s", 0),
        ("PT1H30M", H + 30 * M),
        ("P1DT2H", D + 2 * H),
        ("P2D", 2 * D),
        ("P1W", 7 * D),
        ("PT45S", 45 * S),
        ("PT0.5S", 500),
        ("PT0,5S", 500),  # ISO 8601's other decimal mark
        ("pt5m", 5 * M),  # designators in either case
        ("P0D", 0),
        ("365000d", clock.MAX_DURATION_MS),
    ],
)
def test_each_form_is_read(text, ms):
    assert clock.parse_duration(text, "ttl") == ms


@pytest.mark.parametrize(
    ("given", "bare", "ms"),
    [("30", "s", 30 * S), ("5000", "ms", 5000), (30, "s", 30 * S), (5000, "ms", 5000)],
)
def test_a_bare_number_keeps_the_unit_of_its_place(given, bare, ms):
    """Seconds on the command line, milliseconds in config.yaml: no script changes meaning."""
    assert clock.parse_duration(given, "x", bare=bare) == ms


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("-5s", "is negative"),
        ("-PT1M", "is negative"),
        (" -1", "is negative"),
        (-1, "is negative"),
        ("P1M", "years or months"),
        ("P1Y", "years or months"),
        ("365001d", "longer than the longest"),
        ("9" * 400, "longer than the longest"),
        (clock.MAX_DURATION_MS // 1000 + 1, "longer than the longest"),
        ("", "is not a duration"),
        ("s", "is not a duration"),
        ("5x", "is not a duration"),
        ("5M", "is not a duration"),  # minutes are m: M would read as months
        ("30m1h", "is not a duration"),  # largest unit first
        ("1h1h", "is not a duration"),
        ("1h30", "is not a duration"),
        (".5s", "is not a duration"),
        ("1.s", "is not a duration"),
        ("1e3s", "is not a duration"),
        ("1_000ms", "is not a duration"),
        ("\uff15s", "is not a duration"),  # a fullwidth digit
        ("P", "is not a duration"),
        ("PT", "is not a duration"),
        ("P1DT", "is not a duration"),
        ("P1D2H", "is not a duration"),  # hours only after T
        ("PT1D", "is not a duration"),
        ("PT1H30", "is not a duration"),
        ("PT1M1H", "is not a duration"),
        (True, "is not a duration"),
        (1.5, "is not a duration"),
    ],
)
def test_each_refusal_names_the_field_the_value_and_the_forms(value, says):
    with pytest.raises(ValidationFailed) as e:
        clock.parse_duration(value, "ttl")
    assert e.value.field == "ttl" and e.value.extra["value"] == value
    assert e.value.message.startswith("ttl: ") and says in e.value.message
    if "longer" not in says:
        assert clock.DURATION_FORMS in e.value.message


def test_the_refusal_says_what_a_bare_number_is_where_it_was_given():
    with pytest.raises(ValidationFailed, match="a bare number is milliseconds"):
        clock.parse_duration("forever", "store.busy_timeout", bare="ms")
    with pytest.raises(ValidationFailed, match="a bare number is seconds"):
        clock.parse_duration("forever", "wait")


@pytest.mark.parametrize(
    ("ms", "text"),
    [(0, "0s"), (1, "1ms"), (1500, "1s500ms"), (90_000, "1m30s"), (5_400_000, "1h30m"), (D, "1d")],
)
def test_the_unit_form_shown(ms, text):
    assert clock.format_duration(ms) == text


@given(st.integers(min_value=0, max_value=clock.MAX_DURATION_MS))
def test_every_duration_shown_reads_back(ms):
    assert clock.parse_duration(clock.format_duration(ms), "x") == ms


NOW = 1_800_000_000_000


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("2026-11-27T18:00:00Z", 1_795_802_400_000),
        ("2026-11-27T19:00:00+01:00", 1_795_802_400_000),
        ("2026-11-27T18:00:00", 1_795_802_400_000),  # no offset: UTC
        ("1795802400000", 1_795_802_400_000),  # epoch milliseconds
        ("-1h", NOW - H),
        ("+30m", NOW + 30 * M),
        ("-1h30m", NOW - H - 30 * M),
        ("-PT1H", NOW - H),
        ("+P1D", NOW + D),
        ("-5", NOW - 5 * S),  # a bare relative number is seconds
    ],
)
def test_times_share_the_duration_forms_when_relative(text, ms):
    assert clock.parse_time(text, "since", NOW) == ms


@pytest.mark.parametrize("text", ["yesterday", "-1x", "--1h", "-P1M", "2026-13-01", "\uff12026"])
def test_a_bad_time_names_the_field_and_the_forms(text):
    with pytest.raises(ValidationFailed) as e:
        clock.parse_time(text, "deliver_at", NOW)
    assert e.value.field == "deliver_at" and e.value.extra["value"] == text
    assert clock.TIME_FORMS in e.value.message
