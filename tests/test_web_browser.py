"""`acomm web` in a real browser: Debian's chromium driven by Playwright. Each page loads
against a real store; a message sent by another process appears without a reload; each
action goes through its confirmation and leaves the store as the command it names leaves a
twin store; the login, CSRF and escaping hold in the browser too. Screenshots of each page
are taken on every run (into the test's directory); with ACOMM_SCREENSHOTS=1 they are
written to tests/screenshots/web/ (and the README's picture to docs/), to be looked at."""

from __future__ import annotations

import os
import shlex
import shutil
import sqlite3
import subprocess
import tempfile
from pathlib import Path

import pytest
from procs import stop
from webconsole import ACOMM, CHROMIUM, CHROMIUM_ARGS, rows, self_signed, serve

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(), reason="needs Debian's chromium (make .chromium)"
    ),
]

REPO = Path(__file__).resolve().parent.parent
SHOTS = REPO / "tests" / "screenshots" / "web"
KEEP = os.environ.get("ACOMM_SCREENSHOTS") == "1"
SCRIPT = "<script>alert('pwned')</script>"


@pytest.fixture(scope="module")
def browser():
    """One chromium for the module, on a fresh profile."""
    playwright = pytest.importorskip("playwright.sync_api")
    profile = tempfile.mkdtemp(prefix="acomm-chromium-")
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            ignore_https_errors=True,
            viewport={"width": 1280, "height": 800},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser):
    browser.clear_cookies()
    p = browser.new_page()
    dialogs: list[str] = []
    p.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    p.dialogs = dialogs  # type: ignore[attr-defined]
    yield p
    p.close()


