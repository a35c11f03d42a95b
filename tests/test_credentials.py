"""Agent credentials (identity.auth: token): acting as an agent needs its secret; admins
issue secrets; dispatch hands a run its own agent's secret only; with auth none nothing
changes. Real stores, the command line as users run it (in process and as processes)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ACOMM, query, run

from acomm_cli.engine import credentials, opening
from acomm_cli.errors import Forbidden, InvalidState, ValidationFailed
from acomm_cli.federation import tokens

pytestmark = pytest.mark.cli


def register(store: Path, *names: str) -> None:
    """Names in the directory, as `agent register` leaves them."""
    c = sqlite3.connect(store)
    c.executemany(
        "INSERT OR IGNORE INTO agents (name, registered_at, updated_at) VALUES (?, 0, 0)",
        [(n,) for n in names],
    )
    c.commit()
    c.close()


def auth_on(store: Path) -> None:
    """The store's identity.auth, as `config set identity.auth token` writes it."""
    c = opening.connect(store, create=False)
    try:
        credentials.set_auth(c, "token", secret=None, now=1, configured=None)
    finally:
        c.close()


@pytest.fixture
def secured(cli, team):
    """alice's team with bob; alice the first admin; bob has a secret; auth on in the store.
    Returns (store, alice's secret, bob's secret)."""
    register(team, "alice", "bob", "carol")
    admin = cli.ok("init", "--admin", "alice").stdout.strip()
    bob = cli("agent", "token", "bob", env={"ACOMM_AGENT_TOKEN": admin}).stdout.strip()
    auth_on(team)
    return team, admin, bob


def as_(secret: str | None) -> dict[str, str]:
    return {"ACOMM_AGENT_TOKEN": secret} if secret else {}


# ---------------------------------------------------------------- acting as an agent


def test_auth_none_changes_nothing(cli, team):
    """No secret anywhere, any --as acts, and no credential row is made."""
    assert cli("send", "team", "hi", "--as", "alice").exit_code == 0
    assert cli("receive", "--as", "bob").exit_code == 0
    assert query(team, "SELECT count(*) FROM agent_tokens") == [(0,)]


def test_an_agent_cannot_send_as_another(cli, secured):
    store, _, bob = secured
    before = query(store, "SELECT count(*) FROM messages")
    refused = cli("send", "team", "I am alice", "--as", "alice", "--json", env=as_(bob))
    assert refused.exit_code == 5
    assert refused.error["code"] == "forbidden"
    assert "'alice'" in refused.error["message"]
    assert query(store, "SELECT count(*) FROM messages") == before  # store unchanged
    assert cli("send", "team", "I am bob", "--as", "bob", env=as_(bob)).exit_code == 0


def test_no_secret_is_refused_for_every_acting_command(cli, secured):
    for args in (
        ["send", "team", "x", "--as", "bob"],
        ["receive", "--as", "bob"],
        ["ack", "1", "--as", "bob"],
        ["subscribe", "team", "#", "--as", "bob"],
        ["channel", "create", "mine", "--as", "bob"],
        ["query", "team", "?", "--as", "bob"],
    ):
        got = cli(*args)
        assert (got.exit_code, "forbidden" in got.stderr) == (5, True), args


def test_a_batch_line_acts_as_its_sender(cli, secured):
    store, _, bob = secured
    lines = '{"channel": "team", "from": "bob", "content": "mine"}\n'
    forged = lines + '{"channel": "team", "from": "alice", "content": "hers"}\n'
    got = cli("send", "--batch", "-", input=forged, env=as_(bob))
    assert (got.exit_code, "'alice'" in got.stderr) == (5, True)
    assert query(store, "SELECT count(*) FROM messages WHERE content IN ('mine', 'hers')") == [(0,)]
    assert cli("send", "--batch", "-", input=lines, env=as_(bob)).exit_code == 0


def test_wrong_revoked_or_nobody_get_the_same_answer(cli, secured):
    """A wrong secret, a revoked one and a name nobody registered: one message, the name
    aside, so the refusal says nothing of which agents exist."""
    store, admin, bob = secured
    wrong = cli("send", "team", "x", "--as", "bob", env=as_("acomm_as_" + "A" * 43))
    nobody = cli("send", "team", "x", "--as", "nosuchagent", env=as_(bob))
    cli.ok("agent", "token", "bob", "--revoke", "--token-file", _file(store, admin))
    revoked = cli("send", "team", "x", "--as", "bob", env=as_(bob))
    for got in (wrong, nobody, revoked):
        assert got.exit_code == 5
    assert wrong.stderr == revoked.stderr
    assert nobody.stderr.replace("nosuchagent", "bob") == wrong.stderr


