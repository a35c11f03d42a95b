"""Shared helpers of the capability and incident tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import Cli, snapshot

SCHEMA = {
    "type": "object",
    "required": ["verdict"],
    "properties": {
        "verdict": {"enum": ["ok", "changes"]},
        "findings": {"type": "array", "items": {"type": "string"}},
    },
}
PUBLISH = [
    "--owner",
    "rev",
    "--delegation-skill",
    "skills/review-request@1.2",
    "--executor-skill",
    "skills/review-exec@1.0",
    "--eta",
    "10m",
]


def schema_file(tmp: Path, doc: Any = None, name: str = "review.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(SCHEMA if doc is None else doc))
    return path


def publish(cli: Cli, schema: Path, cap: str = "review", *extra: str) -> dict[str, Any]:
    doc: dict[str, Any] = cli.ok(
        "capability", "publish", cap, *PUBLISH, "--schema", str(schema), *extra, "--json"
    ).json()
    return doc


def published(cli: Cli, tmp: Path, *agents: str) -> dict[str, Any]:
    """`agents` take part in channels (direct messages from alice), rev hosts the executor
    skill, and `review` is published."""
    for a in agents:
        if a != "alice":
            cli.ok("send", "--to", a, "hello", "--as", "alice")
    cli.ok("capability", "host", "rev", "skills/review-exec@1.0")
    return publish(cli, schema_file(tmp))


def refused(
    cli: Cli, store: Path, args: list[str], status: int, code: str, field: str | None = None
) -> dict[str, Any]:
    """The command fails with `status`/`code` naming `field`, and the store is unchanged."""
    before = snapshot(store)
    r = cli(*args, "--json")
    assert r.exit_code == status, (args, r.stdout, r.stderr)
    assert r.error["code"] == code, r.error
    if field is not None:
        assert r.error["field"] == field, r.error
    assert snapshot(store) == before, "a refused command changed the store"
    return r.error
