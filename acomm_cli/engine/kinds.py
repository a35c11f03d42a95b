"""What an agent's kind (agent, human, service: the directory's `agents.kind`) changes in
delivery: a human is never dispatched. Its messages wait in the inbox for a person to read
(the mailbox bridge still mirrors them); a command configured to run for a human is a
configuration error, because it would answer in that person's name."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from acomm_cli.errors import ValidationFailed
from acomm_cli.store import presence as sql

HUMAN = "human"
NEVER_DISPATCHED = (HUMAN,)


def undispatchable(conn: sqlite3.Connection, names: Iterable[str]) -> dict[str, str]:
    """Of `names`, those whose kind dispatch never runs a command for: name -> kind."""
    return {n: k for n, k in sql.kinds(conn, names).items() if k in NEVER_DISPATCHED}


def check_dispatchable(conn: sqlite3.Connection, names: Iterable[str]) -> None:
    """Refuse (exit 3) a `run:` configured for a human, naming the agent and its kind."""
    refused = undispatchable(conn, names)
    if not refused:
        return
    name = min(refused)
    kind = refused[name]
    raise ValidationFailed(
        f"agents.{name}.run: {name!r} is registered as kind {kind}, and a {kind} is never "
        f"dispatched (its messages wait in its inbox); remove `run:` for {name} from "
        "config.yaml",
        field=f"agents.{name}.run",
        value=name,
        kind=kind,
    )
