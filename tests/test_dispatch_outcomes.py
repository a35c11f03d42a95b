"""Agent dispatch against the rest of acomm: the channels' ack timers, expiry, a command that
takes its message itself, and output past the cap. Real shell scripts as agents, a real store,
time moved with freezegun (in process) or faketime (the commands' own acomm calls)."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from conftest import query
from freezegun import freeze_time
from test_dispatch import T0, agent_script, configure, state

pytestmark = pytest.mark.cli

# ---------------------------------------------------------------- the channel's ack timers


def deliveries(cli, mid: int) -> dict[str, tuple[str, str | None]]:
    doc = cli.ok("show", str(mid), "--json").json()
    return {d["recipient"]: (d["state"], d["ack_status"]) for d in doc["deliveries"]}


def test_a_claimed_tracked_delivery_is_in_progress_and_the_ack_timer_leaves_it_alone(
    cli, store, tmp_path
):
    """On an at-least-once channel the claim acknowledges `in_progress` (what an agent at work
    would say): the channel's ack timer, which would redeliver and then dead-letter the
    message (max_retries_exceeded) while dispatch waits for its own retry, stops. Dispatch
    alone decides: the retry runs and acknowledges `completed`."""
    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "10s",
        "--max-retries",
        "1",
        "--retry-backoff",
        "1s",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    run = agent_script(
        tmp_path,
        "flaky.sh",
        """
if [ ! -e "$WORK/failed-once" ]; then touch "$WORK/failed-once"; echo "not yet" >&2; exit 1; fi
echo deployed""",
    )
    configure(store, bob={"run": run, "backoff": "1h", "jitter": 0})
    with freeze_time(T0) as frozen:
        mid = int(cli.ok("send", "jobs", "deploy", "--type", "command", "--as", "alice").stdout)
        [first] = cli.ok("dispatch", "--json").json()["receipts"]
        assert first["status"] == "failed"
        assert deliveries(cli, mid)["bob"] == ("acked", "in_progress")
        # far past the channel's ack timeout and every redelivery: the timers do nothing
        frozen.tick(30 * 60)
        assert cli.ok("tick", "--no-dispatch", "--json").json()["dead_lettered"] == 0
        assert deliveries(cli, mid)["bob"] == ("acked", "in_progress")
        assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 0
        frozen.tick(31 * 60)
        [second] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (second["status"], second["attempt"], second["reason"]) == ("accepted", 2, "deployed")
    assert deliveries(cli, mid)["bob"] == ("acked", "completed")
    acks = cli.ok("receive", "--as", "alice", "--json").json()["messages"]
    assert [(m["metadata"]["status"], m["content"]) for m in acks] == [
        ("in_progress", "in_progress"),
        ("completed", "deployed"),
    ]


def test_the_ack_timer_does_not_fire_while_the_command_runs(cli, store, tmp_path):
    """The command itself runs the channel's timers an hour later (faketime): the delivery
    is neither redelivered nor dead-lettered under it, and the run is accepted."""
    if shutil.which("faketime") is None:
        pytest.skip("faketime is not installed (make test installs it)")
    cli.ok(
        "channel",
        "create",
        "jobs",
        "--as",
        "alice",
        "--delivery",
        "at-least-once",
        "--ack-timeout",
        "1s",
        "--max-retries",
        "0",
    )
    cli.ok("channel", "join", "jobs", "--as", "alice", "bob")
    run = agent_script(
        tmp_path,
        "slow.sh",
        """
faketime -f +1h "$ACOMM" tick --no-dispatch --json > "$WORK/tick.json" || exit 9
echo done""",
    )
    configure(store, bob={"run": run})
    mid = int(cli.ok("send", "jobs", "deploy", "--type", "command", "--as", "alice").stdout)
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert json.loads((tmp_path / "tick.json").read_text())["dead_lettered"] == 0
    assert (r["status"], r["reason"]) == ("accepted", "done")
    assert deliveries(cli, mid)["bob"] == ("acked", "completed")
    assert cli.ok("deadletter", "list", "--json").json()["total_count"] == 0


def test_a_delivery_dead_lettered_while_its_command_ran_is_not_recorded_accepted(
    cli, team, tmp_path
):
    """A query expires (not tracked: nothing stops its expiry) while the agent works on it:
    the receipt says so, failed, rather than `accepted` with nothing applied."""
    if shutil.which("faketime") is None:
        pytest.skip("faketime is not installed (make test installs it)")
    run = agent_script(
        tmp_path,
        "late.sh",
        """
