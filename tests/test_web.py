"""`acomm web` through Starlette's TestClient, in process: what each page shows, the
escaping of message content, the headers, the confirmed actions, and every refusal (CSRF,
another site's Origin, --read-only, a login that proves nothing, an agent without the admin
role, a host name that is not loopback). The browser tier (test_web_browser.py) drives the
same console in chromium."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import sys

import pytest
from webconsole import client, config, csrf

pytestmark = pytest.mark.cli

SCRIPT = "<script>alert('pwned')</script>"


@pytest.fixture
def traffic(cli, make_channel):
    """A team channel with two members, a message with a script in it and a markdown one."""
    path = make_channel("team", "op", "alice", "bob")
    cli.ok("send", "team", f"hello {SCRIPT}", "--as", "op")
    cli.ok(
        "send",
        "team",
        f"# Plan\n\n**bold** {SCRIPT} [click](javascript:alert(1))",
        "--format",
        "markdown",
        "--as",
        "alice",
    )
    return path


def dump(path) -> list[tuple]:
    """Every delivery and channel state: what an action may change."""
    conn = sqlite3.connect(path)
    try:
        return [
            *conn.execute(
                "SELECT message_id, recipient, state, ack_status FROM deliveries ORDER BY 1, 2"
            ),
            *conn.execute("SELECT name, state FROM channels ORDER BY name"),
            *conn.execute("SELECT id, channel_id, sender, content FROM messages ORDER BY id"),
        ]
    finally:
        conn.close()


PAGES = [
    "/",
    "/channels",
    "/feed",
    "/messages/1",
    "/deadletters",
    "/tasks",
    "/federation",
    "/charts",
]


@pytest.mark.parametrize("page", PAGES)
def test_each_page_renders_with_a_strict_content_security_policy(traffic, page):
    with client(traffic) as c:
        r = c.get(page)
    assert r.status_code == 200, r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp
    assert r.headers["x-frame-options"] == "DENY"
    assert "<script>" not in r.text  # the page's only script is /static/console.js


@pytest.mark.parametrize("page", ["/feed", "/messages/1", "/messages/2"])
def test_a_script_in_a_message_body_shows_as_text(traffic, page):
    with client(traffic) as c:
        html = c.get(page).text
    assert SCRIPT not in html
    assert "&lt;script&gt;alert(" in html


def test_a_markdown_body_is_rendered_with_raw_html_left_as_text(traffic):
    with client(traffic) as c:
        html = c.get("/messages/2").text
    assert "<h1>Plan</h1>" in html and "<strong>bold</strong>" in html
    assert SCRIPT not in html and "&lt;script&gt;" in html
    assert 'href="javascript:' not in html  # markdown-it refuses the link


def test_the_agents_page_shows_stats_counts_and_the_stale_in_red(cli, traffic):
    with client(traffic, stale_after_ms=0) as c:
        html = c.get("/").text
    assert 'class="stale" data-agent="alice"' in html
    assert 'class="stale" data-agent="bob"' in html
    with client(traffic) as c:  # 5 minutes: nobody is stale yet
        assert 'class="stale"' not in c.get("/").text


def test_a_fragment_request_returns_the_live_part_alone(traffic):
    with client(traffic) as c:
        whole = c.get("/feed").text
        part = c.get("/feed", headers={"X-Fragment": "1"}).text
    assert "<html" in whole and "<html" not in part
    assert 'data-id="2"' in part and "send-form" not in part


def test_a_bad_feed_filter_is_refused_naming_its_field(traffic):
    with client(traffic) as c:
        r = c.get("/feed?type=nonsense")
    assert r.status_code == 400 and "type" in r.text


def test_a_message_that_does_not_exist_is_404(traffic):
    with client(traffic) as c:
        assert c.get("/messages/999").status_code == 404


def test_the_charts_are_inline_svg(traffic):
    with client(traffic) as c:
        html = c.get("/charts").text
    assert html.count("<svg") == 3 and "messages sent per minute" in html


def _confirm_then_do(c, page: str, fields: dict[str, str]) -> tuple[str, str]:
    token = csrf(c.get(page).text)
    confirm = c.post("/confirm", data={"csrf": token, **fields})
    assert confirm.status_code == 200, confirm.text
    token = csrf(confirm.text)
    done = c.post("/do", data={"csrf": token, **fields})
    assert done.status_code == 200, done.text
    return confirm.text, done.text


def test_pause_is_confirmed_with_its_command_then_done(cli, traffic):
    before = dump(traffic)
    with client(traffic) as c:
        token = csrf(c.get("/channels").text)
        confirm = c.post("/confirm", data={"csrf": token, "action": "pause", "channel": "team"})
        assert "acomm channel pause team --as op" in confirm.text
        assert dump(traffic) == before  # a confirmation changes nothing
        assert 'class="state-active"' in c.get("/channels").text  # read, and kept a moment
        c.post("/do", data={"csrf": token, "action": "pause", "channel": "team"})
        assert 'class="state-paused"' in c.get("/channels").text  # at once, not after a poll
    assert cli.ok("channel", "show", "team", "--json").json()["state"] == "paused"


def test_send_acts_as_the_console_agent(cli, traffic):
    with client(traffic) as c:
        confirm, done = _confirm_then_do(c, "/feed", {"action": "send", "to": "team", "body": "hi"})
    assert "acomm send team hi --as op" in confirm
    assert "sent message 3 on team" in done


@pytest.mark.parametrize(
    "token, origin",
    [(None, None), ("0" * 64, None), ("good", "https://evil.example")],
    ids=["no-token", "wrong-token", "other-origin"],
)
def test_an_action_without_its_csrf_token_or_from_another_site_is_refused(traffic, token, origin):
    before = dump(traffic)
    with client(traffic) as c:
        good = csrf(c.get("/channels").text)
        data = {"action": "pause", "channel": "team"}
        if token is not None:
            data["csrf"] = good if token == "good" else token
        headers = {"origin": origin} if origin else {}
        r = c.post("/do", data=data, headers=headers)
    assert r.status_code == 403
    assert ("csrf" in r.text) if origin is None else ("origin" in r.text)
    assert dump(traffic) == before


def test_read_only_refuses_every_action_and_shows_no_forms(traffic):
    before = dump(traffic)
    with client(traffic, read_only=True) as c:
        page = c.get("/channels").text
        assert "act-pause" not in page
        token = c.app.state.access.csrf("loopback")  # what a form would carry
        r = c.post("/do", data={"csrf": token, "action": "pause", "channel": "team"})
    assert r.status_code == 403 and "read-only" in r.text
    assert dump(traffic) == before


def test_a_host_that_is_not_loopback_is_refused_on_a_loopback_console(traffic):
    with client(traffic) as c:
        r = c.get("/", headers={"host": "attacker.example:8321"})
    assert r.status_code == 403 and "host" in r.text


def test_an_action_refused_by_the_engine_shows_its_error_and_changes_nothing(traffic):
    before = dump(traffic)
    with client(traffic) as c:
        token = csrf(c.get("/feed").text)
        r = c.post("/confirm", data={"csrf": token, "action": "replay", "message": "1"})
        assert r.status_code == 200  # the confirmation names the command
        r = c.post("/do", data={"csrf": token, "action": "replay", "message": "1"})
    assert r.status_code in (400, 404, 409) and "Refused" in r.text
    assert dump(traffic) == before


# ---------------------------------------------------------------- login


@pytest.fixture
def secrets(cli, traffic):
    cli.ok("agent", "update", "op", "--admin")
    return {name: cli.ok("agent", "token", name).stdout.strip() for name in ("op", "alice")}


def _login(c, secret: str):
    page = c.get("/login")
    return c.post("/login", data={"csrf": csrf(page.text), "token": secret}, follow_redirects=False)


def test_a_console_with_login_sends_every_page_to_the_login_first(traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        r = c.get("/", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/login"
        assert c.get("/events", follow_redirects=False).status_code == 204


def test_a_wrong_secret_is_refused(secrets, traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        r = _login(c, "acomm_as_" + "x" * 43)
        assert r.status_code == 403 and "not proven" in r.text
        assert c.get("/", follow_redirects=False).status_code == 303


def test_a_login_without_its_form_token_is_refused(secrets, traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        r = c.post("/login", data={"csrf": "forged", "token": secrets["op"]})
    assert r.status_code == 403 and "csrf" in r.text


def test_the_session_cookie_is_httponly_secure_and_samesite_strict(secrets, traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        r = _login(c, secrets["op"])
        assert r.status_code == 303
        cookie = r.headers["set-cookie"].lower()
        assert "acomm_session=" in cookie
        assert "httponly" in cookie and "secure" in cookie and "samesite=strict" in cookie
        assert c.get("/").status_code == 200


def test_an_admin_acts_as_itself(cli, secrets, traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        _login(c, secrets["op"])
        confirm, _ = _confirm_then_do(c, "/channels", {"action": "pause", "channel": "team"})
    assert "acomm channel pause team --as op" in confirm
    assert cli.ok("channel", "show", "team", "--json").json()["state"] == "paused"


def test_an_agent_without_the_admin_role_sees_but_may_not_act(secrets, traffic):
    before = dump(traffic)
    with client(traffic, https=True, login=True, acting=None) as c:
        _login(c, secrets["alice"])
        page = c.get("/channels").text
        assert "act-pause" not in page
        r = c.post("/do", data={"csrf": csrf(page), "action": "pause", "channel": "team"})
    assert r.status_code == 403 and "admin" in r.text
    assert dump(traffic) == before


def test_a_logged_out_session_is_gone(secrets, traffic):
    with client(traffic, https=True, login=True, acting=None) as c:
        _login(c, secrets["op"])
        token = csrf(c.get("/").text)
        c.post("/logout", data={"csrf": token})
        assert c.get("/", follow_redirects=False).status_code == 303


# ---------------------------------------------------------------- the command and the poll


def test_an_address_other_than_loopback_needs_tls(cli, store):
    r = cli("web", "--listen", "0.0.0.0:0")
    assert r.exit_code == 3 and "TLS" in r.stderr and "listen" in r.stderr


def test_tls_cert_without_its_key_is_a_usage_error(cli, store):
    r = cli("web", "--tls-cert", "cert.pem")
    assert r.exit_code == 3 and "--tls-key" in r.stderr


def test_a_bad_listen_value_is_refused_naming_it(cli, store):
    r = cli("web", "--listen", "nowhere")
    assert r.exit_code == 3 and "listen" in r.stderr


async def _changes(path, after, *, interval_s: float = 0.01, safety_s: float = 60.0):
    """A Live following the store at `path` on a connection of its own, five streams on it,
    then `after()` in a thread (a commit by another connection): what the streams were told,
    whether the Live waited on a watch, its generation, and how many reads of the store it
    made from the commit on."""
    from acomm_cli.web import data
    from acomm_cli.web.live import Live

    live = Live(data.version, interval_s, safety_s=safety_s)
    with config(path).connect() as c:
        follower = asyncio.create_task(live.run(c))
        try:
            streams = [live.stream(keepalive_s=60) for _ in range(5)]
            for s in streams:
                assert await anext(s) == "retry: 1000\n\n"
            waiting = [asyncio.create_task(anext(s)) for s in streams]
            while live.polls < 1:  # the store's version read once: a commit now is a change
                await asyncio.sleep(0)
            watching, reads_before = live.watching, live.polls
            await asyncio.to_thread(after)
            events = await asyncio.wait_for(asyncio.gather(*waiting), 10)
            return events, watching, live.generation, live.polls - reads_before
        finally:
            follower.cancel()


@pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")
def test_a_commit_by_another_connection_wakes_every_stream_through_the_watch(cli, traffic):
    # the safety poll (60 s) is longer than the wait (10 s): only the watch can wake it
    events, watching, generation, reads = asyncio.run(
        _changes(traffic, lambda: cli.ok("send", "team", "more", "--as", "op"))
    )
    assert watching is True
    assert events == ["event: change\ndata: 1\n\n"] * 5 and generation == 1
    assert reads < 100  # a read per hint (and a few re-checks), never one per stream


def test_without_inotify_the_store_is_polled_and_a_commit_still_wakes(cli, traffic, monkeypatch):
    monkeypatch.setenv("ACOMM_NO_INOTIFY", "1")
    events, watching, generation, reads = asyncio.run(
        _changes(traffic, lambda: cli.ok("send", "team", "more", "--as", "op"))
    )
    assert watching is False
    assert events == ["event: change\ndata: 1\n\n"] * 5 and generation == 1
    assert reads >= 1  # the poll saw it, once for the five streams


@pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")
def test_a_write_that_commits_nothing_is_no_change(traffic):
    def connection() -> sqlite3.Connection:
        return sqlite3.connect(traffic, isolation_level=None)

    def commit() -> None:
        with contextlib.closing(connection()) as conn:
            conn.execute("UPDATE channels SET state = state")

    def checkpoint() -> None:  # writes the store's file (a hint), commits nothing
        with contextlib.closing(connection()) as conn:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    async def scenario() -> tuple[int, int, int]:
        from acomm_cli.web import data
        from acomm_cli.web.live import Live

        live = Live(data.version, 0.0, safety_s=60)  # no least gap between two changes
        with config(traffic).connect() as c:
            task = asyncio.create_task(live.run(c))
            while live.polls < 1:
                await asyncio.sleep(0)
            await asyncio.to_thread(commit)  # frames in the WAL for the checkpoint to copy
            assert await asyncio.wait_for(live.wait(0, 60), 10) == 1
            reads = live.polls
            await asyncio.to_thread(checkpoint)
            gen = await live.wait(1, 0.6)  # the re-checks after a hint end within 0.5 s
            task.cancel()
            return gen, reads, live.polls

    generation, before, after = asyncio.run(scenario())
    assert after > before  # the checkpoint's write was a hint: the store was read again
    assert generation == 1  # but nothing was committed: no change


def test_closing_the_live_ends_every_stream(traffic):
    from acomm_cli.web import data
    from acomm_cli.web.live import Live

    async def scenario() -> list[str]:
        live = Live(data.version, 0.3)
        streams = [live.stream(keepalive_s=60) for _ in range(3)]
        for s in streams:
            await anext(s)
        ends = [asyncio.create_task(anext(s, "ended")) for s in streams]
        await asyncio.sleep(0)  # each stream is waiting
        live.close()
        return await asyncio.wait_for(asyncio.gather(*ends), 5)

    assert asyncio.run(scenario()) == ["ended"] * 3


def test_the_federation_page_lists_the_peers_with_their_lag(cli, traffic):
    cli.ok("node", "init", "--id", "na")
    cli.ok("peers", "add", "nb", "--url", "store:/nowhere/store.acomm")
    with client(traffic) as c:
        html = c.get("/federation").text
    assert "Node <strong>na</strong>" in html and 'data-peer="nb"' in html
    assert "store:/nowhere/store.acomm" in html


def test_a_file_is_listed_and_downloads_never_inline(cli, traffic, tmp_path):
    page = tmp_path / "page.html"
    page.write_text(SCRIPT)
    mid = cli.ok("send", "team", "see file", "--attach", str(page), "--as", "op").stdout.strip()
    with client(traffic) as c:
        html = c.get(f"/messages/{mid}").text
        assert f'href="/messages/{mid}/files/page.html"' in html
        r = c.get(f"/messages/{mid}/files/page.html")
        assert r.content == SCRIPT.encode()
        assert r.headers["content-type"] == "application/octet-stream"
        assert r.headers["content-disposition"] == "attachment"
        assert c.get(f"/messages/{mid}/files/other.txt").status_code == 404


def test_without_the_web_extra_the_command_names_the_install(cli, store, monkeypatch):
    import sys

    import acomm_cli.web

    monkeypatch.setitem(sys.modules, "jinja2", None)  # as if the extra were not installed
    monkeypatch.delitem(sys.modules, "acomm_cli.web.app", raising=False)
    monkeypatch.delattr(acomm_cli.web, "app", raising=False)  # imported by an earlier test
    r = cli("web", "--listen", "127.0.0.1:0", "--json")
    assert r.exit_code == 3
    assert r.error["code"] == "missing_extra" and "pip install 'acomm[web]'" in r.stderr


@pytest.mark.parametrize(
    "referer, back",
    [
        ("http://127.0.0.1/feed?channel=team", "/feed?channel=team"),
        ("javascript:alert(1)", "/"),
        ("https://evil.example/x", "/"),
    ],
)
def test_cancel_goes_back_to_a_page_of_the_console_only(traffic, referer, back):
    with client(traffic) as c:
        token = csrf(c.get("/channels").text)
        r = c.post(
            "/confirm",
            data={"csrf": token, "action": "pause", "channel": "team"},
            headers={"referer": referer},
        )
    assert f'<a href="{back.replace("&", "&amp;")}" id="cancel">' in r.text
