"""`acomm ui`'s channels pane shows each worker pool's backlog (`subscribe --group`): what
waits for a member and what members hold, as `stats --json` gives it."""

from __future__ import annotations

import pytest
from uitraffic import cells, drive, session

from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import ChannelsPane

pytestmark = pytest.mark.ui


@pytest.fixture
def pooled(cli, make_channel):
    """`builds` (pubsub, at-least-once): w1 and w2 in the pool `builders`; three jobs, w1
    holds one (read, not acked)."""
    store = make_channel("builds", "ci", type="pubsub", delivery="at-least-once")
    for w in ("w1", "w2"):
        cli.ok("subscribe", "builds", "job.#", "--group", "builders", "--as", w)
    for i in range(3):
        cli.ok("publish", "builds", "job.test", f"job {i}", "--as", "ci")
    cli.ok("receive", "--as", "w1", "--limit", "1")
    return store


def test_a_pool_is_a_row_of_the_channels_pane(pooled, cli):
    doc = cli.ok("--json", "stats").json()
    [pool] = doc["pools"]
    assert (pool["waiting"], pool["claimed"]) == (2, 1)

    app = DashboardApp(session(pooled))

    async def check(pilot) -> None:
        rows = {r[0]: r for r in cells(app.query_one(ChannelsPane))}
        # pending: claimed by a member and not finished; queued: waiting for a member
        assert rows["builds *builders"][1:5] == ["pool", "active", "1", "2"]
        assert "builds" in rows  # the channel keeps its own row
        table = app.query_one(ChannelsPane)
        table.move_cursor(row=list(rows).index("builds *builders"))
        await pilot.pause()
        assert app._selected_channel() == "builds"  # what `p`, `b` and `s` propose

    drive(app, check)
