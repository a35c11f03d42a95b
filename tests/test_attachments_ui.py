"""`acomm ui`'s message view of a rich message: markdown rendered, the subject, the
direction and the files named."""

from __future__ import annotations

import pytest
from uitraffic import NOW, at, drive, session

from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import DetailPane, FeedPane

pytestmark = pytest.mark.ui


def test_the_message_view_renders_markdown_and_names_the_files(cli, store, tmp_path):
    cli.ok("agent", "register", "bob", "--kind", "human")
    (tmp_path / "plan.txt").write_text("the plan")
    with at(NOW - 60_000):
        mid = cli.ok(
            "send",
            "--to",
            "bob",
            "--format",
            "markdown",
            "--subject",
            "Weekly",
            "--attach",
            str(tmp_path / "plan.txt"),
            "# Title\n\nsome **bold** words",
            "--as",
            "alice",
        ).stdout.strip()
    app = DashboardApp(session(store))

    async def check(pilot):
        feed = app.query_one(FeedPane)
        feed.move_cursor(row=feed.get_row_index(mid))
        await pilot.pause()
        text = app.query_one(DetailPane).plain()
        assert "bold words" in text and "**bold**" not in text and "# Title" not in text
        assert "subject Weekly" in text and "A2U" in text and "file plan.txt" in text

    drive(app, check)
