"""The rich views people read on a terminal: the --follow stream and the panels of `show` and
`thread`, with delivery states colour-coded.

Part of the rendering layer: only `render_messages.py` imports it, and only once it knows
stdout is a terminal, so neither rich nor this module costs anything to scripts. It builds
renderables; `render_messages.py` prints them (split off to keep the renderers small).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from acomm_cli.clock import iso
from acomm_cli.engine.engagement import Engagement
from acomm_cli.model import Delivery, Message

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

STATE_STYLE = {
    "queued": "magenta",
    "waiting": "blue",
    "unread": "yellow",
    "read": "cyan",
    "acked": "green",
    "dead": "bold red",
}
STATUS_STYLE = {
    "sent": "yellow",
    "delivered": "cyan",
    "acknowledged": "green",
    "dead_letter": "bold red",
}
PRIORITY_STYLE = {
    "low": "dim",
    "normal": "",
    "high": "yellow",
    "urgent": "bold yellow",
    "critical": "bold red",
}


def _priority(m: Message) -> str:
    return m.priority.name.lower()


def _state(d: Delivery) -> Text:
    text = Text(d.state.value, style=STATE_STYLE.get(d.state.value, ""))
    if d.ack_status:
        text.append(
            f" ({d.ack_status})",
            style="green"
            if d.ack_status == "completed"
            else "red"
            if d.ack_status == "failed"
            else "",
        )
    return text


def _header(m: Message, correlation: bool = True) -> Text:
    """`#42  2026-01-02T12:00:01.123Z  team  alice -> bob, carol  command  high` in one line."""
    t = Text()
    t.append(f"#{m.id}", style="bold")
    t.append(f"  {iso(m.created_at)}", style="dim")
    t.append(f"  {m.channel}", style="cyan")
    t.append(f"  {m.sender}", style="green")
    if m.delivery is None and m.deliveries:
        t.append(" -> " + ", ".join(d.recipient for d in m.deliveries), style="green")
    t.append(f"  {m.type.value}", style="magenta")
    if _priority(m) != "normal":
        t.append(f"  {_priority(m)}", style=PRIORITY_STYLE[_priority(m)])
    if m.topic:
        t.append(f"  {m.topic}", style="blue")
    if m.correlation_id and correlation:
        t.append(f"  corr={m.correlation_id}", style="dim")
    return t


def follow_item(m: Message) -> Group:
    """One message of a --follow stream: a header line, then the content indented."""
    head = _header(m)
    if m.delivery is not None:
        head.append("  ")
        head.append_text(_state(m.delivery))
    else:
        head.append(f"  {m.status}", style=STATUS_STYLE.get(m.status, ""))
    return Group(head, _indented(m.content))


def _indented(content: str) -> Text:
    return Text("\n".join("  " + line for line in content.rstrip("\n").split("\n")))


def _body(m: Message) -> Any:
    """The content as its format reads: markdown rendered (a terminal only gets here), else
    the text as it is."""
    if m.rich is not None and m.rich.format == "markdown":
        from rich.markdown import Markdown
        from rich.padding import Padding

        return Padding(Markdown(m.content), (0, 0, 0, 2))
    return _indented(m.content)


def _deliveries(m: Message) -> Table:
    """Every recipient's delivery; a time column only when some delivery has that time."""
    times = [
        (h, attr)
        for h, attr in (
            ("delivered", "delivered_at"),
            ("read", "read_at"),
            ("acked", "acked_at"),
            ("next timer", "next_timer_at"),
        )
        if any(getattr(d, attr) for d in m.deliveries)
    ]
    table = Table(
        show_edge=False,
        header_style="bold",
        box=None,
        pad_edge=False,
        caption="times after the message was created" if times else None,
        caption_justify="left",
        caption_style="dim",
    )
    for h in ("recipient", "state", "retries", *(h for h, _ in times)):
        table.add_column(h, overflow="fold")
    for d in m.deliveries:
        table.add_row(
            d.recipient,
            _state(d),
            str(d.retry_count),
            *(_after(getattr(d, attr), m.created_at) for _, attr in times),
        )
    return table


def _after(t: int | None, base: int) -> str:
    """`+350ms`, `+1.5s`, `+30s`, `+2m05s`, `+3h10m`: short enough for a narrow terminal."""
    if t is None:
        return ""
    ms = t - base
    sign, ms = ("-", -ms) if ms < 0 else ("+", ms)
    if ms < 1000:
        return f"{sign}{ms}ms"
    if ms < 10_000:
        return f"{sign}{ms / 1000:.1f}s"
    s = ms // 1000
    if s < 60:
        return f"{sign}{s}s"
    if s < 3600:
        return f"{sign}{s // 60}m{s % 60:02d}s"
    return f"{sign}{s // 3600}h{s % 3600 // 60:02d}m"