def test_the_environment_cannot_turn_the_stores_setting_off(cli, secured):
    got = cli("send", "team", "x", "--as", "alice", env={"ACOMM_IDENTITY_AUTH": "none"})
    assert got.exit_code == 5


def test_the_environment_can_turn_it_on(cli, team):
    got = cli("send", "team", "x", "--as", "alice", env={"ACOMM_IDENTITY_AUTH": "token"})
    assert got.exit_code == 5
    assert "not proven" in got.stderr


@pytest.mark.process
def test_the_fast_path_checks_too(secured):
    """`acomm send` as a process runs without Typer: the same refusal, the same success."""
    _, _, bob = secured
    refused = run("send", "team", "x", "--as", "alice", env=as_(bob))
    assert (refused.returncode, "forbidden" in refused.stderr) == (5, True)
    assert run("send", "team", "x", "--as", "bob", env=as_(bob)).returncode == 0
    store = secured[0]
    by_file = run("send", "team", "x", "--as", "bob", "--token-file", _file(store, bob))
    assert by_file.returncode == 0, by_file.stderr
    shared = run("send", "team", "x", "--as", "bob", "--token-file", _file(store, bob, 0o640))
    assert (shared.returncode, "chmod 600" in shared.stderr) == (3, True)


def _file(store: Path, secret: str, mode: int = 0o600) -> str:
    p = store.parent / f"secret-{mode:o}-{secret[-6:]}"
    p.write_text(secret + "\n")
    p.chmod(mode)
    return str(p)


def test_token_file_must_be_its_owners_alone(cli, secured):
    store, _, bob = secured
    ok = cli("send", "team", "x", "--as", "bob", "--token-file", _file(store, bob))
    assert ok.exit_code == 0, ok.stderr
    shared = _file(store, bob, 0o644)
    got = cli("send", "team", "x", "--as", "bob", "--token-file", shared, "--json")
    assert got.exit_code == 3
    assert got.error["field"] == "token_file"
    assert "chmod 600" in got.error["message"]


# ---------------------------------------------------------------- secrets and admins


def test_a_secret_is_shown_once_and_stored_hashed(cli, secured):
    store, admin, bob = secured
    assert bob.startswith("acomm_as_")
    raw = store.read_bytes() + (
        store.with_name(store.name + "-wal").read_bytes()
        if store.with_name(store.name + "-wal").exists()
        else b""
    )
    assert bob.encode() not in raw
    assert credentials.digest(bob) in {
        r[0] for r in query(store, "SELECT token_sha256 FROM agent_tokens")
    }
    again = cli("agent", "token", "bob", "--json", env=as_(admin))
    assert again.exit_code == 5 and "never shown again" in again.error["message"]
    listed = cli.ok("token", "list", "--json").stdout
    assert bob not in listed and admin not in listed


def test_rotate_replaces_the_secret(cli, secured):
    _, admin, bob = secured
    rotated = cli("agent", "token", "bob", "--rotate", "--json", env=as_(admin))
    fresh = rotated.json()["token"]
    assert cli("send", "team", "x", "--as", "bob", env=as_(bob)).exit_code == 5
    assert cli("send", "team", "x", "--as", "bob", env=as_(fresh)).exit_code == 0


def test_admin_verbs_need_an_admins_secret(cli, secured):
    _, admin, bob = secured
    for env in ({}, as_(bob)):
        got = cli("agent", "token", "carol", "--json", env=env)
        assert (got.exit_code, got.error["code"], got.error["field"]) == (5, "forbidden", "admin")
    assert cli("agent", "token", "carol", env=as_(admin)).exit_code == 0


