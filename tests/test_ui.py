"""`acomm ui`, driven headless with Textual's Pilot against real stores: the panes
show what `stats --json` says, another process's message shows within a second, each action
leaves the store exactly as its command does, and a read-only session refuses them all."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import run, snapshot
from directory_rows import put
from textual.widgets import Input
from uitraffic import NOW, at, build, cells, drive, session

from acomm_cli.ui.app import DashboardApp
from acomm_cli.ui.panes import (
    AgentsPane,
    ChannelsPane,
    DetailPane,
    DirectoryPane,
    FeedPane,
    PeersPane,
    hhmmss,
)
from acomm_cli.ui.screens import ConfirmScreen, FormScreen, HelpScreen

pytestmark = pytest.mark.ui


@pytest.fixture
def busy(cli, make_channel) -> dict[str, Any]:
    return build(cli, make_channel)


def _stats(cli) -> dict[str, Any]:
    with at(NOW):
        return cli.ok("stats", "--json").json()


def test_the_panes_show_the_numbers_stats_json_gives(busy, cli):
    doc = _stats(cli)
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        agents = cells(app.query_one(AgentsPane))
        assert [r[0] for r in agents] == [a["agent"] for a in doc["agents"]]
        for row, a in zip(agents, doc["agents"], strict=True):
            assert [int(row[1]), int(row[2]), int(row[3]), int(row[5])] == [
                a["total"],
                a["unread"],
                a["awaiting_ack"],
                a["dead_letters"],
            ]
            if a["unread"]:
                assert (
                    row[4] == f"{a['oldest_unread_age_sec'] // 60}m"
                    f"{a['oldest_unread_age_sec'] % 60:02d}s"
                )
        channels = cells(app.query_one(ChannelsPane))
        assert [(r[0], int(r[3]), int(r[4]), int(r[5])) for r in channels] == [
            (c["channel"], c["pending"], c["queued"], c["dead_letters"]) for c in doc["channels"]
        ]
        assert {r[0]: (r[1], r[2]) for r in channels}["ci"] == ("pubsub", "active")
        # unread for over five minutes (the default --stale): highlighted, and counted
        stale = [
            a["agent"] for a in doc["agents"] if a["unread"] and a["oldest_unread_age_sec"] >= 300
        ]
        assert "bob" in stale
        assert app.query_one(AgentsPane).border_subtitle == f"{len(stale)} stale"
        row = app.query_one(AgentsPane).get_row("bob")
        assert all("red" in str(c.style) for c in row)
        assert not app.query_one(PeersPane).display  # not a node: no peers pane

    drive(app, check)


def test_the_directory_pane_lists_kinds_teams_last_seen_and_retirement(busy):
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        pane = app.query_one(DirectoryPane)
        assert cells(pane) == [  # NOW is T0 + 10 min
            ["alice", "agent", "core", "9m30s ago", "-"],
            ["bob", "agent", "core", "9m50s ago", "-"],
            ["carol", "human", "core", "9m40s ago", "-"],
            ["ci", "service", "build", "9m30s ago", "-"],
            ["dave", "agent", "-", "-", "2026-01-01"],  # never seen; retired
        ]
        assert pane.border_subtitle == "5 registered, 1 retired"
        assert all("dim" in str(c.style) for c in pane.get_row("dave"))

    drive(app, check)


def test_an_agent_registered_by_another_process_appears_within_a_second(busy):
    app = DashboardApp(session(busy["store"], now=lambda: NOW))

    async def check(pilot):
        put(busy["store"], "erin", kind="human", team="ops", registered_at=NOW, last_seen_at=NOW)
        start = time.monotonic()
        while "erin" not in [r[0] for r in cells(app.query_one(DirectoryPane))]:
            assert time.monotonic() - start < 1.0, "not shown within a second"
            await pilot.pause(0.05)
        assert app.query_one(DirectoryPane).get_row("erin")[1].plain == "human"

    drive(app, check)


def test_the_directory_pane_is_empty_on_a_store_without_registrations(store):
    c = sqlite3.connect(store)
    with c:
        c.execute("DELETE FROM agents")
    c.close()
    app = DashboardApp(session(store))

    async def check(pilot):
        pane = app.query_one(DirectoryPane)
        assert pane.row_count == 0 and pane.border_subtitle == ""

    drive(app, check)


def test_the_feed_and_the_selected_message_with_its_deliveries_and_thread(busy):
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        feed = app.query_one(FeedPane)
        ids = [int(r[0]) for r in cells(feed)]
        assert ids == sorted(ids, reverse=True) and busy["hello"] in ids
        answer_row = feed.get_row_index(str(busy["answer"]))
        await pilot.click(FeedPane, offset=(4, answer_row + 2))  # the mouse selects too
        await pilot.pause()
        assert app.selected == busy["answer"]
        text = app.query_one(DetailPane).plain()
        assert "all green" in text and f"thread {busy['corr']}" in text
        assert "status?" in text  # the query it answers, in the thread
        feed.move_cursor(row=feed.get_row_index(str(busy["doomed"])))
        await pilot.pause()
        text = app.query_one(DetailPane).plain()
        assert "dead letters: bob expired" in text and "carol expired" in text

    drive(app, check)


def test_the_feed_filters_as_messages_does(busy, cli):
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        await pilot.press("slash")
        form = app.screen
        assert isinstance(form, FormScreen)
        form.query_one("#f-channel", Input).value = "team"
        form.query_one("#f-agent", Input).value = "alice"
        await pilot.click("#ok")
        await pilot.pause()
        shown = [int(r[0]) for r in cells(app.query_one(FeedPane))]
        expected = [
            m["id"]
            for m in cli.ok("messages", "--channel", "team", "--from", "alice", "--json").json()[
                "messages"
            ]
        ]
        assert shown == expected
        await pilot.press("slash")
        app.screen.query_one("#f-topic", Input).value = "build.*"  # one segment: no match
        await pilot.click("#ok")
        await pilot.pause()
        assert "topic=build.*" in str(app.query_one(FeedPane).border_subtitle)
        await pilot.press("slash")
        app.screen.query_one("#f-type", Input).value = "bogus"
        await pilot.click("#ok")
        await pilot.pause()
        assert "type" in app.status_text  # refused, naming the field
        assert "topic=build.*" in str(app.query_one(FeedPane).border_subtitle)  # kept

    drive(app, check)


def test_a_message_sent_by_another_process_appears_within_a_second(busy):
    app = DashboardApp(session(busy["store"], now=lambda: int(time.time() * 1000)))

    async def check(pilot):
        done = run("send", "team", "from elsewhere", "--as", "alice")
        assert done.returncode == 0, done.stderr
        mid = int(done.stdout)
        sent = time.monotonic()
        while str(mid) not in [r[0] for r in cells(app.query_one(FeedPane))]:
            assert time.monotonic() - sent < 1.0, "not shown within a second"
            await pilot.pause(0.05)

    drive(app, check)


def test_idle_it_rereads_nothing_between_commits(busy, monkeypatch):
    """No busy loop: with nothing committed (and the slow refresh out of the way) the timer
    only reads data_version; a commit by another connection is what rereads the panes."""
    from acomm_cli.ui import app as ui_app

    monkeypatch.setattr(ui_app, "FULL_S", 3600.0)
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        before = app.refreshes
        for _ in range(8):  # eight timer ticks or more (POLL_S = 0.25)
            await pilot.pause(0.25)
        assert app.refreshes == before
        done = run("send", "team", "wake up", "--as", "alice")
        assert done.returncode == 0, done.stderr
        end = time.monotonic() + 10
        while app.refreshes == before:
            assert time.monotonic() < end, "the commit was never noticed"
            await pilot.pause(0.05)

    drive(app, check)


def test_a_commit_while_a_form_is_open_updates_the_panes_under_it(busy):
    app = DashboardApp(session(busy["store"], agent="alice", now=lambda: int(time.time() * 1000)))

    async def check(pilot):
        await pilot.press("s")
        assert isinstance(app.screen, FormScreen)
        before = app.refreshes
        done = run("send", "team", "meanwhile", "--as", "bob")
        assert done.returncode == 0, done.stderr
        end = time.monotonic() + 10
        while app.refreshes == before:
            assert time.monotonic() < end, "the commit was never noticed"
            await pilot.pause(0.05)
        assert isinstance(app.screen, FormScreen)  # still typing
        assert done.stdout.strip() in [r[0] for r in cells(app.query_one(FeedPane))]

    drive(app, check)


def test_help_lists_the_keys(busy):
    app = DashboardApp(session(busy["store"]))

    async def check(pilot):
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(w.render()) for w in app.screen.query("Static"))
        for key in ("/", "s", "b", "a", "r", "x", "p / u", "q"):
            assert key in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

    drive(app, check)


# ---------------------------------------------------------------- actions: as the commands


def _twin(path: Path, tmp_path: Path) -> Path:
    """A byte-for-byte copy of the store (SQLite's backup: the WAL included)."""
    twin = tmp_path / "twin" / "store.acomm"
    twin.parent.mkdir()
    src, dst = sqlite3.connect(path), sqlite3.connect(twin)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return twin


async def _form(pilot, **values: str) -> None:
    form = pilot.app.screen
    assert isinstance(form, FormScreen), form
    for name, value in values.items():
        form.query_one(f"#f-{name}", Input).value = value
    await pilot.click("#ok")
    await pilot.pause()


async def _confirm(pilot, command: str) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ConfirmScreen), screen
    assert screen.command == command
    await pilot.press("y")
    await pilot.pause()


