"""The one time source, and the parsing of durations, sizes and points in time.

Everything reads time through `now_ms()`, which calls `time.time()` so that both freezegun (in
process) and libfaketime (for subprocesses) control it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from acomm_cli.errors import ValidationFailed
from acomm_cli.model import utf8

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    import re

# The bounds of every time and duration acomm accepts: a time is between
# 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z (what ISO 8601 and Python's datetime
# can write), and a duration at most 365,000 days (1,000 years), so that now + any duration,
# or a delay plus a ttl, stays inside them. Past these a value is refused, not stored.
MIN_TIME_MS = -62_135_596_800_000
MAX_TIME_MS = 253_402_300_799_999
MAX_DURATION_MS = 365_000 * 86_400_000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)

# Durations are read by a small scanner, not a regular expression: the send path never
# compiles one for them.
_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_UNIT_ORDER = ("w", "d", "h", "m", "s", "ms")  # a compound duration names them in this order
_ISO_DATE = {"W": 604_800_000, "D": 86_400_000}  # after P
_ISO_TIME = {"H": 3_600_000, "M": 60_000, "S": 1000}  # after T
_SPACE = " \t\n\r\f\v"
_DIGITS = "0123456789"  # ASCII only: str.isdigit would take "１" and "٣"
# What every duration error says a duration may be: each command-line option and config key
# takes the same forms (docs/SCRIPTING.md, "Durations and times").
DURATION_FORMS = "500ms, 30s, 5m, 1h30m, 2d, or ISO 8601 such as PT1H30M or P1DT2H"
_BARE = {"s": "seconds", "ms": "milliseconds"}
TIME_FORMS = (
    "ISO 8601 such as 2026-11-27T18:00:00Z or 2026-11-27T19:00:00+01:00, epoch milliseconds, "
    "or relative to now such as -1h, +30m, -1h30m"
)
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
}
_MAX_SIZE = 2**53  # bytes; far past any real limit, and exact in a float and in SQLite
# re.ASCII: `\d` would also take "１" or "٣", and `\s` a non-breaking space; fullmatch: `$`
# would accept a trailing newline. `re` is imported on first use; its own cache keeps the
# compiled pattern.
_SIZE = r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*"


def _fullmatch(pattern: str, value: str) -> re.Match[str] | None:
    import re

    return re.fullmatch(pattern, value, re.ASCII)


def now_ms() -> int:
    """Milliseconds since the Unix epoch, UTC."""
    return int(time.time() * 1000)


def iso(ms: int | None) -> str | None:
    """ISO 8601 with milliseconds and `Z`, or None (see `iso_ms`)."""
    return None if ms is None else iso_ms(ms)


def iso_ms(ms: int) -> str:
    """ISO 8601 with milliseconds and `Z`. A stored time outside the years 1-9999 (written
    before times were bounded, or by hand) is shown as the nearest bound: a reader never fails
    on what is in a store."""
    if not MIN_TIME_MS <= ms <= MAX_TIME_MS:
        ms = MAX_TIME_MS if ms > MAX_TIME_MS else MIN_TIME_MS
    # isoformat, not strftime: strftime's %Y writes the year 1 as "1", not "0001"
    return datetime.fromtimestamp(ms // 1000, tz=UTC).isoformat()[:19] + f".{ms % 1000:03d}Z"


def checked_time(ms: int, field: str, value: object = None) -> int:
    """`ms` if it is a time acomm can store and write back (see MIN_TIME_MS, MAX_TIME_MS),
    else a validation error naming `field` and the value given."""
    if not MIN_TIME_MS <= ms <= MAX_TIME_MS:
        raise ValidationFailed(
            f"{field}: {value if value is not None else ms!r} is outside the times acomm accepts "
            "(0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z)",
            field=field,
            value=value if value is not None else ms,
        )
    return ms


def _amount(whole: str, fraction: str, unit_ms: int) -> int:
    """whole.fraction units in milliseconds, exactly (a fraction of a millisecond is dropped).
    More than 18 digits is past the longest duration in any unit: never converted."""
    if len(whole.lstrip("0")) > 18:
        return MAX_DURATION_MS + 1
    ms = int(whole) * unit_ms
    if fraction:
        ms += int(fraction[:9].ljust(9, "0")) * unit_ms // 1_000_000_000
    return ms


def _number(text: str, i: int, marks: str) -> tuple[str, str, int]:
    """The ASCII digits at `i` and those after a decimal mark: (whole, fraction, next index);
    whole is "" where there is no number, and the index is -1 for a mark with no digits."""
    n = len(text)
    j = i
    while j < n and text[j] in _DIGITS:
        j += 1
    whole, fraction = text[i:j], ""
    if whole and j < n and text[j] in marks:
        k = j + 1
        while k < n and text[k] in _DIGITS:
            k += 1
        if k == j + 1:
            return whole, "", -1
        fraction, j = text[j + 1 : k], k
    return whole, fraction, j


def _units(text: str) -> int | None:
    """`1h30m`, `30s`, `1.5h`, `2d 12h`: units from the largest down, each at most once."""
    n, i, total, last = len(text), 0, 0, -1
    while i < n:
        whole, fraction, i = _number(text, i, ".")
        if not whole or i < 0:
            return None
        while i < n and text[i] in _SPACE:
            i += 1
        j = i
        while j < n and "a" <= text[j] <= "z":
            j += 1
        unit = text[i:j]
        if unit not in _UNITS_MS or _UNIT_ORDER.index(unit) <= last:
            return None
        last = _UNIT_ORDER.index(unit)
        total += _amount(whole, fraction, _UNITS_MS[unit])
        i = j
        while i < n and text[i] in _SPACE:
            i += 1
    return total


def _iso(text: str) -> int | str | None:
    """An ISO 8601 duration: `PT1H30M`, `P1DT2H`, `P2W`, `PT0.5S` (a fraction with `.` or `,`).
    Years and months have no fixed length: "calendar"."""
    t = text.upper()
    n, i, total, last, in_time, seen = len(t), 1, 0, -1, False, False
    while i < n:
        if t[i] == "T" and not in_time:
            in_time, last, i = True, -1, i + 1
            if i == n:
                return None
            continue
        whole, fraction, i = _number(t, i, ".,")
        if not whole or i < 0 or i >= n:
            return None
        designator = t[i]
        i += 1
        if not in_time and designator in "YM":
            return "calendar"
        table = _ISO_TIME if in_time else _ISO_DATE
        if designator not in table or list(table).index(designator) <= last:
            return None
        last = list(table).index(designator)
        total += _amount(whole, fraction, table[designator])
        seen = True
    return total if seen else None


def _scan(value: str, bare: str) -> int | str:
    """Milliseconds, or why not: "malformed", "negative" or "calendar"."""
    text = value.strip(_SPACE)
    if text[:1] == "-":
        return "negative"
    if text[:1] in "Pp":
        got = _iso(text)
    else:
        whole, fraction, end = _number(text, 0, ".")
        if whole and end == len(text):  # a bare number
            got = _amount(whole, fraction, _UNITS_MS[bare])
        else:
            got = _units(text) if text else None
    return "malformed" if got is None else got


def parse_duration(value: str | int, field: str, *, bare: str = "s") -> int:
    """A duration in milliseconds: `500ms`, `30s`, `5m`, `1h30m`, `2d`, `1w`, or ISO 8601
    (`PT1H30M`, `P1DT2H`). A bare number (a string of digits, or an int) is in `bare` units:
    seconds on the command line, milliseconds in config.yaml. Negative, longer than
    MAX_DURATION_MS or malformed: a validation error naming `field` and the value."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        got: int | str = "malformed"
    elif isinstance(value, int):
        got = "negative" if value < 0 else _amount(str(value), "", _UNITS_MS[bare])
    else:
        utf8(value, field)
        got = _scan(value, bare)
    if isinstance(got, int) and got <= MAX_DURATION_MS:
        return got
    if isinstance(got, int):
        why = f"is longer than the longest duration acomm accepts (365000d, {MAX_DURATION_MS} ms)"
    elif got == "negative":
        why = f"is negative: a duration is 0 or more ({DURATION_FORMS})"
    elif got == "calendar":
        why = (
            "counts years or months, which have no fixed length: write days (P30D) or "
            + DURATION_FORMS
        )
    else:
        why = f"is not a duration: use {DURATION_FORMS} (a bare number is {_BARE[bare]})"
    raise ValidationFailed(f"{field}: {value!r} {why}", field=field, value=value)


