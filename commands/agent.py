"""`acomm agent ...`: the agent directory (register, list, show, update, retire) and, on a
federation node, which node owns an agent (own, disown, where)."""

from __future__ import annotations

from typing import Annotated

import typer

from acomm_cli.cli import params
from acomm_cli.cli.commands import agent_run
from acomm_cli.cli.invocation import Invocation
from acomm_cli.cli.params import listing, runs
from acomm_cli.output import columns

app = typer.Typer(
    help="The agent directory, and which node owns an agent (federation).\n\n"
    "register, list, show, update, retire: who each name is; own, disown, where: which node "
    "owns it.\n\nExample: acomm agent register bob --kind human --display-name Bob",
    no_args_is_help=True,
    add_completion=False,
)

KIND = params.choice(("agent", "human", "service"), "KIND")
ACCEPT = params.choice(("anyone", "team", "contacts", "nobody"), "RULE")
Name = Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent's name.")]
Kind = Annotated[
    str | None,
    typer.Option(
        click_type=KIND, help="agent (a program), human (a person; never dispatched) or service."
    ),
]
DisplayName = Annotated[
    str | None, typer.Option(metavar="TEXT", help="How people call it (1-128 characters).")
]
Description = Annotated[
    str | None, typer.Option(metavar="TEXT", help="What it does (up to 4096 characters).")
]
Team = Annotated[str | None, typer.Option(metavar="TEAM", help="Its team (A-Z a-z 0-9 _ -).")]


@app.command()
@runs(agent_run.register)
def register(
    inv: Invocation,
    names: Annotated[
        list[str],
        typer.Argument(click_type=params.AGENT, metavar="NAME...", help="The agents' names."),
    ],
    kind: Kind = None,
    display_name: DisplayName = None,
    description: Description = None,
    team: Team = None,
    update: Annotated[
        bool, typer.Option("--update", help="A registered name: set what is given instead.")
    ] = False,
    issue_token: Annotated[
        bool,
        typer.Option("--issue-token", help="Also issue each agent's secret, printed this once."),
    ] = False,
) -> None:
    """Register each NAME in the directory (kind agent unless --kind says otherwise).

    On a strict store (identity.directory; every store `acomm init` makes) only registered
    names may act or be sent to. A name registered already is refused (exit 5, duplicate)
    unless --update; several names are registered all or none. Prints each name; with
    --json the entry with `changed` (false: --update changed an existing one), or
    {agents: [...]} for several names.

    With identity.auth token this needs an admin's secret. --issue-token prints each
    agent's secret once (the store keeps only its hash; see `agent token`).

    Example: acomm agent register alice --kind human --display-name "Alice" --team core
    """


