"""The outbox envelope a node reads from a peer, checked before any of it touches the store.

A peer's outbox is another program's output: any event in it may be malformed (no `kind`, a
`payload` that is not an object, a `seq` that is not a number, nesting deep enough to exhaust
the stack). `check` refuses such an event with EventRejected, naming the first field at fault;
`fed pull` then records it, moves its cursor past it and goes on. What is checked is what the
readers of an event use (federation's pull, taskfed, remote): each field's type, its bounds,
and the fields a kind cannot do without. Stdlib, errors, model, the trace id's rule
(traces.check) and, for a message that carries one, the notification event's (events.check)."""

from __future__ import annotations

from typing import Any

from acomm_cli import jsondepth
from acomm_cli.engine import traces
from acomm_cli.engine.outbox import MAX_DETAIL
from acomm_cli.errors import EventRejected, ValidationFailed
from acomm_cli.model import agent_id

# the outbox kinds a node emits (remote.emit, taskemit.KINDS)
TASK_KINDS = frozenset(
    {"task_accept", "task_update", "task_complete", "task_failed", "task_incident"}
)
KINDS = frozenset({"message", "task_create", "ack", "reply", "dead_letter"}) | TASK_KINDS
# the kinds whose readers need a sender, and a recipient, agent
NEEDS_SOURCE_AGENT = frozenset({"message", "task_create", "reply"}) | (
    TASK_KINDS - {"task_incident"}
)
NEEDS_TO_AGENT = frozenset({"message", "task_create"})
ACK_STATUSES = frozenset({"accepted", "processed"})

MAX_SEQ = 2**63 - 1  # SQLite's INTEGER
MAX_ID = 128  # eventId, ackOf, replyTo, taskId, corrId
MAX_SHORT = 256  # kind-specific words: a type, a priority, a time, a status
MAX_DEPTH = jsondepth.MAX_DEPTH  # objects and arrays inside one another, the envelope being 1
MAX_ITEMS = 250_000  # values in one event, all levels
MAX_TEXT = 8 * 1024 * 1024  # characters of all its strings together


def check(env: Any, now: int | None = None) -> dict[str, Any]:
    """`env` as a valid envelope, or EventRejected with the first thing wrong. `now` (this
    node's clock, ms) bounds a carried event's occurred_at."""
    if not isinstance(env, dict):
        raise EventRejected(f"the envelope is not an object ({type(env).__name__})")
    _bounded(env)
    seq = env.get("seq")
    if type(seq) is not int or not 1 <= seq <= MAX_SEQ:
        raise EventRejected(f"seq: {_show(seq)} is not a positive integer")
    _text(env, "eventId", MAX_ID, required=True)
    kind = env.get("kind")
    if kind not in KINDS:
        raise EventRejected(f"kind: {_show(kind)} is not a known event kind")
    payload = env.get("payload")
    if not isinstance(payload, dict):
        raise EventRejected(f"payload: {_show(payload)} is not an object")
    trace = env.get("trace")
    if trace is not None:
        if not isinstance(trace, dict):
            raise EventRejected(f"trace: {_show(trace)} is not an object")
        attempt = trace.get("attempt")
        if attempt is not None and (type(attempt) is not int or not 1 <= attempt <= MAX_SEQ):
            raise EventRejected(f"trace.attempt: {_show(attempt)} is not a positive integer")
        trace_id = trace.get("traceId")
        if trace_id is not None:
            try:
                traces.check(trace_id, "trace.traceId")
            except ValidationFailed:
                raise EventRejected(
                    f"trace.traceId: {_show(trace_id)} is not 1-{traces.MAX_LEN} characters "
                    "of A-Z a-z 0-9 _ -"
                ) from None
    for name, limit in _ENV_TEXTS:  # (_text's test inline: it runs only to name a fault)
        value = env.get(name)
        if value is not None and not (isinstance(value, str) and 0 < len(value) <= limit):
            _text(env, name, limit)
    _agent(env, "sourceAgentId", required=kind in NEEDS_SOURCE_AGENT)
    _agent(env, "toAgentId", required=kind in NEEDS_TO_AGENT)
    _payload(str(kind), payload)
    if kind in ("message", "task_create") and payload.get("event") is not None:
        _event(payload["event"], env.get("sourceAgentId"), now)
    return env


def _event(event: Any, sender: Any, now: int | None) -> None:
    """A carried notification event: the rules a local send's event meets (events.check),
    before it reaches the send path, where a refusal would drop the message silently."""
    from acomm_cli import clock
    from acomm_cli.engine import events

    try:
        events.check(event, str(sender), clock.now_ms() if now is None else now)
    except ValidationFailed as exc:
        raise EventRejected(f"payload.event: {exc}") from None


_ENV_TEXTS: tuple[tuple[str, int], ...] = (
    ("sourceNodeId", MAX_ID),
    ("toNodeId", MAX_ID),
    ("corrId", MAX_ID),
    ("createdAt", MAX_SHORT),
)


