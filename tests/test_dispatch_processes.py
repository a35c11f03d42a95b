"""Agent dispatch across real processes: a timeout kills the command's process group, two
overlapping dispatchers never run one delivery twice, and a dispatcher killed mid-run leaves a
lease that runs out, after which the delivery is retried (time moved with faketime)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import ACOMM, VENV_BIN, run, wait_for
from test_dispatch import agent_script, configure, receipts

pytestmark = pytest.mark.process

needs_faketime = pytest.mark.skipif(
    shutil.which("faketime") is None, reason="faketime is not installed (make test installs it)"
)


def gone(pid: int) -> bool:
    """The process has exited (a zombie waiting for init to reap it counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def lines(p: Path) -> list[str]:
    return p.read_text().splitlines() if p.exists() else []


def dispatcher(verb: str = "dispatch") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ACOMM, verb, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_timeout_kills_the_whole_process_group(cli, team, tmp_path):
    run_ = agent_script(
        tmp_path,
        "slow.sh",
        """
echo "starting a long job" >&2
sleep 300 &
echo $! > "$WORK/child.pid"
wait""",
    )
    configure(team, bob={"run": run_, "timeout": "300ms", "max_attempts": 2})
    mid = int(cli.ok("send", "team", "x", "--as", "alice").stdout)
    [r] = cli.ok("dispatch", "--json").json()["receipts"]
    assert (r["message_id"], r["status"], r["exit_code"]) == (mid, "failed", None)
    assert r["reason"] == "timed out after 0.3s: starting a long job"
    assert r["next_retry_at"] is not None
    child = int((tmp_path / "child.pid").read_text())
    wait_for(lambda: gone(child))  # the background child was in the group: killed too


def test_overlapping_ticks_run_each_delivery_once(cli, team, tmp_path):
    """Two ticks at once (cron started the next before the last finished): each claims a
    different delivery while the other's command runs (the store is not locked meanwhile),
    and neither runs a delivery the other claimed."""
    run_ = agent_script(
        tmp_path,
        "hold.sh",
        """
echo "$ACOMM_MESSAGE_ID $ACOMM_RUN_ID" >> "$WORK/runs"
while [ ! -e "$WORK/release" ]; do sleep 0.02; done
echo done""",
    )
    configure(team, bob={"run": run_})
    first = int(cli.ok("send", "team", "a", "--as", "alice", "--priority", "high").stdout)
    second = int(cli.ok("send", "team", "b", "--as", "alice").stdout)
    runs = tmp_path / "runs"
    p1 = dispatcher("tick")
    wait_for(lambda: len(lines(runs)) == 1)
    p2 = dispatcher("tick")
    wait_for(lambda: len(lines(runs)) == 2)
    # a third one, while both commands run, finds nothing it may take
    assert json.loads(run("dispatch", "--json").stdout)["receipts"] == []
    (tmp_path / "release").touch()
    out1, out2 = (json.loads(p.communicate(timeout=60)[0]) for p in (p1, p2))
    assert (p1.returncode, p2.returncode) == (0, 0)
    assert out1["dispatch"]["accepted"] == out2["dispatch"]["accepted"] == 1
    assert [int(line.split()[0]) for line in lines(runs)] == [first, second]
    got = receipts(cli)
    assert sorted((r["message_id"], r["status"]) for r in got) == [
        (first, "accepted"),
        (second, "accepted"),
    ]
    assert sorted(r["run_id"] for r in got) == sorted(line.split()[1] for line in lines(runs))


@needs_faketime
def test_a_dispatcher_killed_mid_run_leaves_a_lease_that_expires(cli, team, tmp_path):
    """SIGKILL the dispatcher while its command runs: the delivery stays claimed until the
    lease (timeout + 30 s) runs out; then the next dispatcher records the lost run as failed,
    kills what is left of it, and runs the command again."""
    run_ = agent_script(
        tmp_path,
        "once.sh",
        """
if [ -e "$WORK/started" ]; then echo "second time lucky"; exit 0; fi
echo $$ > "$WORK/started"
exec sleep 300""",
    )
    configure(team, bob={"run": run_, "timeout": "60s"})
    mid = int(cli.ok("send", "team", "x", "--as", "alice").stdout)
    p = dispatcher()
    wait_for(
        lambda: (tmp_path / "started").exists() and (tmp_path / "started").read_text().strip() != ""
    )
    orphan = int((tmp_path / "started").read_text())
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    assert not gone(orphan)  # the command outlived its dispatcher
    [held] = receipts(cli)
    assert (held["status"], held["attempt"], held["finished_at"]) == ("running", 1, None)
    # the lease still holds: nothing runs
    assert json.loads(run("dispatch", "--json").stdout)["receipts"] == []
    later = subprocess.run(
        ["faketime", "-f", "+91s", ACOMM, "dispatch", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )
    assert later.returncode == 0, later.stderr
    [again] = json.loads(later.stdout)["receipts"]
    assert (again["message_id"], again["status"], again["attempt"], again["reason"]) == (
        mid,
        "accepted",
        2,
        "second time lucky",
    )
    wait_for(lambda: gone(orphan))
    second, first = receipts(cli)
    assert second == again
    assert (first["run_id"], first["status"]) == (held["run_id"], "failed")
    assert first["reason"].startswith("lease expired")


@needs_faketime
def test_the_lease_holds_until_timeout_plus_grace(cli, team, tmp_path):
    run_ = agent_script(tmp_path, "stuck.sh", 'echo $$ > "$WORK/started"\nexec sleep 300')
    configure(team, bob={"run": run_, "timeout": "60s"})
    cli.ok("send", "team", "x", "--as", "alice")
    p = dispatcher()
    wait_for(
        lambda: (tmp_path / "started").exists() and (tmp_path / "started").read_text().strip() != ""
    )
    orphan = int((tmp_path / "started").read_text())
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    try:
        early = subprocess.run(
            ["faketime", "-f", "+80s", ACOMM, "dispatch", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            env=os.environ,
        )
        assert json.loads(early.stdout)["receipts"] == []
        assert not gone(orphan)
    finally:
        os.kill(orphan, signal.SIGKILL)


def test_the_example_pipeline_runs_on_ticks_alone(tmp_path):
    """examples/pipeline.sh (part of `make demo`) checks its own outcome and exits non-zero
    when the receipts or the answer are not what it shows."""
    script = Path(__file__).parent.parent / "examples" / "pipeline.sh"
    env = {
        **{k: v for k, v in os.environ.items() if k != "ACOMM_IDENTITY_DIRECTORY"},  # strict
        "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(tmp_path),
    }
    p = subprocess.run(["bash", str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "triage so far: 2 reports forwarded to the fixer, 1 ignored" in p.stdout
    assert "fixer failed on message" in p.stdout  # the retried failure is shown
    assert list(tmp_path.iterdir()) == []  # its temporary store is gone


def start_and_kill_dispatcher(tmp_path: Path) -> int:
    """Start `acomm dispatch`, wait for its command to start (it writes its pid to
    $WORK/started), SIGKILL the dispatcher; returns the command's pid, left running."""
    p = dispatcher()
    started = tmp_path / "started"
    wait_for(lambda: started.exists() and started.read_text().strip() != "")
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    orphan = int(started.read_text())
    assert not gone(orphan)
    return orphan


def faketime_dispatch(offset: str = "+91s") -> dict:
    later = subprocess.run(
        ["faketime", "-f", offset, ACOMM, "dispatch", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ,
    )
    assert later.returncode == 0, later.stderr
    return json.loads(later.stdout)


@needs_faketime
def test_a_lease_that_runs_out_on_the_last_attempt_kills_the_orphan_too(cli, team, tmp_path):
    run_ = agent_script(tmp_path, "stuck.sh", 'echo $$ > "$WORK/started"\nexec sleep 300')
    configure(team, bob={"run": run_, "timeout": "60s", "max_attempts": 1})
    mid = int(cli.ok("send", "team", "x", "--as", "alice").stdout)
    orphan = start_and_kill_dispatcher(tmp_path)
    doc = faketime_dispatch()
    assert (doc["receipts"], doc["dead_lettered"]) == ([], 1)
    wait_for(lambda: gone(orphan))
    [r] = receipts(cli)
    assert r["status"] == "failed" and r["next_retry_at"] is None
    assert r["reason"] == (
        "lease expired: the dispatcher stopped before the command finished;"
        " dead-lettered (dispatch_failed)"
    )
    [dl] = cli.ok("deadletter", "list", "--json").json()["dead_letters"]
    assert (dl["message_id"], dl["reason"]) == (mid, "dispatch_failed")


@needs_faketime
@pytest.mark.parametrize("meanwhile", ["receive", "unconfigure"])
def test_a_lost_run_is_settled_whatever_became_of_its_delivery(cli, team, tmp_path, meanwhile):
    """After the crash the delivery was taken by `receive`, or the agent was removed from
    the config: the next pass still records the lost run (not `running` forever) and kills
    what is left of it."""
    run_ = agent_script(tmp_path, "stuck.sh", 'echo $$ > "$WORK/started"\nexec sleep 300')
    configure(team, bob={"run": run_, "timeout": "60s"})
    cli.ok("send", "team", "x", "--as", "alice")
    orphan = start_and_kill_dispatcher(tmp_path)
    if meanwhile == "receive":
        cli.ok("receive", "--as", "bob")
    else:
        cli.ok("channel", "join", "team", "--as", "alice", "carol")
        configure(team, carol={"run": "true", "on": {"types": ["command"]}})
    assert faketime_dispatch()["receipts"] == []
    wait_for(lambda: gone(orphan))
    [r] = receipts(cli)
    assert r["status"] == "failed" and r["finished_at"] is not None
    assert r["reason"].startswith("lease expired")
    if meanwhile == "receive":
        assert r["reason"].endswith(
            "; not retried: the message was read meanwhile (e.g. taken by `acomm receive`)"
        )
        assert r["next_retry_at"] is None
    else:  # still unread: due again if the agent comes back
        assert r["next_retry_at"] is not None


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_kills_the_command_records_the_run_and_ends_the_pass(cli, team, tmp_path, sig):
    """`timeout 2 acomm dispatch` (SIGTERM) or Ctrl-C (SIGINT): the command's process group is
    killed, its run is recorded as failed (interrupted; not an attempt, due again at once),
    no further delivery is taken, and the exit status is 128 + the signal."""
    run_ = agent_script(
        tmp_path,
        "stuck.sh",
        """
echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"
if [ -e "$WORK/started" ]; then echo fine; exit 0; fi
sleep 300 &
echo $! > "$WORK/started"
wait""",
    )
    configure(team, bob={"run": run_, "max_attempts": 1})
    first = int(cli.ok("send", "team", "a", "--as", "alice", "--priority", "high").stdout)
    second = int(cli.ok("send", "team", "b", "--as", "alice").stdout)
    p = dispatcher()
    started = tmp_path / "started"
    wait_for(lambda: started.exists() and started.read_text().strip() != "")
    child = int(started.read_text())
    p.send_signal(sig)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, err
    wait_for(lambda: gone(child))
    [r] = json.loads(out)["receipts"]
    assert (r["message_id"], r["status"], r["attempt"]) == (first, "failed", 1)
    assert r["reason"] == "interrupted: the dispatcher was stopped (not counted as an attempt)"
    assert r["next_retry_at"] is not None and r["finished_at"] is not None
    assert lines(tmp_path / "ran") == [str(first)]  # the second was not taken
    # max_attempts 1, yet the interrupted run did not use it up: both run now
    doc = json.loads(run("dispatch", "--json").stdout)
    assert [(x["message_id"], x["status"], x["attempt"]) for x in doc["receipts"]] == [
        (first, "accepted", 1),
        (second, "accepted", 1),
    ]


def _tick_every() -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ACOMM, "tick", "--every", "1s", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_tick_every_stops_at_a_signal_without_finishing_the_pass(cli, team, tmp_path):
    run_ = agent_script(
        tmp_path,
        "stuck.sh",
        """
echo "$ACOMM_MESSAGE_ID" >> "$WORK/ran"
echo $$ > "$WORK/started"
exec sleep 300""",
    )
    configure(team, bob={"run": run_})
    first = int(cli.ok("send", "team", "a", "--as", "alice", "--priority", "high").stdout)
    cli.ok("send", "team", "b", "--as", "alice")
    p = _tick_every()
    started = tmp_path / "started"
    wait_for(lambda: started.exists() and started.read_text().strip() != "")
    child = int(started.read_text())
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    wait_for(lambda: gone(child))
    assert json.loads(out.splitlines()[-1])["dispatch"]["failed"] == 1
    assert lines(tmp_path / "ran") == [str(first)]
    [r] = receipts(cli)
    assert (r["message_id"], r["status"]) == (first, "failed")
    assert r["reason"].startswith("interrupted")


def test_tick_stops_within_a_second_even_when_the_agent_ignores_sigterm(cli, team, tmp_path):
    """A stop kills the agent's process group with SIGKILL half a second after its SIGTERM,
    so an agent that ignores SIGTERM (run without a shell: it leads its process group)
    cannot hold a `tick` that was told to stop."""
    run_ = agent_script(
        tmp_path,
        "deaf.sh",
        """
trap '' TERM
echo $$ > "$WORK/started"
exec sleep 300""",
    )
    configure(team, bob={"run": [run_]})
    cli.ok("send", "team", "a", "--as", "alice")
    p = _tick_every()
    started = tmp_path / "started"
    wait_for(lambda: started.exists() and started.read_text().strip() != "")
    child = int(started.read_text())
    signalled = time.monotonic()
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    took = time.monotonic() - signalled
    assert p.returncode == 0, err
    assert gone(child)  # killed before the tick ended, not left behind
    assert took < 1.5, took  # 0.5 s of grace, then SIGKILL; the rest is a loaded machine
    [r] = receipts(cli)
    assert r["status"] == "failed" and r["reason"].startswith("interrupted")


def test_a_dedupe_key_in_flight_holds_back_its_twin(cli, team, tmp_path):
    """Two messages with one dedupe key, two dispatchers: while the first one's command runs,
    the other dispatcher leaves the twin alone (it does not know yet whether the key will be
    consumed); once the first is accepted, the twin is a duplicate."""
    cli.ok("channel", "create", "other", "--as", "alice")
    cli.ok("channel", "join", "other", "--as", "alice", "bob")
    run_ = agent_script(
        tmp_path,
        "hold.sh",
        """
echo "$ACOMM_MESSAGE_ID" >> "$WORK/runs"
while [ ! -e "$WORK/release" ]; do sleep 0.02; done
echo done""",
    )
    configure(team, bob={"run": run_})
    first = int(cli.ok("send", "team", "a", "--as", "alice", "--dedupe-key", "k").stdout)
    p = dispatcher()
    runs = tmp_path / "runs"
    wait_for(lambda: len(lines(runs)) == 1)
    twin = int(cli.ok("send", "other", "a", "--as", "alice", "--dedupe-key", "k").stdout)
    assert json.loads(run("dispatch", "--json").stdout)["receipts"] == []
    assert cli.ok("dispatch", "--dry-run", "--json").json()["due"] == []
    (tmp_path / "release").touch()
    [r] = json.loads(p.communicate(timeout=60)[0])["receipts"]
    assert (r["message_id"], r["status"]) == (first, "accepted")
    [dup] = json.loads(run("dispatch", "--json").stdout)["receipts"]
    assert (dup["message_id"], dup["status"], dup["reason"]) == (twin, "ignored", "duplicate")
    assert lines(runs) == [str(first)]