def _select(app: DashboardApp, pane: type, key: str) -> None:
    table = app.query_one(pane)
    table.move_cursor(row=table.get_row_index(key))
    table.focus()


def _scenarios(b: dict[str, Any]) -> dict[str, tuple[list[str], Any]]:
    """name -> (the command line, what the dashboard does for it)."""

    async def do_send(pilot):
        await pilot.press("s")
        await _form(pilot, to="team", body="from the dashboard")
        await _confirm(pilot, "acomm send team 'from the dashboard' --as alice")

    async def do_direct(pilot):
        await pilot.press("s")
        await _form(pilot, to="@bob,carol", body="psst")
        await _confirm(pilot, "acomm send --to bob,carol psst --as alice")

    async def do_broadcast(pilot):
        _select(pilot.app, ChannelsPane, "team")
        await pilot.press("b")
        await _form(pilot, body="all hands")
        await _confirm(pilot, "acomm send team 'all hands' --as alice --type broadcast")

    async def do_ack(pilot):
        _select(pilot.app, FeedPane, str(b["deploy"]))
        await pilot.press("a")
        await _form(pilot, **{"as": "bob", "note": "done"})
        await _confirm(pilot, f"acomm ack {b['deploy']} --as bob --status completed --note done")

    async def do_replay(pilot):
        _select(pilot.app, FeedPane, str(b["doomed"]))
        await pilot.press("r")
        await _confirm(pilot, f"acomm deadletter replay {b['doomed']}")

    async def do_discard(pilot):
        _select(pilot.app, FeedPane, str(b["doomed"]))
        await pilot.press("x")
        await _confirm(pilot, f"acomm deadletter discard {b['doomed']}")

    async def do_pause(pilot):
        _select(pilot.app, ChannelsPane, "ops")
        await pilot.press("p")
        await _confirm(pilot, "acomm channel pause ops --as alice")

    async def do_resume(pilot):  # ops was paused before the twin was made
        _select(pilot.app, ChannelsPane, "ops")
        await pilot.press("u")
        await _confirm(pilot, "acomm channel resume ops --as alice")

    return {
        "send": (["send", "team", "from the dashboard", "--as", "alice"], do_send),
        "direct": (["send", "--to", "bob,carol", "psst", "--as", "alice"], do_direct),
        "broadcast": (
            ["send", "team", "all hands", "--as", "alice", "--type", "broadcast"],
            do_broadcast,
        ),
        "ack": (
            ["ack", str(b["deploy"]), "--as", "bob", "--status", "completed", "--note", "done"],
            do_ack,
        ),
        "replay": (["deadletter", "replay", str(b["doomed"])], do_replay),
        "discard": (["deadletter", "discard", str(b["doomed"])], do_discard),
        "pause": (["channel", "pause", "ops", "--as", "alice"], do_pause),
        "resume": (["channel", "resume", "ops", "--as", "alice"], do_resume),
    }