def format_duration(ms: int) -> str:
    """Milliseconds in the unit form the parser reads back: 90000 -> `1m30s`, 0 -> `0s`."""
    if ms <= 0:
        return "0s" if ms == 0 else f"-{format_duration(-ms)}"
    parts = []
    for unit in ("d", "h", "m", "s", "ms"):
        count, ms = divmod(ms, _UNITS_MS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


def parse_size(value: str | int, field: str) -> int:
    """Bytes, or a number with a unit such as `64KiB`, `1MiB`, `2GB`."""
    if isinstance(value, int):
        return value
    utf8(value, field)
    m = _fullmatch(_SIZE, value) if isinstance(value, str) else None
    unit = m.group(2).lower() if m else None
    if not m or unit not in _SIZE_UNITS:
        raise ValidationFailed(
            f"{field}: {value!r} is not a size (use bytes or e.g. 64KiB, 1MiB)",
            field=field,
            value=value,
        )
    size = float(m.group(1)) * _SIZE_UNITS[unit]
    if not size <= _MAX_SIZE:  # also inf ("9" * 400)
        raise ValidationFailed(
            f"{field}: {value!r} is larger than the largest size acomm accepts ({_MAX_SIZE} bytes)",
            field=field,
            value=value,
        )
    return int(size)


def parse_time(value: str, field: str, now: int) -> int:
    """A point in time: ISO 8601 (`2026-11-27T18:00:00Z`, `...+01:00`; without an offset,
    UTC), epoch milliseconds, or relative to `now`: a sign and a duration (`-1h`, `+30m`,
    `-1h30m`, `-PT1H`; a bare number is seconds)."""
    utf8(value, field)
    v = value.strip()
    if v[:1] in "+-" and len(v) > 1 and isinstance(_scan(v[1:], "s"), int):
        delta = parse_duration(v[1:], field)
        return checked_time(now + delta if v[0] == "+" else now - delta, field, value)
    if v.isascii() and v.isdigit():  # [0-9]+
        return checked_time(int(v), field, value)
    bad = ValidationFailed(
        f"{field}: {value!r} is not a time: use {TIME_FORMS}", field=field, value=value
    )
    if not v.isascii():  # fromisoformat takes "２０２６-..." too: ISO 8601 is ASCII
        raise bad
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise bad from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    # exact integer arithmetic; 9999-12-31T23:59:59-01:00 is after the year 9999 in UTC
    return checked_time((dt - _EPOCH) // _MS, field, value)
