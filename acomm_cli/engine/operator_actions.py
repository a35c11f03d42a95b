"""The operator's actions of the dashboard (`acomm ui`) and the web console (`acomm web`),
each through the engine function its command calls, with the same arguments (so an action
leaves the store exactly as the command would), and the command line it stands for, which the
confirmation shows. Knows nothing of Textual or of the web.

A read-only session refuses every action before touching the store."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from acomm_cli import clock, model
from acomm_cli.engine import acking, channels, deadletters, sending
from acomm_cli.errors import CommError, Forbidden, UsageError
from acomm_cli.model import Limits, SendRequest


@dataclass(frozen=True)
class Action:
    """One confirmed change: what it does (`run`) and the command line it equals."""

    command: str
    run: Callable[[], str]


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


class Actions:
    """Builds the actions of one session on one connection."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        limits: Limits,
        read_only: bool,
        now: Callable[[], int] = clock.now_ms,
        after_write: Callable[[], str | None] = lambda: None,
        surface: str = "ui",
    ) -> None:
        self.conn = conn
        self.limits = limits
        self.read_only = read_only
        self.now = now
        self.after_write = after_write
        # which front end the session is (`acomm ui` or `acomm web`), named in refusals
        self.surface = surface

    def refuse_if_read_only(self, what: str) -> None:
        if self.read_only:
            raise Forbidden(
                f"read-only: {what} refused (the {self._front()} was opened with "
                "--read-only, or the store cannot be written)",
                field="action",
                value=what,
            )

    def _done(self, summary: str) -> str:
        warning = self.after_write()
        return f"{summary}; warning: {warning}" if warning else summary

    def _front(self) -> str:
        return "console" if self.surface == "web" else "dashboard"

    def _identity(self, agent: str | None) -> str:
        """The acting agent, as `--as` requires it: no silent default."""
        if not agent:
            raise UsageError(
                f"say who is acting: start `acomm {self.surface} --as AGENT` (or set ACOMM_AGENT), "
                "or fill in the `as` field",
                field="as",
            )
        return model.agent_id(agent, "as")

    # ------------------------------------------------------------ sending

    def send(
        self, target: str, body: str, *, agent: str | None, type_: str = "text", topic: str = ""
    ) -> Action:
        """`send CHANNEL BODY`, or with `@a,b` as the target `send --to a,b BODY`."""
        self.refuse_if_read_only("send")
        sender = self._identity(agent)
        target = target.strip()
        if not target:
            raise UsageError(
                "to: name a channel, or @agent[,agent] for a direct message", field="to"
            )
        direct = target.startswith("@")
        req = SendRequest(
            sender=sender,
            content=body,
            channel=None if direct else target,
            type=type_,
            priority="normal",
            topic=topic or None,
        )
        flags = (
            f" --as {_quote(sender)}"
            + (f" --type {type_}" if type_ != "text" else "")
            + (f" --topic {_quote(topic)}" if topic else "")
        )
        if direct:
            to = [a.strip() for a in target[1:].split(",")]

            def run_direct() -> str:
                results = sending.send_direct(self.conn, req, to, self.now(), self.limits)
                sent = [
                    f"{r.id} to {r.recipients[0] if r.recipients else r.channel}"
                    for r in results
                    if not isinstance(r, CommError)
                ]
                failed = [r for r in results if isinstance(r, CommError)]
                if failed and not sent:
                    raise failed[0]
                return self._done(
                    "sent message " + ", ".join(sent) + "".join(f"; not sent: {e}" for e in failed)
                )

            return Action(
                f"acomm send --to {_quote(','.join(to))} {_quote(body)}{flags}", run_direct
            )

        def run() -> str:
            sent = sending.send(self.conn, req, self.now(), self.limits)
            return self._done(f"sent message {sent.id} on {target}")

        return Action(f"acomm send {_quote(target)} {_quote(body)}{flags}", run)

    def broadcast(self, channel: str, body: str, *, agent: str | None) -> Action:
        """A team broadcast: a `broadcast` message to every member of the channel."""
        return self.send(channel, body, agent=agent, type_="broadcast")

    # ------------------------------------------------------------ acks and dead letters

    def ack(
        self, message_id: int, *, agent: str | None, status: str = "completed", note: str = ""
    ) -> Action:
        self.refuse_if_read_only("ack")
        who = self._identity(agent)
        model.ack_status(status)

        def run() -> str:
            r = acking.ack(self.conn, message_id, who, status, note or None, self.now())
            return self._done(
                f"message {message_id} acknowledged {r.status} by {who}"
                + ("" if r.changed else " (already)")
            )

        return Action(
            f"acomm ack {message_id} --as {_quote(who)} --status {status}"
            + (f" --note {_quote(note)}" if note else ""),
            run,
        )

    def replay(self, message_id: int, recipient: str | None = None) -> Action:
        self.refuse_if_read_only("replay")

        def run() -> str:
            items = deadletters.replay(self.conn, message_id, recipient, self.now())
            return self._done(
                f"replayed message {message_id} to " + ", ".join(d.recipient for d in items)
            )

        return Action(
            f"acomm deadletter replay {message_id}"
            + (f" --recipient {_quote(recipient)}" if recipient else ""),
            run,
        )

    def discard(self, message_id: int, recipient: str | None = None) -> Action:
        self.refuse_if_read_only("discard")

        def run() -> str:
            n = deadletters.discard(self.conn, message_id, recipient)
            return self._done(f"discarded {n} dead letter(s) of message {message_id}")

        return Action(
            f"acomm deadletter discard {message_id}"
            + (f" --recipient {_quote(recipient)}" if recipient else ""),
            run,
        )

    # ------------------------------------------------------------ channels

    def channel_state(self, name: str, action: str, *, agent: str | None) -> Action:
        """`channel pause NAME --as AGENT` or `channel resume NAME --as AGENT`: only the
        channel's owner or an admin may."""
        self.refuse_if_read_only(action)
        if action not in ("pause", "resume"):
            raise UsageError(
                f"action: {action!r} is not pause or resume", field="action", value=action
            )
        who = self._identity(agent)

        def run() -> str:
            r = channels.change_channel_state(self.conn, name, action, by=who)
            state = r.channel.state.value
            return self._done(f"channel {name} is {state}" + ("" if r.changed else " (already)"))

        return Action(f"acomm channel {action} {_quote(name)} --as {_quote(who)}", run)