@app.command("list")
@listing(columns.AGENTS)
@runs(agent_run.list_)
def list_(
    inv: Invocation,
    kind: Annotated[str | None, typer.Option(click_type=KIND, help="Only this kind.")] = None,
    active: Annotated[
        str | None,
        typer.Option(
            click_type=params.DURATION,
            help="Only those seen within DURATION. " + params.DURATION_HELP,
        ),
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Retired agents too.")] = False,
) -> None:
    """List the registered agents, by name (retired ones only with --all).

    Prints {agents: [{name, kind, display_name, description, team, accept, admin, state,
    registered_at, updated_at, last_seen_at, retired_at}]} with --json.

    Example: acomm agent list --kind human --active 5m
    """


@app.command()
@runs(agent_run.show)
def show(inv: Invocation, name: Name) -> None:
    """Show one agent: its kind, team, channels, unread count and last seen.

    Also its contact rule, when it was registered and (on a federation node) the node that
    owns it. A name not registered: exit 4, with the closest registered names.

    Example: acomm agent show bob --json
    """


@app.command()
@runs(agent_run.update)
def update(
    inv: Invocation,
    name: Name,
    kind: Kind = None,
    display_name: DisplayName = None,
    description: Description = None,
    team: Team = None,
    accept: Annotated[
        str | None,
        typer.Option(
            click_type=ACCEPT,
            help="Whose direct messages and tasks reach it: anyone, team, contacts, nobody.",
        ),
    ] = None,
    admin: Annotated[
        bool | None,
        typer.Option("--admin/--no-admin", help="Grant or take away the admin role."),
    ] = None,
) -> None:
    """Change a registered agent: what is given is set, the rest kept.

    "" clears a display name, description or team. With identity.auth token this needs
    an admin's secret.

    Example: acomm agent update bob --team core --accept contacts
    """


@app.command()
@runs(agent_run.retire)
def retire(inv: Invocation, name: Name) -> None:
    """Retire NAME: it receives nothing new, and its history stays.

    A direct message to it is refused (exit 5); group and broadcast messages skip it;
    `agent list --all` still shows it. Retiring twice is a no-op ({..., changed: false}
    with --json). With identity.auth token this needs an admin's secret.

    Example: acomm agent retire old-bot
    """


Agent = Annotated[str, typer.Argument(click_type=params.AGENT, help="The agent id.")]


@app.command()
@runs(agent_run.own)
def own(
    inv: Invocation,
    agent: Agent,
    fallback: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NODE",
            help="A node that takes the agent's messages while this one is "
            "offline (repeatable, in order).",
        ),
    ] = None,
) -> None:
    """This node owns AGENT: other nodes route its messages here.

    Writes this node's copy of the room and queues the change for the gateway. An
    agent another node owns: refused (exit 5, naming it) until that node disowns it or
    has been silent past federation.takeover_grace (default 10m).
    Prints {agent, owner_node, fallback_nodes, online, route}.

    Example: acomm agent own bob --fallback node-b --json
    """


@app.command()
@runs(agent_run.disown)
def disown(inv: Invocation, agent: Agent) -> None:
    """This node gives AGENT up (only its owner may).

    Example: acomm agent disown bob --json
    """


@app.command()
@runs(agent_run.where)
def where(inv: Invocation, agent: Agent) -> None:
    """Where a message to AGENT would go now.

    Prints {agent, owner_node, fallback_nodes, online, route}; route is local, owner,
    fallback, no_owner or owner_offline.

    Example: acomm agent where bob --json
    """


@app.callback()
def agent_group() -> None:
    """The agent directory, and which node owns an agent (federation)."""


# ---------------------------------------------------------------- credentials (identity.auth)


@app.command()
@runs(agent_run.token)
def token(
    inv: Invocation,
    agent: Agent,
    rotate: Annotated[
        bool, typer.Option("--rotate", help="Revoke its secrets and issue a new one.")
    ] = False,
    revoke: Annotated[
        bool, typer.Option("--revoke", help="Revoke its secrets (its dispatch runs' too).")
    ] = False,
) -> None:
    """Issue AGENT's secret, printed this once: the store keeps only its SHA-256.

    With identity.auth token, acting as AGENT needs the secret in $ACOMM_AGENT_TOKEN (or
    --token-file FILE); this command needs an admin's. An agent that has a secret already
    is refused (exit 5): --rotate replaces it, --revoke withdraws it.
    Prints the secret (with --json {agent, token, revoked}); --revoke prints {agent,
    revoked, changed}.

    Example: export ACOMM_AGENT_TOKEN=$(acomm agent token bob --rotate)
    """


# ---------------------------------------------------------------- contact rules


@app.command()
@params.listing(columns.CONTACTS)
@runs(agent_run.contacts)
def contacts(
    inv: Invocation,
    agent: Agent,
    action: Annotated[
        str | None,
        typer.Argument(
            click_type=params.choice(("add", "remove"), "ACTION"),
            help="add or remove OTHER; without it, list AGENT's contacts.",
        ),
    ] = None,
    other: Annotated[
        str | None,
        typer.Argument(click_type=params.AGENT, help="The contact to add or remove."),
    ] = None,
) -> None:
    """List, add or remove the agents whose direct messages AGENT accepts.

    The list takes effect while AGENT's rule is `accept: contacts` (agent update AGENT
    --accept contacts); then a direct message or `task create` from anyone else exits 5,
    forbidden. Adding a contact listed already, or removing one that is not, changes
    nothing: exit 0, "changed": false. AGENT must be registered (exit 4).

    Example: acomm agent contacts bob add alice --json
    """