@pytest.mark.parametrize(
    "name", ["send", "direct", "broadcast", "ack", "replay", "discard", "pause", "resume"]
)
def test_each_action_changes_the_store_exactly_as_its_command(busy, cli, tmp_path, name):
    if name == "resume":
        with at(NOW):
            cli.ok("channel", "pause", "ops", "--as", "alice")
    twin = _twin(busy["store"], tmp_path)
    argv, scenario = _scenarios(busy)[name]
    app = DashboardApp(session(busy["store"], agent="alice"))
    drive(app, scenario)
    assert "error" not in app.status_text
    with at(NOW):
        cli.ok("--store", str(twin), *argv)
    assert _untraced(snapshot(busy["store"])) == _untraced(snapshot(twin))


def _untraced(rows: dict[str, Any]) -> dict[str, Any]:
    """The store with the new messages' trace ids blanked: each send starts a random trace,
    and the two sends here are two stores' (an equal id would be the defect)."""
    for row in rows["messages"]:
        row["trace_id"] = row["trace_id"] is not None
    return rows


def test_resume_after_pause_and_a_refused_action_names_the_problem(busy, cli, tmp_path):
    app = DashboardApp(session(busy["store"], agent="alice"))  # ops's owner

    async def scenario(pilot):
        _select(app, ChannelsPane, "ops")
        await pilot.press("p")
        await _confirm(pilot, "acomm channel pause ops --as alice")
        assert {r[0]: r[2] for r in cells(app.query_one(ChannelsPane))}["ops"] == "paused"
        await pilot.press("s")  # the `as` field emptied: refused, naming `as`
        await _form(pilot, **{"as": "", "to": "ops", "body": "x"})
        assert "as" in app.status_text
        assert not isinstance(app.screen, ConfirmScreen)
        await pilot.press("s")
        await _form(pilot, **{"as": "alice", "to": "ops", "body": "x"})
        await pilot.press("y")  # confirmed, but the engine refuses: the channel is paused
        await pilot.pause()
        assert "paused" in app.status_text
        _select(app, ChannelsPane, "ops")
        await pilot.press("u")
        await _confirm(pilot, "acomm channel resume ops --as alice")
        assert {r[0]: r[2] for r in cells(app.query_one(ChannelsPane))}["ops"] == "active"

    before = snapshot(busy["store"])
    drive(app, scenario)
    after = snapshot(busy["store"])
    # paused and resumed (the channels' change counter moved), the send refused
    assert after.pop("channels_version") != before.pop("channels_version")
    assert after == before


