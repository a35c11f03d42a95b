"""What the `acomm agent` subcommands do, without typer: `commands/agent.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli.invocation import Invocation
from acomm_cli.output import render


def register(
    inv: Invocation,
    names: list[str],
    kind: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    team: str | None = None,
    update: bool = False,
    issue_token: bool = False,
) -> None:
    from acomm_cli.cli.invocation import require_admin
    from acomm_cli.engine import directory
    from acomm_cli.output import render_agents

    secrets: list[dict[str, object]] = []
    with inv.store(write=True, create=True) as conn:  # the first thing a new store needs
        require_admin(inv.settings, conn)
        done = directory.register_many(
            conn,
            names,
            clock.now_ms(),
            kind=kind,
            display_name=display_name,
            description=description,
            team=team,
            update=update,
        )
        if issue_token:
            from acomm_cli.engine import credentials

            for entry, _ in done:
                secrets.append(credentials.token(conn, entry.name, "issue", clock.now_ms()))
    if secrets:
        from acomm_cli.output import render_credentials

        for doc in secrets:  # the secrets are what a script captures: they alone on stdout
            render_credentials.secret(inv.output(), doc)
        return
    render_agents.registered(inv.output(), done)


def list_(
    inv: Invocation,
    kind: str | None = None,
    active: str | None = None,
    all_: bool = False,
) -> None:
    from acomm_cli.engine import directory
    from acomm_cli.output import render_agents

    active_ms = clock.parse_duration(active, "active") if active is not None else None
    with inv.store(write=False) as conn:
        items = directory.listing(
            conn, clock.now_ms(), kind=kind, active_ms=active_ms, include_retired=all_
        )
    render_agents.agents(inv.output(), items)


def show(
    inv: Invocation,
    name: str,
) -> None:
    from acomm_cli.engine import directory
    from acomm_cli.output import render_agents

    with inv.store(write=False) as conn:
        entry = directory.describe(conn, name)
    render_agents.agent(inv.output(), entry)


def update(
    inv: Invocation,
    name: str,
    kind: str | None = None,
    display_name: str | None = None,
    description: str | None = None,
    team: str | None = None,
    accept: str | None = None,
    admin: bool | None = None,
) -> None:
    from acomm_cli.cli.invocation import require_admin
    from acomm_cli.engine import directory
    from acomm_cli.output import render_agents

    with inv.store(write=True) as conn:
        require_admin(inv.settings, conn)
        entry = directory.update(
            conn,
            name,
            clock.now_ms(),
            kind=kind,
            display_name=display_name,
            description=description,
            team=team,
            accept=accept,
            admin=admin,
        )
    render_agents.agent(inv.output(), entry)


def retire(
    inv: Invocation,
    name: str,
) -> None:
    from acomm_cli.cli.invocation import require_admin
    from acomm_cli.engine import directory
    from acomm_cli.output import render_agents

    with inv.store(write=True) as conn:
        require_admin(inv.settings, conn)
        entry, changed = directory.retire(conn, name, clock.now_ms())
    if not changed:
        render.note(f"note: {name!r} was retired already")
    render_agents.agent(inv.output(), entry, changed)


def _offline_after(inv: Invocation) -> int:
    return int(inv.settings.value("federation.offline_after"))


def own(
    inv: Invocation,
    agent: str,
    fallback: list[str] | None = None,
) -> None:
    from acomm_cli.federation import room

    with inv.store(write=True) as conn:
        doc = room.own(
            conn,
            agent,
            fallback or [],
            clock.now_ms(),
            _offline_after(inv),
            int(inv.settings.value("federation.takeover_grace")),
        )
    render.status(inv.output(), doc)


def disown(
    inv: Invocation,
    agent: str,
) -> None:
    from acomm_cli.federation import room

    with inv.store(write=True) as conn:
        doc = room.disown(conn, agent, clock.now_ms(), _offline_after(inv))
    render.status(inv.output(), doc)


def where(
    inv: Invocation,
    agent: str,
) -> None:
    from acomm_cli.federation import room

    with inv.store(write=False) as conn:
        doc = room.where(conn, agent, clock.now_ms(), _offline_after(inv))
    render.status(inv.output(), doc)


def token(
    inv: Invocation,
    agent: str,
    rotate: bool = False,
    revoke: bool = False,
) -> None:
    from acomm_cli.cli.invocation import require_admin
    from acomm_cli.engine import credentials
    from acomm_cli.errors import UsageError
    from acomm_cli.output import render_credentials

    if rotate and revoke:
        raise UsageError("give --rotate or --revoke, not both", field="rotate")
    action = "rotate" if rotate else "revoke" if revoke else "issue"
    with inv.store(write=True) as conn:
        require_admin(inv.settings, conn)
        doc = credentials.token(conn, agent, action, clock.now_ms())
    if revoke:
        render_credentials.revoked(inv.output(), doc)
    else:
        render_credentials.secret(inv.output(), doc)


def contacts(
    inv: Invocation,
    agent: str,
    action: str | None = None,
    other: str | None = None,
) -> None:
    from acomm_cli.engine import contacts as rules
    from acomm_cli.output import render_contacts

    if action is None:
        with inv.store(write=False) as conn:
            found = rules.contacts(conn, agent)
        render_contacts.contacts(inv.output(), found)
        return
    if other is None:
        from acomm_cli.errors import ValidationFailed

        raise ValidationFailed(
            f"contact: name the agent to {action} (acomm agent contacts {agent} {action} OTHER)",
            field="contact",
        )
    with inv.store(write=True) as conn:
        did = rules.change(conn, agent, action, other, clock.now_ms())
    render_contacts.changed(inv.output(), agent, action, other, did)
