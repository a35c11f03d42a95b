"""`acomm ui`'s Textual application: the panes, the live refresh and the actions.

Live updates poll `PRAGMA data_version` (a shared-memory read, as `messages --follow` does)
every POLL_S seconds on a Textual timer: no thread, no busy loop. Only a change (or the slow
FULL_S tick, which keeps ages and due timers current) rereads the panes; the charts, which scan
the last hour, are reread at most every CHARTS_S seconds."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import DataTable, Footer, Header, Static

from acomm_cli import clock
from acomm_cli.engine.operator_actions import Action, Actions
from acomm_cli.errors import CommError
from acomm_cli.model import Limits
from acomm_cli.ui import data
from acomm_cli.ui.panes import (
    AgentsPane,
    ChannelsPane,
    ChartsPane,
    DetailPane,
    DirectoryPane,
    FeedPane,
    PeersPane,
)
from acomm_cli.ui.screens import ConfirmScreen, FormScreen, HelpScreen

POLL_S = 0.25  # a commit by another process shows within this (plus one reread)
FULL_S = 5.0  # ages and timers that fall due move without any commit
CHARTS_S = 15.0
# below this many columns the side panes and the feed share the screen one at a time (`w`
# switches): beside the 62-column side panes the feed would have no room for the text
NARROW_COLUMNS = 110


@dataclass
class Session:
    """What `commands/ui_run.py` resolved: the open store and the settings the panes need."""

    conn: sqlite3.Connection
    title: str
    agent: str | None = None
    read_only: bool = False
    limits: Limits = field(default_factory=Limits)
    offline_after_ms: int = 30_000
    stale_after_ms: int = 300_000
    now: Callable[[], int] = clock.now_ms
    after_write: Callable[[], str | None] = lambda: None
    live: bool = True  # False: no timer (snapshot tests refresh by hand)


class DashboardApp(App[None]):
    TITLE = "acomm ui"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    #main { height: 1fr; }
    #left { width: 62; }
    #right { width: 1fr; }
    AgentsPane, DirectoryPane, ChannelsPane, PeersPane, FeedPane, DetailPane, ChartsPane {
        border: round $primary-darken-2;
    }
    AgentsPane:focus, DirectoryPane:focus, ChannelsPane:focus, PeersPane:focus,
    FeedPane:focus {
        border: round $accent;
    }
    #agents { height: 1fr; }
    #directory { height: 1fr; }
    #channels { height: 1fr; }
    #peers { height: auto; max-height: 8; }
    ChartsPane { height: auto; }
    Sparkline { height: 2; margin: 0 0 1 0; }
    #feed { height: 3fr; }
    #detail { height: 2fr; overflow-y: auto; padding: 0 1; }
    #status { height: 1; padding: 0 1; background: $boost; }
    #status.error { color: $error; text-style: bold; }
    ModalScreen { align: center middle; }
    #dialog { width: 80; height: auto; border: thick $accent; background: $surface;
              padding: 1 2; }
    #dialog.wide { width: 96; }
    #dialog .title { text-style: bold; margin-bottom: 1; }
    #dialog .note { color: $text-muted; margin-top: 1; }
    #dialog .buttons { height: auto; margin-top: 1; }
    #dialog Button { margin-right: 2; }
    #command { color: $text-muted; }
    #dialog .field { margin-top: 1; color: $text-muted; }
    #dialog Input { background: $boost; }
    """
    BINDINGS = [
        Binding("question_mark", "help", "help"),
        Binding("slash", "filter", "filter"),
        Binding("s", "send", "send"),
        Binding("w", "toggle_side", "panes"),
        Binding("b", "broadcast", "broadcast"),
        Binding("a", "ack", "ack"),
        Binding("r", "replay", "replay"),
        Binding("x", "discard", "discard"),
        Binding("p", "channel('pause')", "pause"),
        Binding("u", "channel('resume')", "resume"),
        Binding("ctrl+r", "reload", "refresh", show=False),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.actions = Actions(
            session.conn,
            limits=session.limits,
            read_only=session.read_only,
            now=session.now,
            after_write=session.after_write,
        )
        self.feed_filter = data.FeedFilter()
        self.dashboard: data.Dashboard | None = None
        self.selected: int | None = None
        self.version = -1
        self.last_full = 0.0
        self.last_charts = float("-inf")
        self.status_text = ""  # the status line's text (tests read it after the app ends)
        self.refreshes = 0  # how many times the panes were reread (tests: no busy loop)
        self.side_shown: bool | None = None  # None: shown when the terminal is wide enough
        self.narrow = False

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield AgentsPane()
                yield DirectoryPane()
                yield ChannelsPane()
                yield PeersPane()
                yield ChartsPane()
            with Vertical(id="right"):
                yield FeedPane()
                yield DetailPane()
        yield Static("", id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        s = self.session
        self.sub_title = (
            s.title
            + (f" · as {s.agent}" if s.agent else "")
            + (" · READ-ONLY" if s.read_only else "")
        )
        self.reload(charts=True)
        self.say(
            "read-only: actions are refused"
            if s.read_only
            else "? for help · every action asks first"
        )
        self.fit()
        self.query_one(FeedPane).focus()
        if s.live:
            self.set_interval(POLL_S, self.poll)

    # ------------------------------------------------------------------ the layout

    def on_resize(self, event: events.Resize) -> None:
        self.fit(event.size.width)  # the app's own size is set after this handler

    def fit(self, width: int | None = None) -> None:
        """Wide: the side panes beside the feed. Narrow: the feed (and the message) alone,
        or the side panes alone at full width after `w`."""
        try:
            main = self.screen_stack[0]
            left, right = main.query_one("#left"), main.query_one("#right")
        except (NoMatches, IndexError):  # starting or shutting down
            return
        narrow = (self.size.width if width is None else width) < NARROW_COLUMNS
        if narrow != self.narrow:  # the terminal crossed the line: its own layout again
            self.narrow, self.side_shown = narrow, None
        side = (not narrow) if self.side_shown is None else self.side_shown
        left.display = side
        left.styles.width = "1fr" if narrow else 62
        right.display = not (narrow and side)
        focused = main.focused
        if focused is not None and any(
            not col.display and (focused is col or col in focused.ancestors)
            for col in (left, right)
        ):
            main.query_one(FeedPane if right.display else AgentsPane).focus()

    def action_toggle_side(self) -> None:
        narrow = self.size.width < NARROW_COLUMNS
        shown = (not narrow) if self.side_shown is None else self.side_shown
        self.side_shown = not shown
        self.fit()
        if narrow:
            self.query_one(AgentsPane if self.side_shown else FeedPane).focus()
        self.say("side panes shown" if self.side_shown else "side panes hidden (w shows them)")

    # ------------------------------------------------------------------ refreshing

    def poll(self) -> None:
        """One timer tick: reread only when another process committed (or FULL_S passed)."""
        v = data.version(self.session.conn)
        t = time.monotonic()
        if v != self.version or t - self.last_full >= FULL_S:
            self.reload(charts=t - self.last_charts >= CHARTS_S)

    def reload(self, *, charts: bool = False) -> None:
        s = self.session
        self.version = data.version(s.conn)
        self.last_full = time.monotonic()
        if charts:
            self.last_charts = self.last_full
        self.refreshes += 1
        try:
            d = data.load(
                s.conn,
                s.now(),
                self.feed_filter,
                offline_after_ms=s.offline_after_ms,
                charts=charts,
            )
        except CommError as exc:  # a filter the engine refuses, a store gone...
            self.say(f"error: {exc}", error=True)
            return
        except sqlite3.Error as exc:  # locked past the busy timeout, damaged: say, go on
            self.say(f"error: the store: {exc}", error=True)
            return
        if d.activity is None and self.dashboard is not None:
            d.activity = self.dashboard.activity
        self.dashboard = d
        self.query_one(AgentsPane).show(d, s.stale_after_ms)
        self.query_one(DirectoryPane).show(d)
        self.query_one(ChannelsPane).show(d.channels)
        self.query_one(PeersPane).show(d.node)
        self.query_one(FeedPane).show(d.feed, self.feed_filter.describe())
        self.query_one(ChartsPane).show(d)
        self.show_detail()

    def show_detail(self) -> None:
        try:
            feed = self.query_one(FeedPane)
        except NoMatches:  # shutting down: the panes are gone
            return
        key = feed.selected_key()
        self.selected = int(key) if key is not None else None
        detail = None
        if self.selected is not None:
            try:
                detail = data.detail(self.session.conn, self.selected)
            except CommError:
                detail = None
        self.query_one(DetailPane).show(detail)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # is_attached: a highlight still queued while the app shuts down finds no panes
        if isinstance(event.data_table, FeedPane) and event.data_table.is_attached:
            self.show_detail()

    def action_reload(self) -> None:
        self.reload(charts=True)
        self.say("refreshed")

    # ------------------------------------------------------------------ messages to the user

    def say(self, text: str, *, error: bool = False) -> None:
        self.status_text = text
        status = self.query_one("#status", Static)
        status.update(text)
        status.set_class(error, "error")
        if error:
            self.notify(text, severity="error", timeout=6)

    def fail(self, exc: CommError) -> None:
        self.say(f"error: {exc}", error=True)

    # ------------------------------------------------------------------ actions

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def action_filter(self) -> None:
        f = self.feed_filter
        self.push_screen(
            FormScreen(
                "Filter the feed (empty: any)",
                [
                    ("channel", "channel", f.channel),
                    ("agent", "from (sender)", f.agent),
                    ("type", "type (text, command, query, ...)", f.type),
                    ("topic", "topic pattern (* one segment, # any)", f.topic),
                    ("status", "status (sent, delivered, acknowledged, dead_letter)", f.status),
                ],
            ),
            callback=self._filter_given,
        )

    def _filter_given(self, values: dict[str, str] | None) -> None:
        if values is None:
            return
        new = data.FeedFilter(**{k: v.strip() for k, v in values.items()})
        try:
            new.to_filter()
        except CommError as exc:
            self.fail(exc)
            return
        self.feed_filter = new
        self.reload()
        self.say(f"feed: {new.describe()}")

    def _guard(self, what: str) -> bool:
        try:
            self.actions.refuse_if_read_only(what)
        except CommError as exc:
            self.fail(exc)
            return False
        return True

    def _selected_channel(self) -> str:
        """The channel under the channels pane's cursor, proposed as a target (`_system`,
        the first row until one moves, belongs to acomm: not proposed)."""
        name = self.query_one(ChannelsPane).selected_key() or ""
        name = name.split(" *", 1)[0]  # a worker pool's row: its channel
        return "" if name.startswith("_") else name

    def action_send(self) -> None:
        if self._guard("send"):
            self.push_screen(
                FormScreen(
                    "Send a message",
                    [
                        ("as", "as (the sending agent)", self.session.agent or ""),
                        (
                            "to",
                            "to: a channel, or @agent[,agent] for a direct message",
                            self._selected_channel(),
                        ),
                        ("type", "type", "text"),
                        ("topic", "topic (pubsub channels)", ""),
                        ("body", "message", ""),
                    ],
                    focus="body",
                    required=("as", "to", "body"),
                ),
                callback=self._send_given,
            )

    def _send_given(self, v: dict[str, str] | None) -> None:
        if v is not None:
            self._confirm(
                "Send this message?",
                lambda: self.actions.send(
                    v["to"],
                    v["body"],
                    agent=v["as"].strip() or None,
                    type_=v["type"].strip() or "text",
                    topic=v["topic"].strip(),
                ),
            )

    def action_broadcast(self) -> None:
        if self._guard("broadcast"):
            self.push_screen(
                FormScreen(
                    "Team broadcast: every member of the channel",
                    [
                        ("as", "as (the sending agent)", self.session.agent or ""),
                        ("channel", "channel", self._selected_channel()),
                        ("body", "message", ""),
                    ],
                    focus="body",
                    required=("as", "channel", "body"),
                ),
                callback=self._broadcast_given,
            )

    def _broadcast_given(self, v: dict[str, str] | None) -> None:
        if v is not None:
            self._confirm(
                "Broadcast this message?",
                lambda: self.actions.broadcast(
                    v["channel"], v["body"], agent=v["as"].strip() or None
                ),
            )

    def _need_message(self) -> int | None:
        if self.selected is None:
            self.say("select a message in the feed first", error=True)
        return self.selected

    def action_ack(self) -> None:
        if not self._guard("ack") or (mid := self._need_message()) is None:
            return
        self.push_screen(
            FormScreen(
                f"Acknowledge message {mid}",
                [
                    ("as", "as (the acknowledging recipient)", self.session.agent or ""),
                    ("status", "status (received, in_progress, completed, failed)", "completed"),
                    ("note", "note for the sender", ""),
                ],
                required=("as", "status"),
            ),
            callback=lambda v: self._ack_given(mid, v),
        )

    def _ack_given(self, mid: int, v: dict[str, str] | None) -> None:
        if v is not None:
            self._confirm(
                f"Acknowledge message {mid}?",
                lambda: self.actions.ack(
                    mid, agent=v["as"].strip() or None, status=v["status"].strip(), note=v["note"]
                ),
            )

    def _dead_letter_action(self, what: str, build: Callable[[int], Action]) -> None:
        if not self._guard(what) or (mid := self._need_message()) is None:
            return
        try:
            detail = data.detail(self.session.conn, mid)
        except CommError as exc:
            self.fail(exc)
            return
        if not detail.dead_letters:
            self.say(f"message {mid} has no dead letter to {what}", error=True)
            return
        who = ", ".join(f"{x.recipient} ({x.reason})" for x in detail.dead_letters)
        self._confirm(
            f"{what.capitalize()} message {mid}'s dead letters: {who}?", lambda: build(mid)
        )

    def action_replay(self) -> None:
        self._dead_letter_action("replay", self.actions.replay)

    def action_discard(self) -> None:
        self._dead_letter_action("discard", self.actions.discard)

    def action_channel(self, action: str) -> None:
        if not self._guard(action):
            return
        name = self._selected_channel()
        if not name:
            self.say("select a channel in the channels pane first", error=True)
            return
        self._confirm(
            f"{action.capitalize()} channel {name}?",
            lambda: self.actions.channel_state(name, action, agent=self.session.agent),
        )

    def _confirm(self, question: str, build: Callable[[], Action]) -> None:
        """Build the action (its checks run now), ask, then run it and reread the panes."""
        try:
            action = build()
        except CommError as exc:
            self.fail(exc)
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                self.say("cancelled: nothing changed")
                return
            try:
                summary = action.run()
            except CommError as exc:
                self.fail(exc)
            except sqlite3.Error as exc:  # rolled back: nothing changed
                self.say(f"error: the store: {exc}; nothing changed", error=True)
            else:
                self.say(summary)
            self.reload(charts=True)

        self.push_screen(ConfirmScreen(question, action.command), callback=answered)
