"""Known tasks and incidents, built through the command line under freezegun: shared by the
export and audit tests of tasks, which check the exact numbers below.

`review` is published by rev (default ETA 10 m); alice delegates to it. From T0:

task: what happened (state at EXPORT; finished - created; finished - eta_at)
- ok: accepted --eta 10m; a result failing the schema (output_mismatch), then a good one at
  +4 m (completed; 240 s; -360 s)
- late: accepted --eta 5m; tick at +6 m (overdue, eta_breach); completed at +8 m (completed;
  480 s; +180 s)
- failed: accepted --eta 10m; failed at +2 m (execution_error, resolved at +3 m) (failed;
  120 s; -480 s)
- stuck: accepted --eta 5m; tick at +6 m (overdue, eta_breach) (incident: open, overdue)
- fresh: created at +1 m with the capability's ETA (+11 m), never accepted (created: open)
- plain: alice -> bob, no capability; accepted --eta 1m, completed at +30 s (completed; 30 s;
  -30 s)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from tests.capfixtures import published

T0 = datetime(2026, 3, 1, 12, 0, 0)
EXPORT = T0 + timedelta(minutes=9)
GOOD = '{"verdict": "ok"}'


@dataclass
class Tasks:
    ok: int = 0
    late: int = 0
    failed: int = 0
    stuck: int = 0
    fresh: int = 0
    plain: int = 0


def build(cli, tmp_path, clock) -> Tasks:
    """The tasks of the table above; leaves the clock at EXPORT."""
    clock.move_to(T0)
    cli.ok("subscribe", "_system", "_system.capability.review", "--as", "ops")
    published(cli, tmp_path)  # nobody active yet: no skill_distribution tasks

    def create(*extra: str) -> int:
        return int(cli.ok("task", "create", *extra, "--as", "alice").stdout)

    t = Tasks()
    t.ok, t.late, t.failed, t.stuck = (
        create("--capability", "review", f"job {i}") for i in range(4)
    )
    for tid, eta in ((t.ok, "10m"), (t.late, "5m"), (t.failed, "10m"), (t.stuck, "5m")):
        cli.ok("task", "accept", str(tid), "--eta", eta, "--as", "rev")
    t.plain = create("--to", "bob", "tidy up")
    cli.ok("task", "accept", str(t.plain), "--eta", "1m", "--as", "bob")
    clock.move_to(T0 + timedelta(seconds=30))
    cli.ok("task", "complete", str(t.plain), "done", "--as", "bob")
    clock.move_to(T0 + timedelta(minutes=1))
    t.fresh = create("--capability", "review", "later")
    clock.move_to(T0 + timedelta(minutes=2))
    cli.ok("task", "fail", str(t.failed), "--reason", "crashed", "--as", "rev")
    clock.move_to(T0 + timedelta(minutes=3))
    [failed] = [
        i
        for i in cli.ok("incident", "list", "--json").json()["incidents"]
        if i["failure_class"] == "execution_error"
    ]
    cli.ok("incident", "resolve", str(failed["id"]), "--as", "ops")
    clock.move_to(T0 + timedelta(minutes=4))
    r = cli("task", "complete", str(t.ok), '{"verdict": "nope"}', "--as", "rev")
    assert r.exit_code != 0  # output_mismatch: refused, one incident
    cli.ok("task", "complete", str(t.ok), GOOD, "--as", "rev")
    clock.move_to(T0 + timedelta(minutes=6))
    cli.ok("tick")  # stuck (and late) pass their ETA: overdue, eta_breach
    clock.move_to(T0 + timedelta(minutes=8))
    cli.ok("task", "complete", str(t.late), GOOD, "--as", "rev")
    clock.move_to(EXPORT)
    return t
