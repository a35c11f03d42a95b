"""Agent dispatch (issue 7, spec 004's outbox worker): run each configured agent's command on
the unread messages to it that match its trigger rules, and keep a receipt of every run.

One delivery at a time: claim it (a short write transaction: compare-and-set on the claim
row, with a lease), run the command with the store unlocked, then record the outcome in a
second transaction. Exit 0 is `accepted` (the delivery is read; a query's stdout is the
answer; an ack-tracked message is acknowledged `completed`), exit 3 is `ignored`, anything
else is `failed`: retried after backoff x 2^(attempt-1) plus jitter, dead-lettered with reason
`dispatch_failed` after `max_attempts`. A dispatcher that dies mid-run leaves its lease to
run out; the next one records that run as failed and takes over.

Times: the caller passes `now` for the start of the pass; later times add the time the
commands took (a monotonic clock), so tests can pass any `now`.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from acomm_cli import deadletters, delivery, runner
from acomm_cli.agents import AgentSpec
from acomm_cli.errors import CommError, NotFound, ValidationFailed
from acomm_cli.model import AckStatus, Message, MessageType, Priority
from acomm_cli.pipeline import release
from acomm_cli.store import dispatch as store
from acomm_cli.store import queries, savepoint, write

# A claim outlives the command's timeout by this much before another dispatcher may take it:
# time for the kill (runner.TERM_GRACE_S) and for recording the outcome.
LEASE_GRACE_MS = 30_000
REASON_MAX = 1000  # characters of a reason kept in a receipt
EXIT_IGNORED = 3  # like acomm's own "validation failed": the agent declines the message
DEAD_REASON = "dispatch_failed"  # one of model.DEAD_LETTER_REASONS
LEASE_EXPIRED = "lease expired: the dispatcher stopped before the command finished"
STATUSES = ("running", "accepted", "ignored", "failed")


@dataclass(frozen=True)
class Receipt:
    run_id: str
    message_id: int
    agent: str
    status: str  # running, accepted, ignored, failed
    reason: str | None
    exit_code: int | None
    started_at: int
    finished_at: int | None
    attempt: int
    next_retry_at: int | None


@dataclass(frozen=True)
class Due:
    """A delivery `dispatch --dry-run` would hand to its agent."""

    message_id: int
    agent: str
    channel: str
    type: str
    priority: str
    attempt: int


@dataclass
class DispatchResult:
    now: int
    dry_run: bool = False
    receipts: list[Receipt] = field(default_factory=list)
    due: list[Due] = field(default_factory=list)
    dead_lettered: int = 0

    def counts(self) -> dict[str, int]:
        by = {s: sum(r.status == s for r in self.receipts) for s in STATUSES[1:]}
        return {**by, "dead_lettered": self.dead_lettered}


# ---------------------------------------------------------------- the rules, pure


def retry_delay_ms(spec: AgentSpec, attempt: int, rand: float) -> int:
    """backoff x 2^(attempt-1), plus up to `jitter` of that (rand in [0, 1))."""
    base = spec.backoff_ms * 2 ** min(attempt - 1, 30)
    return base + int(base * spec.jitter * rand)


def _clip(text: str) -> str:
    return text if len(text) <= REASON_MAX else "..." + text[-(REASON_MAX - 3):]


def classify(outcome: runner.RunOutcome, timeout_ms: int) -> tuple[str, str | None]:
    """(status, reason) of a finished run."""
    if outcome.interrupted:
        return "failed", "interrupted: the dispatcher was stopped"
    if outcome.start_error is not None:
        return "failed", _clip(f"could not start: {outcome.start_error}")
    said = f": {outcome.stderr}" if outcome.stderr else ""
    if outcome.timed_out:
        return "failed", _clip(f"timed out after {timeout_ms / 1000:g}s{said}")
    code = outcome.exit_code
    if code == 0:
        return "accepted", _clip(outcome.stdout.strip()) or None
    if code == EXIT_IGNORED:
        return "ignored", _clip(outcome.stdout.strip()) or "ignored"
    if code is not None and code < 0:
        return "failed", _clip(f"killed by signal {-code}{said}")
    return "failed", _clip(f"exit {code}{said}")


def new_run_id(now: int) -> str:
    """run_YYYYMMDD_<12 hex>: sortable by day at a glance, unique by its random part."""
    day = datetime.fromtimestamp(now / 1000, tz=UTC).strftime("%Y%m%d")
    return f"run_{day}_{os.urandom(6).hex()}"


def select(conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], now: int,
           limit: int) -> list[Due]:
    """Due unread deliveries whose agent's rules match, most urgent first, then oldest. A
    message from the agent itself never triggers it; the others stay unread, for `receive`."""
    out: list[Due] = []
    if limit <= 0:
        return out
    for mid, agent, channel, sender, type_, topic, meta, prio, cstate, cattempts in \
            store.candidates(conn, list(agents), now):
        spec = agents[agent]
        if sender == agent or not spec.rules.match(
                type_=type_, topic=topic, channel=channel, sender=sender,
                metadata=json.loads(meta) if meta else {}):
            continue
        attempt = cattempts + 1 if cstate in ("retry", "running") else 1
        out.append(Due(mid, agent, channel, type_, Priority(prio).name.lower(), attempt))
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------- the pass


@dataclass
class _Claim:
    spec: AgentSpec
    run_id: str
    attempt: int
    message: Message
    orphan: str | None  # the run whose lease ran out: its leftover processes get killed


def dispatch(conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], now: int, *,
             store_path: str, encode: Callable[[Message], str], only: str | None = None,
             max_runs: int = 100, dry_run: bool = False, config_path: str | None = None,
             rand: Callable[[], float] | None = None) -> DispatchResult:
    """One pass: up to `max_runs` due deliveries, selected when the pass starts (work the
    commands send on is for the next pass). `encode` turns a message into the JSON document
    the command reads on stdin (rendering is not this layer's business)."""
    if max_runs < 0:
        raise ValidationFailed(f"max: {max_runs} must not be negative", field="max",
                               value=max_runs)
    if only is not None:
        if only not in agents:
            raise NotFound(f"agent {only!r} is not configured (see `agents:` in config.yaml)",
                           field="agent", value=only)
        agents = {only: agents[only]}
    result = DispatchResult(now=now, dry_run=dry_run)
    due = select(conn, agents, now, max_runs)
    if dry_run:
        result.due = due
        return result
    started = time.monotonic()
    rand = rand or random.random

    def at() -> int:  # looked up on each call: freezegun controls it in tests
        return now + int((time.monotonic() - started) * 1000)

    # the command may call acomm itself: same store, and the same config file if one was given
    base_env = {**os.environ, "ACOMM_STORE": store_path}
    if config_path is not None:
        base_env["ACOMM_CONFIG"] = config_path
    for d in due:
        receipt, dead = _one(conn, agents[d.agent], d.message_id, at, base_env, encode, rand)
        if receipt is not None:
            result.receipts.append(receipt)
        result.dead_lettered += dead
    return result


_DEAD_NOTE = "; dead-lettered (dispatch_failed)"


def _one(conn: sqlite3.Connection, spec: AgentSpec, mid: int, at: Callable[[], int],
         base_env: Mapping[str, str], encode: Callable[[Message], str],
         rand: Callable[[], float]) -> tuple[Receipt | None, bool]:
    """Claim, run and settle one delivery: (its receipt, whether it was dead-lettered). No
    receipt when it was no longer due, or was dead-lettered without a run (its last run's
    lease ran out on the last attempt)."""
    got = _claim(conn, spec, mid, at())
    if isinstance(got, Receipt):
        return got, False
    if not isinstance(got, _Claim):
        return None, got
    if got.orphan is not None:
        runner.kill_orphans(got.orphan)
    msg = got.message
    env = {**base_env, "ACOMM_AGENT": spec.name, "ACOMM_MESSAGE_ID": str(msg.id),
           "ACOMM_CORRELATION_ID": msg.correlation_id or "", "ACOMM_CHANNEL": msg.channel,
           "ACOMM_RUN_ID": got.run_id, "ACOMM_ATTEMPT": str(got.attempt)}
    try:
        outcome = runner.run_command(spec.run, encode(msg).encode(), env,
                                     spec.timeout_ms / 1000, spec.cwd)
    except KeyboardInterrupt:  # the command was killed; record that, and stop the pass
        _settle(conn, got, runner.RunOutcome(None, "", "", 0, interrupted=True), at(), rand)
        raise
    return _settle(conn, got, outcome, at(), rand)


def _claim(conn: sqlite3.Connection, spec: AgentSpec, mid: int,
           now: int) -> _Claim | Receipt | bool:
    """Claim a due delivery for a run, inside one write transaction: a compare-and-set on
    its claim row. A duplicate is settled here and then (its receipt); a run whose lease ran
    out is recorded as failed first (True: that was its last attempt, it is dead-lettered);
    False: no longer unread, or claimed by another dispatcher meanwhile."""
    agent = spec.name
    with write(conn):
        got = store.delivery_of(conn, mid, agent)
        if got is None or got[0] != "unread":
            return False
        channel_id = got[3]
        prev = store.claim_of(conn, mid, agent)
        attempts, orphan = 0, None
        if prev is not None:
            pstate, prun, pattempts, lease_until, retry_at = prev
            if pstate == "running" and lease_until is not None and lease_until <= now:
                orphan, attempts = prun, pattempts
                dead = attempts >= spec.max_attempts
                store.finish_receipt(conn, prun, "failed", LEASE_EXPIRED + (
                    _DEAD_NOTE if dead else ""), None, now, None if dead else now)
                if dead:
                    _dead_letter(conn, spec, mid, prun, channel_id, attempts, LEASE_EXPIRED,
                                 now)
                    return True
            elif pstate == "retry" and retry_at is not None and retry_at <= now:
                attempts = pattempts
                if attempts >= spec.max_attempts:  # max_attempts was lowered meanwhile
                    _dead_letter(conn, spec, mid, prun, channel_id, attempts,
                                 f"failed {attempts} times (max_attempts {spec.max_attempts})",
                                 now)
                    return True
            elif pstate not in ("done", "dead"):
                return False  # held by a live lease, or waiting for its retry time
        msg = queries.message_by_id(conn, mid)
        if msg is None:
            return False
        msg.delivery = next(d for d in msg.deliveries if d.recipient == agent)
        msg.deliveries = []
        run_id = new_run_id(now)
        if msg.dedupe_key is not None and _duplicate(conn, agent, msg, channel_id, now):
            store.insert_receipt(conn, run_id, mid, agent, "ignored", attempts + 1, now,
                                 msg.dedupe_key, reason="duplicate", finished_at=now)
            _apply(conn, msg, agent, "ignored", "", "duplicate", now)
            store.mark_done(conn, mid, agent, run_id)
            return _receipt(conn, run_id)
        lease = now + spec.timeout_ms + LEASE_GRACE_MS
        claimed = (store.insert_claim(conn, mid, agent, run_id, attempts + 1, lease)
                   if prev is None else
                   store.take_claim(conn, mid, agent, prev[1], run_id, attempts + 1, lease, now))
        if not claimed:
            return False
        store.insert_receipt(conn, run_id, mid, agent, "running", attempts + 1, now,
                             msg.dedupe_key)
        return _Claim(spec, run_id, attempts + 1, msg, orphan)


def _duplicate(conn: sqlite3.Connection, agent: str, msg: Message, channel_id: int,
               now: int) -> bool:
    """This agent already handled the message's dedupe key inside the channel's window."""
    ch = queries.channel_by_id(conn, channel_id)
    window = ch.config.dedupe_window_ms if ch else 0
    return store.handled_key(conn, agent, msg.dedupe_key, now - window,  # type: ignore[arg-type]
                             msg.id) is not None


def _settle(conn: sqlite3.Connection, c: _Claim, outcome: runner.RunOutcome, now: int,
            rand: Callable[[], float]) -> tuple[Receipt, bool]:
    """Record a finished run: its receipt, and what it means for the delivery."""
    spec, msg, agent = c.spec, c.message, c.spec.name
    status, reason = classify(outcome, spec.timeout_ms)
    with write(conn):
        claim = store.claim_of(conn, msg.id, agent)
        if claim is None or claim[1] != c.run_id or claim[0] != "running":
            # our lease ran out and another dispatcher took over: leave the delivery to it
            store.finish_receipt(conn, c.run_id, "failed", LEASE_EXPIRED, outcome.exit_code,
                                 now, None)
            return _receipt(conn, c.run_id), False
        if status != "failed":
            try:
                with savepoint(conn, "outcome"):
                    _apply(conn, msg, agent, status, outcome.stdout, reason, now)
            except CommError as exc:  # e.g. an answer too large for the channel
                status, reason = "failed", _clip(f"{status}, but {exc.message}")
        next_retry, dead = None, False
        if status == "failed":
            if c.attempt >= spec.max_attempts:
                dead = True
                reason = _clip(reason or "") + _DEAD_NOTE
                _dead_letter(conn, spec, msg.id, c.run_id, msg.channel_id, c.attempt,
                             reason, now)
            else:
                next_retry = now + retry_delay_ms(spec, c.attempt, rand())
                store.settle_claim(conn, msg.id, agent, c.run_id, "retry", next_retry)
        else:
            store.settle_claim(conn, msg.id, agent, c.run_id, "done", None)
        store.finish_receipt(conn, c.run_id, status, reason, outcome.exit_code, now,
                             next_retry)
        return _receipt(conn, c.run_id), dead


def _apply(conn: sqlite3.Connection, msg: Message, agent: str, status: str, stdout: str,
           reason: str | None, now: int) -> None:
    """An accepted or ignored message: read; a query's answer sent; an ack-tracked message
    acknowledged `completed` (an ignored one with the note `ignored: REASON`, so that the
    channel does not redeliver it and the sender learns why)."""
    got = store.delivery_of(conn, msg.id, agent)
    if got is None or got[0] == "dead":
        return  # dead-lettered meanwhile (an expired query): nothing left to settle
    state, tracked, ack_status, _ = got
    if state == "unread":
        queries.mark_read(conn, agent, [msg.id], now)
        release(conn, now)
    text = stdout.strip()
    if (status == "accepted" and text and msg.type == MessageType.QUERY
            and msg.correlation_id is not None):
        delivery.record_response(conn, msg.correlation_id, stdout.rstrip(), agent, now)
        return
    if tracked and ack_status not in (AckStatus.COMPLETED.value, AckStatus.FAILED.value):
        note = (text or None) if status == "accepted" else f"ignored: {reason}"
        delivery.record_ack(conn, msg.id, agent, AckStatus.COMPLETED, note, now)


def _dead_letter(conn: sqlite3.Connection, spec: AgentSpec, mid: int, run_id: str,
                 channel_id: int, attempts: int, last_error: str, now: int) -> None:
    """Out of attempts: through the dead-letter machinery (deadletter list / replay, and the
    `_system` notification). retry_count counts the retries: attempts - 1."""
    deadletters.dead_letter(conn, [(mid, spec.name, channel_id, max(0, attempts - 1))],
                            DEAD_REASON, last_error, now)
    store.settle_claim(conn, mid, spec.name, run_id, "dead", None)


def _receipt(conn: sqlite3.Connection, run_id: str) -> Receipt:
    return Receipt(*store.receipt(conn, run_id))  # type: ignore[misc]


# ---------------------------------------------------------------- receipts


def list_receipts(conn: sqlite3.Connection, *, agent: str | None = None,
                  message_id: int | None = None, status: str | None = None,
                  limit: int = 100, offset: int = 0) -> tuple[list[Receipt], int]:
    """Receipts, newest first."""
    if limit < 0 or offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    if status is not None and status not in STATUSES:
        raise ValidationFailed(f"status: {status!r} is not one of {', '.join(STATUSES)}",
                               field="status", value=status)
    rows, total = store.receipts(conn, agent=agent, message_id=message_id, status=status,
                                 limit=limit, offset=offset)
    return [Receipt(*r) for r in rows], total
