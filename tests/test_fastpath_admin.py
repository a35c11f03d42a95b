"""The administrative commands (channel, agent, task, capability, incident, invite, token,
config, node, gateway...) on the fast path against Typer: the same command lines, on copies
of the same store at the same frozen time, print the same bytes, exit with the same status
and leave the same rows (tests/test_fastpath.py does the same for the hot commands)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ACOMM
from test_fastpath import NOW, TYPER, _env, _run

from acomm_cli.cli import main as fastpath

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(
        shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
    ),
]

FAST, HANDED_OVER = True, False
PUBLISH = ["capability", "publish", "review", "--owner", "bob"] + [
    "--delegation-skill",
    "skills/ask@1.0",
    "--executor-skill",
    "skills/exec@1.0",
]
CASES = [
    # channel
    (["channel", "create", "ops", "--as", "alice"], FAST),
    (["channel", "create", "ops", "--type", "queue", "--as", "alice", "--json"], FAST),
    (
        ["channel", "create", "ops", "--as", "alice", "--ack-timeout", "2m", "--max-retries", "3"]
        + ["--retry-jitter", "0.2", "--max-message-size", "1MiB", "--ack-clock", "read"],
        FAST,
    ),
    (["channel", "create", "team", "--as", "alice"], FAST),  # exists: exit 5
    (["channel", "create", "team", "--as", "alice", "--if-not-exists", "--json"], FAST),
    (["channel", "create", "ops", "--as", "alice", "--type", "circle"], FAST),  # exit 3
    (["channel", "create", "ops", "--as", "alice", "--ack-timeout", "soon"], FAST),  # exit 3
    (["channel", "create", "ops", "--as", "alice", "--no-echo"], FAST),  # a paired flag's off
    (["channel", "create", "ops", "--as", "alice", "--echo", "--no-echo"], HANDED_OVER),  # twice
    (["channel", "create", "ops", "--as", "alice", "--max-retries", "x"], HANDED_OVER),
    (["channel", "create", "--help"], HANDED_OVER),
    (["channel", "join", "team", "carol", "--as", "alice"], FAST),
    (["channel", "join", "team", "bob", "--as", "alice", "--json"], FAST),  # no change
    (["channel", "join", "team", "carol", "--as", "bob"], FAST),  # not the owner: exit 5
    (["channel", "join", "nowhere", "carol", "--as", "alice"], FAST),  # exit 4
    (["channel", "join", "team", "--as", "alice"], HANDED_OVER),  # the agent is missing
    (["channel", "leave", "team", "bob", "--as", "alice", "--json"], FAST),
    (["channel", "leave", "team", "carol", "--as", "alice"], FAST),  # not in it: exit 0
    (["channel", "leave", "nowhere", "bob", "--as", "alice"], FAST),  # exit 4
    (["channel", "leave", "team", "bob", "carol", "--as", "alice"], HANDED_OVER),  # one too many
    (["channel", "show", "team"], FAST),
    (["channel", "show", "team", "--json"], FAST),
    (["channel", "show", "nowhere"], FAST),  # exit 4
    (["channel", "show", "team", "--as", "alice"], HANDED_OVER),  # show takes no --as
    (["channel", "pause", "team", "--as", "alice"], FAST),
    (["channel", "resume", "team", "--as", "alice", "--json"], FAST),  # active already
    (["channel", "drain", "team", "--as", "bob"], FAST),  # exit 5
    (["channel", "close", "solo", "--as", "alice", "--json"], FAST),
    (["channel", "close", "--help"], HANDED_OVER),
    (["channel", "resume", "nowhere", "--as", "alice"], FAST),  # exit 4
    (["channel", "pause", "--as", "alice"], HANDED_OVER),  # the name is missing
    (["channel", "admin", "team", "bob", "--as", "alice"], FAST),
    (["channel", "admin", "team", "bob", "--revoke", "--as", "alice", "--json"], FAST),
    (["channel", "admin", "team", "carol", "--as", "alice"], FAST),  # not a member: exit 5
    (["channel", "admin", "team", "bob", "--revoke=yes", "--as", "alice"], HANDED_OVER),
    (
        ["channel", "update", "team", "--as", "alice", "--ack-timeout", "2m"]
        + ["--max-pending", "10", "--index-meta", "k", "--index-meta", "j"],
        FAST,
    ),
    (["channel", "update", "team", "--as", "alice", "--retention-age", "7d", "--json"], FAST),
    (["channel", "update", "team", "--as", "bob", "--max-pending", "1"], FAST),  # exit 5
    (["channel", "update", "team", "--as", "alice", "--priority-ordering"], FAST),
    (["channel", "update", "team", "--as", "alice", "--no-priority-ordering", "--json"], FAST),
    (["channel", "delete", "solo", "--as", "alice"], FAST),
    (["channel", "delete", "team", "--as", "alice", "--json"], FAST),  # in flight: exit 5
    (["channel", "delete", "team", "--as", "alice", "--force"], FAST),
    (["channel", "delete", "--as", "alice"], HANDED_OVER),
    # agent
    (["agent", "register", "dave"], FAST),  # NAME...: every word left
    (["agent", "register", "dave", "erin", "--kind", "human", "--json"], FAST),
    (["agent", "register", "--kind", "human"], HANDED_OVER),  # no name: click says so
    (["agent", "list"], FAST),
    (["agent", "list", "--json", "--kind", "human"], FAST),
    (["agent", "list", "--active", "5m", "--all", "--csv"], FAST),
    (["agent", "list", "--active", "later"], FAST),  # exit 3
    (["agent", "list", "--kind", "robot"], FAST),  # exit 3
    (["agent", "list", "--limit", "3"], HANDED_OVER),  # no such option: exit 2
    (["agent", "show", "alice"], FAST),
    (["agent", "show", "alice", "--json"], FAST),
    (["agent", "show", "alicia"], FAST),  # exit 4
    (["agent", "update", "bob", "--team", "core", "--accept", "contacts", "--json"], FAST),
    (["agent", "update", "bob", "--kind", "robot"], FAST),  # exit 3
    (["agent", "update", "bob", "--admin"], FAST),  # --admin/--no-admin
    (["agent", "update", "bob", "--no-admin", "--json"], FAST),
    (["agent", "update", "bob", "--admin=yes"], HANDED_OVER),  # a flag takes no value
    (["agent", "retire", "bob"], FAST),
    (["agent", "retire", "bob", "--json"], FAST),
    (["agent", "retire", "nobody"], FAST),  # exit 4
    (["agent", "retire", "-h"], HANDED_OVER),
    (["agent", "token", "bob", "--rotate", "--revoke"], FAST),  # exit 2
    (["agent", "token", "bob", "--revoke", "--json"], FAST),
    (["agent", "token", "bob", "--revoke", "--revoke"], HANDED_OVER),  # a flag twice
    (["agent", "contacts", "bob"], FAST),
    (["agent", "contacts", "bob", "add", "alice", "--json"], FAST),
    (["agent", "contacts", "bob", "add"], FAST),  # exit 3
    (["agent", "contacts", "bob", "befriend", "alice"], FAST),  # exit 3
    (["agent", "contacts", "bob", "add", "alice", "erin"], HANDED_OVER),  # one too many
    (["agent", "where", "bob", "--json"], FAST),
    (["agent", "own", "bob", "--fallback", "node-b", "--json"], FAST),
    (["agent", "disown", "bob"], FAST),
    (["agent", "show"], HANDED_OVER),
    (["agent", "show", "--help"], HANDED_OVER),
    # task (alice's tasks for bob: 2 created, 3 accepted)
    (["task", "create", "--to", "bob", "run the tests", "--as", "alice"], FAST),
    (["task", "create", "--to", "bob", "--as", "alice", "--eta-required", "--json"], FAST),
    (["task", "create", "hi", "--as", "alice"], FAST),  # no owner: click's exit 2, by Typer
    (["task", "create", "--to", "bob", "", "--as", "alice"], FAST),  # exit 3
    (["task", "accept", "2", "--eta", "10m", "--plan", "tests first", "--as", "bob"], FAST),
    (["task", "accept", "2", "--eta", "soon", "--as", "bob", "--json"], FAST),  # exit 3
    (["task", "accept", "2", "--as", "erin"], FAST),  # not its owner: exit 5
    (["task", "update", "2", "--progress", "50", "--as", "bob", "--json"], FAST),
    (["task", "complete", "2", "done", "--as", "bob"], FAST),  # not accepted: exit 5
    (["task", "update", "3", "--progress", "50", "--note", "half", "--as", "bob"], FAST),
    (["task", "complete", "3", "done", "--as", "bob", "--json"], FAST),
    (["task", "complete", "99", "--as", "bob"], FAST),  # exit 4
    (["task", "fail", "2", "--reason", "no machine", "--as", "bob", "--json"], FAST),
    (["task", "fail", "2", "--as", "bob"], FAST),  # no reason: click's exit 2, by Typer
    (["task", "list"], FAST),
    (["task", "list", "--as", "bob", "--state", "created", "--limit", "5", "--json"], FAST),
    (["task", "list", "--state", "sleeping"], FAST),  # exit 3
    (["task", "show", "2"], FAST),
    (["task", "show", "2", "--json"], FAST),
    (["task", "show", "x"], FAST),  # exit 4
    (["task", "list", "--limit", "-"], HANDED_OVER),
    (["task", "--help"], HANDED_OVER),
    # capability (bob hosts skills/exec@1.0; `review` is published; schema.json is here)
    (["capability", "host", "bob", "skills/other@2.0"], FAST),
    (["capability", "host", "bob", "skills/exec@1.0", "--remove", "--json"], FAST),
    (["capability", "host", "nobody", "skills/exec@1.0"], FAST),  # exit 4
    (PUBLISH + ["--schema", "schema.json"], FAST),
    (PUBLISH + ["--schema", "schema.json", "--eta", "5m", "--json"], FAST),
    (PUBLISH + ["--schema", "missing.json"], FAST),  # exit 3
    (PUBLISH + ["--schema", ""], FAST),  # click made "." of it: exit 3
    (PUBLISH, FAST),  # --schema is missing: click's exit 2, by Typer
    (PUBLISH + ["--schema", "schema.json", "--eta", "whenever"], FAST),  # exit 3
    (["capability", "unpublish", "review"], FAST),
    (["capability", "unpublish", "nothing", "--json"], FAST),  # exit 4
    (["capability", "list"], FAST),
    (["capability", "list", "--state", "published", "--json"], FAST),
    (["capability", "show", "review"], FAST),
    (["capability", "show", "review", "--json"], FAST),
    (["capability", "show", "nothing"], FAST),  # exit 4
    (["capability", "publish", "--help"], HANDED_OVER),
    # incident
    (["incident", "list"], FAST),
    (["incident", "list", "--state", "open", "--capability", "review", "--json"], FAST),
    (["incident", "list", "--state", "closed"], FAST),  # exit 3
    (["incident", "show", "99"], FAST),  # exit 4
    (["incident", "resolve", "99", "--note", "fixed", "--as", "alice", "--json"], FAST),
    (["incident", "show", "one"], HANDED_OVER),  # not a number: click's exit 2
    # invite and token (a federation node's; this store is none)
    (["invite", "list"], FAST),
    (["invite", "list", "--json"], FAST),
    (["invite", "create", "--expect", "node-b", "--ttl", "5m"], FAST),  # exit 5, no node
    (["invite", "revoke", "inv-1", "--json"], FAST),
    (["invite", "create", "--ttl"], HANDED_OVER),
    (["token", "list", "--json"], FAST),
    (["token", "create", "--agent", "bob", "--ttl", "1h"], FAST),
    (["token", "create", "--agent", "bob", "--ttl", "never"], FAST),  # exit 3
    (["token", "revoke", "tok-1"], FAST),
    (["token", "create"], HANDED_OVER),
    # config (paths differ between the two copies: compared as DIR)
    (["config", "show"], FAST),
    (["config", "show", "--json"], FAST),
    (["config", "show", "--tsv", "--no-headers"], FAST),
    (["config", "get", "store.busy_timeout"], FAST),
    (["config", "get", "store.busy_timeout", "--json"], FAST),
    (["config", "get", "store.nothing"], FAST),  # exit 3
    (["config", "set", "store.busy_timeout", "10s"], FAST),
    (["config", "set", "store.busy_timeout", "10s", "--json"], FAST),
    (["config", "set", "store.busy_timeout", "soon"], FAST),  # exit 3, the file unchanged
    (["config", "set", "identity.auth", "open"], FAST),  # exit 3
    (["config", "set", "identity.auth", "none", "--json"], FAST),
    (["config", "set", "store.busy_timeout"], HANDED_OVER),
    (["config", "get", "--help"], HANDED_OVER),
    # node (a new key pair is random: only what writes none)
    (["node", "init", "--id", "bad id"], FAST),  # exit 3
    (["node", "init", "--id", "node-a", "--replicas", "2", "--json"], FAST),  # exit 3
    (["node", "init", "--id", "node-a", "--transport", "http://x"], FAST),  # exit 3
    (["node", "init", "--id", "node-a", "--replicas", "two"], HANDED_OVER),
    (["node", "init"], HANDED_OVER),
    # gateway (not a node: exit 5), bridge, and the front ends' refusals before they serve
    (["gateway", "status"], FAST),
    (["gateway", "status", "--json"], FAST),
    (["gateway", "serve", "--listen", "nowhere"], FAST),  # exit 3
    (["gateway", "serve", "--listen", "127.0.0.1:0", "--invite", "t"], FAST),  # exit 3
    (["gateway", "serve"], HANDED_OVER),  # --listen is required
    (["bridge", "sync", "--inbox-dir", "inbox", "--outbox-dir", "outbox"], FAST),
    (["bridge", "sync", "--inbox-dir", "inbox", "--json"], FAST),
    (["bridge", "sync"], FAST),  # not configured: exit 2
    (["mcp", "--as", "bob", "--print-config", "claude"], FAST),
    (["mcp", "--as", "bob", "--print-config", "json", "--json"], FAST),
    (["mcp", "--print-config", "json"], FAST),  # no agent: exit 2
    (["mcp", "--as", "bob", "--token", "t"], FAST),  # only with --http: exit 2
    (["mcp", "--as", "bob", "--http", "10.1.2.3:0"], FAST),  # not loopback: exit 2
    (["ui", "--as", "bob"], FAST),  # not a terminal: exit 2
    (["ui", "--stale", "later"], FAST),  # exit 3
    (["web", "--listen", "8321"], FAST),  # exit 3
    (["web", "--listen", "0.0.0.0:0"], FAST),  # no TLS: exit 3
    (["web", "--tls-cert", "c.pem"], FAST),  # without --tls-key: exit 3
    (["web", "--help"], HANDED_OVER),
]


# On a federation node (`node-a`, its key made once in the base store: both copies share it).
NODE_CASES = [
    (["node", "init", "--id", "node-a"], FAST),  # the same id: nothing changes, the same key
    (["node", "init", "--id", "node-a", "--json"], FAST),
    (["node", "init", "--id", "node-b"], FAST),  # another id: exit 5
    (["agent", "own", "bob", "--fallback", "node-b", "--json"], FAST),
    (["agent", "own", "bob"], FAST),
    (["agent", "own", "alice"], FAST),  # owned here already: exit 0
    (["agent", "where", "alice", "--json"], FAST),
    (["agent", "where", "bob"], FAST),
    (["agent", "disown", "alice", "--json"], FAST),
    (["agent", "disown", "bob"], FAST),  # owned by no node: nothing to give up
    (["agent", "own", "--fallback", "node-b"], HANDED_OVER),
    (["invite", "list", "--json"], FAST),
    (["invite", "create", "--ttl", "never"], FAST),  # exit 3
    (["invite", "revoke", "inv-1"], FAST),  # exit 4
    (["token", "list"], FAST),
    (["token", "create", "--agent", "bob", "--scope", "everything"], FAST),  # exit 3
    (["token", "revoke", "tok-1", "--json"], FAST),  # exit 4
    (["gateway", "status"], FAST),  # none runs: exit 7
    (["gateway", "status", "--json"], FAST),
    (["gateway", "status", "--listen", "x"], HANDED_OVER),
]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with `team` (alice, bob) and an unread message for bob, `solo` (alice alone)."""
    d = tmp_path_factory.mktemp("fastpath-admin-base")
    store = d / "store.acomm"
    (d / "schema.json").write_text('{"type": "object"}')
    for argv in (
        ["init"],
        ["channel", "create", "team", "--as", "alice"],
        ["channel", "join", "team", "--as", "alice", "bob"],
        ["send", "team", "one", "--as", "alice"],
        ["channel", "create", "solo", "--as", "alice"],
        ["agent", "register", "erin"],
        ["agent", "update", "alice", "--kind", "human", "--display-name", "Alice"],
        ["task", "create", "--to", "bob", "build it", "--as", "alice"],
        ["task", "create", "--to", "bob", "ship it", "--as", "alice"],
        ["task", "accept", "3", "--eta", "1h", "--as", "bob"],
        ["capability", "host", "bob", "skills/exec@1.0"],
        PUBLISH + ["--schema", "schema.json"],
    ):
        subprocess.run(
            [*NOW, ACOMM, "--store", str(store), *argv],
            check=True,
            capture_output=True,
            env=_env(),
            cwd=d,
        )
    return d