def test_the_directorys_admin_verbs_need_an_admins_secret(cli, secured):
    """register, update (granting the admin role above all), retire and config set."""
    store, admin, bob = secured
    before = query(store, "SELECT name, is_admin, retired_at, team FROM agents ORDER BY name")
    for args in (
        ("agent", "register", "dave"),
        ("agent", "update", "bob", "--admin"),
        ("agent", "update", "bob", "--team", "core"),
        ("agent", "retire", "carol"),
        ("config", "set", "identity.directory", "open"),
        ("config", "set", "identity.auth", "none"),
    ):
        for env in ({}, as_(bob)):
            got = cli(*args, "--json", env=env)
            assert (got.exit_code, got.error["code"]) == (5, "forbidden"), args
    assert query(store, "SELECT name, is_admin, retired_at, team FROM agents ORDER BY name") == (
        before
    )
    assert query(store, "SELECT value FROM store_meta WHERE key = 'identity.auth'") == [("token",)]
    assert cli("agent", "update", "bob", "--admin", env=as_(admin)).exit_code == 0
    assert cli("agent", "retire", "carol", env=as_(bob)).exit_code == 0  # bob is one now


def test_register_can_issue_the_new_agents_secret(cli, secured):
    store, admin, _ = secured
    got = cli("agent", "register", "dave", "--issue-token", env=as_(admin))
    assert got.exit_code == 0
    dave = got.stdout.strip()
    assert dave.startswith("acomm_as_") and dave not in Path(store).read_bytes().decode("latin-1")
    assert cli("receive", "--as", "dave", env=as_(dave)).exit_code == 0
    assert cli("receive", "--as", "bob", env=as_(dave)).exit_code == 5


def test_config_set_identity_auth_writes_the_store(cli, team):
    register(team, "alice")
    admin = cli.ok("init", "--admin", "alice").stdout.strip()
    got = cli.ok("config", "set", "identity.auth", "token", "--json").json()
    assert (got["key"], got["value"], got["file"]) == ("identity.auth", "token", None)
    assert query(team, "SELECT value FROM store_meta WHERE key = 'identity.auth'") == [("token",)]
    assert cli("receive", "--as", "alice").exit_code == 5  # no secret: every process bound
    assert cli("receive", "--as", "alice", env=as_(admin)).exit_code == 0


def test_the_first_admin_only_once(cli, store):
    first = cli("init", "--admin", "root", "--json")
    assert first.exit_code == 0
    doc = first.json()
    assert (doc["agent"], doc["admin"], doc["token"][:9]) == ("root", True, "acomm_as_")
    assert query(store, "SELECT is_admin FROM agents WHERE name = 'root'") == [(1,)]
    second = cli("init", "--admin", "mallory", "--json")
    assert second.exit_code == 5
    assert query(store, "SELECT count(*) FROM agents WHERE name = 'mallory'") == [(0,)]


def test_the_last_admin_cannot_step_down_while_auth_is_on(cli, secured):
    """With no admin left nobody could ever run an admin verb again, and `init --admin`
    would make whoever asks next an admin, without a secret."""
    store, admin, bob = secured
    for args in (("agent", "update", "alice", "--no-admin"), ("agent", "retire", "alice")):
        got = cli(*args, "--json", env=as_(admin))
        assert (got.exit_code, got.error["code"], got.error["field"]) == (
            5,
            "invalid_state",
            "admin",
        ), args
    assert query(store, "SELECT is_admin, retired_at FROM agents WHERE name = 'alice'") == [
        (1, None)
    ]
    assert cli("init", "--admin", "mallory").exit_code == 5
    # another admin first: then alice may go
    assert cli("agent", "update", "bob", "--admin", env=as_(admin)).exit_code == 0
    assert cli("agent", "update", "alice", "--no-admin", env=as_(admin)).exit_code == 0
    assert query(store, "SELECT name FROM agents WHERE is_admin = 1") == [("bob",)]


def test_a_retired_agent_gets_no_secret(cli, secured):
    store, admin, _ = secured
    c = sqlite3.connect(store)
    c.execute("UPDATE agents SET retired_at = 1 WHERE name = 'carol'")
    c.commit()
    c.close()
    got = cli("agent", "token", "carol", "--json", env=as_(admin))
    assert (got.exit_code, got.error["code"]) == (5, "invalid_state")
    assert query(store, "SELECT count(*) FROM agent_tokens WHERE agent = 'carol'") == [(0,)]


def test_auth_none_needs_no_admin(cli, team):
    register(team, "bob")
    assert cli("agent", "token", "bob").exit_code == 0


