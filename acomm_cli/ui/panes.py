"""The dashboard's panes: tables that keep their cursor across refreshes, the message
detail, the peers and the charts. Each pane is filled from `data.Dashboard` / `data.Detail`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Label, Sparkline, Static
from textual.widgets.data_table import CellDoesNotExist

from acomm_cli.clock import iso_ms
from acomm_cli.model import Message
from acomm_cli.ui.data import ChannelRow, Dashboard, Detail, Node, is_stale


def hhmmss(ms: int | None) -> str:
    """A time of day, UTC as everywhere in acomm (and stable in snapshots)."""
    if ms is None:
        return "-"
    return iso_ms(ms)[11:19]  # a stored time past the year 9999 shows as its bound


def age(seconds: int) -> str:
    """`42s`, `3m05s`, `2h10m`, `3d4h`: short enough for a table cell."""
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    if seconds < 86400:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 86400}d{seconds % 86400 // 3600}h"


def one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


class Table_(DataTable[Any]):
    """A row-cursor table refilled in place: the row under the cursor stays selected."""

    def __init__(self, columns: Sequence[str], **kwargs: Any) -> None:
        super().__init__(cursor_type="row", zebra_stripes=False, **kwargs)
        self._columns = columns
        self._shown_rows: list[Any] = []

    def on_mount(self) -> None:
        self.add_columns(*self._columns)

    def selected_key(self) -> str | None:
        if self.row_count == 0:
            return None
        try:
            key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key
        except CellDoesNotExist:  # no row under the cursor
            return None
        return None if key.value is None else str(key.value)

    def refill(self, rows: list[tuple[str, tuple[Any, ...]]]) -> None:
        """Replace the rows, unless they are the same as shown (a rebuilt table costs a
        layout: the slow refresh, most of the time, changes nothing)."""
        shown = [
            (k, tuple((str(getattr(c, "plain", c)), str(getattr(c, "style", ""))) for c in cells))
            for k, cells in rows
        ]
        if shown == self._shown_rows:
            return
        self._shown_rows = shown
        keep = self.selected_key()
        self.clear()
        for key, cells in rows:
            self.add_row(*cells, key=key)
        if keep is not None and any(k == keep for k, _ in rows):
            self.move_cursor(row=self.get_row_index(keep), animate=False)


class AgentsPane(Table_):
    def __init__(self) -> None:
        super().__init__(
            ("agent", "total", "unread", "awaiting ack", "oldest unread", "dead", "last seen"),
            id="agents",
        )
        self.border_title = "Agents"

    def show(self, d: Dashboard, stale_after_ms: int) -> None:
        rows = []
        stale = 0
        for a in d.stats.agents:
            bad = is_stale(a, stale_after_ms)
            stale += bad
            style = "bold red" if bad else ""
            cells = (
                a.agent,
                a.total,
                a.unread,
                a.awaiting_ack,
                age(a.oldest_unread_age_sec) if a.unread else "-",
                a.dead_letters,
                hhmmss(a.last_seen_at),  # when it last acted through acomm
            )
            rows.append(
                (
                    a.agent,
                    tuple(
                        Text(str(c), style=style, justify="left" if i == 0 else "right")
                        for i, c in enumerate(cells)
                    ),
                )
            )
        self.refill(rows)
        self.border_subtitle = f"{stale} stale" if stale else ""


class DirectoryPane(Table_):
    """The agent directory: every registered name with its kind, team, how long ago it last
    acted through acomm, and when it was retired (retired ones dimmed: they receive nothing
    new)."""

    def __init__(self) -> None:
        super().__init__(("agent", "kind", "team", "last seen", "retired"), id="directory")
        self.border_title = "Directory"

    def show(self, d: Dashboard) -> None:
        rows = []
        retired = 0
        for a in d.directory:
            gone = a.retired_at is not None
            retired += gone
            style = "dim" if gone else ("cyan" if a.kind == "human" else "")
            seen = (
                "-"
                if a.last_seen_at is None
                else age(max(0, d.now - a.last_seen_at) // 1000) + " ago"
            )
            retired_on = "-" if a.retired_at is None else iso_ms(a.retired_at)[:10]
            cells = (a.name, a.kind, a.team or "-", seen, retired_on)
            rows.append((a.name, tuple(Text(c, style=style) for c in cells)))
        self.refill(rows)
        self.border_subtitle = (
            f"{len(rows)} registered" + (f", {retired} retired" if retired else "") if rows else ""
        )


class ChannelsPane(Table_):
    def __init__(self) -> None:
        super().__init__(("channel", "type", "state", "pending", "queued", "dead"), id="channels")
        self.border_title = "Channels"

    def show(self, chans: list[ChannelRow]) -> None:
        rows = []
        for c in chans:
            style = "yellow" if c.state != "active" else ""
            rows.append(
                (
                    c.key,
                    (
                        Text(c.key, style=style),
                        c.type,
                        Text(c.state, style=style),
                        Text(str(c.pending), justify="right"),
                        Text(str(c.queued), justify="right"),
                        Text(str(c.dead_letters), justify="right"),
                    ),
                )
            )
        self.refill(rows)


class FeedPane(Table_):
    """Newest first; a message with a dead letter is red, one acknowledged by all green.

    While the cursor is on the newest row the feed follows (as `tail -f`): a new message
    takes the cursor, and the view stays at the top. Elsewhere the cursor stays on its
    message and the title counts the messages that came since ("3 new")."""

    def __init__(self) -> None:
        super().__init__(
            ("id", "time", "channel", "from", "content", "type", "status", "topic"), id="feed"
        )
        self.border_title = "Feed"
        self.seen = 0  # the newest message id shown while the cursor was on the newest row
        self._described = ""
        self._ids: list[int] = []

    @property
    def new(self) -> int:
        """Messages newer than any seen at the top (0 while following)."""
        return sum(1 for i in self._ids if i > self.seen)

    def following(self) -> bool:
        return self.row_count == 0 or self.cursor_row <= 0

    def show(self, msgs: list[Message], described: str) -> None:
        follow = self.following()
        if described != self._described:  # another filter: another feed, followed anew
            follow, self._described = True, described
        self._ids = [m.id for m in msgs]
        self._fill(msgs)
        if follow and self.row_count:
            self.move_cursor(row=0, animate=False)
            self.scroll_to(y=0, animate=False, immediate=True)
        self._caught_up()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table is self:  # the user moved: back on the newest row, caught up
            self._caught_up()

    def _caught_up(self) -> None:
        if self.following() and self._ids:
            self.seen = max(self.seen, self._ids[0])
        n = self.new
        self.border_subtitle = f"{self._described} · {len(self._ids)} shown" + (
            f" · {n} new ↑" if n else ""
        )

    def _fill(self, msgs: list[Message]) -> None:
        rows = []
        for m in msgs:
            status = m.status
            style = {"dead_letter": "red", "acknowledged": "green"}.get(status, "")
            cells = (
                str(m.id),
                hhmmss(m.created_at),
                m.channel,
                m.sender,
                one_line(m.content, 32),
                m.type.value,
                status,
                one_line(m.topic or "", 30),
            )
            rows.append(
                (
                    str(m.id),
                    tuple(
                        Text(c, style=style, justify="right" if i == 0 else "left")
                        for i, c in enumerate(cells)
                    ),
                )
            )
        self.refill(rows)


class DetailPane(Static):
    """The selected message: every recipient's delivery state, its dead letters, its thread."""

    def __init__(self) -> None:
        super().__init__("Select a message in the feed.", id="detail")
        self._shown: Any = "Select a message in the feed."
        self._key: Any = None
        self.border_title = "Message"

    def show(self, d: Detail | None) -> None:
        if d is None:
            self._show("Select a message in the feed.", None)
            return
        m = d.message
        head = Text.assemble(
            (f"#{m.id} ", "bold"),
            f"{m.type.value} on ",
            (m.channel, "bold"),
            f" from {m.sender} at {hhmmss(m.created_at)} · {m.status}",
        )
        extra = [
            f"topic {m.topic}" if m.topic else "",
            f"corr {m.correlation_id}" if m.correlation_id else "",
            f"priority {m.priority.name.lower()}",
        ]
        r = m.rich  # subject, direction and files; a markdown body rendered
        if r is not None:
            extra += [
                f"subject {r.subject}" if r.subject else "",
                r.direction or "",
                *(f"file {a.name} ({a.size} B)" for a in r.attachments),
            ]
        body: Any = Text(m.content)
        if r is not None and r.format == "markdown":
            from rich.markdown import Markdown

            body = Markdown(m.content)
        deliveries = Table(box=None, pad_edge=False, expand=True)
        for col in ("recipient", "state", "retries", "delivered", "read", "ack"):
            deliveries.add_column(col)
        for dv in m.deliveries:
            deliveries.add_row(
                dv.recipient,
                Text(dv.state.value, style="bold red" if dv.state.value == "dead" else ""),
                str(dv.retry_count),
                hhmmss(dv.delivered_at),
                hhmmss(dv.read_at),
                dv.ack_status or "-",
            )
        parts: list[Any] = [
            head,
            Text(" · ".join(e for e in extra if e), style="dim"),
            body,
            Text(""),
            deliveries,
        ]
        if d.engagement:  # how far each recipient got, with the time of each step
            reached = Table(box=None, pad_edge=False, expand=True)
            for col in ("recipient", "reached", "routed", "notified", "engaged"):
                reached.add_column(col)
            for e in d.engagement:
                reached.add_row(
                    e.recipient,
                    Text(e.state, style="bold" if e.state == "engaged" else ""),
                    hhmmss(e.routed_at),
                    f"{hhmmss(e.notified_at)} {e.notified_by}" if e.notified_by else "-",
                    f"{hhmmss(e.engaged_at)} {e.engaged_by}" if e.engaged_by else "-",
                )
            parts += [Text(""), reached]
        if d.dead_letters:
            parts.append(
                Text(
                    "dead letters: "
                    + "; ".join(
                        f"{x.recipient} {x.reason} after {x.retry_count} retries"
                        for x in d.dead_letters
                    ),
                    style="red",
                )
            )
        if len(d.thread) > 1:
            parts.append(Text(f"thread {m.correlation_id}:", style="bold"))
            for t in d.thread:
                mark = "▶ " if t.id == m.id else "  "
                parts.append(
                    Text(
                        f"{mark}#{t.id} {hhmmss(t.created_at)} {t.sender} "
                        f"{t.type.value}: {one_line(t.content, 50)}"
                    )
                )
        self._show(Group(*parts), d)

    def _show(self, shown: Any, key: Any) -> None:
        """Redraw only when the message or what it shows changed."""
        if key == self._key:
            return
        self._key = key
        self._shown = shown
        self.update(shown)

    def plain(self, width: int = 100) -> str:
        """What the pane shows, as text (tests)."""
        import io

        from rich.console import Console

        console = Console(width=width, file=io.StringIO(), record=True)
        console.print(self._shown)
        return console.export_text()