def test_the_send_form_is_typed_into_from_the_keyboard_alone(busy):
    app = DashboardApp(session(busy["store"], agent="alice"))

    async def scenario(pilot):
        await pilot.press("s")  # the cursor waits in the message field
        assert pilot.app.focused.id == "f-body"
        await pilot.press(*"qs", "space", *"ux")  # q, s, u, x are text here, not keys
        await pilot.press("enter")  # no recipient yet: enter takes the cursor there
        assert pilot.app.focused.id == "f-to"
        assert isinstance(pilot.app.screen, FormScreen)
        await pilot.press(*"team", "enter")  # everything needed: enter sends
        await _confirm(pilot, "acomm send team 'qs ux' --as alice")
        assert app.status_text.startswith("sent message ")

    drive(app, scenario)


def test_the_send_form_opens_in_the_message_field_with_the_channel_proposed(busy):
    """With a channel selected in the channels pane, s, the text, enter: sent there."""
    app = DashboardApp(session(busy["store"], agent="alice"))

    async def scenario(pilot):
        _select(app, ChannelsPane, "team")
        await pilot.press("s")
        assert pilot.app.focused.id == "f-body"
        assert pilot.app.screen.query_one("#f-to", Input).value == "team"
        await pilot.press(*"hi", "enter")
        await _confirm(pilot, "acomm send team hi --as alice")
        assert app.status_text.startswith("sent message ")
        # the broadcast form too
        await pilot.press("b")
        assert pilot.app.focused.id == "f-body"
        await pilot.press("escape")

    drive(app, scenario)


def test_no_cancels_and_changes_nothing(busy):
    before = snapshot(busy["store"])
    app = DashboardApp(session(busy["store"], agent="alice"))

    async def scenario(pilot):
        await pilot.press("s")
        await _form(pilot, to="team", body="never mind")
        await pilot.press("n")
        await pilot.pause()
        assert "cancelled" in app.status_text

    drive(app, scenario)
    assert snapshot(busy["store"]) == before


# ---------------------------------------------------------------- read-only


def test_read_only_refuses_every_action_with_a_visible_message(busy):
    before = snapshot(busy["store"])
    app = DashboardApp(session(busy["store"], agent="alice", read_only=True))

    async def scenario(pilot):
        assert "READ-ONLY" in app.sub_title
        _select(app, FeedPane, str(busy["doomed"]))
        for key, what in (
            ("s", "send"),
            ("b", "broadcast"),
            ("a", "ack"),
            ("r", "replay"),
            ("x", "discard"),
            ("p", "pause"),
            ("u", "resume"),
        ):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen is app.screen_stack[0], key  # no form, no confirmation
            status = app.status_text
            assert f"read-only: {what} refused" in status

    drive(app, scenario)
    assert snapshot(busy["store"]) == before


# ---------------------------------------------------------------- a federation node


