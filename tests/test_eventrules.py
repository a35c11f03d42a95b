"""The default trigger rules as the engine decides them, case by case (the command line's
view of each line of the table is tests/test_dispatch_events.py)."""

from __future__ import annotations

import pytest

from acomm_cli.engine.eventrules import TABLE, Facts, decide, row_for
from acomm_cli.model import EVENT_TYPES

pytestmark = pytest.mark.unit


def test_the_table_covers_every_event_type_and_says_only_what_the_spec_allows():
    assert sorted({r.event_type for r in TABLE}) == sorted(EVENT_TYPES)
    # only the agent lines of replies and mentions trigger an agent without rules
    assert [(r.event_type, r.target) for r in TABLE if r.triggers] == [
        ("comment.replied", "agent"),
        ("mention.created", "agent"),
    ]
    assert [r.event_type for r in TABLE if r.notify == "no"] == ["thread.created"]


@pytest.mark.parametrize(
    ("event", "trigger", "notify", "reason"),
    [
        (Facts("comment.replied", actor="a", target="bob", target_kind="agent"), True, True, None),
        (Facts("mention.created", target="bob", target_kind="agent"), True, True, None),
        # a service is not an agent: the spec's kinds are human and agent
        (
            Facts("comment.replied", actor="a", target="bob", target_kind="service"),
            False,
            False,
            "default_rules: comment.replied to a target of kind service does not trigger",
        ),
        (
            Facts("comment.replied", actor="a", target="bob", target_kind=None),
            False,
            False,
            "default_rules: comment.replied to a target of kind unknown does not trigger",
        ),
        (
            Facts("like.created", actor="a", target="bob", target_kind="agent"),
            False,
            True,
            "default_rules: like.created to a target of kind agent does not trigger",
        ),
        (
            Facts("comment.replied", actor="bob", target="bob", target_kind="agent"),
            False,
            False,
            "self_action",
        ),
        # the recipient's own action, whoever its target
        (
            Facts("mention.created", actor="bob", target="carol", target_kind="agent"),
            False,
            False,
            "self_action",
        ),
        (
            Facts("mention.created", actor="a", target="carol", target_kind="agent"),
            False,
            False,
            "not_target: its target is carol",
        ),
        (Facts("thread.created", actor="a"), False, False, "not_target: it has no target"),
    ],
)
def test_decide(event, trigger, notify, reason):
    d = decide(event, "bob")
    assert (d.trigger, d.notify, d.reason) == (trigger, notify, reason)


def test_only_a_self_action_or_the_tables_no_writes_no_notification_at_all():
    assert decide(Facts("thread.created", actor="a"), "bob").quiet
    assert decide(Facts("like.created", actor="c", target="c"), "bob").quiet
    assert not decide(Facts("like.created", actor="a", target="c"), "bob").quiet
    assert not decide(Facts("agent.action.feedback", actor="a", target="bob"), "bob").quiet


def test_the_line_of_an_event():
    assert row_for("comment.replied", "human").target == "human"
    assert row_for("like.created", "human").event_type == "like.created"
    assert row_for("comment.replied", "service") is None
    assert row_for("comment.deleted", "agent") is None
