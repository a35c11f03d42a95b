"""The notification event a message carries: its fields checked, completed from the directory
and the body (target_kind, content_preview), and read back. A send imports this module only
when it is given an event (a plain send's start-up time)."""

from __future__ import annotations

import sqlite3

from acomm_cli import clock, model
from acomm_cli.errors import ValidationFailed
from acomm_cli.model import ACTION_HINTS, COMMENT_EVENTS, EVENT_TYPES, Event
from acomm_cli.store import events as sql

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import replace
    from typing import Any
else:
    from acomm_cli.lite.records import replace

# The request's keys (SendRequest.event, a batch line's `event` object, the MCP and gateway
# send arguments): the spec's names; target_kind and content_preview are acomm's to compute.
FIELDS = (
    "event_type",
    "event_id",
    "occurred_at",
    "actor",
    "target",
    "thread_id",
    "comment_id",
    "parent_comment_id",
    "depth",
    "language",
    "action_hint",
)
DEPTHS = (1, 2, 3)
MAX_ID = 128  # thread, comment and event ids
FUTURE_SKEW_MS = 86_400_000  # occurred_at may be this far ahead of acomm's clock, no further


def event_of(conn: sqlite3.Connection, message_id: int) -> Event | None:
    """The event message `message_id` carries, or None (no event, or no such message)."""
    return sql.event_of(conn, message_id)


def events_of(conn: sqlite3.Connection, message_ids: list[int]) -> dict[int, Event]:
    """message id -> event for those of `message_ids` that carry one."""
    return sql.events_of(conn, message_ids) if message_ids else {}


def _refuse(field: str, value: Any, why: str, **extra: Any) -> ValidationFailed:
    return ValidationFailed(f"{field}: {value!r} {why}", field=field, value=value, **extra)


def _closed(field: str, value: Any, allowed: tuple[Any, ...]) -> Any:
    if value not in allowed:
        raise _refuse(
            field,
            value,
            f"is not one of {', '.join(str(a) for a in allowed)}",
            allowed=list(allowed),
        )
    return value


