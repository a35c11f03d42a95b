"""What `agent contacts` prints: an agent's contact list, and adding or removing one."""

from __future__ import annotations

from acomm_cli.clock import iso
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, change, listing, note

TYPE_CHECKING = False
if TYPE_CHECKING:
    from acomm_cli.engine.contacts import Contacts


def contacts(out: Output, found: Contacts) -> None:
    """The list; on stderr, a note when the agent's rule is not `contacts` (then the list
    admits no one yet)."""
    if out.json:
        _dump(
            {
                "agent": found.agent,
                "accept": found.accept,
                "team": found.team,
                "contacts": [{"contact": c, "added_at": iso(at)} for c, at in found.contacts],
            }
        )
        return
    if found.accept != "contacts":
        note(
            f"note: {found.agent}'s rule is accept: {found.accept}; its contacts take effect "
            f"under accept: contacts (acomm agent update {found.agent} --accept contacts)"
        )
    listing(
        out,
        f"contacts of {found.agent}",
        cols.CONTACTS,
        [(c, iso(at)) for c, at in found.contacts],
        ({"agent": found.agent, "contact": c, "added_at": iso(at)} for c, at in found.contacts),
    )


def changed(out: Output, agent: str, action: str, other: str, did: bool) -> None:
    """`agent contacts NAME add|remove OTHER`: changed true/false (a no-op says so on
    stderr only)."""
    if action == "add":
        text, already = (
            f"{other} added to {agent}'s contacts",
            f"{other} is already one of {agent}'s contacts",
        )
    else:
        text, already = (
            f"{other} removed from {agent}'s contacts",
            f"{other} is not one of {agent}'s contacts; nothing to remove",
        )
    change(
        out,
        {"agent": agent, "action": action, "contact": other},
        did,
        already,
        text if did else None,
    )
