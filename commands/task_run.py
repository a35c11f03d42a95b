"""What the `acomm task` subcommands do, without typer: `commands/task.py` declares them
(options, help) and runs these; the fast path (`acomm_cli.cli.main`) runs them directly."""

from __future__ import annotations

from acomm_cli import clock
from acomm_cli.cli import lazy
from acomm_cli.cli.invocation import Invocation, bad_parameter, identity
from acomm_cli.output import render_tasks

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from acomm_cli.engine import tasks
else:
    tasks = lazy.module("acomm_cli.engine.tasks")


def create(
    inv: Invocation,
    body: str | None = None,
    to: str | None = None,
    capability: str | None = None,
    eta_required: bool = False,
    as_: str | None = None,
) -> None:
    agent = identity(as_)
    if not to and not capability:
        bad_parameter(inv, "say who owns the task with --to AGENT (or --capability ID)", "--to")
    content = inv.read_body(body)
    with inv.store(write=True, create=True) as conn:
        task = tasks.create(
            conn,
            agent,
            to,
            content,
            clock.now_ms(),
            capability=capability,
            eta_required=eta_required,
            limits=inv.limits(),
        )
    render_tasks.task_created(inv.output(), task)


def accept(
    inv: Invocation,
    task_id: str,
    eta: str | None = None,
    plan: str | None = None,
    as_: str | None = None,
) -> None:
    agent = identity(as_)
    with inv.store(write=True) as conn:
        task = tasks.accept(
            conn, task_id, agent, clock.now_ms(), eta=eta, plan=plan, limits=inv.limits()
        )
    render_tasks.task(inv.output(), task)


def update(
    inv: Invocation,
    task_id: str,
    progress: int | None = None,
    note: str | None = None,
    as_: str | None = None,
) -> None:
    agent = identity(as_)
    with inv.store(write=True) as conn:
        task = tasks.update(
            conn, task_id, agent, clock.now_ms(), progress=progress, note=note, limits=inv.limits()
        )
    render_tasks.task(inv.output(), task)


def complete(
    inv: Invocation,
    task_id: str,
    body: str | None = None,
    as_: str | None = None,
) -> None:
    agent = identity(as_)
    content = inv.read_body(body) if body == "-" else body
    with inv.store(write=True) as conn:
        task = tasks.complete(
            conn, task_id, agent, clock.now_ms(), content=content, limits=inv.limits()
        )
    render_tasks.task(inv.output(), task)


def fail(
    inv: Invocation,
    task_id: str,
    reason: str | None = None,
    as_: str | None = None,
) -> None:
    agent = identity(as_)
    if reason is None:
        bad_parameter(inv, "say why with --reason TEXT", "--reason")
    with inv.store(write=True) as conn:
        task = tasks.fail(conn, task_id, agent, clock.now_ms(), reason=reason, limits=inv.limits())
    render_tasks.task(inv.output(), task)


def list_(
    inv: Invocation,
    as_: str | None = None,
    state: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        found, total = tasks.list_tasks(
            conn, clock.now_ms(), agent=as_, state=state, limit=limit, offset=offset
        )
    render_tasks.tasks(inv.output(), found, total, offset)


def show(
    inv: Invocation,
    task_id: str,
) -> None:
    with inv.store(write=False, read_fallback=True) as conn:
        task = tasks.show(conn, task_id, clock.now_ms())
    render_tasks.task(inv.output(), task)
