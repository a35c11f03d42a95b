"""Contact rules: whose direct messages and tasks reach an agent (its `accept` rule: anyone,
team, contacts or nobody) and its contact list (`acomm agent contacts`). docs/AGENTS.md.

The rule is the recipient's and is checked where a message is planned (sending.plan_message,
which every send path calls) on a direct channel only: channels with more members are
governed by membership. Always admitted, whatever the rule: acomm itself (dead-letter
notices, a task's system messages), and an answer (a response or an acknowledgement) to a
query or command the recipient sent, which the correlation check has already tied to it: the
recipient asked for it. A name the directory does not hold has no rule and is admitted. On a
federation node the rule of a local agent is checked again when a peer's message arrives
(`inbound_refusal`): the receiving node enforces its own agents' rules.

Imported by a send only when its channel is direct (a group send's start-up stays as it was).
"""

from __future__ import annotations

import sqlite3

from acomm_cli import model
from acomm_cli.errors import Forbidden, NotFound, ValidationFailed
from acomm_cli.store import contacts as sql
from acomm_cli.store import write

TYPE_CHECKING = False  # typing's, without importing typing (a send's start-up time)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from dataclasses import dataclass
    from typing import Any
else:  # without importing dataclasses (a send's start-up time)
    from acomm_cli.lite.records import dataclass

ACCEPT_RULES = ("anyone", "team", "contacts", "nobody")  # m020's CHECK, in this order
_ANYONE = "anyone"
_FED_PREFIX = "_fed:"  # remote.FED_PREFIX, without importing the federation rules
_ANSWER_TO = {  # an answer's type -> the type of what it answers
    model.MessageType.RESPONSE.value: model.MessageType.QUERY.value,
    model.MessageType.ACKNOWLEDGMENT.value: model.MessageType.COMMAND.value,
}


def refusal(conn: sqlite3.Connection, sender: str, recipient: str) -> tuple[str, str] | None:
    """(rule, why) when `recipient`'s rule does not admit `sender`'s direct messages and
    tasks; None when it does. One primary-key read for a recipient that accepts anyone (or
    is not in the directory); more only for the other rules."""
    if sender == model.SYSTEM_AGENT or sender == recipient:
        return None
    row = sql.rule_of(conn, recipient)
    if row is None or row[0] == _ANYONE:
        return None
    rule, team = row
    what = f"{recipient!r} accepts direct messages and tasks"
    if rule == "contacts":
        if sql.is_contact(conn, recipient, sender):
            return None
        return rule, f"{what} from its contacts only; {sender!r} is not one of them"
    if rule == "team":
        if team is None:
            return rule, f"{what} from its team only, and has no team"
        if sql.team_of(conn, sender) == team:
            return None
        return rule, f"{what} from its team {team!r} only; {sender!r} is not in it"
    return rule, f"{recipient!r} accepts no direct messages or tasks"


def check_direct(
    conn: sqlite3.Connection, channel: str, sender: str, recipients: Sequence[str]
) -> None:
    """Refuse (exit 5, forbidden) a message on direct channel `channel` that a recipient's
    rule does not admit. The caller has already let answers and acomm's own messages
    through. On a `_fed:` channel the recipient is another node's agent: that node checks
    its rule when the message arrives (`inbound_refusal`)."""
    if channel.startswith(_FED_PREFIX):
        return
    for recipient in recipients:
        found = refusal(conn, sender, recipient)
        if found is not None:
            rule, why = found
            raise Forbidden(
                f"{why} (accept: {rule})",
                field="to",
                value=recipient,
                accept=rule,
                sender=sender,
            )


def inbound_refusal(conn: sqlite3.Connection, env: dict[str, Any]) -> str | None:
    """Why a `message` or `task_create` event read from a peer may not reach its local
    recipient (None: it may). An answer to a query or command the recipient sent passes,
    as it does on one node."""
    sender, recipient = env.get("sourceAgentId"), env.get("toAgentId")
    if not isinstance(sender, str) or not isinstance(recipient, str):
        return None  # the envelope check refuses a malformed one
    payload = env.get("payload")
    mtype = payload.get("type") if isinstance(payload, dict) else None
    asked = _ANSWER_TO.get(mtype) if isinstance(mtype, str) else None
    corr = env.get("corrId")
    if asked is not None and isinstance(corr, str):
        from acomm_cli.store.sending import first_of_type

        origin = first_of_type(conn, corr, asked)
        if origin is not None and origin[2] == recipient:
            return None
    found = refusal(conn, sender, recipient)
    return None if found is None else f"{found[1]} (accept: {found[0]})"


# ---------------------------------------------------------------- the contact list


@dataclass(frozen=True)
class Contacts:
    """An agent's rule and the contacts it admits under `accept: contacts`."""

    agent: str
    accept: str
    team: str | None
    contacts: tuple[tuple[str, int], ...]  # (contact, added_at), by name


def _registered(conn: sqlite3.Connection, agent: str) -> tuple[str, str | None]:
    model.agent_id(agent)
    row = sql.rule_of(conn, agent)
    if row is None:
        raise NotFound(
            f"agent {agent!r} is not registered (acomm agent register {agent})",
            field="agent",
            value=agent,
        )
    return row


def contacts(conn: sqlite3.Connection, agent: str) -> Contacts:
    """`agent contacts NAME`: its rule and its contacts."""
    accept, team = _registered(conn, agent)
    return Contacts(agent, accept, team, tuple(sql.contacts_of(conn, agent)))


def change(conn: sqlite3.Connection, agent: str, action: str, other: str, now: int) -> bool:
    """`agent contacts NAME add|remove OTHER`; False when it changed nothing (adding a
    contact listed already, removing one that is not). The list is kept whatever the rule:
    it takes effect while the rule is `contacts`."""
    if action not in ("add", "remove"):
        raise ValidationFailed(
            f"action: {action!r} is not one of add, remove", field="action", value=action
        )
    model.agent_id(other, "contact")
    if other == agent:
        raise ValidationFailed(
            f"contact: {agent!r} is always admitted to itself; name another agent",
            field="contact",
            value=other,
        )
    with write(conn):
        _registered(conn, agent)
        if action == "add":
            return sql.add(conn, agent, other, now)
        return sql.remove(conn, agent, other)
