"""The one time source, and the parsing of durations, sizes and points in time.

Everything reads time through `now_ms()`, which calls `time.time()` so that both freezegun (in
process) and libfaketime (for subprocesses) control it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from acomm_cli.errors import ValidationFailed
from acomm_cli.model import utf8

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    import re

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
_SIZE = r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*"


def _fullmatch(pattern: str, value: str) -> re.Match[str] | None:
    import re

    return re.fullmatch(pattern, value, re.ASCII)


def now_ms() -> int:
    """Milliseconds since the Unix epoch, UTC."""
    return int(time.time() * 1000)


def iso(ms: int | None) -> str | None:
    """ISO 8601 with milliseconds and `Z`, or None."""
    if ms is None:
        return None
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def parse_duration(value: str | int, field: str) -> int:
    """`500ms`, `30s`, `5m`, `2h`, `7d` (a bare number is seconds) -> milliseconds."""
    if isinstance(value, int):
        return value * 1000
    utf8(value, field)
    m = _fullmatch(_DURATION, value) if isinstance(value, str) else None
    if not m:
        raise ValidationFailed(
            f"{field}: {value!r} is not a duration (use e.g. 500ms, 30s, 5m, 2h, 7d)",
            field=field,
            value=value,
        )
    return int(float(m.group(1)) * _UNITS_MS[m.group(2) or "s"])


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
    return int(float(m.group(1)) * _SIZE_UNITS[unit])


def parse_time(value: str, field: str, now: int) -> int:
    """An ISO 8601 time, epoch milliseconds, or a relative offset such as `-1h` / `+30s`."""
    utf8(value, field)
    v = value.strip()
    if v[:1] in "+-" and len(v) > 1 and _fullmatch(_DURATION, v[1:]):
        delta = parse_duration(v[1:], field)
        return now + delta if v[0] == "+" else now - delta
    if v.isascii() and v.isdigit():  # [0-9]+
        return int(v)
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
    return int(dt.timestamp() * 1000)
