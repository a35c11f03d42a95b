"""The agent directory: who a name is (its kind, team, contact rule, role), registering,
updating and retiring it, and the check every use of a name passes. On a `strict` store a
name nobody registered is refused (exit 4, with the closest registered names); on an `open`
one it is registered then and there, with a note saying so. SQL lives in store/agents.py."""

from __future__ import annotations

import sqlite3

from acomm_cli import model
from acomm_cli.errors import Duplicate, InvalidState, NotFound, ValidationFailed
from acomm_cli.store import agents, write
from acomm_cli.store.connection import StoreConnection

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass

KINDS = ("agent", "human", "service")
ACCEPTS = ("anyone", "team", "contacts", "nobody")
MODES = ("open", "strict")
# acomm itself (the system sender) and a queue's unclaimed recipient are never agents
EXEMPT = frozenset((model.SYSTEM_AGENT, model.QUEUE_RECIPIENT))
MAX_DISPLAY_NAME = 128
MAX_DESCRIPTION = 4096


@dataclass(frozen=True)
class Agent:
    """One directory entry. `channels` (channel, type, role), `unread` and `node` (the node
    that owns it, on a federation node) are filled in by `describe` only."""

    name: str
    kind: str
    display_name: str | None
    description: str | None
    team: str | None
    accept: str
    admin: bool
    registered_at: int
    updated_at: int
    retired_at: int | None
    last_seen_at: int | None
    channels: tuple[tuple[str, str, str], ...] | None = None
    unread: int | None = None
    node: str | None = None


def _agent(row: tuple[Any, ...]) -> Agent:
    (name, kind, display, description, team, accept, admin, reg, upd, retired, seen) = row
    return Agent(
        name, kind, display, description, team, accept, bool(admin), reg, upd, retired, seen
    )


# ---------------------------------------------------------------- values


def _closed(value: str, allowed: tuple[str, ...], field: str) -> str:
    if value not in allowed:
        raise ValidationFailed(
            f"{field}: {value!r} is not one of {', '.join(allowed)}", field=field, value=value
        )
    return value


def valid_kind(value: str) -> str:
    """agent, human or service (exit 3 naming `kind` otherwise)."""
    return _closed(value, KINDS, "kind")


def valid_accept(value: str) -> str:
    """Whose direct messages and tasks reach an agent: anyone, team, contacts, nobody."""
    return _closed(value, ACCEPTS, "accept")


def valid_mode(value: str) -> str:
    return _closed(value, MODES, "identity.directory")


def _text(value: str | None, field: str, most: int) -> str | None:
    if value is None:
        return None
    model.utf8(value, field)
    if not 0 < len(value) <= most or any(ord(c) < 0x20 and c not in "\n\t" for c in value):
        raise ValidationFailed(
            f"{field}: must be 1-{most} characters, without control characters",
            field=field,
            value_length=len(value),
        )
    return value


def _team(value: str | None) -> str | None:
    """A team name follows the channel-name rule (1-128 of A-Z a-z 0-9 _ -)."""
    if value is None:
        return None
    try:
        return model.channel_name(value, allow_reserved=True)
    except ValidationFailed:
        raise ValidationFailed(
            f"team: {value!r} is not a valid team name (1-128 characters of A-Z a-z 0-9 _ -)",
            field="team",
            value=value,
        ) from None


# ---------------------------------------------------------------- strict or open


def mode(conn: sqlite3.Connection) -> str:
    """`open` or `strict`: the configured `identity.directory` (set on the connection by
    whoever opened it), else the store's own default (`acomm init` writes strict; a store
    that predates the directory says open), else strict."""
    configured = getattr(conn, "directory", None)
    if configured:
        return str(configured)
    return agents.directory_default(conn) or "strict"


def set_default(conn: sqlite3.Connection, value: str) -> None:
    """The store's own default, used when `identity.directory` is not configured."""
    valid_mode(value)
    with write(conn):
        agents.set_directory_default(conn, value)


def suggestions(conn: sqlite3.Connection, name: str, n: int = 3) -> list[str]:
    """The registered names closest to `name`, retired ones aside (difflib: only a refusal
    pays for it)."""
    import difflib

    live = [a for a in agents.names(conn) if a != name]
    return difflib.get_close_matches(name, live, n=n, cutoff=0.6)


def _did_you_mean(found: list[str]) -> str:
    if not found:
        return ""
    return "; did you mean " + " or ".join(repr(f) for f in found) + "?"


def _owned_elsewhere(conn: sqlite3.Connection, name: str) -> bool:
    """On a federation node: the room names an owner node for `name` (its messages are
    routed there), so it is known here without a row of its own."""
    from acomm_cli.store import federation as fsql

    if fsql.node_id(conn) is None:
        return False
    return _room_owner(conn, name) is not None


