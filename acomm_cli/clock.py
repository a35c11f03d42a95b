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

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
# re.ASCII: `\d` would also take "１" or "٣", and `\s` a non-breaking space; fullmatch: `$`
# would accept a trailing newline. `re` is imported on first use, not by `acomm send`;
# its own cache keeps the compiled patterns.
_DURATION = r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*"
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


def _checked_duration(ms: float, field: str, value: object) -> int:
    # also NaN and inf ("9" * 400 is an inf float); a negative one (an integer from an API)
    # is its caller's to refuse by name, but never one that overflows SQLite
    if not -MAX_DURATION_MS <= ms <= MAX_DURATION_MS:
        raise ValidationFailed(
            f"{field}: {value!r} is longer than the longest duration acomm accepts "
            f"(365000d, {MAX_DURATION_MS} ms)",
            field=field,
            value=value,
        )
    return int(ms)


def parse_duration(value: str | int, field: str) -> int:
    """`500ms`, `30s`, `5m`, `2h`, `7d` (a bare number is seconds) -> milliseconds."""
    if isinstance(value, int):
        return _checked_duration(value * 1000, field, value)
    utf8(value, field)
    m = _fullmatch(_DURATION, value) if isinstance(value, str) else None
    if not m:
        raise ValidationFailed(
            f"{field}: {value!r} is not a duration (use e.g. 500ms, 30s, 5m, 2h, 7d)",
            field=field,
            value=value,
        )
    return _checked_duration(float(m.group(1)) * _UNITS_MS[m.group(2) or "s"], field, value)


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
    """An ISO 8601 time, epoch milliseconds, or a relative offset such as `-1h` / `+30s`."""
    utf8(value, field)
    v = value.strip()
    if v[:1] in "+-" and len(v) > 1 and _fullmatch(_DURATION, v[1:]):
        delta = parse_duration(v[1:], field)
        return checked_time(now + delta if v[0] == "+" else now - delta, field, value)
    if v.isascii() and v.isdigit():  # [0-9]+
        return checked_time(int(v), field, value)
    if not v.isascii():  # fromisoformat takes "２０２６-..." too: ISO 8601 is ASCII
        raise ValidationFailed(
            f"{field}: {value!r} is not a time (use ISO 8601 or a relative offset such as -1h)",
            field=field,
            value=value,
        )
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationFailed(
            f"{field}: {value!r} is not a time (use ISO 8601 or a relative offset such as -1h)",
            field=field,
            value=value,
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    # exact integer arithmetic; 9999-12-31T23:59:59-01:00 is after the year 9999 in UTC
    return checked_time((dt - _EPOCH) // _MS, field, value)