def acomm(store: Path, *args: str) -> str:
    done = subprocess.run(
        [ACOMM, "--store", str(store), *args], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def traffic(cli, make_channel):
    """team (alice, bob), work (alice, bob) with two dead letters for bob, a script in a
    message body, a markdown message."""
    path = make_channel("team", "op", "alice", "bob")
    make_channel("work", "op", "alice", "bob")
    cli.ok("send", "team", f"hello {SCRIPT}", "--as", "op")
    cli.ok("send", "team", "# Plan\n\n**ship it** today", "--format", "markdown", "--as", "alice")
    cli.ok("send", "work", "job one", "--as", "op")
    cli.ok("send", "work", "job two", "--as", "op")
    cli.ok("channel", "leave", "work", "bob", "--as", "op")  # two dead letters: recipient_left
    cli.ok("channel", "join", "work", "bob", "--as", "op")
    return path


@pytest.fixture
def console(traffic):
    proc, url = serve(traffic, "--as", "op")
    try:
        yield url
    finally:
        stop(proc)


def shot(page, name: str, tmp_path: Path) -> None:
    target = SHOTS / f"{name}.png" if KEEP else tmp_path / f"{name}.png"
    target.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 1000


PAGES = [
    ("agents", "", "#agents tr[data-agent='alice']"),
    ("channels", "channels", "#channels tr[data-channel='team']"),
    ("feed", "feed", "#feed tr[data-id='1']"),
    ("message", "messages/1", "#recipients tr[data-recipient='bob']"),
    ("deadletters", "deadletters", "#deadletters tr[data-recipient='bob']"),
    ("tasks", "tasks", "#tasks"),
    ("federation", "federation", "#not-a-node"),
    ("charts", "charts", "#chart-traffic svg"),
]


def test_each_page_loads_in_the_browser(console, page, tmp_path):
    for name, path, selector in PAGES:
        response = page.goto(console + path)
        assert response is not None and response.status == 200, name
        page.wait_for_selector(selector)
        page.wait_for_selector("#status:not([hidden])")  # the event stream is open
        shot(page, name, tmp_path)
    if KEEP:  # the README's picture: the feed, live
        page.goto(console + "feed")
        page.wait_for_selector("#status:not([hidden])")
        page.screenshot(path=str(REPO / "docs" / "web-console.png"))
    assert page.dialogs == []


def test_a_script_in_a_body_shows_as_text_and_never_runs(console, page):
    page.goto(console + "messages/1")
    assert SCRIPT in page.inner_text("#body")
    page.goto(console + "feed")
    assert SCRIPT in page.inner_text("#feed tr[data-id='1']")
    assert page.evaluate("document.querySelectorAll('main script').length") == 0
    page.goto(console + "messages/2")  # markdown rendered, as HTML
    assert page.inner_text("#body strong") == "ship it"
    assert page.dialogs == []


def test_a_message_sent_by_another_process_appears_without_a_reload(console, traffic, page):
    page.goto(console + "feed")
    page.wait_for_selector("#status:not([hidden])")
    page.evaluate("window.notReloaded = true")
    mid = acomm(traffic, "send", "team", "from another process", "--as", "alice")
    page.wait_for_selector(f"#feed tr[data-id='{mid}']", timeout=2000)
    assert "from another process" in page.inner_text(f"#feed tr[data-id='{mid}']")
    assert page.evaluate("window.notReloaded") is True
    page.goto(console)  # the agents page follows too
    page.wait_for_selector("#status:not([hidden])")
    before = page.inner_text("#agents tr[data-agent='bob'] td:nth-child(3)")
    acomm(traffic, "send", "team", "one more", "--as", "alice")
    page.wait_for_function(
        "([b]) => document.querySelector(\"#agents tr[data-agent='bob'] td:nth-child(3)\")"
        ".textContent.trim() !== b",
        arg=[before],
        timeout=2000,
    )


def test_the_feed_scrolled_down_says_how_many_are_new(console, traffic, page):
    for i in range(40):  # a feed longer than the window
        acomm_args = ["send", "team", f"filler {i}", "--as", "alice"]
        if i == 39:
            last = int(acomm(traffic, *acomm_args))
        else:
            acomm(traffic, *acomm_args)
    page.goto(console + "feed")
    page.wait_for_selector("#status:not([hidden])")
    page.mouse.wheel(0, 3000)
    # a function, not an expression: Playwright evals an expression, which the page's CSP
    # (no 'unsafe-eval') refuses
    page.wait_for_function("() => window.scrollY > 40")
    acomm(traffic, "send", "team", "new while scrolled", "--as", "bob")
    page.wait_for_selector("#new-messages:not([hidden])", timeout=2000)
    assert page.inner_text("#new-messages") == "1 new"
    assert page.locator(f"#feed tr[data-id='{last + 1}']").count() == 0  # rows stayed
    page.click("#new-messages")
    page.wait_for_selector(f"#feed tr[data-id='{last + 1}']")


def _twin(store: Path, tmp_path: Path) -> Path:
    """A copy of the store, made with SQLite's backup: the same state, another file."""
    twin = tmp_path / "twin.acomm"
    src, dst = sqlite3.connect(store), sqlite3.connect(twin)
    try:
        src.backup(dst)
    finally:
        src.close(), dst.close()
    return twin


def _confirm(page, tmp_path: Path | None = None) -> str:
    """Read the command the confirmation names (its screenshot with `tmp_path`), run it."""
    page.wait_for_selector("#command, #error")
    assert page.locator("#error").count() == 0, page.inner_text("#error")
    command = page.inner_text("#command")
    if tmp_path is not None:
        shot(page, "confirm", tmp_path)
    page.click("#confirm")
    page.wait_for_selector("#done")
    return command


def _run_on(twin: Path, command: str) -> None:
    argv = shlex.split(command)
    assert argv[0] == "acomm"
    acomm(twin, *argv[1:])


def test_each_action_leaves_the_store_as_its_command_leaves_a_twin(
    console, traffic, page, tmp_path
):
    twin = _twin(traffic, tmp_path)
    commands: list[str] = []

    def confirmed() -> None:  # the browser's action, then its command on the twin
        commands.append(_confirm(page, None if commands else tmp_path))
        _run_on(twin, commands[-1])

    page.goto(console + "feed")  # send
    page.click("details.compose summary")
    page.fill("#send-form input[name=to]", "team")
    page.fill("#send-form textarea[name=body]", "sent from the browser")
    page.click("#send-form button")
    confirmed()

    page.goto(console + "feed")  # team broadcast
    page.click("details.compose summary")
    page.fill("#broadcast-form input[name=channel]", "team")
    page.fill("#broadcast-form textarea[name=body]", "all hands")
    page.click("#broadcast-form button")
    confirmed()

    acomm(traffic, "send", "--to", "op", "for op", "--as", "alice")  # a message op may ack
    acomm(twin, "send", "--to", "op", "for op", "--as", "alice")
    mid = rows(traffic)["messages"][-1][0]
    page.goto(console + f"messages/{mid}")  # ack
    page.select_option("#ack-form select[name=status]", "completed")
    page.click("#ack-form button")
    confirmed()

    page.goto(console + "deadletters")  # replay one dead letter, discard the other
    page.click("#deadletters tr[data-message='3'] .act-replay")
    confirmed()
    page.goto(console + "deadletters")
    page.click("#deadletters tr[data-message='4'] .act-discard")
    confirmed()

    page.goto(console + "channels")  # pause, then resume
    page.click("#channels tr[data-channel='team'] .act-pause")
    confirmed()
    page.goto(console + "channels")
    page.click("#channels tr[data-channel='team'] .act-resume")
    confirmed()

    assert [c.split()[1] for c in commands] == [
        "send",
        "send",
        "ack",
        "deadletter",
        "deadletter",
        "channel",
        "channel",
    ]
    assert rows(traffic) == rows(twin)
    assert rows(traffic)["channels"] != []  # compared something


def test_read_only_shows_no_action(traffic, page):
    proc, url = serve(traffic, "--read-only")
    try:
        page.goto(url + "channels")
        page.wait_for_selector("#channels tr[data-channel='team']")
        assert page.locator(".act-pause").count() == 0
        assert page.inner_text("header .ro") == "read-only"
    finally:
        stop(proc)


def test_the_login_refuses_a_wrong_secret_and_a_forged_form(cli, traffic, page, tmp_path):
    cli.ok("agent", "update", "op", "--admin")
    secret = cli.ok("agent", "token", "op").stdout.strip()
    cert, key = self_signed(tmp_path)
    proc, url = serve(traffic, "--login", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert url.startswith("https://")
        page.goto(url)
        assert page.url.endswith("/login")
        shot(page, "login", tmp_path)
        page.fill("input[name=token]", "acomm_as_wrong")
        page.click("#login-form button")
        assert "not proven" in page.inner_text("#error")
        page.fill("input[name=token]", secret)
        page.click("#login-form button")
        page.wait_for_selector("#agents")
        cookie = next(c for c in page.context.cookies() if c["name"] == "acomm_session")
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Strict"
        page.goto(url + "channels")
        page.evaluate(
            "document.querySelectorAll('input[name=csrf]').forEach(i => i.value = 'forged')"
        )
        page.click("#channels tr[data-channel='team'] .act-pause")
        assert "csrf" in page.inner_text("#error")
        assert ("team", "group", "active") in rows(traffic)["channels"]  # not paused
    finally:
        stop(proc)


def test_the_audits_report_opens_in_the_browser_with_its_charts(page, tmp_path):
    """report.html as an auditor opens it: from the disk, offline, every chart drawn (an SVG
    with a size on the page) and every table with its headings, a channel named like markup
    shown as text and never run."""
    pytest.importorskip("matplotlib")
    from test_audit_html import EXTRA, _summary

    from acomm_cli.analytics import report

    path = report.write(str(tmp_path / "audit"), report.render(_summary(), EXTRA))
    page.goto(Path(path).as_uri())
    charts = page.locator("figure.chart")
    assert charts.count() == 6
    for i in range(charts.count()):
        svg = charts.nth(i).locator("svg").first
        box = svg.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 50
    assert page.locator("table th").count() > 0
    assert "<script>alert(1)</script>" in page.locator("body").inner_text()
    assert page.dialogs == []  # type: ignore[attr-defined]
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
