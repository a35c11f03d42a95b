"""Agent dispatch (the outbox worker of docs/spec/notification-outbox.txt): run each configured
agent's command on the unread messages to it that match its trigger rules, and keep a receipt of
every run.

One delivery at a time: claim it (a short write transaction: compare-and-set on the claim
row, with a lease; an ack-tracked delivery is acknowledged `in_progress`, which stops the
channel's ack timer), run the command with the store unlocked, then record the outcome in a
second transaction. Exit 0 is `accepted` (the delivery is read; a query's stdout is the
answer; an ack-tracked message is acknowledged `completed`), exit 3 is `ignored`, anything
else is `failed`: retried after backoff x 2^(attempt-1) plus jitter, dead-lettered with reason
`dispatch_failed` after `max_attempts`. A dispatcher that dies mid-run leaves its lease to
run out; the next pass records that run as failed, kills what is left of it, and retries.

Times: the caller passes `now` for the start of the pass; later times are read from
acomm_cli.clock as the pass goes on (never before `now`).
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from acomm_cli import clock
from acomm_cli.dispatch import runner, triggers
from acomm_cli.dispatch.agents import AgentSpec
from acomm_cli.dispatch.triggers import FILTERED
from acomm_cli.engine import acking, credentials, deadletters, kinds, presence, queries, traces
from acomm_cli.engine.channels import release
from acomm_cli.engine.eventrules import Facts
from acomm_cli.errors import CommError, NotFound, UsageError, ValidationFailed
from acomm_cli.model import AckStatus, Message, MessageType, Priority
from acomm_cli.store import acks, channels, reads, savepoint, write
from acomm_cli.store import dispatch as store
from acomm_cli.store import engagement as notices
from acomm_cli.store import events as store_events

# The secret a process presents (identity.auth token): never passed on to a command
_SECRET_ENV = ("ACOMM_AGENT_TOKEN", "ACOMM_AGENT_TOKEN_FILE")
# A claim outlives the command's timeout by this much before another dispatcher may take it:
# time for the kill (runner.TERM_GRACE_S) and for recording the outcome.
LEASE_GRACE_MS = 30_000
REASON_MAX = 1000  # characters of a reason kept in a receipt
EXIT_IGNORED = 3  # like acomm's own "validation failed": the agent declines the message
DEAD_REASON = "dispatch_failed"  # one of model.DEAD_LETTER_REASONS
LEASE_EXPIRED = "lease expired: the dispatcher stopped before the command finished"
INTERRUPTED = "interrupted: the dispatcher was stopped (not counted as an attempt)"
STATUSES = ("running", "accepted", "ignored", "failed")
# what a pass does with a due delivery; `ignore`: no rule lets it through (`unmatched: ignore`)
ACTIONS = ("run", "duplicate", "dead_letter", "ignore")
IGNORE_MAX = 1000  # unmatched deliveries settled per pass (they cost no run)


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
    """A delivery a pass would take, and what it would do with it: run the command, settle
    it as a `duplicate` without running anything, or `dead_letter` it (out of attempts)."""

    message_id: int
    agent: str
    channel: str
    type: str
    priority: str
    attempt: int
    action: str = "run"
    reason: str | None = None  # why an `ignore` is not run (a receipt's reason)


@dataclass
class DispatchResult:
    now: int
    dry_run: bool = False
    receipts: list[Receipt] = field(default_factory=list)
    due: list[Due] = field(default_factory=list)
    dead_lettered: int = 0
    stopped: bool = False  # a stop was requested: the pass ended early

    def counts(self) -> dict[str, int]:
        by = {s: sum(r.status == s for r in self.receipts) for s in STATUSES[1:]}
        return {**by, "dead_lettered": self.dead_lettered}


@dataclass(frozen=True)
class ReceiptPage:
    receipts: list[Receipt]
    total_count: int
    has_more: bool


# ---------------------------------------------------------------- the rules, pure


def retry_delay_ms(spec: AgentSpec, attempt: int, rand: float) -> int:
    """backoff x 2^(attempt-1), plus up to `jitter` of that (rand in [0, 1))."""
    base = spec.backoff_ms * 2 ** min(attempt - 1, 30)
    return base + int(base * spec.jitter * rand)


def _clip(text: str) -> str:
    return text if len(text) <= REASON_MAX else "..." + text[-(REASON_MAX - 3) :]


def classify(outcome: runner.RunOutcome, timeout_ms: int) -> tuple[str, str | None]:
    """(status, reason) of a finished run."""
    if outcome.interrupted:
        return "failed", INTERRUPTED
    if outcome.start_error is not None:
        return "failed", _clip(f"could not start: {outcome.start_error}")
    said = f": {outcome.stderr}" if outcome.stderr else ""
    if outcome.timed_out:
        return "failed", _clip(f"timed out after {timeout_ms / 1000:g}s{said}")
    code = outcome.exit_code
    cut = (
        f" [stdout cut at {runner.STDOUT_CAP} bytes: {outcome.stdout_dropped} more were not kept]"
        if outcome.stdout_dropped
        else ""
    )
    if code == 0:
        return "accepted", (_clip(outcome.stdout.strip()) + cut) or None
    if code == EXIT_IGNORED:
        return "ignored", (_clip(outcome.stdout.strip()) or "ignored") + cut
    if code is not None and code < 0:
        return "failed", _clip(f"killed by signal {-code}{said}")
    return "failed", _clip(f"exit {code}{said}")


def new_run_id(now: int) -> str:
    """run_YYYYMMDD_<12 hex>: sortable by day at a glance, unique by its random part."""
    day = datetime.fromtimestamp(now / 1000, tz=UTC).strftime("%Y%m%d")
    return f"run_{day}_{os.urandom(6).hex()}"


def _ours(state: str, ack_status: str | None, claim_state: str | None) -> bool:
    """Is the delivery still dispatch's to handle? Unread, or acknowledged `in_progress` by
    dispatch itself (a claim is running or waiting for its retry). Read by `receive`,
    acknowledged otherwise, or dead-lettered, it is not."""
    return state == "unread" or (
        state == "acked"
        and ack_status == AckStatus.IN_PROGRESS.value
        and claim_state in ("running", "retry")
    )


def _gone(
    conn: sqlite3.Connection, mid: int, agent: str, got: tuple[str, int, str | None, int] | None
) -> str:
    """What became of a delivery that is no longer dispatch's, for a receipt's reason."""
    if got is None:
        return "the message is gone"
    state, _, ack_status, _ = got
    if state == "dead":
        why = store.dead_letter_reason(conn, mid, agent)
        return f"the message was dead-lettered meanwhile ({why})"
    if state == "acked":
        return f"the message was acknowledged meanwhile ({ack_status})"
    return f"the message was {state} meanwhile (e.g. taken by `acomm receive`)"


def _verdict(
    conn: sqlite3.Connection,
    spec: AgentSpec,
    mid: int,
    claim_state: str | None,
    claim_attempts: int | None,
    dedupe_key: str | None,
    channel_id: int,
    now: int,
) -> tuple[str, int]:
    """What a pass does with a due delivery (one of ACTIONS, or "skip": leave it due), and
    how many attempts it has had this round."""
    attempts = (claim_attempts or 0) if claim_state in ("retry", "running") else 0
    if attempts >= spec.max_attempts:
        return "dead_letter", attempts
    if dedupe_key is not None:
        # a run of another message with this key is in progress: its outcome decides
        # whether this one is a duplicate, so wait for it
        if store.running_key(conn, spec.name, dedupe_key, mid, now):
            return "skip", attempts
        if _duplicate(conn, spec.name, dedupe_key, mid, channel_id, now):
            return "duplicate", attempts
    return "run", attempts


def _duplicate(
    conn: sqlite3.Connection, agent: str, dedupe_key: str, mid: int, channel_id: int, now: int
) -> bool:
    """This agent already handled the message's dedupe key inside the channel's window."""
    ch = channels.channel_by_id(conn, channel_id)
    window = ch.config.dedupe_window_ms if ch else 0
    return store.handled_key(conn, agent, dedupe_key, now - window, mid) is not None


def select(
    conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], now: int, limit: int
) -> list[Due]:
    """Due deliveries to the agents, most urgent first, then oldest, with what a pass would
    do with each: up to `limit` whose rules match, and (`unmatched: ignore`) up to
    IGNORE_MAX that no rule lets through, to be read with an `ignored` receipt. A message
    from the agent itself never triggers it. With `unmatched: keep` the others stay unread,
    for `receive`, and types, channels and senders are matched in SQL, so that a backlog of
    messages no rule wants costs little; topics, metadata and events here (triggers.py: the
    agent's rules, or the default trigger rules for a message carrying an event)."""
    out: list[Due] = []
    if limit <= 0:
        return out
    rules = [
        (name, s.rules.types, s.rules.channels, s.rules.senders, s.unmatched == "ignore")
        for name, s in agents.items()
    ]
    runs = ignored = 0
    found = store.candidates(conn, rules, now)
    events = _events(conn, [row[0] for row in found])
    dirs = _directions(conn, agents, [(row[2], row[3]) for row in found])
    for (
        mid,
        agent,
        channel,
        sender,
        type_,
        topic,
        meta,
        prio,
        cstate,
        cattempts,
        key,
        channel_id,
    ) in found:
        spec = agents[agent]
        event = events.get(mid)
        v = triggers.verdict(
            spec,
            type_=type_,
            topic=topic,
            channel=channel,
            sender=sender,
            metadata=json.loads(meta) if meta else {},
            event=event,
            direction=dirs.get((channel, sender)),
        )
        if not v.run:
            if (spec.unmatched == "ignore" or v.settle) and ignored < IGNORE_MAX:
                prio_name = Priority(prio).name.lower()
                out.append(Due(mid, agent, channel, type_, prio_name, 1, "ignore", v.reason))
                ignored += 1
            continue
        if key is None and event is not None:
            key = event.event_id  # the event's idempotency key
        action, attempts = _verdict(conn, spec, mid, cstate, cattempts, key, channel_id, now)
        if action == "skip":
            continue
        out.append(
            Due(
                mid,
                agent,
                channel,
                type_,
                Priority(prio).name.lower(),
                attempts if action == "dead_letter" else attempts + 1,
                action,
            )
        )
        runs += 1
        if runs >= limit:
            break
    return out


def _events(conn: sqlite3.Connection, ids: list[int]) -> dict[int, Facts]:
    """The events these messages carry, as the trigger rules read them."""
    return {
        mid: Facts(e.event_type, e.event_id, e.actor, e.target, e.target_kind)
        for mid, e in store_events.events_of(conn, list(dict.fromkeys(ids))).items()
    }


def _directions(
    conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], sent: list[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """The kinds at both ends of the direct messages among (channel, sender), read only
    when some agent's rules name a `direction`."""
    if not any(s.rules.directions for s in agents.values()):
        return {}
    from acomm_cli.engine import attachments

    return attachments.directions(conn, list(dict.fromkeys(sent)))


def _dedupe_key(conn: sqlite3.Connection, msg: Message) -> str | None:
    """The key a run is deduplicated on: the message's dedupe key, else its event's id."""
    if msg.dedupe_key is not None:
        return msg.dedupe_key
    event = _events(conn, [msg.id]).get(msg.id)
    return event.event_id if event is not None else None


# ---------------------------------------------------------------- the pass


@dataclass
class _Claim:
    spec: AgentSpec
    run_id: str
    attempt: int
    message: Message


@dataclass
class _Taken:
    """What claiming a delivery came to."""

    claim: _Claim | None = None  # a run to do
    receipt: Receipt | None = None  # settled without a run (a duplicate)
    dead: bool = False  # dead-lettered without a run (out of attempts)
    orphans: list[str] = field(default_factory=list)  # runs whose leftovers to kill


def dispatch(
    conn: sqlite3.Connection,
    agents: Mapping[str, AgentSpec],
    now: int,
    *,
    store_path: str,
    encode: Callable[[Message], str],
    only: str | None = None,
    max_runs: int = 100,
    dry_run: bool = False,
    config_path: str | None = None,
    rand: Callable[[], float] | None = None,
    stop: Callable[[], bool] | None = None,
    auth: str | None = None,
) -> DispatchResult:
    """One pass: first the runs whose lease ran out (whatever became of their delivery), then
    up to `max_runs` due deliveries, selected when the pass starts (work the commands send on
    is for the next pass). `encode` turns a message into the JSON document the command reads
    on stdin (rendering is not this layer's business). `stop` (e.g. acomm_cli.cli.stopping.Stop)
    ends the pass early: the running command is killed and its run recorded as interrupted,
    and no further delivery is taken. `auth`: this process's identity.auth (the store's own
    setting counts too): with token, each run gets a secret of its agent's own."""
    every, agents = agents, serves(conn, chosen(agents, only, max_runs))
    result = DispatchResult(now=now, dry_run=dry_run)
    if dry_run:
        result.due = select(conn, agents, now, max_runs)
        return result
    stop = stop or (lambda: False)
    rand = rand or random.random

    def at() -> int:
        return max(now, clock.now_ms())

    result.dead_lettered += sweep(conn, every, now, only=only)
    due = select(conn, agents, now, max_runs)
    result.receipts += ignore(conn, agents, [d for d in due if d.action == "ignore"], at())
    due = [d for d in due if d.action != "ignore"]
    # the command may call acomm itself: same store, and the same config file if one was given
    base_env = {**os.environ, "ACOMM_STORE": store_path}
    if config_path is not None:
        base_env["ACOMM_CONFIG"] = config_path
    # never the dispatcher's own secret: a run proves its agent with the secret minted for it
    for name in _SECRET_ENV:
        base_env.pop(name, None)
    minting = credentials.mode(conn, auth) == "token"
    for d in due:
        if stop():
            break
        receipt, dead = _one(
            conn, agents[d.agent], d.message_id, at, base_env, encode, rand, stop, minting
        )
        if receipt is not None:
            result.receipts.append(receipt)
        result.dead_lettered += dead
    result.stopped = stop()
    return result


def chosen(
    agents: Mapping[str, AgentSpec], only: str | None, max_runs: int = 0
) -> Mapping[str, AgentSpec]:
    """The agents a pass serves (all, or `only`), or why there is no pass to make: a usage
    error without any agent configured (like `bridge sync` without a bridge), not_found for
    an `only` that is not configured. Commands call it before opening the store."""
    if not agents:
        raise UsageError(
            "no agents are configured: add an `agents:` section to config.yaml "
            "(see `acomm config show`)",
            field="agents",
        )
    if max_runs < 0:
        raise ValidationFailed(f"max: {max_runs} must not be negative", field="max", value=max_runs)
    if only is None:
        return agents
    if only not in agents:
        raise NotFound(
            f"agent {only!r} is not configured (see `agents:` in config.yaml)",
            field="agent",
            value=only,
        )
    return {only: agents[only]}


def check_kinds(conn: sqlite3.Connection, agents: Mapping[str, AgentSpec]) -> None:
    """A `run:` configured for an agent registered as a human is a configuration error (exit
    3 naming the agent and its kind): `dispatch` and `tick` refuse it once the store is open."""
    kinds.check_dispatchable(conn, agents)


def serves(conn: sqlite3.Connection, agents: Mapping[str, AgentSpec]) -> Mapping[str, AgentSpec]:
    """The agents a pass may run a command for: never a human, even one registered as such
    while a `tick --every` worker runs; its messages wait in its inbox."""
    never = kinds.undispatchable(conn, agents)
    return {n: s for n, s in agents.items() if n not in never} if never else agents


def sweep(
    conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], now: int, *, only: str | None = None
) -> int:
    """Settle every run whose lease ran out, whatever became of its delivery (read by
    `receive`, replayed, its agent no longer configured): the receipt says `failed` (lease
    expired), the delivery is retried or dead-lettered as usual while it is still
    dispatch's, and what is left of the run is killed. Returns how many were dead-lettered."""
    orphans, dead = [], 0
    with write(conn):
        for mid, agent, run_id, attempts in store.expired_claims(conn, now, only):
            got = store.delivery_of(conn, mid, agent)
            dead += (
                _expire(conn, agents.get(agent), mid, agent, run_id, attempts, got, now) == "dead"
            )
            orphans.append(run_id)
    for run_id in orphans:
        runner.kill_orphans(run_id)
    return dead


_DEAD_NOTE = "; dead-lettered (dispatch_failed)"


def _expire(
    conn: sqlite3.Connection,
    spec: AgentSpec | None,
    mid: int,
    agent: str,
    run_id: str,
    attempts: int,
    got: tuple[str, int, str | None, int] | None,
    now: int,
) -> str:
    """Record a run whose lease ran out as failed (it counts as an attempt: a message that
    kills its dispatcher is dead-lettered in the end), and settle its claim: "retry" (due at
    once), "dead" (that was its last attempt), or "done" (the delivery is no longer
    dispatch's). The caller kills what is left of the run."""
    if got is None or not _ours(got[0], got[2], "running"):
        note = f"; not retried: {_gone(conn, mid, agent, got)}"
        store.finish_receipt(conn, run_id, "failed", LEASE_EXPIRED + note, None, now, None)
        store.settle_claim(
            conn,
            mid,
            agent,
            run_id,
            "dead" if got is not None and got[0] == "dead" else "done",
            None,
        )
        return "done"
    if spec is not None and attempts >= spec.max_attempts:
        store.finish_receipt(conn, run_id, "failed", LEASE_EXPIRED + _DEAD_NOTE, None, now, None)
        _dead_letter(conn, spec, mid, run_id, got[3], attempts, LEASE_EXPIRED, now)
        return "dead"
    # due again at once (also when the agent is no longer configured: it runs if it returns)
    store.finish_receipt(conn, run_id, "failed", LEASE_EXPIRED, None, now, now)
    store.settle_claim(conn, mid, agent, run_id, "retry", now)
    return "retry"


def ignore(
    conn: sqlite3.Connection, agents: Mapping[str, AgentSpec], due: list[Due], now: int
) -> list[Receipt]:
    """Messages no rule lets through, to agents with `unmatched: ignore`: read, with an
    `ignored` receipt (reason `filtered`) and no run, all in one transaction, as an agent
    that declined them would leave them (an ack-tracked one is acknowledged `completed`,
    note `ignored: filtered`). One taken meanwhile (by `receive`, or a claim) is left be."""
    out: list[Receipt] = []
    if not due:
        return out
    with write(conn):
        for d in due:
            got = store.delivery_of(conn, d.message_id, d.agent)
            prev = store.claim_of(conn, d.message_id, d.agent)
            if got is None or not _ours(got[0], got[2], prev[0] if prev else None):
                continue
            if prev is not None and prev[0] == "running" and (prev[3] is None or prev[3] > now):
                continue  # held by a live lease (its rules changed while it ran)
            msg = reads.message_by_id(conn, d.message_id)
            if msg is None:
                continue
            run_id = new_run_id(now)
            store.insert_receipt(
                conn,
                run_id,
                msg.id,
                d.agent,
                "ignored",
                d.attempt,
                now,
                msg.dedupe_key,
                reason=d.reason or FILTERED,
                finished_at=now,
            )
            _apply(conn, msg, d.agent, "ignored", "", d.reason or FILTERED, 0, now)
            store.mark_done(conn, msg.id, d.agent, run_id)
            out.append(_receipt(conn, run_id))
    return out


def _one(
    conn: sqlite3.Connection,
    spec: AgentSpec,
    mid: int,
    at: Callable[[], int],
    base_env: Mapping[str, str],
    encode: Callable[[Message], str],
    rand: Callable[[], float],
    stop: Callable[[], bool],
    minting: bool = False,
) -> tuple[Receipt | None, bool]:
    """Claim, run and settle one delivery: (its receipt, whether it was dead-lettered). No
    receipt when it was no longer due, or was dead-lettered without a run. `minting`: the
    command gets a secret proving its agent, and no other, until the run's time limit; it is
    deleted when the run is settled."""
    taken = _claim(conn, spec, mid, at())
    for run_id in taken.orphans:
        runner.kill_orphans(run_id)
    if taken.claim is None:
        return taken.receipt, taken.dead
    c = taken.claim
    msg = c.message
    env = {
        **base_env,
        "ACOMM_AGENT": spec.name,
        "ACOMM_MESSAGE_ID": str(msg.id),
        "ACOMM_CORRELATION_ID": msg.correlation_id or "",
        "ACOMM_CHANNEL": msg.channel,
        "ACOMM_RUN_ID": c.run_id,
        "ACOMM_ATTEMPT": str(c.attempt),
    }
    # the message's trace, not the one tick itself may run in: what the command sends with
    # these joins it (`send` reads both)
    env.pop("ACOMM_TRACE_ID", None)
    env.pop("TRACEPARENT", None)
    env.update(traces.run_env(msg.trace_id, msg.id))
    if minting:
        started = at()
        env["ACOMM_AGENT_TOKEN"] = credentials.run_secret(
            conn, spec.name, c.run_id, started + spec.timeout_ms + LEASE_GRACE_MS, started
        )
    try:
        try:
            outcome = runner.run_command(
                spec.run, encode(msg).encode(), env, spec.timeout_ms / 1000, spec.cwd, stop=stop
            )
        except KeyboardInterrupt:  # no stop handler installed: killed all the same
            _settle(conn, c, runner.RunOutcome(None, "", "", 0, interrupted=True), at(), rand)
            raise
        return _settle(conn, c, outcome, at(), rand)
    finally:
        if minting:
            credentials.drop_run_secret(conn, c.run_id)


def _claim(conn: sqlite3.Connection, spec: AgentSpec, mid: int, now: int) -> _Taken:
    """Claim a due delivery for a run, inside one write transaction: a compare-and-set on
    its claim row. A duplicate is settled here and then; a run whose lease ran out meanwhile
    is recorded as failed first (and its leftovers are to be killed)."""
    agent = spec.name
    taken = _Taken()
    with write(conn):
        got = store.delivery_of(conn, mid, agent)
        prev = store.claim_of(conn, mid, agent)
        if got is None or not _ours(got[0], got[2], prev[0] if prev else None):
            return taken
        state, tracked, ack_status, channel_id = got
        if prev is not None and prev[0] == "running":
            if prev[3] is None or prev[3] > now:
                return taken  # held by a live lease
            taken.orphans.append(prev[1])
            if _expire(conn, spec, mid, agent, prev[1], prev[2], got, now) == "dead":
                taken.dead = True
                return taken
            prev = store.claim_of(conn, mid, agent)
        elif prev is not None and prev[0] == "retry" and (prev[4] or 0) > now:
            return taken  # waiting for its retry time
        msg = reads.message_by_id(conn, mid)
        if msg is None:
            return taken
        key = _dedupe_key(conn, msg)
        from acomm_cli.engine import attachments  # its stdin document: format, subject, files

        attachments.decorate(conn, [msg])
        action, attempts = _verdict(
            conn,
            spec,
            mid,
            prev[0] if prev else None,
            prev[2] if prev else None,
            key,
            channel_id,
            now,
        )
        if action == "skip":
            return taken
        if action == "dead_letter":  # max_attempts was lowered meanwhile
            assert prev is not None  # attempts are counted only on a claim
            _dead_letter(
                conn,
                spec,
                mid,
                prev[1],
                channel_id,
                attempts,
                f"failed {attempts} times (max_attempts {spec.max_attempts})",
                now,
            )
            taken.dead = True
            return taken
        msg.delivery = next(d for d in msg.deliveries if d.recipient == agent)
        msg.deliveries = []
        run_id = new_run_id(now)
        if action == "duplicate":
            store.insert_receipt(
                conn,
                run_id,
                mid,
                agent,
                "ignored",
                attempts + 1,
                now,
                key,
                reason="duplicate",
                finished_at=now,
            )
            _apply(conn, msg, agent, "ignored", "", "duplicate", 0, now)
            store.mark_done(conn, mid, agent, run_id)
            taken.receipt = _receipt(conn, run_id)
            return taken
        lease = now + spec.timeout_ms + LEASE_GRACE_MS
        claimed = (
            store.insert_claim(conn, mid, agent, run_id, attempts + 1, lease)
            if prev is None
            else store.take_claim(conn, mid, agent, prev[1], run_id, attempts + 1, lease, now)
        )
        if not claimed:
            return taken
        store.insert_receipt(conn, run_id, mid, agent, "running", attempts + 1, now, key)
        notices.notify(conn, [(mid, agent, now, "dispatch")])  # the run tells the agent
        presence.seen(conn, agent, now)  # a run of the agent's command starts
        if tracked and ack_status is None:
            _acknowledge_in_progress(conn, mid, agent, now)
        taken.claim = _Claim(spec, run_id, attempts + 1, msg)
        return taken


def _acknowledge_in_progress(conn: sqlite3.Connection, mid: int, agent: str, now: int) -> None:
    """What an agent working on an ack-tracked message would say: `in_progress`. Any ack
    stops the channel's ack timer, which would otherwise redeliver or dead-letter the message
    (max_retries_exceeded) while its command runs or waits for a dispatch retry; from here
    on dispatch alone decides (accepted or ignored: `completed`; out of attempts: dead)."""
    try:
        with savepoint(conn, "in_progress"):
            # dispatch's own claim lease holds it, not the channel's
            acking.record_ack(conn, mid, agent, AckStatus.IN_PROGRESS, None, now, lease=False)
    except CommError:  # e.g. no room for the ack message: run anyway; settling copes
        pass


def _settle(
    conn: sqlite3.Connection,
    c: _Claim,
    outcome: runner.RunOutcome,
    now: int,
    rand: Callable[[], float],
) -> tuple[Receipt, bool]:
    """Record a finished run: its receipt, and what it means for the delivery."""
    spec, msg, agent = c.spec, c.message, c.spec.name
    status, reason = classify(outcome, spec.timeout_ms)
    with write(conn):
        claim = store.claim_of(conn, msg.id, agent)
        if claim is None or claim[1] != c.run_id or claim[0] != "running":
            # our lease ran out and another dispatcher took over: leave the delivery to it
            store.finish_receipt(
                conn, c.run_id, "failed", LEASE_EXPIRED, outcome.exit_code, now, None
            )
            return _receipt(conn, c.run_id), False
        got = store.delivery_of(conn, msg.id, agent)
        if got is None or got[0] == "dead":
            # dead-lettered meanwhile (an expired query...): nothing of the outcome applies
            ran = status + (f" ({reason})" if reason else "")
            store.finish_receipt(
                conn,
                c.run_id,
                "failed",
                _clip(
                    f"{_gone(conn, msg.id, agent, got)}; the command's outcome was not applied: "
                    f"{ran}"
                ),
                outcome.exit_code,
                now,
                None,
            )
            store.settle_claim(conn, msg.id, agent, c.run_id, "dead", None)
            return _receipt(conn, c.run_id), False
        ours = _ours(got[0], got[2], "running")
        if status != "failed":
            try:
                with savepoint(conn, "outcome"):
                    _apply(
                        conn,
                        msg,
                        agent,
                        status,
                        outcome.stdout,
                        reason,
                        outcome.stdout_dropped,
                        now,
                    )
            except CommError as exc:  # e.g. an answer too large for the channel
                status, reason = "failed", _clip(f"{status}, but {exc.message}")
        next_retry, dead = None, False
        if status != "failed":
            presence.seen(conn, agent, now)  # the agent's command answered
            store.settle_claim(conn, msg.id, agent, c.run_id, "done", None)
        elif not ours:
            # e.g. the command ran `acomm receive` itself, then failed: nothing left to retry
            reason = _clip(reason or "") + f"; not retried: {_gone(conn, msg.id, agent, got)}"
            store.settle_claim(conn, msg.id, agent, c.run_id, "done", None)
        elif outcome.interrupted:  # the dispatcher's stop, not the command's failure
            next_retry = now
            store.settle_claim(conn, msg.id, agent, c.run_id, "retry", now, attempts=c.attempt - 1)
        elif c.attempt >= spec.max_attempts:
            dead = True
            reason = _clip(reason or "") + _DEAD_NOTE
            _dead_letter(conn, spec, msg.id, c.run_id, msg.channel_id, c.attempt, reason, now)
            _federated_turn(conn, msg, agent, "failed", now)
        else:
            next_retry = now + retry_delay_ms(spec, c.attempt, rand())
            store.settle_claim(conn, msg.id, agent, c.run_id, "retry", next_retry)
        store.finish_receipt(conn, c.run_id, status, reason, outcome.exit_code, now, next_retry)
        return _receipt(conn, c.run_id), dead


def _apply(
    conn: sqlite3.Connection,
    msg: Message,
    agent: str,
    status: str,
    stdout: str,
    reason: str | None,
    dropped: int,
    now: int,
) -> None:
    """An accepted or ignored message: read; a query's answer sent; an ack-tracked message
    acknowledged `completed` (an ignored one with the note `ignored: REASON`, so that the
    channel does not redeliver it and the sender learns why). `dropped`: bytes of stdout
    past the runner's cap; such an answer or note is refused rather than sent cut short."""
    got = store.delivery_of(conn, msg.id, agent)
    if got is None or got[0] == "dead":
        return  # dead-lettered meanwhile: nothing left to settle (the caller says so)
    state, tracked, ack_status, _ = got
    if state == "unread":
        acks.mark_read(conn, agent, [msg.id], now)
        release(conn, now)
    text = stdout.strip()
    # the query this output answers (an accepted run's stdout is the response)
    answers = (
        msg.correlation_id
        if status == "accepted" and text and msg.type == MessageType.QUERY
        else None
    )
    notes = tracked and ack_status not in (AckStatus.COMPLETED.value, AckStatus.FAILED.value)
    if dropped and (answers is not None or (notes and status == "accepted")):
        raise ValidationFailed(
            f"stdout: {runner.STDOUT_CAP + dropped} bytes is more than the "
            f"{runner.STDOUT_CAP} kept; it is not sent cut short",
            field="stdout",
        )
    if answers is not None:
        queries.record_response(conn, answers, stdout.rstrip(), agent, now)
        return
    if notes:
        note = (text or None) if status == "accepted" else f"ignored: {reason}"
        acking.record_ack(conn, msg.id, agent, AckStatus.COMPLETED, note, now)
    _federated_turn(conn, msg, agent, "completed" if status == "accepted" else "ignored", now)


def _federated_turn(
    conn: sqlite3.Connection, msg: Message, agent: str, outcome: str, now: int
) -> None:
    """A message from another node: the receipt ends the agent's turn, so the sender's node
    gets `ack processed`, once (an ack-tracked message's ack or an answer already sent it)."""
    if msg.channel.startswith("_fed:"):
        from acomm_cli.engine import remote

        remote.turn_ended(conn, msg.id, agent, outcome, now)


def _dead_letter(
    conn: sqlite3.Connection,
    spec: AgentSpec,
    mid: int,
    run_id: str,
    channel_id: int,
    attempts: int,
    last_error: str,
    now: int,
) -> None:
    """Out of attempts: through the dead-letter machinery (deadletter list / replay, and the
    `_system` notification). retry_count counts the retries: attempts - 1."""
    deadletters.dead_letter(
        conn, [(mid, spec.name, channel_id, max(0, attempts - 1))], DEAD_REASON, last_error, now
    )
    store.settle_claim(conn, mid, spec.name, run_id, "dead", None)


def _receipt(conn: sqlite3.Connection, run_id: str) -> Receipt:
    row = store.receipt(conn, run_id)
    assert row is not None  # written just before, in the same transaction
    return Receipt(*row)


# ---------------------------------------------------------------- receipts


def list_receipts(
    conn: sqlite3.Connection,
    *,
    agent: str | None = None,
    message_id: int | None = None,
    status: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> ReceiptPage:
    """Receipts, newest first."""
    if limit < 0 or offset < 0:
        raise ValidationFailed("limit: --limit and --offset must not be negative", field="limit")
    if status is not None and status not in STATUSES:
        raise ValidationFailed(
            f"status: {status!r} is not one of {', '.join(STATUSES)}", field="status", value=status
        )
    rows, total = store.receipts(
        conn, agent=agent, message_id=message_id, status=status, limit=limit, offset=offset
    )
    return ReceiptPage([Receipt(*r) for r in rows], total, offset + len(rows) < total)