class PeersPane(Table_):
    def __init__(self) -> None:
        super().__init__(("peer", "online", "cursor", "head", "lag", "last seen"), id="peers")
        self.border_title = "Peers"

    def show(self, node: Node | None) -> None:
        self.display = node is not None
        if node is None:
            return
        self.border_title = f"Peers of {node.node_id} · outbox head {node.outbox_head}"
        rows = []
        for p in node.peers:
            online = (
                Text("online", style="green") if p["online"] else Text("offline", style="bold red")
            )
            rows.append(
                (
                    p["node"],
                    (
                        p["node"],
                        online,
                        str(p["cursor"]),
                        "-" if p["head"] is None else str(p["head"]),
                        "-" if p["lag"] is None else str(p["lag"]),
                        (p["last_seen_at"] or "-")[11:19] or "-",
                    ),
                )
            )
        self.refill(rows)


class ChartsPane(Vertical):
    """Messages per minute and the unread backlog over the last hour; dead letters by reason."""

    _shown: Any = None  # the Activity drawn (redrawn only when it changes)

    def compose(self) -> ComposeResult:
        yield Label("messages / min (last hour)", id="traffic-label")
        yield Sparkline([0], summary_function=max, id="traffic")
        yield Label("unread backlog (last hour)", id="backlog-label")
        yield Sparkline([0], summary_function=max, id="backlog")
        yield Static("", id="reasons")

    def on_mount(self) -> None:
        self.border_title = "Activity"

    def show(self, d: Dashboard) -> None:
        a = d.activity
        if a is None or a == self._shown:
            return
        self._shown = a
        self.query_one("#traffic", Sparkline).data = a.messages_per_minute
        self.query_one("#backlog", Sparkline).data = a.unread_backlog
        self.query_one("#traffic-label", Label).update(
            f"messages / min (last hour): {sum(a.messages_per_minute)} in all, "
            f"{a.messages_per_minute[-1]} this minute"
        )
        self.query_one("#backlog-label", Label).update(
            f"unread backlog (last hour): {a.unread_backlog[-1]} now, peak {max(a.unread_backlog)}"
        )
        reasons = a.dead_letters_by_reason
        if not reasons:
            self.query_one("#reasons", Static).update("dead letters: none")
            return
        top = max(reasons.values())
        lines = [Text("dead letters by reason", style="bold")]
        for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            bar = "█" * max(1, round(20 * n / top))
            lines.append(Text.assemble(f"{reason:<22} ", (bar, "red"), f" {n}"))
        self.query_one("#reasons", Static).update(Group(*lines))