def _ident(field: str, value: Any) -> str | None:
    """A thread, comment or event id: 1-128 printable characters (a JSON number is taken as
    its digits: the spec's examples number their threads and comments)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise _refuse(field, value, "must be a string")
    model.utf8(value, field)
    if not 0 < len(value) <= MAX_ID or not value.isprintable():
        raise _refuse(field, value, f"must be 1-{MAX_ID} printable characters")
    return value


def _language(value: Any) -> str | None:
    """A short language tag in the BCP 47 shape: a 2-3 letter language, then optional
    subtags of 2-8 letters or digits (`zh`, `en`, `en-GB`, `zh-Hans`); stored lowercase."""
    if value is None:
        return None
    ok = isinstance(value, str) and value.isascii() and 2 <= len(value) <= 35
    parts = value.split("-") if ok else []
    ok = ok and 2 <= len(parts[0]) <= 3 and parts[0].isalpha()
    ok = ok and all(2 <= len(p) <= 8 and p.isalnum() for p in parts[1:])
    if not ok:
        raise _refuse(
            "language",
            value,
            "is not a language tag (zh, en, or a BCP 47 tag such as en-GB or zh-Hans)",
        )
    return str(value).lower()


def _depth(value: Any) -> int | None:
    if value is None:
        return None
    n = model.whole_number(value) if isinstance(value, str) else value
    if isinstance(n, bool) or n not in DEPTHS:
        raise _refuse("depth", value, "is not one of 1, 2, 3", allowed=list(DEPTHS))
    return int(n)


def _agent(field: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _refuse(field, value, "must be an agent name")
    return model.agent_id(value, field)


def _occurred(value: Any, now: int) -> int:
    if value is None:
        return now
    if isinstance(value, int) and not isinstance(value, bool):
        at = clock.checked_time(value, "occurred_at")
    elif isinstance(value, str):
        at = clock.parse_time(value, "occurred_at", now)
    else:
        raise _refuse("occurred_at", value, "is not a time (ISO 8601 or epoch milliseconds)")
    if at > now + FUTURE_SKEW_MS:
        raise _refuse(
            "occurred_at",
            value,
            "is more than a day after now: an event cannot have occurred yet",
        )
    return at


def check(raw: dict[str, Any], sender: str, now: int) -> Event:
    """The fields as given (strings from the command line, JSON values from a batch line or a
    tool) checked: closed lists, formats, and the rules between them. Needs no store: a bad
    field is refused before anything is read or written. The actor defaults to the sender
    and occurred_at to now; target_kind and content_preview are filled in by `complete`."""
    if not isinstance(raw, dict):
        raise ValidationFailed("event: must be an object of event fields", field="event")
    unknown = sorted(set(raw) - set(FIELDS))
    if unknown:
        raise ValidationFailed(
            f"event: unknown field {unknown[0]!r} (known: {', '.join(FIELDS)})",
            field=unknown[0],
            allowed=list(FIELDS),
        )
    given = {k: v for k, v in raw.items() if v is not None}
    etype = given.get("event_type")
    if etype is None:
        first = next(iter(given), None)
        if first is None:
            raise ValidationFailed("event: no event field given", field="event")
        raise ValidationFailed(
            f"{first}: an event field needs event_type (one of {', '.join(EVENT_TYPES)})",
            field="event_type",
            allowed=list(EVENT_TYPES),
            given=first,
        )
    _closed("event_type", etype, EVENT_TYPES)
    thread = _ident("thread_id", given.get("thread_id"))
    if etype == "thread.created" and thread is None:
        raise ValidationFailed(
            "thread_id: a thread.created event needs the thread's id (--thread)",
            field="thread_id",
        )
    depth = _depth(given.get("depth"))
    if depth is not None and etype not in COMMENT_EVENTS:
        raise ValidationFailed(
            f"depth: only comment events ({', '.join(COMMENT_EVENTS)}) have a depth, not {etype}",
            field="depth",
            value=depth,
            allowed=list(COMMENT_EVENTS),
        )
    hint = given.get("action_hint")
    if hint is not None:
        _closed("action_hint", hint, ACTION_HINTS)
    return Event(
        event_type=etype,
        event_id=_ident("event_id", given.get("event_id")),
        occurred_at=_occurred(given.get("occurred_at"), now),
        actor=_agent("actor", given.get("actor", sender)),
        target=_agent("target", given.get("target")),
        thread_id=thread,
        comment_id=_ident("comment_id", given.get("comment_id")),
        parent_comment_id=_ident("parent_comment_id", given.get("parent_comment_id")),
        depth=depth,
        language=_language(given.get("language")),
        action_hint=hint,
    )


def complete(
    conn: sqlite3.Connection,
    ev: Event,
    content: str,
    now: int,
    chars: int,
    *,
    arrived: bool = False,
) -> Event:
    """Inside the send's transaction: the actor and target pass the directory's known-name
    rule (as `--to` does: exit 4 on a strict store, registered on an open one), the target's
    kind is recorded as it is now, and the preview is cut from the body. `arrived`: the
    event came from another node, whose names this directory need not hold: nothing is
    refused or registered, and a target it does not hold counts as an agent (the
    directory's default kind)."""
    from acomm_cli.engine import directory
    from acomm_cli.store import agents

    kind = None
    if ev.actor is not None and not arrived:
        directory.known(conn, ev.actor, "actor", now)
    if ev.target is not None:
        if not arrived:
            directory.known(conn, ev.target, "target", now)
        row = agents.get(conn, ev.target)
        kind = row[1] if row else ("agent" if arrived else None)
    return replace(ev, target_kind=kind, content_preview=preview(content, chars))


def given(ev: Event) -> dict[str, Any]:
    """The event as a send gives it (the request's keys, times in epoch ms, no nulls): what a
    federation envelope carries to the node that stores the other copy, which checks it
    again and computes target_kind and content_preview itself."""
    return {name: getattr(ev, name) for name in FIELDS if getattr(ev, name) is not None}


# ---------------------------------------------------------------- preview

_ZWJ = "\u200d"


def _extends(ch: str) -> bool:
    """A character that belongs to the grapheme before it: a combining mark, a joiner, a
    variation selector, an emoji skin-tone modifier or tag, a Hangul vowel or final jamo."""
    import unicodedata

    o = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or ch == _ZWJ
        or 0xFE00 <= o <= 0xFE0F
        or 0xE0100 <= o <= 0xE01EF
        or 0x1F3FB <= o <= 0x1F3FF
        or 0xE0020 <= o <= 0xE007F
        or 0x1160 <= o <= 0x11FF
        or 0xD7B0 <= o <= 0xD7FF
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def preview(content: str, chars: int) -> str:
    """The body's first `chars` characters (code points), cut back to a grapheme boundary:
    never before a combining mark or other extender, never just after a zero-width joiner
    (an emoji sequence), never inside a flag's pair of regional indicators or a CR LF. A
    simple rule, not all of Unicode's (UAX #29): it may cut a little earlier than needed,
    never inside a cluster it knows. A body no longer than `chars` is its own preview."""
    if len(content) <= chars:
        return content
    cut = chars
    while cut > 0:
        after, before = content[cut], content[cut - 1]
        if _extends(after) or before == _ZWJ or (before == "\r" and after == "\n"):
            cut -= 1
            continue
        if _regional(after) and _regional(before):
            run = 0  # regional indicators pair up from the start of their run
            while cut - run > 0 and _regional(content[cut - run - 1]):
                run += 1
            if run % 2:
                cut -= 1
                continue
        break
    return content[:cut]


# ---------------------------------------------------------------- documents


def doc(ev: Event) -> dict[str, Any]:
    """The `event` object of a message document: the spec's field names, times in ISO 8601."""
    return {
        "event_id": ev.event_id,
        "event_type": ev.event_type,
        "occurred_at": clock.iso(ev.occurred_at),
        "actor": ev.actor,
        "target": ev.target,
        "target_kind": ev.target_kind,
        "thread_id": ev.thread_id,
        "comment_id": ev.comment_id,
        "parent_comment_id": ev.parent_comment_id,
        "depth": ev.depth,
        "language": ev.language,
        "action_hint": ev.action_hint,
        "content_preview": ev.content_preview,
    }
