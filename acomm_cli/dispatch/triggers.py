"""Whether a due delivery triggers its agent: the agent's own `on:` rules, or for a message
carrying an event and an agent without rules of its own, the default trigger rules
(acomm_cli.engine.eventrules). A message without an event meets the agent's rules alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from acomm_cli.dispatch.agents import AgentSpec
from acomm_cli.engine import eventrules
from acomm_cli.engine.eventrules import Facts

FILTERED = "filtered"  # the reason of an ignored receipt for a message no rule let through


@dataclass(frozen=True)
class Verdict:
    run: bool
    reason: str | None = None  # why not: a receipt's reason
    # settled (read, with an `ignored` receipt) even with `unmatched: keep`: it is no
    # notification to leave in the inbox (the agent's own action; the table's `no`)
    settle: bool = False


def verdict(
    spec: AgentSpec,
    *,
    type_: str,
    topic: str | None,
    channel: str,
    sender: str,
    metadata: dict[str, Any],
    event: Facts | None,
    direction: str | None = None,
) -> Verdict:
    agent = spec.name
    if sender == agent:  # a message from the agent itself never triggers it
        return Verdict(False, FILTERED)
    if event is not None and event.actor == agent:  # nor does its own action
        return Verdict(False, eventrules.SELF_ACTION, settle=True)
    if event is None or spec.rules.given:
        ok = spec.rules.match(
            type_=type_,
            topic=topic,
            channel=channel,
            sender=sender,
            metadata=metadata,
            event=event,
            direction=direction,
        )
        return Verdict(ok, None if ok else FILTERED)
    decided = eventrules.decide(event, agent)
    return Verdict(decided.trigger, decided.reason, settle=decided.quiet)


def listing(specs: Mapping[str, AgentSpec], config_path: str | None) -> dict[str, Any]:
    """What `dispatch rules` prints: the decision table's rows (source `default`), and for
    each configured agent the rules it is triggered by: its own `on:` (source: the config
    file and the agent) or the defaults."""
    agents = []
    for name, spec in specs.items():
        own = spec.rules.given
        agents.append(
            {
                "agent": name,
                "rules": "own" if own else "defaults",
                "on": spec.rules.doc() if own else None,
                "unmatched": spec.unmatched,
                "source": f"{config_path}: agents.{name}.on" if own else "default",
            }
        )
    return {
        "defaults": [{**row.doc(), "source": "default"} for row in eventrules.TABLE],
        "agents": agents,
    }