def _room_owner(conn: sqlite3.Connection, name: str) -> str | None:
    import json

    from acomm_cli.store import federation as fsql

    raw = fsql.room_get(conn, "agents", name)
    if raw is None:
        return None
    try:
        owner = json.loads(raw).get("ownerNodeId")
    except (ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None


def note(conn: sqlite3.Connection, text: str) -> None:
    """A note for the command to print on stderr after it commits (the engine prints
    nothing): kept on the connection, which the command line's store reads on close."""
    if isinstance(conn, StoreConnection):
        if conn.notes is None:
            conn.notes = []
        conn.notes.append(text)


def _unknown(
    conn: sqlite3.Connection, name: str, field: str, now: int, register: bool = True
) -> None:
    """The failure path of `known`: a name without a row."""
    if _owned_elsewhere(conn, name):
        return
    model.agent_id(name, field)  # a malformed name is exit 3, whatever the mode
    strict = mode(conn) == "strict"
    if not strict and not register:
        return
    found = suggestions(conn, name)
    if strict:
        raise NotFound(
            f"{field}: no agent {name!r} in the directory{_did_you_mean(found)} "
            f"(`acomm agent register {name}` adds it)",
            field=field,
            value=name,
            suggestions=found,
        )
    if not getattr(conn, "read_only", False):  # a read-only store: the note alone
        agents.insert(conn, name, now)
    note(
        conn,
        f"note: {field}: {name!r} was not in the directory; registered it (kind agent)"
        + _did_you_mean(found),
    )


def known(
    conn: sqlite3.Connection, name: str, field: str, now: int, *, register: bool = True
) -> None:
    """Every use of a name an agent acts as or sends to passes here, inside the command's
    own write transaction: one primary-key lookup when the name is registered. Unknown: exit
    4 on a strict store, registered with a note on an open one (`register=False`: left
    alone there, for a command about to fail anyway)."""
    if name in EXEMPT or agents.lookup(conn, name) is not None:
        return
    _unknown(conn, name, field, now, register)


def direct(
    conn: sqlite3.Connection, sender: str, to: list[str], now: int, *, register_sender: bool = True
) -> None:
    """A direct send: the sender known (field `as`), each recipient known (field `to`) and
    not retired (exit 5, the reason named). One statement when all are registered.
    `register_sender=False`: an open store registers the sender later, once something was
    sent (a send refused for every recipient leaves the store as it was)."""
    found = agents.retired_of(conn, [sender, *to])
    if sender not in found and sender not in EXEMPT:
        _unknown(conn, sender, "as", now, register_sender)
    for name in to:
        if name in EXEMPT:
            continue
        if name not in found:
            _unknown(conn, name, "to", now)
        elif found[name] is not None:
            refuse_retired(name)


def refuse_retired(name: str) -> None:
    """A direct message to a retired agent: exit 5, the reason named."""
    raise InvalidState(
        f"to: agent {name!r} is retired and receives nothing new",
        field="to",
        value=name,
        reason="retired",
    )


def enlist(conn: sqlite3.Connection, name: str, now: int) -> None:
    """The acts that deliberately name an agent (creating a channel as its owner, joining
    one, subscribing) register it, kind agent, if it is not yet."""
    if name not in EXEMPT:
        agents.insert(conn, name, now)


def retired(conn: sqlite3.Connection) -> frozenset[str]:
    """The retired names: group and broadcast sends skip them."""
    return agents.retired_names(conn)


# ---------------------------------------------------------------- the verbs


def _require(conn: sqlite3.Connection, name: str, field: str = "agent") -> Agent:
    row = agents.get(conn, name)
    if row is None:
        found = suggestions(conn, name)
        raise NotFound(
            f"{field}: no agent {name!r} in the directory{_did_you_mean(found)}",
            field=field,
            value=name,
            suggestions=found,
        )
    return _agent(row)


def get(conn: sqlite3.Connection, name: str) -> Agent:
    """One entry (exit 4 with suggestions when `name` is not registered)."""
    model.agent_id(name)
    return _require(conn, name)


def register(
    conn: sqlite3.Connection,
    name: str,
    now: int,
    *,
    kind: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    team: str | None = None,
    update: bool = False,
) -> tuple[Agent, bool]:
    """`agent register`: (the entry, whether it was created; kind `agent` unless given). A
    name registered already is exit 5 `duplicate` unless `update`, which then sets what
    was given."""
    model.agent_id(name)
    if name in EXEMPT:
        raise ValidationFailed(
            f"agent: {name!r} is reserved for acomm itself", field="agent", value=name
        )
    fields = {
        "kind": None if kind is None else valid_kind(kind),
        "display_name": _text(display_name, "display_name", MAX_DISPLAY_NAME),
        "description": _text(description, "description", MAX_DESCRIPTION),
        "team": _team(team),
    }
    with write(conn):
        if agents.insert(
            conn,
            name,
            now,
            kind=fields["kind"] or "agent",
            display_name=fields["display_name"],
            description=fields["description"],
            team=fields["team"],
        ):
            return _require(conn, name), True
        if not update:
            raise Duplicate(
                f"agent {name!r} is registered already (`agent update` changes it, or "
                "register --update)",
                field="agent",
                value=name,
            )
        given = {k: v for k, v in fields.items() if v is not None}
        agents.update(conn, name, now, given)
        return _require(conn, name), False


def register_many(
    conn: sqlite3.Connection, names: list[str], now: int, **options: Any
) -> list[tuple[Agent, bool]]:
    """`agent register A B ...`: each as `register` does, all in one transaction (one
    refused: none registered)."""
    if not names:
        raise ValidationFailed("agent: name at least one agent", field="agent")
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ValidationFailed(f"agent: {name!r} is named twice", field="agent", value=name)
    with write(conn):
        return [register(conn, name, now, **options) for name in names]


def update(
    conn: sqlite3.Connection,
    name: str,
    now: int,
    *,
    kind: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    team: str | None = None,
    accept: str | None = None,
    admin: bool | None = None,
) -> Agent:
    """`agent update`: set what is given (None: unchanged; an empty display name,
    description or team clears it). Exit 4 for a name not registered."""
    model.agent_id(name)
    changes: dict[str, Any] = {}
    if kind is not None:
        changes["kind"] = valid_kind(kind)
    for field, value, most in (
        ("display_name", display_name, MAX_DISPLAY_NAME),
        ("description", description, MAX_DESCRIPTION),
    ):
        if value is not None:
            changes[field] = _text(value, field, most) if value != "" else None
    if team is not None:
        changes["team"] = _team(team) if team != "" else None
    if accept is not None:
        changes["accept"] = valid_accept(accept)
    if admin is not None:
        changes["is_admin"] = int(admin)
    with write(conn):
        _require(conn, name)
        if admin is False:
            _keep_an_admin(conn, name)
        agents.update(conn, name, now, changes)
        return _require(conn, name)


def _keep_an_admin(conn: sqlite3.Connection, name: str) -> None:
    """While the store's identity.auth is `token`, its last admin in service may not step
    down: nobody could run an admin verb again, and `init --admin` (allowed on a store
    without an admin) would make whoever asked next an admin, without any secret."""
    from acomm_cli.store import credentials as csql

    if csql.mode(conn) == "token" and csql.admins(conn) == [name]:
        raise InvalidState(
            f"admin: {name!r} is the store's last admin and identity.auth is token: "
            f"grant the role to another agent first (`acomm agent update OTHER --admin`)",
            field="admin",
            value=name,
        )


def retire(conn: sqlite3.Connection, name: str, now: int) -> tuple[Agent, bool]:
    """`agent retire`: it receives nothing new (direct sends to it are refused, group and
    broadcast sends skip it); its history stays. (entry, whether it changed): retiring
    twice is a no-op."""
    model.agent_id(name)
    with write(conn):
        _require(conn, name)
        _keep_an_admin(conn, name)
        changed = agents.retire(conn, name, now)
        return _require(conn, name), changed


def describe(conn: sqlite3.Connection, name: str) -> Agent:
    """`agent show`: the entry with its channels, unread count and, on a federation node,
    the node that owns it (None on a plain store)."""
    model.agent_id(name)
    a = _require(conn, name)
    from acomm_cli.store import federation as fsql

    node = _room_owner(conn, name) if fsql.node_id(conn) is not None else None
    return Agent(
        **{f: getattr(a, f) for f in _FIELDS},
        channels=tuple((c, t, r) for c, t, r in agents.channels_of(conn, name)),
        unread=agents.unread(conn, name),
        node=node,
    )


_FIELDS = tuple("admin" if c == "is_admin" else c for c in agents.COLUMNS)  # Agent's order


def listing(
    conn: sqlite3.Connection,
    now: int,
    *,
    kind: str | None = None,
    active_ms: int | None = None,
    include_retired: bool = False,
) -> list[Agent]:
    """`agent list`: by name; `kind` only; seen within `active_ms` of `now` only; retired
    ones only with `include_retired`."""
    if kind is not None:
        valid_kind(kind)
    rows = agents.list_agents(
        conn,
        kind=kind,
        active_since=None if active_ms is None else now - active_ms,
        include_retired=include_retired,
    )
    return [_agent(r) for r in rows]
