"""The capability catalog as tasks read it: which agent executes a capability (`owner_of`,
`route`), its default ETA, and whether a result meets its contract (`check_output`). This
store's catalog first, then on a node the room's copy. Below the tasks that ask it and the
publishing that writes it (capabilities.py)."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from acomm_cli import clock
from acomm_cli.engine.taskdata import Task
from acomm_cli.errors import NoCapability, OutputMismatch, ValidationFailed
from acomm_cli.store import capabilities as sql
from acomm_cli.store import federation as fed_sql

CATALOG = "capabilities.catalog"
INDEX = "capabilities.index"
VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}")
INSTALL_STATUSES = ("installed", "failed")


@dataclass(frozen=True)
class Capability:
    id: str
    owner: str
    delegation_ref: str
    delegation_version: str
    executor_ref: str
    executor_version: str
    schema: str
    schema_sha256: str
    eta_ms: int
    state: str
    published_at: int
    unpublished_at: int | None

    @property
    def delegation_skill(self) -> str:
        return f"{self.delegation_ref}@{self.delegation_version}"

    @property
    def executor_skill(self) -> str:
        return f"{self.executor_ref}@{self.executor_version}"


def cap_of(row: tuple[Any, ...]) -> Capability:
    return Capability(*row)


def find(conn: sqlite3.Connection, cap_id: str) -> Capability | None:
    row = sql.capability_row(conn, cap_id)
    return None if row is None else cap_of(row)


def owner_of(conn: sqlite3.Connection, cap_id: str) -> str | None:
    """The owner agent of a published capability (this store's catalog, then on a node the
    room's copy), or None: the one routing question, for local and cross-node tasks."""
    cap = find(conn, cap_id)
    if cap is not None:
        return cap.owner if cap.state == "published" else None
    entry = room_entry(conn, cap_id)
    owner = entry.get("ownerAgentId")
    return owner if isinstance(owner, str) else None


def room_entry(conn: sqlite3.Connection, cap_id: str) -> dict[str, Any]:
    if fed_sql.node_id(conn) is None:
        return {}
    raw = fed_sql.room_get(conn, CATALOG, cap_id)
    value = json.loads(raw) if raw else {}
    return value if isinstance(value, dict) else {}


def route(conn: sqlite3.Connection, cap_id: str, to: str | None) -> tuple[str, int | None]:
    """The owner a task for `cap_id` goes to, and the capability's default ETA (from the
    room's catalog entry for a capability published on another node). Raises
    NoCapability (exit 5, a routing miss) for an unknown or unpublished capability, or a
    `--to` that is not its owner."""
    cap = find(conn, cap_id)
    eta: int | None
    if cap is not None and cap.state == "published":
        owner, eta = cap.owner, cap.eta_ms
    elif cap is not None:
        raise NoCapability(
            f"capability: {cap_id!r} was unpublished; no agent takes it",
            field="capability",
            value=cap_id,
            reason="unpublished",
        )
    else:
        found = owner_of(conn, cap_id)
        if found is None:
            raise NoCapability(
                f"capability: {cap_id!r} is not published here or in the room",
                field="capability",
                value=cap_id,
                reason="unknown",
            )
        eta_ms = room_entry(conn, cap_id).get("etaMs")
        owner = found
        eta = eta_ms if isinstance(eta_ms, int) and eta_ms > 0 else None
    if to is not None and to != owner:
        raise NoCapability(
            f"to: capability {cap_id!r} is executed by {owner!r}, not {to!r} "
            "(omit --to to route it)",
            field="to",
            value=to,
            owner=owner,
            reason="not_owner",
        )
    return owner, eta


def check_output(conn: sqlite3.Connection, task: Task, content: str | None) -> None:
    """A task's result against its contract: an install status for a skill_distribution
    task (ValidationFailed), the capability's JSON Schema for a capability task published
    here (OutputMismatch, which the caller turns into a review incident)."""
    if task.capability is None:
        return
    if task.task_type == "skill_distribution":
        install_status(content)
        return
    cap = find(conn, task.capability)
    if cap is None:
        return  # known from the room only: its owner's node holds the schema
    import jsonschema

    try:
        value = json.loads(content or "")
    except ValueError:
        raise OutputMismatch(
            f"body: the result of task {task.id} is not JSON; capability "
            f"{cap.id!r} requires JSON matching its schema",
            field="body",
            capability=cap.id,
        ) from None
    schema = json.loads(cap.schema)
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(schema)(schema).iter_errors(value)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise OutputMismatch(
            f"body: the result of task {task.id} does not match capability "
            f"{cap.id!r}'s schema at {where}: {error.message}",
            field="body",
            capability=cap.id,
            path=where,
        )


def install_status(content: str | None) -> dict[str, Any]:
    """The answer to a skill_distribution task: {"status": "installed"|"failed",
    "version": "1.2" (required when installed), "at": ISO 8601 time}."""
    example = '{"status":"installed","version":"1.2","at":"2025-01-01T00:00:00Z"}'
    try:
        value = json.loads(content or "")
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ValidationFailed(
            f"body: a skill distribution is answered with a JSON object such as {example}",
            field="body",
        )
    status, version, at = value.get("status"), value.get("version"), value.get("at")
    if status not in INSTALL_STATUSES:
        raise ValidationFailed(
            f"status: {status!r} is not one of installed, failed", field="status", value=status
        )
    if status == "installed" and (not isinstance(version, str) or not VERSION.fullmatch(version)):
        raise ValidationFailed(
            f"version: {version!r} is not a version (installed needs one)",
            field="version",
            value=version,
        )
    if not isinstance(at, str):
        raise ValidationFailed(f"at: {at!r} is not an ISO 8601 time", field="at", value=at)
    clock.parse_time(at, "at", 0)
    return value
