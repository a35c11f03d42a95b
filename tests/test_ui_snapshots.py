"""Snapshot tests of `acomm ui`'s main screens (pytest-textual-snapshot): the SVGs are checked
in under tests/__snapshots__/; `pytest --snapshot-update` rewrites them after a deliberate
change (look at them first: `--snapshot-report` writes an HTML diff). The store is made at
fixed times and the dashboard's clock is injected, so every run draws the same screen."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input
from uitraffic import build, session

from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import FeedPane

pytestmark = pytest.mark.ui

SIZE = (120, 40)


@pytest.fixture
def busy(cli, make_channel) -> dict[str, Any]:
    return build(cli, make_channel)


@pytest.fixture
def dashboard(busy):
    apps: list[DashboardApp] = []

    def make(**options: Any) -> DashboardApp:
        app = DashboardApp(session(busy["store"], live=False, **options))
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.session.conn.close()


def test_the_main_screen(dashboard, snap_compare):
    assert snap_compare(dashboard(agent="alice"), terminal_size=SIZE)


def test_a_dead_lettered_message_selected(busy, dashboard, snap_compare):
    async def select(pilot):
        feed = pilot.app.query_one(FeedPane)
        feed.move_cursor(row=feed.get_row_index(str(busy["doomed"])))
        await pilot.pause()

    assert snap_compare(dashboard(agent="alice"), terminal_size=SIZE, run_before=select)


def test_the_help_screen(dashboard, snap_compare):
    assert snap_compare(dashboard(), terminal_size=SIZE, press=["question_mark"])


def test_the_confirmation_of_a_send(dashboard, snap_compare):
    async def fill(pilot):
        await pilot.press("s")
        pilot.app.screen.query_one("#f-to", Input).value = "team"
        pilot.app.screen.query_one("#f-body", Input).value = "from the dashboard"
        await pilot.click("#ok")
        await pilot.pause()

    assert snap_compare(dashboard(agent="alice"), terminal_size=SIZE, run_before=fill)


def test_read_only_refusing(dashboard, snap_compare):
    assert snap_compare(dashboard(read_only=True), terminal_size=SIZE, press=["s"])


def test_the_send_form(dashboard, snap_compare):
    async def type_(pilot):
        await pilot.press("s")
        await pilot.pause()
        for field in pilot.app.screen.query(Input):
            field.cursor_blink = False  # a blinking cursor would be on or off by chance
        await pilot.press(*"hello")  # into the message field, where the cursor starts
        await pilot.pause()

    assert snap_compare(dashboard(agent="alice"), terminal_size=SIZE, run_before=type_)
