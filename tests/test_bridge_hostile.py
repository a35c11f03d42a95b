"""The mailbox bridge against whoever can write in its directories: a file nested too deep
for Python's parser, a file past the size bounds, and things that are not regular files (a
FIFO, a socket, a device, a symbolic link) where a response file or a team inbox belongs.
Each is left in place and reported; `send` and `tick` exit 0, never block, and the other
files still go through."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from conftest import query, run
from freezegun import freeze_time

from acomm_cli.bridge import paths
from acomm_cli.errors import UnsafePath, ValidationFailed

pytestmark = pytest.mark.cli

WITHIN = 30.0  # a bound for a command that must not block at all (a loaded machine is slow)
DEEP = b"[" * 100_000 + b"]" * 100_000  # far past Python's recursion limit
DEEP_OBJECT = b'{"a": ' * 5_000 + b"1" + b"}" * 5_000


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    d = {k: tmp_path / "claude" / k for k in ("inbox", "outbox", "teams")}
    for k, p in d.items():
        monkeypatch.setenv(f"ACOMM_BRIDGE_{k.upper()}_DIR", str(p))
    return d


@pytest.fixture
def crew(cli, team: Path, dirs: dict[str, Path]) -> Path:
    """w@crew and v@crew in `team`; returns crew's inboxes directory (made, empty)."""
    for who in ("w@crew", "v@crew"):
        cli.ok("channel", "join", "team", "--as", "alice", who)
    inboxes = dirs["teams"] / "crew" / "inboxes"
    inboxes.mkdir(parents=True)
    return inboxes


def _outbox(dirs: dict[str, Path], name: str, body: bytes) -> Path:
    d = dirs["outbox"] / "bob"
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(body)
    return d / name


def _bad_files(cli) -> int:
    return cli.ok("stats", "--json").json()["bridge"]["bad_files"]


# ---------------------------------------------------------------- nesting and size


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["arrays", "objects"])
def test_a_deeply_nested_response_file_is_left_and_reported_and_others_go_through(
    cli, team, dirs, body
):
    deep = _outbox(dirs, "a-deep.json", body)
    good = _outbox(dirs, "b-good.json", json.dumps({"to": "carol", "content": "hi"}).encode())
    r = cli("tick", "--json")
    assert r.exit_code == 0, r.stderr
    assert "RecursionError" not in r.stderr
    assert f"response file {deep} left in place" in r.stderr
    assert "nested deeper than 64 levels" in r.stderr
    assert r.json()["bridge"]["ingested"] == 1 and not good.exists()
    assert deep.read_bytes() == body
    assert _bad_files(cli) == 1
    again = cli("tick")  # reported once, and never the end of a tick
    assert again.exit_code == 0 and "left in place" not in again.stderr
    assert [
        m["content"] for m in cli.ok("receive", "--as", "carol", "--json").json()["messages"]
    ] == ["hi"]


def test_nesting_up_to_the_bound_goes_through(cli, team, dirs):
    """The bound is the documented 64 levels: a 64-deep object is a message; the
    content is the object's JSON text, forwarded to the default channel."""
    body = {"r": 0}
    for _ in range(63):
        body = {"r": body}
    f = _outbox(dirs, "ok.json", json.dumps(body).encode())
    r = cli("tick", "--json", env={"ACOMM_BRIDGE_DEFAULT_CHANNEL": "team"})
    assert r.exit_code == 0 and r.json()["bridge"]["ingested"] == 1, r.stderr
    assert not f.exists()