def test_the_stores_setting_is_an_admins_to_change(secured):
    """`config set identity.auth` runs this: once on, only an admin turns it off."""
    store, admin, bob = secured
    c = opening.connect(store, create=False)
    try:
        for secret in (None, bob):
            with pytest.raises(Forbidden):
                credentials.set_auth(c, "none", secret=secret, now=1, configured=None)
        assert credentials.mode(c) == "token"
        credentials.set_auth(c, "none", secret=admin, now=1, configured=None)
        assert credentials.mode(c) == "none"
    finally:
        c.close()


def test_auth_cannot_go_on_without_an_admin(store):
    c = opening.connect(store, create=False)
    try:
        with pytest.raises(InvalidState):
            credentials.set_auth(c, "token", secret=None, now=1, configured=None)
        with pytest.raises(ValidationFailed):
            credentials.set_auth(c, "tokens", secret=None, now=1, configured=None)
        assert credentials.mode(c) == "none"
    finally:
        c.close()


# ---------------------------------------------------------------- servers


def test_mcp_refuses_an_unproven_agent(cli, secured):
    pytest.importorskip("mcp")
    got = cli("mcp", "--as", "alice", "--json")
    assert (got.exit_code, got.error["code"]) == (5, "forbidden")


def test_the_gateway_takes_an_agents_secret(secured):
    store, _, bob = secured
    c = opening.connect(store, create=False)
    try:
        session = tokens.authenticate(c, bob, 10**12 * 2)
        assert session is not None and session.agent == "bob"
        assert session.scopes == frozenset(tokens.SCOPES)
        assert tokens.authenticate(c, "acomm_as_" + "B" * 43, 10**12 * 2) is None
    finally:
        c.close()


# ---------------------------------------------------------------- dispatch


def _agent(tmp_path: Path, body: str) -> str:
    p = tmp_path / "agent.sh"
    p.write_text(f"#!/bin/sh\nACOMM={ACOMM}\nWORK={tmp_path}\n{body}")
    p.chmod(0o755)
    return str(p)


def test_dispatch_hands_a_run_its_own_agents_secret_only(cli, secured, tmp_path):
    store, admin, _ = secured
    script = _agent(
        tmp_path,
        """
"$ACOMM" send team "as alice" --as alice 2> "$WORK/other.err"; echo $? > "$WORK/other.rc"
"$ACOMM" send team "as bob" --as bob > /dev/null; echo $? > "$WORK/own.rc"
""",
    )
    (store.parent / "config.yaml").write_text(json.dumps({"agents": {"bob": {"run": script}}}))
    cli("send", "team", "work", "--as", "alice", env=as_(admin), strict=True)
    refused = cli("tick", "--json")
    assert (refused.exit_code, refused.error["field"]) == (5, "admin")  # dispatch mints secrets
    doc = cli("tick", "--json", env=as_(admin))
    assert doc.exit_code == 0, doc.stderr
    assert (tmp_path / "other.rc").read_text().strip() == "5"
    assert "'alice'" in (tmp_path / "other.err").read_text()
    assert (tmp_path / "own.rc").read_text().strip() == "0"
    # the run's secret is gone with the run
    assert query(store, "SELECT count(*) FROM agent_tokens WHERE token_id LIKE 'run:%'") == [(0,)]
    assert query(store, "SELECT sender FROM messages WHERE content LIKE 'as %'") == [("bob",)]


def test_dispatch_never_passes_the_dispatchers_secret_on(cli, team, tmp_path):
    """auth none: no secret is minted, and the tick's own never reaches the command."""
    script = _agent(tmp_path, 'echo "${ACOMM_AGENT_TOKEN:-none}" > "$WORK/seen"')
    (team.parent / "config.yaml").write_text(json.dumps({"agents": {"bob": {"run": script}}}))
    cli.ok("send", "team", "work", "--as", "alice")
    cli("tick", env={"ACOMM_AGENT_TOKEN": "acomm_as_mine"}, strict=True)
    assert (tmp_path / "seen").read_text().strip() == "none"


@pytest.mark.process
def test_a_send_with_auth_none_loads_nothing_of_credentials(team):
    code = (
        "import sys\n"
        "sys.argv = ['acomm', 'send', 'team', 'x', '--as', 'alice']\n"
        "from acomm_cli.cli import main\n"
        "try:\n    main.main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if 'credentials' in m or m in ('hmac', 'secrets')),"
        " file=sys.stderr)\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
    )
    assert p.stderr.strip().splitlines()[-1] == "[]", p.stderr