faketime -f +1h "$ACOMM" tick --no-dispatch >/dev/null || exit 9
echo "the answer, too late" """,
    )
    configure(team, bob={"run": run, "on": {"types": ["query"]}})
    corr = cli.ok("query", "team", "quick?", "--as", "alice", "--timeout", "1m").stdout.strip()
    mid = cli.ok("thread", corr, "--json").json()["messages"][0]["id"]
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["status"], r["exit_code"], r["next_retry_at"]) == ("failed", 0, None)
    assert r["reason"] == (
        "the message was dead-lettered meanwhile (expired); the command's "
        "outcome was not applied: accepted (the answer, too late)"
    )
    assert [m["type"] for m in cli.ok("thread", corr, "--json").json()["messages"]] == ["query"]
    assert state(team, mid, "bob") == "dead"
    assert cli.ok("dispatch", "--json").json()["receipts"] == []


# ---------------------------------------------------------------- a command that reads itself


def test_a_failed_command_that_took_the_message_itself_is_not_retried(cli, team, tmp_path):
    """The command ran `acomm receive` (the delivery is read), then failed: nothing is left to
    retry, so the claim is done, with no retry time, and the receipt says why."""
    run = agent_script(
        tmp_path,
        "reader.sh",
        """
"$ACOMM" receive --as "$ACOMM_AGENT" >/dev/null
echo "crashed after reading" >&2
exit 1""",
    )
    configure(team, bob={"run": run, "backoff": "1s", "max_attempts": 2})
    with freeze_time(T0) as frozen:
        mid = int(cli.ok("send", "team", "x", "--as", "alice").stdout)
        [r] = cli.ok("dispatch", "--json").json()["receipts"]
        assert (r["status"], r["next_retry_at"]) == ("failed", None)
        assert r["reason"] == (
            "exit 1: crashed after reading; not retried: the message was "
            "read meanwhile (e.g. taken by `acomm receive`)"
        )
        frozen.tick(3600)
        doc = cli.ok("dispatch", "--json").json()
    assert (doc["receipts"], doc["dead_lettered"]) == ([], 0)
    assert state(team, mid, "bob") == "read"
    assert query(team, "SELECT state, next_retry_at FROM dispatch_claims") == [("done", None)]


# ---------------------------------------------------------------- output


def test_output_past_the_cap_is_not_kept_and_the_receipt_says_so(cli, store, tmp_path, monkeypatch):
    """What a command prints past the cap is thrown away as it comes (not stored anywhere):
    a plain message is still accepted, with a note; a query's answer is not sent cut short."""
    from acomm_cli.dispatch import runner

    monkeypatch.setattr(runner, "STDOUT_CAP", 1000)
    cli.ok("channel", "create", "big", "--as", "alice", "--max-message-size", "1MiB")
    cli.ok("channel", "join", "big", "--as", "alice", "bob")
    loud = agent_script(
        tmp_path, "loud.sh", "cat >/dev/null; head -c 300000 /dev/zero | tr '\\\\0' x; echo"
    )
    configure(store, bob={"run": loud, "max_attempts": 1})
    cli.ok("send", "big", "talk", "--as", "alice")
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert r["status"] == "accepted"
    assert r["reason"].endswith("[stdout cut at 1000 bytes: 299001 more were not kept]")
    corr = cli.ok("query", "big", "a long answer?", "--as", "alice").stdout.strip()
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["status"], r["exit_code"]) == ("failed", 0)
    assert "accepted, but stdout: 300001 bytes is more than the 1000 kept" in r["reason"]
    assert [m["type"] for m in cli.ok("thread", corr, "--json").json()["messages"]] == ["query"]


def test_the_runner_keeps_the_head_of_stdout_and_the_tail_of_stderr():
    from acomm_cli.dispatch import runner

    out = runner.run_command(
        "head -c 6000000 /dev/zero | tr '\\0' a; head -c 6000000 /dev/zero | tr '\\0' b >&2;"
        " echo ' the end' >&2; exit 4",
        b"",
        {"PATH": os.environ["PATH"]},
        60,
    )
    assert out.exit_code == 4
    assert out.stdout == "a" * runner.STDOUT_CAP
    assert out.stdout_dropped == 6_000_000 - runner.STDOUT_CAP
    assert out.stderr.endswith("bbb the end") and len(out.stderr) == runner.STDERR_TAIL