def test_a_deeply_nested_team_inbox_is_left_and_reported_and_others_are_written(cli, crew):
    (crew / "w.json").write_bytes(DEEP)
    with freeze_time("2025-01-01T00:00:00Z"):
        r = cli("send", "team", "go", "--as", "alice")
        assert r.exit_code == 0, r.stderr
        mid = int(r.stdout)
        assert "RecursionError" not in r.stderr
        assert f"team inbox {crew / 'w.json'} left in place" in r.stderr
        assert "nested deeper than 64 levels" in r.stderr
        assert (crew / "w.json").read_bytes() == DEEP
        assert [e["messageId"] for e in json.loads((crew / "v.json").read_text())] == [str(mid)]
    with freeze_time("2025-01-01T00:00:05Z"):  # the retry is due: it fails again, quietly
        t = cli("tick", "--json")
        assert t.exit_code == 0 and "RecursionError" not in t.stderr, t.stderr
        assert "left in place" not in t.stderr
        assert (crew / "w.json").read_bytes() == DEEP
        assert cli.ok("stats", "--json").json()["bridge"]["mirror_backlog"] == 1
        (crew / "w.json").write_text("[]")  # repaired: the next retry appends the entry
    with freeze_time("2025-01-01T00:01:30Z"):
        assert cli.ok("tick", "--json").json()["bridge"]["written"] == 1
    assert [e["messageId"] for e in json.loads((crew / "w.json").read_text())] == [str(mid)]


def test_a_response_file_past_the_size_bound_is_left_and_reported(cli, team, dirs):
    """Valid JSON, but larger than the bridge reads: refused by its size, before parsing."""
    body = json.dumps({"to": "carol", "content": "big"}).encode()
    big = _outbox(dirs, "big.json", body + b" " * paths.MAX_RESPONSE_BYTES)
    good = _outbox(dirs, "good.json", json.dumps({"to": "carol", "content": "hi"}).encode())
    r = cli("tick", "--json")
    assert r.exit_code == 0, r.stderr
    assert f"response file {big} left in place" in r.stderr and "larger than" in r.stderr
    assert r.json()["bridge"]["ingested"] == 1 and not good.exists() and big.exists()
    assert _bad_files(cli) == 1


def test_a_team_inbox_past_the_size_bound_is_never_overwritten(cli, crew):
    body = b"[" + b" " * paths.MAX_TEAM_INBOX_BYTES + b"]"
    (crew / "w.json").write_bytes(body)
    r = cli("send", "team", "go", "--as", "alice")
    assert r.exit_code == 0 and "larger than" in r.stderr, r.stderr
    assert f"team inbox {crew / 'w.json'} left in place" in r.stderr
    assert (crew / "w.json").stat().st_size == len(body)
    assert len(json.loads((crew / "v.json").read_text())) == 1


# ---------------------------------------------------------------- files that are not files


def _socket_at(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(path.relative_to(Path.cwd())))  # the test's cwd is tmp_path: a short name
    return s


