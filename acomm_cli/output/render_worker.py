"""What `tick`, `bridge sync` and `dispatch` print, and the notes their passes leave on stderr."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from acomm_cli.clock import iso
from acomm_cli.errors import CommError
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, _kv_line, _table, listing, note, verbose
from acomm_cli.output.render_messages import message_doc

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from acomm_cli.bridge.sync import SyncResult
    from acomm_cli.dispatch.dispatcher import DispatchResult, Receipt, ReceiptPage
    from acomm_cli.model import Message


def tick(out: Output, doc: dict[str, Any]) -> None:
    if out.json:
        _dump({**doc, "now": iso(doc["now"])})
    else:
        sys.stdout.write(" ".join(f"{k}={v}" for k, v in doc.items() if k != "now") + "\n")


# ---------------------------------------------------------------- mailbox bridge


def bridge_notes(r: SyncResult) -> None:
    """Diagnostics of a bridge sync on stderr: each response file left in place once (bad,
    refused for now, or committed but not deleted), failed mirror writes and removals."""
    for path, reason in r.bad_files:
        note(f"bridge: response file {path} left in place: {reason}")
    for path, reason in r.deferred_files:
        note(f"bridge: response file {path} not ingested yet: {reason}")
    for path, reason in r.undeleted_files:
        note(f"bridge: response file {path} {reason}")
    for path, reason in r.bad_team_files:
        note(f"bridge: team inbox {path} left in place: {reason}")
    if r.failed:
        note(
            f"warning: mailbox bridge: {r.failed} mirror write(s) failed; `acomm tick` "
            "retries them (see `acomm doctor`)"
        )
    if r.remove_failed:
        note(
            f"warning: mailbox bridge: {r.remove_failed} mirror removal(s) failed; "
            "`acomm tick` retries them (see `acomm doctor`)"
        )


def bridge_sync(out: Output, r: SyncResult) -> None:
    if out.json:
        _dump(r.doc())
    else:
        _kv_line(r.doc())


def bridge_tick(out: Output, doc: dict[str, Any]) -> None:
    """`tick`, whose JSON may carry `bridge` and `dispatch` objects; plain output flattens
    them (`bridge_written=1`, `dispatch_accepted=2`)."""
    if not out.json:  # said on stderr (the error `tick` exits with), not in the counts
        doc = {k: v for k, v in doc.items() if k != "dispatch_error"}
    nested = [k for k, v in doc.items() if isinstance(v, dict)]
    if out.json or not nested:
        tick(out, doc)
        return
    flat = {k: v for k, v in doc.items() if k not in nested}
    for k in nested:
        flat.update({f"{k}_{n}": v for n, v in doc[k].items()})
    tick(out, flat)


# ---------------------------------------------------------------- agent dispatch


def message_json(m: Message) -> str:
    """The document an agent's command reads on stdin: what `receive --json` prints for it."""
    import json  # not at the top: `acomm send` prints no JSON unless asked

    return json.dumps(message_doc(m), ensure_ascii=False)


def receipt_doc(r: Receipt) -> dict[str, Any]:
    return {
        "run_id": r.run_id,
        "message_id": r.message_id,
        "agent": r.agent,
        "status": r.status,
        "reason": r.reason,
        "exit_code": r.exit_code,
        "started_at": iso(r.started_at),
        "finished_at": iso(r.finished_at),
        "attempt": r.attempt,
        "next_retry_at": iso(r.next_retry_at),
    }


def _receipt_rows(out: Output, items: Sequence[Receipt]) -> None:
    listing(
        out,
        "receipts",
        cols.RECEIPTS,
        [
            (
                r.run_id,
                r.message_id,
                r.agent,
                r.status,
                r.exit_code,
                r.attempt,
                iso(r.started_at),
                iso(r.next_retry_at),
                r.reason,
            )
            for r in items
        ],
        (receipt_doc(r) for r in items),
    )


def receipts(out: Output, page: ReceiptPage) -> None:
    if out.json:
        _dump(
            {
                "receipts": [receipt_doc(r) for r in page.receipts],
                "total_count": page.total_count,
                "has_more": page.has_more,
            }
        )
        return
    _receipt_rows(out, page.receipts)
    if out.tty and page.has_more:
        note(f"showing {len(page.receipts)} of {page.total_count}; use --offset/--limit")


def dispatch_result(out: Output, r: DispatchResult) -> None:
    """`acomm dispatch`: the receipts of this pass (with --dry-run, what would run)."""
    if out.json:
        doc: dict[str, Any] = {
            "now": iso(r.now),
            "dry_run": r.dry_run,
            **r.counts(),
            "receipts": [receipt_doc(x) for x in r.receipts],
        }
        if r.dry_run:
            doc["due"] = [
                {
                    "message_id": d.message_id,
                    "agent": d.agent,
                    "channel": d.channel,
                    "type": d.type,
                    "priority": d.priority,
                    "attempt": d.attempt,
                    "action": d.action,
                }
                for d in r.due
            ]
        _dump(doc)
        return
    if r.dry_run:
        _table(
            out,
            "due",
            ["message", "agent", "channel", "type", "priority", "attempt", "action"],
            [
                (d.message_id, d.agent, d.channel, d.type, d.priority, d.attempt, d.action)
                for d in r.due
            ],
        )
        return
    _receipt_rows(out, r.receipts)
    if r.dead_lettered:
        note(
            f"{r.dead_lettered} delivery(ies) dead-lettered (dispatch_failed); see "
            "`acomm deadletter list --reason dispatch_failed`"
        )


def tick_retry(exc: CommError, in_s: float) -> None:
    """A `tick --every` pass that failed and will be tried again (cron mails stderr)."""
    when = f"in {round(in_s, 1):g}s" if in_s >= 0.05 else "now"
    note(f"note: tick: {exc.message}; trying again {when}", level="WARNING")


def lock_waiting() -> None:
    """-v: a pass waits for another process's write lock (a stop still ends it at once)."""
    verbose("tick: waiting for the store's write lock, held by another process")


def dispatch_off(exc: CommError) -> None:
    """`tick --every` with a bad `agents:` section: the timers run, the agents do not."""
    note(
        f"note: tick: dispatch is off, the timers still run: {exc.code}: {exc.message}",
        level="WARNING",
    )


def dispatch_notes(r: DispatchResult) -> None:
    """`tick`'s diagnostics on stderr (cron mails them): each failed run, once."""
    for x in r.receipts:
        if x.status == "failed":
            then = f"; retry at {iso(x.next_retry_at)}" if x.next_retry_at is not None else ""
            note(
                f"dispatch: {x.agent} failed on message {x.message_id} (attempt {x.attempt}, "
                f"{x.run_id}): {x.reason}{then}",
                level="WARNING",
            )


def trigger_rules(out: Output, doc: dict[str, Any]) -> None:
    """`acomm dispatch rules`: the decision table's rows, then each configured agent's rules,
    each with where it came from."""
    if out.json:
        _dump(doc)
        return
    import json

    rows: list[tuple[Any, ...]] = []
    for r in doc["defaults"]:
        target = f" (target={r['target']})" if r["target"] else ""
        rows.append(("(default)", r["event_type"] + target, r["notify"], r["trigger"], r["source"]))
    for a in doc["agents"]:
        rule = "on: " + json.dumps(a["on"], ensure_ascii=False) if a["on"] else "the defaults"
        rows.append((a["agent"], rule, "", "", a["source"]))
    _table(out, "trigger rules", ["agent", "rule", "notify", "trigger", "source"], rows)
