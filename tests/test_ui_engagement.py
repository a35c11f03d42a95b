"""`acomm ui`: the selected message shows how far each recipient got, routed -> notified ->
engaged, with the time and the way of each (what `show --json` says)."""

from __future__ import annotations

from pathlib import Path

import pytest
from uitraffic import T0, at, drive, session

from acomm_cli.engine import opening
from acomm_cli.ui import data
from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import DetailPane, FeedPane

pytestmark = pytest.mark.ui


@pytest.fixture
def seen(cli, make_channel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, int]:
    """alice's message to bob and carol, mirrored as inbox files at T0; bob reads it a
    minute later (the read takes his file away), carol does nothing."""
    monkeypatch.setenv("ACOMM_BRIDGE_INBOX_DIR", str(tmp_path / "inbox"))
    store = make_channel("team", "alice", "bob", "carol")
    with at(T0):
        mid = int(cli.ok("send", "team", "review this", "--as", "alice").stdout)
    with at(T0 + 60_000):
        cli.ok("receive", "--as", "bob")
    return store, mid


def test_the_detail_holds_each_recipients_engagement(seen):
    store, mid = seen
    conn = opening.connect(store, create=False)
    try:
        got = {e.recipient: e for e in data.detail(conn, mid).engagement}
    finally:
        conn.close()
    bob, carol = got["bob"], got["carol"]
    assert (bob.state, bob.notified_at, bob.notified_by) == ("engaged", T0, "inbox")
    assert (bob.engaged_at, bob.engaged_by) == (T0 + 60_000, "read")
    assert (carol.state, carol.notified_by, carol.engaged_at) == ("notified", "inbox", None)


def test_the_message_pane_shows_routed_notified_engaged_with_times(seen):
    store, mid = seen
    app = DashboardApp(session(store))

    async def check(pilot):
        feed = app.query_one(FeedPane)
        feed.move_cursor(row=feed.get_row_index(str(mid)))
        await pilot.pause()
        lines = app.query_one(DetailPane).plain().splitlines()
        head = next(i for i, line in enumerate(lines) if "reached" in line)
        assert lines[head].split() == ["recipient", "reached", "routed", "notified", "engaged"]
        rows = {line.split()[0]: line.split() for line in lines[head + 1 : head + 3]}
        assert rows["bob"] == [
            "bob",
            "engaged",
            "12:00:00",
            "12:00:00",
            "inbox",
            "12:01:00",
            "read",
        ]
        assert rows["carol"] == ["carol", "notified", "12:00:00", "12:00:00", "inbox", "-"]

    drive(app, check)
