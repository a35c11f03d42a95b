"""The default trigger rules: which event a message carries writes a notification and which
triggers an agent, as the outbox document's decision table says (docs/EVENTS.md, "Default
trigger rules").

The table is data (`TABLE`, one `Row` per line of it); `decide` applies it, with the rules
around it, to one recipient of one event. Pure: no store, no time.
"""

from __future__ import annotations

from dataclasses import dataclass

# the only events that trigger an agent by default, and only when it is their target
TRIGGERING = ("comment.replied", "mention.created")
# the values of the table's two columns, as it writes them
NOTIFY = ("yes", "no", "optional")
TRIGGER = ("yes", "no", "optional (default yes)", "yes (polling decides)")

# why a delivery does not trigger its agent by default: a receipt's reason
SELF_ACTION = "self_action"


@dataclass(frozen=True)
class Row:
    """One line of the decision table. `target`: the target the line is about (`agent`,
    `human`), or who it is for when the event has no kind to match (`thread author`,
    `broadcast`), or None: any target."""

    event_type: str
    target: str | None
    scenario: str
    notify: str  # one of NOTIFY
    trigger: str  # one of TRIGGER
    note: str

    @property
    def triggers(self) -> bool:
        """What the line means for an agent without rules of its own: `optional` is the
        business toggle's default (yes); `polling decides` leaves it to an agent's own rules."""
        return self.trigger in ("yes", "optional (default yes)")

    @property
    def kind(self) -> str | None:
        """The target kind the line matches on, if any."""
        return self.target if self.target in ("agent", "human") else None

    def doc(self) -> dict[str, str | None]:
        return {
            "event_type": self.event_type,
            "target": self.target,
            "scenario": self.scenario,
            "notify": self.notify,
            "trigger": self.trigger,
            "note": self.note,
        }


TABLE: tuple[Row, ...] = (
    Row(
        "comment.replied",
        "agent",
        "a reply to an agent's comment",
        "yes",
        "yes",
        "the main trigger path: the agent decides to reply or not",
    ),
    Row(
        "comment.replied",
        "human",
        "a reply to a human's comment",
        "yes",
        "no",
        "a notification only",
    ),
    Row(
        "comment.created",
        "thread author",
        "a new level-1 answer in a thread, for its author",
        "yes",
        "no",
        "the thread author's subscription alert",
    ),
    Row(
        "mention.created",
        "agent",
        "an agent @-mentioned",
        "yes",
        "optional (default yes)",
        "an agent's own `on:` rules can turn it off",
    ),
    Row(
        "mention.created",
        "human",
        "a human @-mentioned",
        "yes",
        "no",
        "a notification only",
    ),
    Row("like.created", None, "a thread or comment liked", "yes", "no", "a notification only"),
    Row(
        "thread.created",
        "broadcast",
        "a new thread, broadcast",
        "no",
        "yes (polling decides)",
        "no target: agents whose `on:` rules name it run on it",
    ),
    Row(
        "agent.action.feedback",
        None,
        "an agent run's success or failure",
        "optional",
        "no",
        "for auditing and observability",
    ),
)


@dataclass(frozen=True)
class Facts:
    """What the rules read of a message's event (message_events)."""

    event_type: str
    event_id: str | None = None
    actor: str | None = None
    target: str | None = None
    target_kind: str | None = None


@dataclass(frozen=True)
class Decision:
    """What the defaults say of one event for one recipient: whether it is a notification
    to them, whether it triggers them, why not (None when it does), and whether the event
    writes no notification at all (the table's `no`, or a self-action): then nothing of it
    is left in an inbox to be read as one."""

    row: Row | None
    notify: bool
    trigger: bool
    reason: str | None
    quiet: bool = False


def row_for(event_type: str, target_kind: str | None) -> Row | None:
    """The table's line for an event: the one for its target's kind where the table splits
    on it, else the event type's only line. None for a type the table does not list, or a
    kind it has no line for (a `service` target of a reply)."""
    lines = [r for r in TABLE if r.event_type == event_type]
    for r in lines:
        if r.kind is not None and r.kind == target_kind:
            return r
    plain = [r for r in lines if r.kind is None]
    return plain[0] if plain else None


def decide(event: Facts, recipient: str) -> Decision:
    """The default rules for `recipient`'s delivery of a message carrying `event`:
    - an event whose actor is its target (self-action), or whose actor is the recipient,
      neither notifies nor triggers;
    - only the target is notified or triggered (a broadcast has none);
    - an agent is triggered only as the target of a `comment.replied` or `mention.created`
      whose target kind is `agent` (the table's `yes` lines); a human target, a like, any
      other event type: never."""
    row = row_for(event.event_type, event.target_kind)
    if event.actor is not None and event.actor in (event.target, recipient):
        return Decision(row, False, False, SELF_ACTION, quiet=True)
    quiet = row is not None and row.notify == "no"
    if event.target is None or event.target != recipient:
        why = "it has no target" if event.target is None else f"its target is {event.target}"
        return Decision(row, False, False, f"not_target: {why}", quiet)
    notify = row is not None and not quiet
    if row is not None and row.triggers and row.kind == "agent" and row.event_type in TRIGGERING:
        return Decision(row, notify, True, None, quiet)
    kind = event.target_kind or "unknown"
    return Decision(
        row,
        notify,
        False,
        f"default_rules: {event.event_type} to a target of kind {kind} does not trigger",
        quiet,
    )


def rows() -> list[dict[str, str | None]]:
    """The table as `dispatch rules` lists it."""
    return [r.doc() for r in TABLE]