def _device_at(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # like /dev/null
    except PermissionError:
        pytest.skip("making a device node needs privileges this test does not have")


# (FIFOs: as separate processes, below; a regression would block an in-process test for good)
@pytest.mark.parametrize("kind", ["socket", "character device"])
def test_special_files_as_response_files_are_refused(cli, team, dirs, kind):
    d = dirs["outbox"] / "bob"
    d.mkdir(parents=True)
    odd = d / "odd.json"
    held = None
    if kind == "socket":
        held = _socket_at(odd)
    else:
        _device_at(odd)
    good = _outbox(dirs, "good.json", json.dumps({"to": "carol", "content": "hi"}).encode())
    try:
        r = cli("tick", "--json")
    finally:
        if held is not None:
            held.close()
    assert r.exit_code == 0, r.stderr
    assert f"response file {odd} left in place: a {kind}, not a regular file" in r.stderr
    assert r.json()["bridge"]["ingested"] == 1 and not good.exists()
    assert odd.exists()


@pytest.mark.parametrize("kind", ["socket", "character device", "symbolic link"])
def test_special_files_as_team_inboxes_are_refused(cli, crew, tmp_path, kind):
    odd = crew / "w.json"
    held = None
    if kind == "socket":
        held = _socket_at(odd)
    elif kind == "character device":
        _device_at(odd)
    else:
        (tmp_path / "elsewhere.json").write_text("[]")
        odd.symlink_to(tmp_path / "elsewhere.json")
    before = os.lstat(odd)
    try:
        r = cli("send", "team", "go", "--as", "alice")
        t = cli("tick", "--json")
    finally:
        if held is not None:
            held.close()
    assert r.exit_code == 0 and t.exit_code == 0, r.stderr + t.stderr
    assert f"team inbox {odd} left in place" in r.stderr and "not a regular file" in r.stderr
    assert stat.S_IFMT(os.lstat(odd).st_mode) == stat.S_IFMT(before.st_mode)  # not replaced
    assert len(json.loads((crew / "v.json").read_text())) == 1
    if kind == "symbolic link":
        assert (tmp_path / "elsewhere.json").read_text() == "[]"


# ---------------------------------------------------------------- the reader, directly


@pytest.mark.unit
def test_the_reader_never_blocks_on_a_fifo(tmp_path):
    """Read in a thread: a reader that blocked would still be alive after the join (and is
    released by opening the FIFO for writing), rather than hang the test run."""
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    outcome: list[BaseException | bytes | None] = []

    def read() -> None:
        try:
            outcome.append(paths.read_regular(fifo, 1024))
        except BaseException as exc:  # handed to the assertion below
            outcome.append(exc)

    t = threading.Thread(target=read, daemon=True)
    t.start()
    t.join(WITHIN)
    if t.is_alive():
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(WITHIN)
        pytest.fail("reading a FIFO blocked")
    assert isinstance(outcome[0], UnsafePath) and "a FIFO" in str(outcome[0])


@pytest.mark.unit
def test_the_reader_bounds_size_and_depth(tmp_path):
    f = tmp_path / "f.json"
    f.write_bytes(b"[" + b" " * 10 + b"]")
    assert paths.read_regular(f, 12) == f.read_bytes()
    with pytest.raises(ValidationFailed, match="larger than"):
        paths.read_regular(f, 11)
    assert paths.read_regular(tmp_path / "missing.json", 10) is None
    assert paths.parse_json(b'{"a": "[[[[[[", "b": [[1]]}', max_depth=3) == {
        "a": "[[[[[[",
        "b": [[1]],
    }  # brackets inside strings do not count
    with pytest.raises(ValidationFailed, match="nested deeper than 2 levels"):
        paths.parse_json(b'{"b": [[1]]}', max_depth=2)
    with pytest.raises(ValidationFailed, match="nested deeper"):
        paths.parse_json(DEEP)
    with pytest.raises(ValidationFailed, match="not valid JSON"):
        paths.parse_json(b"[1, ")


# ---------------------------------------------------------------- as separate processes


@pytest.mark.process
def test_a_fifo_team_inbox_neither_holds_send_nor_tick(cli, crew, store):
    """The FIFO is never opened for a blocking read: `send` returns with its message
    committed and the file named, and `tick` neither hangs nor fails."""
    os.mkfifo(crew / "w.json")
    start = time.monotonic()
    r = run("send", "team", "go", "--as", "alice", timeout=WITHIN)
    assert r.returncode == 0, r.stderr
    mid = int(r.stdout)
    assert query(store, "SELECT count(*) FROM deliveries WHERE message_id = ?", mid) == [(3,)]
    assert f"team inbox {crew / 'w.json'} left in place: a FIFO, not a regular file" in r.stderr
    t = run("tick", "--json", timeout=WITHIN)
    assert t.returncode == 0, t.stderr
    assert time.monotonic() - start < WITHIN
    assert (crew / "w.json").is_fifo()


@pytest.mark.process
def test_a_fifo_response_file_does_not_hold_tick(cli, team, dirs):
    d = dirs["outbox"] / "bob"
    d.mkdir(parents=True)
    os.mkfifo(d / "x.json")
    _outbox(dirs, "y.json", json.dumps({"to": "carol", "content": "hi"}).encode())
    t = run("tick", "--json", timeout=WITHIN)
    assert t.returncode == 0, t.stderr
    assert "left in place: a FIFO, not a regular file" in t.stderr
    assert json.loads(t.stdout)["bridge"]["ingested"] == 1
    assert (d / "x.json").is_fifo()
