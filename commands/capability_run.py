"""What the `acomm capability` subcommands do, without typer: `commands/capability.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, bad_parameter
from acomm_cli.errors import ValidationFailed
from acomm_cli.output import render_caps

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import capabilities
else:
    capabilities = lazy.module("acomm_cli.engine.capabilities")


def host(
    inv: Invocation,
    agent: str,
    skill: str,
    remove: bool = False,
) -> None:
    with inv.store(write=True, create=True) as conn:
        doc = capabilities.host(conn, agent, skill, clock.now_ms(), remove=remove)
    render_caps.skills(inv.output(), doc)


def publish(
    inv: Invocation,
    cap_id: str,
    owner: str | None = None,
    delegation_skill: str | None = None,
    executor_skill: str | None = None,
    schema: str | None = None,
    eta: str = "10m",
) -> None:
    for value, flag in (
        (owner, "--owner"),
        (delegation_skill, "--delegation-skill"),
        (executor_skill, "--executor-skill"),
    ):
        if not value:
            bad_parameter(inv, f"{flag} is required", flag)
    if schema is None:  # "" is a path to click's Path type, which the option had: "."
        bad_parameter(inv, "--schema is required", "--schema")
    assert owner and delegation_skill and executor_skill
    from pathlib import Path

    path = Path(schema)
    try:
        schema_text = path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise ValidationFailed(
            f"schema: cannot read {str(path)!r}: {exc.strerror}",
            field="schema",
            value=str(path),
        ) from None
    with inv.store(write=True, create=True) as conn:
        doc = capabilities.publish(
            conn,
            cap_id,
            clock.now_ms(),
            owner=owner,
            delegation=delegation_skill,
            executor=executor_skill,
            schema_text=schema_text,
            eta=eta,
            limits=inv.limits(),
        )
    render_caps.capability(inv.output(), doc)


def unpublish(
    inv: Invocation,
    cap_id: str,
) -> None:
    with inv.store(write=True) as conn:
        doc = capabilities.unpublish(conn, cap_id, clock.now_ms())
    render_caps.capability(inv.output(), doc)


def list_(
    inv: Invocation,
    state: str | None = None,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        docs = capabilities.list_caps(conn, state=state)
    render_caps.capabilities(inv.output(), docs)


def show(
    inv: Invocation,
    cap_id: str,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        doc = capabilities.show(conn, cap_id)
    render_caps.capability(inv.output(), doc)
