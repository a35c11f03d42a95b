"""Capabilities: what an agent can be asked to do, under a contract; publishing them.

A capability names its owner (the agent that executes it), a delegation skill (what requesters
install to ask for it) and an executor skill (what the owner runs), each `REF@VERSION`, an
output contract (a JSON Schema) and a default ETA. The owner must HOST the executor skill: it
was registered for that agent with `capability host AGENT REF@VER` (the `agent_skills` table;
docs/DECISIONS.md says why a registration and not the config file). Publishing writes the
local catalog and, on a node, the room's `capabilities.catalog` / `capabilities.index` maps
(metadata only: the schema stays here, the room carries its sha256), and sends every other
active agent a `skill_distribution` task to install the delegation skill. Unpublishing keeps
the row (incidents name its versions) but removes routing eligibility.

What tasks ask of the catalog (who owns a capability, its ETA, its output contract) lives
below in catalog.py, so tasks need not import this module: this one fans tasks out.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from typing import Any

from acomm_cli import clock, model
from acomm_cli.engine import tasks
from acomm_cli.engine.catalog import CATALOG, INDEX, VERSION, Capability, cap_of, find, room_entry
from acomm_cli.errors import (
    CommError,
    InvalidState,
    NotFound,
    ValidationFailed,
)
from acomm_cli.model import Limits
from acomm_cli.store import capabilities as sql
from acomm_cli.store import federation as fed_sql
from acomm_cli.store import write

_REF = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,199}")


def skill(value: str, name: str) -> tuple[str, str]:
    """`REF@VERSION` (`skills/review-request@1.2`): the last `@` splits them."""
    model.utf8(value, name)
    ref, at, version = value.rpartition("@")
    if not at or not _REF.fullmatch(ref) or not VERSION.fullmatch(version):
        raise ValidationFailed(
            f"{name}: {value!r} is not REF@VERSION (a reference of A-Z a-z 0-9 . _ / : -, "
            "then @ and a version of A-Z a-z 0-9 . + _ -)",
            field=name,
            value=value,
        )
    return ref, version


def parse_schema(text: str) -> tuple[dict[str, Any] | bool, str]:
    """The contract: a JSON document that is a valid JSON Schema (checked against its
    metaschema by `jsonschema`, imported here only); returns it and its canonical text."""
    model.utf8(text, "schema")
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise ValidationFailed(f"schema: not JSON ({exc})", field="schema") from None
    if not isinstance(doc, dict | bool):
        raise ValidationFailed("schema: a JSON Schema is an object (or true/false)", field="schema")
    import jsonschema

    try:
        jsonschema.validators.validator_for(doc).check_schema(doc)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(top)"
        raise ValidationFailed(
            f"schema: not a valid JSON Schema at {where}: {exc.message}", field="schema"
        ) from None
    return doc, json.dumps(doc, separators=(",", ":"), sort_keys=True)


# ---------------------------------------------------------------- reading


def load(conn: sqlite3.Connection, cap_id: str) -> Capability:
    model.capability_id(cap_id)
    row = sql.capability_row(conn, cap_id)
    if row is None:
        raise NotFound(f"capability {cap_id!r} does not exist", field="capability", value=cap_id)
    return cap_of(row)


def list_caps(conn: sqlite3.Connection, *, state: str | None = None) -> list[dict[str, Any]]:
    """`capability list`: this store's catalog, then (on a node) the room's entries of
    capabilities published elsewhere."""
    if state is not None and state not in ("published", "unpublished"):
        raise ValidationFailed(
            f"state: {state!r} is not published or unpublished", field="state", value=state
        )
    out = [doc(c) for c in map(cap_of, sql.capability_rows(conn, state))]
    mine = {d["id"] for d in out}
    if fed_sql.node_id(conn) is not None and state in (None, "published"):
        for key, raw in fed_sql.room_map(conn, CATALOG):
            if key not in mine:
                out.append(_room_doc(key, json.loads(raw)))
    return out


def show(conn: sqlite3.Connection, cap_id: str) -> dict[str, Any]:
    """`capability show`: the contract, and who installed which delegation-skill version
    (from the answers to the distribution tasks; the latest per agent)."""
    cap = find(conn, cap_id)
    if cap is None:
        remote = room_entry(conn, model.capability_id(cap_id))
        if not remote:
            raise NotFound(
                f"capability {cap_id!r} does not exist", field="capability", value=cap_id
            )
        return _room_doc(cap_id, remote)
    out = doc(cap)
    out["schema"] = json.loads(cap.schema)
    installs: dict[str, dict[str, Any]] = {}
    for task_id, agent, state, created, note, _ in sql.distribution_rows(conn, cap_id):
        meta = json.loads(sql.task_requested_version(conn, task_id) or "{}")
        entry: dict[str, Any] = {
            "agent": agent,
            "task_id": task_id,
            "task_state": state,
            "requested_version": meta.get("skill_version"),
            "asked_at": clock.iso(created),
            "status": None,
            "version": None,
            "at": None,
        }
        if state == "completed" and note:
            answer = json.loads(note)
            entry.update(status=answer["status"], version=answer.get("version"), at=answer["at"])
        installs[agent] = entry
    out["installs"] = [installs[a] for a in sorted(installs)]
    out["routing_misses"] = sql.miss_count(conn, cap_id)
    return out


def doc(cap: Capability) -> dict[str, Any]:
    return {
        "id": cap.id,
        "owner": cap.owner,
        "state": cap.state,
        "delegation_skill": {"ref": cap.delegation_ref, "version": cap.delegation_version},
        "executor_skill": {"ref": cap.executor_ref, "version": cap.executor_version},
        "schema_sha256": cap.schema_sha256,
        "eta_ms": cap.eta_ms,
        "published_at": clock.iso(cap.published_at),
        "unpublished_at": clock.iso(cap.unpublished_at),
        "node": None,
    }


def _room_doc(cap_id: str, entry: dict[str, Any]) -> dict[str, Any]:
    d, e = entry.get("delegationSkill") or {}, entry.get("executorSkill") or {}
    return {
        "id": cap_id,
        "owner": entry.get("ownerAgentId"),
        "state": "published",
        "delegation_skill": {"ref": d.get("ref"), "version": d.get("version")},
        "executor_skill": {"ref": e.get("ref"), "version": e.get("version")},
        "schema_sha256": entry.get("schemaSha256"),
        "eta_ms": entry.get("etaMs"),
        "published_at": entry.get("publishedAt"),
        "unpublished_at": None,
        "node": entry.get("ownerNodeId"),
    }


# ---------------------------------------------------------------- hosting skills


def host(
    conn: sqlite3.Connection, agent: str, value: str, now: int, *, remove: bool = False
) -> dict[str, Any]:
    """`capability host AGENT REF@VER`: AGENT hosts that executor skill (what publish
    checks); `--remove` takes it back (refused while a published capability needs it)."""
    model.agent_id(agent, "agent")
    ref, version = skill(value, "skill")
    with write(conn):
        if remove:
            for cap_id in sql.published_of(conn, agent):
                cap = load(conn, cap_id)
                if cap.executor_ref == ref:
                    raise InvalidState(
                        f"skill: {agent!r} executes capability {cap_id!r} with "
                        f"{ref}; unpublish it first",
                        field="skill",
                        value=value,
                    )
            changed = sql.unhost_skill(conn, agent, ref)
        else:
            changed = sql.hosted_version(conn, agent, ref) != version
            sql.host_skill(conn, agent, ref, version, now)
        skills = [{"ref": r, "version": v} for _, r, v, _ in sql.skills_of(conn, agent)]
    return {"agent": agent, "skills": skills, "changed": changed}


# ---------------------------------------------------------------- publish, unpublish


def publish(
    conn: sqlite3.Connection,
    cap_id: str,
    now: int,
    *,
    owner: str,
    delegation: str,
    executor: str,
    schema_text: str,
    eta: str,
    limits: Limits | None = None,
) -> dict[str, Any]:
    """`capability publish`: validate the contract, write the catalog (and the room's on a
    node), and fan out one `skill_distribution` task per active agent but the owner. The
    same contract published again changes nothing (`changed: false`, no second fan-out)."""
    model.capability_id(cap_id)
    model.agent_id(owner, "owner")
    d_ref, d_ver = skill(delegation, "delegation-skill")
    e_ref, e_ver = skill(executor, "executor-skill")
    eta_ms = clock.parse_duration(eta, "eta")
    if eta_ms <= 0:
        raise ValidationFailed(f"eta: {eta!r} must be longer than zero", field="eta", value=eta)
    _, canonical = parse_schema(schema_text)
    sha = hashlib.sha256(canonical.encode()).hexdigest()
    with write(conn):
        hosted = sql.hosted_version(conn, owner, e_ref)
        if hosted != e_ver:
            had = f"hosts {e_ref}@{hosted}" if hosted else f"does not host {e_ref}"
            raise InvalidState(
                f"executor-skill: {owner!r} {had}; register it first (acomm capability host "
                f"{owner} {e_ref}@{e_ver})",
                field="executor-skill",
                value=executor,
                owner=owner,
            )
        me = fed_sql.node_id(conn)
        if me is not None:
            raw = fed_sql.room_get(conn, "agents", owner)
            node = json.loads(raw).get("ownerNodeId") if raw else None
            if node not in (None, me):
                raise InvalidState(
                    f"owner: {owner!r} is owned by node {node!r}; publish it there",
                    field="owner",
                    value=owner,
                    owner_node=node,
                )
        old = find(conn, cap_id)
        row = {
            "id": cap_id,
            "owner": owner,
            "delegation_ref": d_ref,
            "delegation_version": d_ver,
            "executor_ref": e_ref,
            "executor_version": e_ver,
            "schema": canonical,
            "schema_sha256": sha,
            "eta_ms": eta_ms,
            "state": "published",
            "published_at": now,
            "unpublished_at": None,
        }
        if (
            old is not None
            and old.state == "published"
            and all(getattr(old, k) == v for k, v in row.items() if k != "published_at")
        ):
            return {**doc(old), "changed": False, "distribution": [], "skipped": []}
        if old is not None and old.owner != owner:
            _room_index(conn, old.owner, now, me)
        sql.put_capability(conn, row)
        cap = load(conn, cap_id)
        if me is not None:
            fed_sql.room_put(
                conn,
                CATALOG,
                cap_id,
                _dump(
                    {
                        "capabilityId": cap_id,
                        "ownerAgentId": owner,
                        "ownerNodeId": me,
                        "delegationSkill": {"ref": d_ref, "version": d_ver},
                        "executorSkill": {"ref": e_ref, "version": e_ver},
                        "schemaSha256": sha,
                        "etaMs": eta_ms,
                        "publishedAt": clock.iso(now),
                    }
                ),
                now,
                queue=True,
            )
            _room_index(conn, owner, now, me)
        sent, skipped = _fan_out(conn, cap, now, limits, me)
    return {**doc(cap), "changed": True, "distribution": sent, "skipped": skipped}


def unpublish(conn: sqlite3.Connection, cap_id: str, now: int) -> dict[str, Any]:
    """`capability unpublish`: no more routing to it (a task for it: exit 5); the row stays
    for the review. Unpublishing an unpublished capability changes nothing."""
    with write(conn):
        cap = load(conn, cap_id)
        if cap.state == "published":
            sql.set_capability_state(conn, cap_id, "unpublished", now)
            me = fed_sql.node_id(conn)
            if me is not None:
                fed_sql.room_put(conn, CATALOG, cap_id, None, now, queue=True)
                _room_index(conn, cap.owner, now, me)
        return {**doc(load(conn, cap_id)), "changed": cap.state == "published"}


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _room_index(conn: sqlite3.Connection, owner: str, now: int, me: str | None) -> None:
    """`capabilities.index.<agent>`: the capabilities the agent executes (none: no entry)."""
    if me is None:
        return
    ids = sql.published_of(conn, owner)
    fed_sql.room_put(
        conn,
        INDEX,
        owner,
        _dump({"capabilities": ids, "ownerNodeId": me}) if ids else None,
        now,
        queue=True,
    )


def _fan_out(
    conn: sqlite3.Connection, cap: Capability, now: int, limits: Limits | None, me: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One `skill_distribution` task from the owner to each active agent but the owner:
    the agents taking part in a channel here and, on a node, the agents the room says other
    nodes own. An agent on another node gets its task as a `task_create` event, as `task
    create --to` would send it. A target a task cannot reach (its node offline:
    owner_offline, with its dead letter) is listed under `skipped` with the reason; the
    others' tasks stand."""
    targets = set(sql.active_agents(conn, model.SYSTEM_CHANNEL, model.SYSTEM_AGENT))
    if me is not None:
        targets |= {k for k, _ in fed_sql.room_map(conn, "agents")}
    targets.discard(cap.owner)
    targets.discard(model.SYSTEM_AGENT)
    body = _dump(
        {
            "capability": cap.id,
            "delegation_skill": {"ref": cap.delegation_ref, "version": cap.delegation_version},
            "respond": {
                "status": "installed|failed",
                "version": cap.delegation_version,
                "at": "ISO 8601 time",
            },
        }
    )
    sent, skipped = [], []
    for agent in sorted(targets):
        try:
            task = tasks.create(
                conn,
                cap.owner,
                agent,
                body,
                now,
                capability=cap.id,
                task_type="skill_distribution",
                limits=limits,
                extra_meta={
                    "skill_ref": cap.delegation_ref,
                    "skill_version": cap.delegation_version,
                },
            )
        except CommError as exc:
            skipped.append({"agent": agent, "code": exc.code, "reason": exc.message})
            continue
        sent.append({"agent": agent, "task_id": task.id})
    return sent, skipped