def _payload(kind: str, payload: dict[str, Any]) -> None:
    if kind in ("message", "task_create"):
        for name in ("type", "topic"):
            value = payload.get(name)
            if value is not None and not (isinstance(value, str) and 0 < len(value) <= MAX_SHORT):
                _text(payload, name, MAX_SHORT, where="payload.")
        priority = payload.get("priority")
        if type(priority) is not int or not -MAX_SEQ <= priority <= MAX_SEQ:
            _text(payload, "priority", MAX_SHORT, where="payload.")  # a name, or a rank
        _text(payload, "content", MAX_TEXT, where="payload.")
        meta = payload.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise EventRejected(f"payload.metadata: {_show(meta)} is not an object")
        fmt, subject = payload.get("format"), payload.get("subject")
        if fmt is not None and fmt not in ("text", "markdown"):
            raise EventRejected(f"payload.format: {_show(fmt)} is not text or markdown")
        _text(payload, "subject", MAX_SHORT, where="payload.")
        if subject is not None and (subject == "" or any(c < " " or c == "\x7f" for c in subject)):
            raise EventRejected("payload.subject: empty, or more than one line")
        if payload.get("attachments") is not None:  # references to files, never bytes
            from acomm_cli.engine import remoteblobs

            remoteblobs.check_refs(payload["attachments"])
    elif kind == "ack":
        _text(payload, "ackOf", MAX_ID, required=True, where="payload.")
        if payload.get("status") not in ACK_STATUSES:
            raise EventRejected(
                f"payload.status: {_show(payload.get('status'))} is not accepted or processed"
            )
        _text(payload, "outcome", MAX_SHORT, where="payload.")
    elif kind == "dead_letter":  # eventId: the event that died (absent: this one)
        _text(payload, "eventId", MAX_ID, where="payload.")
        _text(payload, "reason", MAX_SHORT, required=True, where="payload.")
        _text(payload, "detail", MAX_DETAIL, where="payload.")
    elif kind == "reply":
        _text(payload, "replyTo", MAX_ID, required=True, where="payload.")
        _text(payload, "content", MAX_TEXT, where="payload.")
    elif kind in TASK_KINDS:
        _text(payload, "taskId", MAX_ID, required=True, where="payload.")
        _text(payload, "etaAt", MAX_SHORT, where="payload.")


def _text(
    obj: dict[str, Any], name: str, limit: int, *, required: bool = False, where: str = ""
) -> None:
    value = obj.get(name)
    if value is None and not required:
        return
    least = 0 if limit == MAX_TEXT else 1  # a text may be empty, an id or a word not
    if not isinstance(value, str) or not least <= len(value) <= limit:
        raise EventRejected(
            f"{where}{name}: {_show(value)} is not a string of {least}-{limit} characters"
        )


_AGENTS: set[str] = set()  # agent ids found valid (a pure rule): a page names a few, often
_AGENTS_KEPT = 4096


def _agent(env: dict[str, Any], name: str, *, required: bool) -> None:
    value = env.get(name)
    if value is None and not required:
        return
    if type(value) is str and value in _AGENTS:
        return
    try:
        if not isinstance(value, str):
            raise ValidationFailed(name)
        agent_id(value, name)
    except ValidationFailed:
        raise EventRejected(f"{name}: {_show(value)} is not a valid agent id") from None
    if type(value) is str and len(_AGENTS) < _AGENTS_KEPT:
        _AGENTS.add(value)


def _bounded(env: dict[str, Any]) -> None:
    """Depth, count and text of the whole event within bounds, walked without recursion
    (a hostile nesting must not exhaust the stack here either). The walk of
    jsondepth.walk, inlined: the same order, so the same first fault is named; an event
    that _within finds in bounds (every event a node emits) needs no such walk."""
    if _within(env):
        return
    items = chars = 0
    todo: list[tuple[Any, str | None, int]] = [(env, None, 1)]
    pop, push = todo.pop, todo.extend
    while todo:
        value, key, depth = pop()
        items += 1
        if items > MAX_ITEMS:
            raise EventRejected(f"the event holds more than {MAX_ITEMS} values")
        if key is not None:
            chars += len(key)
        if isinstance(value, str):
            chars += len(value)
        if chars > MAX_TEXT:
            raise EventRejected(f"the event's text is over {MAX_TEXT} characters")
        if isinstance(value, dict):
            if depth > MAX_DEPTH:
                raise EventRejected(f"the event nests deeper than {MAX_DEPTH} levels")
            push((v, k, depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            if depth > MAX_DEPTH:
                raise EventRejected(f"the event nests deeper than {MAX_DEPTH} levels")
            push((v, None, depth + 1) for v in value)


def _within(env: dict[str, Any]) -> bool:
    """Whether no bound of _bounded is passed, found container by container (the totals
    only grow, so they pass a bound at the end when they pass it on the way)."""
    items, chars = 1, 0
    todo: list[tuple[Any, int]] = [(env, 1)]
    pop, push = todo.pop, todo.append
    while todo:
        value, depth = pop()
        if depth > MAX_DEPTH:
            return False
        items += len(value)
        if isinstance(value, dict):
            chars += sum(map(len, value))  # its keys
            value = value.values()
        for item in value:
            if isinstance(item, str):
                chars += len(item)
            elif isinstance(item, (dict, list)):  # (a tuple tests faster than a union)
                push((item, depth + 1))
        if items > MAX_ITEMS or chars > MAX_TEXT:
            return False
    return True


def _show(value: Any) -> str:
    """A value as a refusal names it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def seq_of(env: Any) -> int | None:
    """The event's seq when it is a usable one (for the record and the cursor)."""
    seq = env.get("seq") if isinstance(env, dict) else None
    return seq if type(seq) is int and 1 <= seq <= MAX_SEQ else None


def said(env: Any, name: str) -> str | None:
    """A string field of a refused event as recorded: absent, not a string, or cut to
    MAX_SHORT characters."""
    value = env.get(name) if isinstance(env, dict) else None
    return value[:MAX_SHORT] if isinstance(value, str) else None
