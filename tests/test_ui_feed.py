"""`acomm ui`'s feed follows the newest message as `tail -f` does while its cursor is on the
newest row, and counts what came ("N new") while the cursor is elsewhere; at 80x24 the feed
shows the messages' text (the side panes step aside, `w` brings them back). Pilot-driven,
on a real store; messages come from the command line between two refreshes."""

from __future__ import annotations

from typing import Any

import pytest
from uitraffic import NOW, at, build, cells, drive, session

from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import AgentsPane, DetailPane, FeedPane

pytestmark = pytest.mark.ui


@pytest.fixture
def busy(cli, make_channel) -> dict[str, Any]:
    return build(cli, make_channel)


def send(cli: Any, n: int, text: str = "more") -> list[int]:
    with at(NOW):
        return [
            int(cli.ok("send", "team", f"{text} {i}", "--as", "alice").stdout) for i in range(n)
        ]


def test_the_feed_follows_the_newest_message_while_its_cursor_is_on_it(busy, cli):
    send(cli, 40)  # more than the feed can show at once
    app = DashboardApp(session(busy["store"], live=False))

    async def check(pilot):
        feed = app.query_one(FeedPane)
        assert feed.row_count > feed.scrollable_content_region.height  # it scrolls
        newest = send(cli, 5)[-1]
        app.reload()
        await pilot.pause()
        # the cursor moved to the new message, the view is at the top, the detail shows it
        assert feed.cursor_row == 0 and cells(feed)[0][0] == str(newest)
        assert feed.scroll_y == 0 and app.selected == newest
        assert "new" not in str(feed.border_subtitle)

    drive(app, check)


def test_elsewhere_the_cursor_stays_and_the_feed_counts_what_is_new(busy, cli):
    send(cli, 40)
    app = DashboardApp(session(busy["store"], live=False))

    async def check(pilot):
        feed = app.query_one(FeedPane)
        for _ in range(3):
            await pilot.press("down")
        held = app.selected
        assert held is not None and feed.cursor_row == 3
        send(cli, 4)
        app.reload()
        await pilot.pause()
        assert app.selected == held and cells(feed)[feed.cursor_row][0] == str(held)
        assert str(feed.border_subtitle).endswith("4 new ↑")
        send(cli, 1)
        app.reload()
        await pilot.pause()
        assert str(feed.border_subtitle).endswith("5 new ↑")
        # back on the newest row: caught up, and following again
        for _ in range(feed.cursor_row):
            await pilot.press("up")
        assert feed.cursor_row == 0 and "new" not in str(feed.border_subtitle)
        newest = send(cli, 2)[-1]
        app.reload()
        await pilot.pause()
        assert app.selected == newest and feed.cursor_row == 0

    drive(app, check)


def test_at_80x24_the_feed_shows_the_text_and_w_switches_to_the_side_panes(busy, cli):
    app = DashboardApp(session(busy["store"], live=False))

    async def check(pilot):
        feed, agents = app.query_one(FeedPane), app.query_one(AgentsPane)
        assert feed.display and not app.query_one("#left").display
        # every column up to the text fits in the pane
        widths = [c.get_render_width(feed) for c in feed.ordered_columns]
        names = [str(c.label) for c in feed.ordered_columns]
        upto_content = sum(widths[: names.index("content") + 1])
        assert upto_content <= feed.scrollable_content_region.width
        assert "hello team" in [r[4] for r in cells(feed)]
        # the detail has the width for its heading: channel and sender apart
        feed.move_cursor(row=feed.get_row_index(str(busy["doomed"])))
        await pilot.pause()
        detail = app.query_one(DetailPane)
        text = detail.plain(width=detail.scrollable_content_region.width)
        assert "on team from alice" in text
        await pilot.press("w")  # the side panes, alone, at the full width
        assert app.query_one("#left").display and not app.query_one("#right").display
        assert agents.has_focus and agents.scrollable_content_region.width > 70
        await pilot.press("w")
        assert not app.query_one("#left").display and feed.has_focus

    drive(app, check, size=(80, 24))


def test_wide_the_side_panes_sit_beside_the_feed_and_w_hides_them(busy):
    app = DashboardApp(session(busy["store"], live=False))

    async def check(pilot):
        left, right = app.query_one("#left"), app.query_one("#right")
        assert left.display and right.display
        await pilot.press("w")
        assert not left.display and right.display
        assert app.query_one(FeedPane).has_focus
        await pilot.press("w")
        assert left.display and right.display
        # the terminal narrowed: the feed alone, with its focus
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert not left.display and right.display
        await pilot.resize_terminal(140, 40)
        await pilot.pause()
        assert left.display and right.display

    drive(app, check, size=(140, 40))