def _fields(m: Message) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    rows: list[tuple[str, Any]] = [
        ("channel", Text(f"{m.channel} (#{m.channel_id})", style="cyan")),
        ("from", Text(m.sender, style="green")),
        ("type", Text(m.type.value, style="magenta")),
        ("priority", Text(_priority(m), style=PRIORITY_STYLE[_priority(m)])),
        ("status", Text(m.status, style=STATUS_STYLE.get(m.status, ""))),
        ("created", iso(m.created_at)),
    ]
    if m.deliver_at and m.deliver_at != m.created_at:
        rows.append(("deliver at", iso(m.deliver_at)))
    for label, value in (
        ("topic", m.topic),
        ("correlation", m.correlation_id),
        ("dedupe key", m.dedupe_key),
        ("group key", m.group_key),
    ):
        if value:
            rows.append((label, value))
    ev = m.event
    if ev is not None:  # the notification event it carries (docs/EVENTS.md)
        who = " -> ".join(x for x in (ev.actor, ev.target) if x)
        rows.append(("event", Text(ev.event_type, style="magenta")))
        for label, value in (
            ("event id", ev.event_id),
            ("actor -> target", who + (f" ({ev.target_kind})" if ev.target_kind else "")),
            ("thread", ev.thread_id),
            ("comment", ev.comment_id),
            ("parent comment", ev.parent_comment_id),
            ("depth", None if ev.depth is None else str(ev.depth)),
            ("language", ev.language),
            ("action hint", ev.action_hint),
        ):
            if value:
                rows.append((label, value))
    for k, v in sorted(m.metadata.items()):
        rows.append((f"meta {k}", str(v)))
    r = m.rich
    if r is not None:
        for label, value in (
            ("subject", r.subject),
            ("format", r.format),
            ("direction", r.direction),
        ):
            if value:
                rows.append((label, value))
        for a in r.attachments:
            rows.append(("file", f"{a.name}  {a.size} bytes  {a.content_type or ''}".rstrip()))
    for label, value in rows:
        grid.add_row(label, value if isinstance(value, Text) else Text(str(value)))
    return grid


def _engagement(m: Message, seen: Sequence[Engagement]) -> Table:
    """How far each recipient got: routed, notified (how, when), engaged (how, when)."""
    table = Table(show_edge=False, header_style="bold", box=None, pad_edge=False)
    for h in ("recipient", "reached", "notified", "engaged"):
        table.add_column(h, overflow="fold")
    for e in seen:
        table.add_row(
            e.recipient,
            e.state,
            f"{e.notified_by} {_after(e.notified_at, m.created_at)}" if e.notified_by else "",
            f"{e.engaged_by} {_after(e.engaged_at, m.created_at)}" if e.engaged_by else "",
        )
    return table


def message_panel(m: Message, engagement: Sequence[Engagement] = ()) -> Panel:
    """`acomm show` on a terminal: the message's fields, its content, every recipient and,
    when given, how far each got."""
    parts: list[Any] = [_fields(m), Text(""), Text("content", style="bold"), _body(m)]
    if m.deliveries:
        parts += [Text(""), _deliveries(m)]
    else:
        parts += [Text(""), Text("no deliveries", style="dim")]
    if engagement:
        parts += [Text(""), _engagement(m, engagement)]
    return Panel(
        Group(*parts),
        title=f"message {m.id}",
        title_align="left",
        border_style=STATUS_STYLE.get(m.status, ""),
    )


def thread_panels(correlation_id: str, msgs: Sequence[Message]) -> Group:
    """`acomm thread` on a terminal: one panel per message, in order, with who has it how."""
    panels: list[Any] = [Text(f"thread {correlation_id}", style="bold")]
    for m in msgs:
        states = Text()
        for i, d in enumerate(m.deliveries):
            if i:
                states.append("  ")
            states.append(f"{d.recipient}: ")
            states.append_text(_state(d))
        parts: list[Any] = [_header(m, correlation=False), _body(m)]
        if m.deliveries:
            parts.append(states)
        panels.append(Panel(Group(*parts), border_style=STATUS_STYLE.get(m.status, "")))
    return Group(*panels)