def test_on_a_node_the_peers_pane_shows_what_peers_and_gateway_status_say(cli, tmp_path):
    def ok(path: Path, *args: str) -> Any:
        r = cli("--store", str(path), "--json", *args)
        assert r.exit_code == 0, (args, r.stderr)
        return r.json() if r.stdout.strip() else None

    a, b = tmp_path / "na.acomm", tmp_path / "nb.acomm"
    ok(a, "node", "init", "--id", "na")
    ok(b, "node", "init", "--id", "nb")
    ok(a, "peers", "add", "nb", "--url", f"store:{b}")
    ok(b, "peers", "add", "na", "--url", f"store:{a}")
    ok(b, "agent", "own", "bob")
    ok(b, "fed", "pull")
    ok(a, "fed", "pull")
    ok(a, "send", "--to", "bob", "over there", "--as", "alice")  # a's outbox moves
    peers = ok(a, "peers")["peers"]
    gone = cli("--store", str(a), "--json", "gateway", "status")  # exit 7: no gateway runs
    assert gone.exit_code == 7
    head = gone.json()["outbox_head"]
    app = DashboardApp(session(a, now=lambda: int(time.time() * 1000)))

    async def check(pilot):
        pane = app.query_one(PeersPane)
        assert pane.display
        assert pane.border_title == f"Peers of na · outbox head {head}"
        rows = cells(pane)
        assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
            (
                p["node"],
                "online" if p["online"] else "offline",
                str(p["cursor"]),
                "-" if p["head"] is None else str(p["head"]),
                "-" if p["lag"] is None else str(p["lag"]),
            )
            for p in peers
        ]

    drive(app, check)


# ---------------------------------------------------------------- the charts, in the engine


def test_activity_counts_messages_per_minute_and_rebuilds_the_backlog(busy):
    from acomm_cli.engine import activity, opening

    conn = opening.connect(busy["store"], create=False)
    try:
        a = activity.activity(conn, NOW)
    finally:
        conn.close()
    assert len(a.messages_per_minute) == len(a.unread_backlog) == 60
    # all eight messages (two of them the dead-letter notices) in minute 50: T0 is NOW - 10m
    assert a.messages_per_minute[50] == 8 and sum(a.messages_per_minute) == 8
    assert a.unread_backlog[:49] == [0] * 49
    assert a.unread_backlog[49] == 2  # at T0 itself (that minute's end): hello, to bob and carol
    # at the end of T0's minute: bob's hello, deploy and the answer, alice's copy of the
    # query and carol's notification are unread; carol read hers; the late one died
    assert a.unread_backlog[50] == 5
    assert a.dead_letters_by_reason == {"expired": 2}


# ---------------------------------------------------------------- the command


def test_acomm_ui_needs_a_terminal_and_checks_its_options(busy):
    done = run("ui", "--json")
    assert done.returncode == 2
    assert "terminal" in json.loads(done.stderr)["error"]["message"]
    done = run("ui", "--stale", "soon", "--json")
    assert done.returncode == 3
    assert json.loads(done.stderr)["error"]["field"] == "stale"


def test_a_store_that_cannot_be_written_opens_read_only_by_itself(busy, tmp_path):
    """A read-only bind mount (as tests/test_opening.py makes one; skipped where mounting is
    not permitted): the command's own opening makes the session read-only."""
    from test_opening import _mount, _umount

    from acomm_cli.cli.commands.ui_run import open_session
    from acomm_cli.cli.config import Settings

    src = busy["store"].parent
    mnt = tmp_path / "ro"
    mnt.mkdir()
    _mount("--bind", str(src), str(mnt))
    try:
        _mount("-o", "remount,ro,bind", str(mnt))
        before = snapshot(busy["store"])
        with open_session(
            Settings(store=str(mnt / busy["store"].name)),
            agent="alice",
            read_only=False,
            stale_after_ms=300_000,
        ) as s:
            assert s.read_only
            app = DashboardApp(s)

            async def scenario(pilot):
                assert "READ-ONLY" in app.sub_title
                assert cells(app.query_one(AgentsPane))  # it reads
                await pilot.press("s")
                assert "read-only: send refused" in app.status_text

            async def main() -> None:
                async with app.run_test(size=(120, 40)) as pilot:
                    await pilot.pause()
                    await scenario(pilot)

            asyncio.run(main())
        assert snapshot(busy["store"]) == before
    finally:
        _umount(mnt)


def test_a_stored_time_past_the_year_9999_shows_as_its_bound():
    """A row an older acomm let in (or written by hand) never stops the dashboard."""
    assert hhmmss(9_000_000_000_000_000_000) == "23:59:59"
    assert hhmmss(-9_000_000_000_000_000_000) == "00:00:00"
    assert hhmmss(1714564800123) == "12:00:00"