# A task's correlation id and its events' ids (UUIDv7) are random, on either path.
_EVENT_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b"
)


def _steady(cmd: list[str], argv: list[str], where: Path, base: Path) -> tuple[object, ...]:
    """What the command line printed, its status and the rows it left, but for random ids and
    the copy's directory."""
    code, out, err, rows = _run(cmd, argv, None, where, base)

    def steady(text: str) -> str:
        return _EVENT_ID.sub("ID", text.replace(str(where), "DIR"))

    return code, steady(out), steady(err), steady(repr(rows))


@pytest.fixture(scope="module")
def node_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A federation node `node-a` owning alice, with `team` (alice, bob)."""
    d = tmp_path_factory.mktemp("fastpath-admin-node")
    store = d / "store.acomm"
    for argv in (
        ["init"],
        ["node", "init", "--id", "node-a"],
        ["agent", "register", "alice", "bob"],
        ["channel", "create", "team", "--as", "alice"],
        ["channel", "join", "team", "--as", "alice", "bob"],
        ["agent", "own", "alice"],
    ):
        subprocess.run(
            [*NOW, ACOMM, "--store", str(store), *argv], check=True, capture_output=True, env=_env()
        )
    return d


def _compare(argv: list[str], fast: bool, base: Path, tmp_path: Path) -> None:
    assert (fastpath.plan(argv) is not None) is fast
    typer = _steady(TYPER, argv, tmp_path / "typer", base)
    quick = _steady([ACOMM], argv, tmp_path / "fast", base)
    assert quick[:3] == typer[:3]
    assert quick[3] == typer[3]


@pytest.mark.parametrize(("argv", "fast"), CASES, ids=lambda v: repr(v)[:70])
def test_both_paths_print_exit_and_store_alike(argv, fast, base, tmp_path):
    _compare(argv, fast, base, tmp_path)


@pytest.mark.parametrize(("argv", "fast"), NODE_CASES, ids=lambda v: repr(v)[:70])
def test_both_paths_alike_on_a_federation_node(argv, fast, node_base, tmp_path):
    _compare(argv, fast, node_base, tmp_path)
