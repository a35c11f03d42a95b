"""All output: JSON documents, bare ids, plain lines for pipes, rich tables for people.

stdout carries data; stderr carries diagnostics. rich is imported only when a terminal shows
a table, so scripts never pay for it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from types import TracebackType

from acomm_cli.cli import columns as cols
from acomm_cli.cli.columns import Columns, column_names
from acomm_cli.clock import iso
from acomm_cli.errors import CommError
from acomm_cli.model import Channel, Delivery, Message, QueryResult, SendResult

TYPE_CHECKING = False  # typing's, without importing typing (issue 17: DECISIONS.md)
if TYPE_CHECKING:
    from dataclasses import dataclass
    from typing import Any
else:  # the same classes, without importing dataclasses (issue 17)
    from acomm_cli.lite.records import dataclass

if TYPE_CHECKING:  # for the annotations only: none of these loads on a command's path
    from rich.console import Console
    from rich.progress import Progress

    from acomm_cli.bridge.sync import SyncResult
    from acomm_cli.cli.config_report import ConfigReport
    from acomm_cli.dispatch.dispatcher import DispatchResult, Receipt, ReceiptPage
    from acomm_cli.engine.deadletters import Redrive
    from acomm_cli.engine.delivery import DeadLetter
    from acomm_cli.engine.operations import CompactResult, FlushResult, Health, Stats


@dataclass(frozen=True)
class Output:
    """How a command prints: JSON or text, and whether in colour."""

    json: bool = False
    color: bool | None = None  # False: --no-color; None: the environment decides
    table: str | None = None  # a listing's rows: "jsonl", "csv" or "tsv" (docs/output.md)
    headers: bool = True  # the header row of --csv/--tsv

    @property
    def tty(self) -> bool:
        """Whether people read stdout: rich views there, plain lines for programs."""
        return sys.stdout.isatty()

    def colour(self, stderr: bool = False) -> bool:
        """--no-color, then NO_COLOR (set and not empty: no-color.org), then FORCE_COLOR
        (likewise: force-color.org), then TERM=dumb, then whether the stream is a terminal.
        Colour never changes the layout: piped output stays plain text whatever FORCE_COLOR
        says (CI systems often set it globally, and scripts parse that output)."""
        if self.color is False or os.environ.get("NO_COLOR"):
            return False
        if os.environ.get("FORCE_COLOR"):
            return True
        if os.environ.get("TERM") == "dumb":
            return False
        return (sys.stderr if stderr else sys.stdout).isatty()

    def console(self, stderr: bool = False) -> Console:
        from rich.console import Console

        # markup and emoji off: message content is shown as sent, never read as `[bold]` or
        # `:smile:` (views style with Text objects instead)
        plain = partial(Console, stderr=stderr, highlight=False, markup=False, emoji=False)
        if not self.colour(stderr):  # no escape sequences at all, not even bold
            return plain(color_system=None)
        console = plain(force_terminal=True)
        if console.color_system is None:  # FORCE_COLOR on a terminal rich thinks is dumb
            console = plain(force_terminal=True, color_system="standard")
        return console


def _dump(doc: Any) -> None:
    import json  # not at the top: `acomm send` prints no JSON unless asked (issue 17)

    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def flush() -> None:
    sys.stdout.flush()


def text(doc: str) -> None:
    """Text that is itself the result (a completion script, a list of names)."""
    sys.stdout.write(doc)


def help(text: str) -> None:  # shadows the builtin: the command's --help, on stderr
    sys.stderr.write(text.rstrip("\n") + "\n\n")


# -1: -q/--quiet, 1: -v/--verbose; set once per command by `loudness` (the root's options)
_LOUDNESS = [0]


def loudness(*, quiet: bool, verbose: bool) -> None:
    """-q silences the notes (warnings and errors still print); -v adds `verbose:` lines."""
    _LOUDNESS[0] = -1 if quiet else 1 if verbose else 0


def note(text: str) -> None:
    """A diagnostic on stderr: `acomm: note: ...` (or `acomm: warning: ...`, never silenced)."""
    if _LOUDNESS[0] < 0 and not text.startswith("warning:"):
        return
    print(f"acomm: {text}", file=sys.stderr)


def verbose(text: str) -> None:
    """What -v/--verbose adds on stderr: where the store and config are, and timings."""
    if _LOUDNESS[0] > 0:
        print(f"acomm: verbose: {text}", file=sys.stderr)


# Line breaks to readers that split on more than "\n" (Python's splitlines, JavaScript):
# escaped so that an error stays one line whatever value it quotes.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def error(exc: CommError, as_json: bool) -> None:
    if as_json:
        import json  # not at the top: `acomm send` prints no JSON unless asked (issue 17)

        doc = json.dumps({"error": exc.to_dict()}, ensure_ascii=False)
        print(doc.translate(_LINE_BREAKS), file=sys.stderr)
    else:
        print(f"acomm: error: {exc.code}: {exc.message}", file=sys.stderr)


# ---------------------------------------------------------------- documents


def delivery_doc(d: Delivery) -> dict[str, Any]:
    return {
        "recipient": d.recipient, "state": d.state.value, "retry_count": d.retry_count,
        "delivered_at": iso(d.delivered_at), "read_at": iso(d.read_at),
        "ack_status": d.ack_status, "acked_at": iso(d.acked_at),
        "next_timer_at": iso(d.next_timer_at), "first_read_at": iso(d.first_read_at),
    }


def message_doc(m: Message) -> dict[str, Any]:
    doc = {
        "id": m.id, "channel": m.channel, "channel_id": m.channel_id, "sender": m.sender,
        "type": m.type.value, "content": m.content, "topic": m.topic,
        "priority": m.priority.name.lower(), "correlation_id": m.correlation_id,
        "dedupe_key": m.dedupe_key, "metadata": m.metadata, "status": m.status,
        "created_at": iso(m.created_at), "deliver_at": iso(m.deliver_at),
        "global_id": m.global_id, "origin_node": m.origin_node,
    }
    if m.federation is not None:
        doc["federation"] = m.federation
    if m.delivery is not None:
        doc["delivery"] = delivery_doc(m.delivery)
    else:
        doc["deliveries"] = [delivery_doc(d) for d in m.deliveries]
    return doc


def send_doc(r: SendResult) -> dict[str, Any]:
    doc = {
        "id": r.id, "channel": r.channel, "channel_id": r.channel_id,
        "recipients": list(r.recipients), "status": r.status, "created_at": iso(r.created_at),
        "correlation_id": r.correlation_id, "deduplicated": r.deduplicated,
        "suppressed": list(r.suppressed),
    }
    if r.global_id is not None:  # routed to another node (federation)
        doc.update(global_id=r.global_id, to_node=r.to_node, route_decision=r.route_decision)
    return doc


def channel_doc(c: Channel) -> dict[str, Any]:
    cfg = c.config
    return {
        "id": c.id, "name": c.name, "type": c.type.value, "owner": c.owner,
        "state": c.state.value, "created_at": iso(c.created_at),
        "config": {
            "delivery": cfg.delivery.value, "max_message_size": cfg.max_message_size,
            "ack_timeout_ms": cfg.ack_timeout_ms, "max_retries": cfg.max_retries,
            "retry_backoff_ms": cfg.retry_backoff_ms, "retry_jitter": cfg.retry_jitter,
            "echo": cfg.echo, "priority_ordering": cfg.priority_ordering,
            "max_pending": cfg.max_pending, "dedupe_window_ms": cfg.dedupe_window_ms,
            "retention_count": cfg.retention_count, "retention_age_ms": cfg.retention_age_ms,
            # issue 18: the lease a received/in_progress ack holds (the ack timeout unless
            # set), the default time to live (0: none), whether a failed ack is retried
            "lease_ms": cfg.effective_lease_ms, "message_ttl_ms": cfg.message_ttl_ms,
            "retry_failed": cfg.retry_failed,
        },
        "participants": [{"agent": p.agent, "role": p.role.value, "admin": p.admin}
                         for p in c.participants],
    }


# ---------------------------------------------------------------- printing


def _table(out: Output, title: str | None, headers: Sequence[str],
           rows: Iterable[Sequence[Any]]) -> None:
    """A rich table on a terminal; tab-separated lines (no header) when piped; with --csv or
    --tsv, a header row (unless --no-headers) and the rows, quoted as the csv module does."""
    if out.table in ("csv", "tsv"):
        import csv

        writer = csv.writer(sys.stdout, dialect="excel" if out.table == "csv"
                            else "excel-tab", lineterminator="\n")
        if out.headers and headers:
            writer.writerow(headers)
        writer.writerows([["" if v is None else str(v).lower() if isinstance(v, bool) else v
                           for v in row] for row in rows])  # JSON's true/false
        return
    rows = [["" if v is None else str(v) for v in row] for row in rows]
    if not out.tty:
        for row in rows:
            sys.stdout.write("\t".join(v.replace("\t", " ").replace("\n", "\\n") for v in row)
                             + "\n")
        return
    from rich.table import Table

    table = Table(title=title, show_edge=False, header_style="bold")
    for h in headers:
        table.add_column(h.replace("_", " "), overflow="fold")
    for row in rows:
        table.add_row(*row)
    out.console().print(table)


def listing(out: Output, title: str | None, columns: Columns, rows: Iterable[Sequence[Any]],
            docs: Iterable[dict[str, Any]] | None = None) -> None:
    """A listing's rows, in the format the output options chose: with --jsonl one JSON
    object a line (`docs`: the items of its --json document; else each row keyed by its
    columns), else `_table` (rich, plain lines, --csv, --tsv). --json is the caller's."""
    names = column_names(columns)
    if out.table == "jsonl":
        for doc in docs if docs is not None else (dict(zip(names, r, strict=True))
                                                   for r in rows):
            _dump(doc)
        return
    _table(out, title, names, rows)


def _pairs(out: Output, pairs: Sequence[tuple[str, Any]]) -> None:
    width = max(len(k) for k, _ in pairs)
    for k, v in pairs:
        sys.stdout.write(f"{k + ':':<{width + 1}} {'' if v is None else v}\n")


def send_results(out: Output, results: Sequence[SendResult]) -> None:
    if out.json:
        _dump(send_doc(results[0]) if len(results) == 1 else
              {"results": [send_doc(r) for r in results]})
        return
    for r in results:
        sys.stdout.write(f"{r.id}\n")


def batch_results(out: Output, results: Sequence[SendResult]) -> None:
    if out.json:
        _dump({"results": [send_doc(r) for r in results]})
        return
    sys.stdout.write("".join(f"{r.id}\n" for r in results))


def direct_results(out: Output, results: Sequence[SendResult | CommError]) -> None:
    if out.json:
        _dump({"results": [send_doc(r) if isinstance(r, SendResult) else {"error": r.to_dict()}
                           for r in results]})
        return
    for r in results:
        if isinstance(r, SendResult):
            sys.stdout.write(f"{r.id}\n")
        else:
            error(r, False)


def channel(out: Output, c: Channel, *, id_only: bool = False) -> None:
    if out.json:
        _dump(channel_doc(c))
    elif id_only:
        sys.stdout.write(f"{c.id}\n")
    else:
        cfg = channel_doc(c)["config"]
        _pairs(out, [("id", c.id), ("name", c.name), ("type", c.type.value),
                     ("owner", c.owner), ("state", c.state.value),
                     *cfg.items(),
                     ("participants", ", ".join(
                         f"{p.agent} ({p.role.value}{', admin' if p.admin else ''})"
                         for p in c.participants))])


def channels(out: Output, cs: Sequence[Channel]) -> None:
    if out.json:
        _dump({"channels": [channel_doc(c) for c in cs]})
        return
    listing(out, "channels", cols.CHANNELS,
            [(c.id, c.name, c.type.value, c.state.value, c.owner, c.config.delivery.value,
              len(c.participants)) for c in cs], (channel_doc(c) for c in cs))


def subscriptions(out: Output, channel_name: str, subs: Sequence[tuple[str, str]]) -> None:
    if out.json:
        _dump({"channel": channel_name,
               "subscriptions": [{"agent": a, "pattern": p} for a, p in subs]})
        return
    listing(out, f"subscriptions on {channel_name}", cols.SUBSCRIPTIONS, subs,
            ({"channel": channel_name, "agent": a, "pattern": p} for a, p in subs))


def ok(out: Output, doc: dict[str, Any], text: str | None = None) -> None:
    """A command whose result is a small fact: JSON, or one line for people."""
    if out.json:
        _dump(doc)
    elif text is not None:
        sys.stdout.write(text + "\n")


def change(out: Output, doc: dict[str, Any], changed: bool, already: str,
           text: str | None = None) -> None:
    """A state change that may have been a no-op: `changed` in JSON; without --json, a note
    on stderr saying it was `already` so (stdout stays what it always was)."""
    if not changed and not out.json:
        note(f"note: {already}")
    ok(out, {**doc, "changed": changed}, text)


def messages(out: Output, result: QueryResult, *, body: bool = False,
             jsonl: bool = False) -> None:
    if jsonl or out.table == "jsonl":
        for m in result.messages:
            _dump(message_doc(m))
    elif out.json:
        _dump({"messages": [message_doc(m) for m in result.messages],
               "total_count": result.total_count, "has_more": result.has_more})
    elif body:
        for m in result.messages:
            sys.stdout.write(m.content + ("" if m.content.endswith("\n") else "\n"))
    else:
        listing(out, None, cols.MESSAGES,
                [(m.id, m.channel, m.sender, m.type.value, m.priority.name.lower(), m.topic,
                  iso(m.created_at), m.delivery.state.value if m.delivery else m.status,
                  m.content) for m in result.messages])
        if out.tty and result.has_more:
            note(f"showing {len(result.messages)} of {result.total_count}; use --offset/--limit")


def follow(out: Output, batch: QueryResult, *, body: bool = False,
           jsonl: bool = False) -> None:
    """One batch of a --follow stream, printed at once: JSON Lines when piped (or with
    --json / --jsonl), bodies with --body, else each message as a rich view."""
    if out.table in ("csv", "tsv") and not body:  # rows (the caller: the header once)
        messages(out, batch)
    elif body or jsonl or out.json or out.table or not out.tty:
        messages(out, batch, body=body, jsonl=not body)
    elif batch.messages:
        from acomm_cli.cli import views as render_views

        console = out.console()
        for m in batch.messages:
            console.print(render_views.follow_item(m))
    flush()


def headed(out: Output) -> Output:
    """The output for a stream's next batches: the --csv/--tsv header row only once."""
    return Output(json=out.json, color=out.color, table=out.table, headers=False)


# shown in the piped `key: value` lines of `show` only for a federated message: a local
# message's lines stay what scripts always read
_FEDERATION_KEYS = ("global_id", "origin_node", "federation")


def message(out: Output, m: Message) -> None:
    """One message: its JSON document; a rich panel on a terminal; `key: value` lines, the
    deliveries and the content when piped (scripts read those: unchanged)."""
    if out.json:
        _dump(message_doc(m))
        return
    if out.tty:
        from acomm_cli.cli import views as render_views

        out.console().print(render_views.message_panel(m))
        return
    import json  # not at the top: `acomm send` prints no JSON unless asked (issue 17)

    doc = message_doc(m)
    _pairs(out, [(k, json.dumps(v) if isinstance(v, dict) else v)
                 for k, v in doc.items() if k not in ("deliveries", "content")
                 and (v is not None or k not in _FEDERATION_KEYS)])
    sys.stdout.write("deliveries:\n")
    for d in m.deliveries:
        extra = f" ack={d.ack_status}" if d.ack_status else ""
        sys.stdout.write(f"  {d.recipient}\t{d.state.value}\tretries={d.retry_count}{extra}\n")
    sys.stdout.write("content:\n" + m.content + ("" if m.content.endswith("\n") else "\n"))


def status(out: Output, doc: dict[str, Any]) -> None:
    if out.json:
        _dump(doc)
    else:
        _pairs(out, list(doc.items()))


def ack_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """An ack's JSON: its record with the lease's end as a time."""
    until = doc.get("lease_until")
    return {**doc, "lease_until": iso(until) if until is not None else None}


def ack(out: Output, doc: dict[str, Any]) -> None:
    until = doc.get("lease_until")
    if out.json:
        _dump(ack_doc(doc))
    elif doc.get("requeued"):
        note(f"message {doc['message_id']} failed; the channel retries failures, so it is "
             f"given back to {doc['agent']}")
    elif not doc["changed"]:
        note(f"message {doc['message_id']} already {doc['status']} by {doc['agent']}"
             + (f"; lease renewed until {iso(until)}" if until is not None
                else "; nothing changed"))


def extend(out: Output, doc: dict[str, Any]) -> None:
    """`extend`: the lease's new end (bare on stdout without --json)."""
    if out.json:
        _dump({**doc, "lease_until": iso(doc["lease_until"])})
    else:
        sys.stdout.write(f"{iso(doc['lease_until'])}\n")


def nack_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """A nack's JSON: its record with the redelivery as a time."""
    at = doc.get("redeliver_at")
    return {**doc, "redeliver_at": iso(at) if at is not None else None}


def nack(out: Output, doc: dict[str, Any]) -> None:
    """`nack`: requeued (and when) or dead-lettered; one word and a time on stdout."""
    at = doc.get("redeliver_at")
    if out.json:
        _dump(nack_doc(doc))
    elif doc["outcome"] == "requeued":
        sys.stdout.write(f"requeued {iso(at)}\n")
    else:
        sys.stdout.write(f"dead_lettered {doc['reason']}\n")


def acks(out: Output, docs: list[dict[str, Any]]) -> None:
    """`ack` of several ids: a JSON list in their order; in text, a note per no-op."""
    if out.json:
        _dump(docs)
        return
    for doc in docs:
        ack(out, doc)


def tick(out: Output, doc: dict[str, Any]) -> None:
    if out.json:
        _dump({**doc, "now": iso(doc["now"])})
    else:
        sys.stdout.write(" ".join(f"{k}={v}" for k, v in doc.items() if k != "now") + "\n")


def dead_letter_doc(d: DeadLetter) -> dict[str, Any]:
    return {"message_id": d.message_id, "recipient": d.recipient, "channel": d.channel,
            "reason": d.reason, "retry_count": d.retry_count, "last_error": d.last_error,
            "dead_lettered_at": iso(d.dead_lettered_at), "content": d.content}


def dead_letters(out: Output, items: Sequence[DeadLetter], total: int) -> None:
    if out.json:
        _dump({"dead_letters": [dead_letter_doc(d) for d in items], "total_count": total})
        return
    listing(out, "dead letters", cols.DEAD_LETTERS,
            [(d.message_id, d.recipient, d.channel, d.reason, d.retry_count,
              iso(d.dead_lettered_at), d.content) for d in items],
            (dead_letter_doc(d) for d in items))


def redrive(out: Output, result: Redrive) -> None:
    """`deadletter replay --all`: the count on stdout (JSON: `replayed`, or `would_replay`
    for a dry run, with the message ids); each dead letter left dead is a note on stderr."""
    count = "would_replay" if result.dry_run else "replayed"
    skipped = [{"message_id": s.message_id, "recipient": s.recipient, "channel": s.channel,
                "code": s.code, "message": s.message} for s in result.skipped]
    if out.json:
        _dump({count: len(result.replayed), "ids": result.ids,
               "deliveries": [{"message_id": m, "recipient": r} for m, r in result.replayed],
               "skipped": skipped})
        return
    for s in result.skipped:
        note(f"skipped message {s.message_id} to {s.recipient}: {s.code}: {s.message}")
    sys.stdout.write(f"{len(result.replayed)}\n")


def thread(out: Output, correlation_id: str, msgs: Sequence[Message]) -> None:
    if out.json:
        _dump({"correlation_id": correlation_id, "messages": [message_doc(m) for m in msgs]})
        return
    if out.tty and out.table is None:  # a panel per message, with every delivery's state
        from acomm_cli.cli import views as render_views

        out.console().print(render_views.thread_panels(correlation_id, msgs))
        return
    listing(out, f"thread {correlation_id}", cols.THREAD,
            [(m.id, m.sender, m.type.value, iso(m.created_at), m.content) for m in msgs],
            (message_doc(m) for m in msgs))


# ---------------------------------------------------------------- store operations


def stats_doc(s: Stats) -> dict[str, Any]:
    return {
        "agents": [{"agent": a.agent, "total": a.total, "unread": a.unread,
                    "awaiting_ack": a.awaiting_ack,
                    "oldest_unread_age_sec": a.oldest_unread_age_sec,
                    "dead_letters": a.dead_letters, "in_progress": a.in_progress,
                    "lease_expired": a.lease_expired} for a in s.agents],
        "channels": [{"channel": c.channel, "pending": c.pending, "queued": c.queued,
                      "dead_letters": c.dead_letters, "in_progress": c.in_progress,
                      "lease_expired": c.lease_expired,
                      **({} if c.unclaimed is None else {"unclaimed": c.unclaimed})}
                     for c in s.channels],
        "store": {"path": s.store.path, "bytes": s.store.bytes, "wal_bytes": s.store.wal_bytes,
                  "messages": s.store.messages},
        # the mailbox bridge: agents with inbox files still pending, and its own backlog
        "queues": [{"agent": q.agent, "pending_files": q.pending_files,
                    "oldest_file_age_sec": q.oldest_file_age_sec} for q in s.queues],
        "bridge": {"mirror_backlog": s.mirror_backlog, "bad_files": s.bad_files},
        # issue 15: tasks by state (either side, with --as) and review incidents (store-wide)
        "tasks": s.tasks, "incidents": s.incidents,
    }


def stats(out: Output, s: Stats) -> None:
    """Tables on a terminal; piped, one tab-separated line per agent, channel, the store, each
    agent with inbox files pending and the bridge's backlog, each led by its kind (`agent`,
    `channel`, `store`, `queue`, `bridge`) so that awk can pick them apart."""
    doc = stats_doc(s)
    if out.json:
        _dump(doc)
        return
    agents = [tuple(a.values()) for a in doc["agents"]]
    channels = [tuple(c.values()) for c in doc["channels"]]
    st = doc["store"]
    queues = [(q.agent, q.pending_files, q.oldest_file_age_sec) for q in s.queues]
    bridge = s.mirror_backlog or s.bad_files
    work = [(k, n) for k, n in s.tasks.items() if n]  # lines only for a store with tasks
    incidents = any(s.incidents.values())
    if out.table is not None:  # one row per agent, channel, inbox queue, task state
        blank = (None,) * 5
        listing(out, None, cols.STATS,
                [("agent", *a, *blank) for a in agents]
                + [("channel", c[0], None, None, None, None, c[3], c[4], c[5], c[1], c[2],
                    c[6] if len(c) > 6 else None, None, None) for c in channels]
                + [("queue", q[0], *(None,) * 10, q[1], q[2]) for q in queues]
                + [("task", k, n, *(None,) * 11) for k, n in work])
        return
    if not out.tty:
        _table(out, None, (), [("agent", *a) for a in agents] + [("channel", *c) for c in channels]
               + [("store", st["path"], st["bytes"], st["wal_bytes"], st["messages"])]
               + [("queue", *q) for q in queues]
               + ([("bridge", s.mirror_backlog, s.bad_files)] if bridge else [])
               + [("task", k, n) for k, n in work]
               + ([("incidents", s.incidents["open"], s.incidents["resolved"])]
                  if incidents else []))
        return
    _table(out, "agents", ["agent", "total", "unread", "awaiting ack", "oldest unread (s)",
                           "dead letters", "in progress", "leases run out"], agents)
    queue = any(c.unclaimed is not None for c in s.channels)  # a work queue: one more column
    _table(out, "channels", ["channel", "pending", "queued", "dead letters", "in progress",
                             "leases run out"] + (["unclaimed"] if queue else []),
           [c + ("",) * (queue and len(c) == 6) for c in channels])
    _pairs(out, [("store", st["path"]), ("bytes", f"{st['bytes']:,}"),
                 ("wal bytes", f"{st['wal_bytes']:,}"), ("messages", f"{st['messages']:,}")])
    if queues:
        _table(out, "inbox files", ["agent", "pending files", "oldest file (s)"], queues)
    if bridge:
        _pairs(out, [("mirror backlog", s.mirror_backlog),
                     ("response files left in place", s.bad_files)])
    if work or incidents:
        _pairs(out, [("tasks", ", ".join(f"{k} {n}" for k, n in work) or "none"),
                     ("open incidents", s.incidents["open"])])


def doctor(out: Output, h: Health) -> None:
    """The store's problems (exit 5 follows when there are any), and the mailbox bridge's
    notices, which are not store problems: they leave the store healthy."""
    findings = [{"check": f.check, "count": f.count, "detail": f.detail} for f in h.findings]
    notices = [{"check": f.check, "count": f.count, "detail": f.detail} for f in h.notices]
    if out.json:
        doc: dict[str, Any] = {
            "healthy": h.healthy, "schema_version": h.schema_version,
            "expected_schema_version": h.expected_schema_version, "integrity": h.integrity,
            "findings": findings}
        if h.integrity_check:  # SQLite's own report of a damaged file, as it gave it
            doc["integrity_check"] = h.integrity_check
        if notices:  # only when there are any
            doc["notices"] = notices
        _dump(doc)
        return
    if out.table is not None:
        listing(out, None, cols.FINDINGS,
                [(f["check"], f["count"], f["detail"]) for f in findings + notices])
        return
    if h.healthy:
        sys.stdout.write(f"healthy: integrity {h.integrity}, schema version {h.schema_version},"
                         " every invariant holds\n")
    else:
        _table(out, "problems", ["check", "count", "detail"],
               [(f["check"], f["count"], f["detail"]) for f in findings])
    if notices:
        _table(out, "mailbox bridge (not store problems)", ["check", "count", "detail"],
               [(n["check"], n["count"], n["detail"]) for n in notices])


def _kv_line(doc: dict[str, Any]) -> None:
    sys.stdout.write(" ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                              for k, v in doc.items()) + "\n")


def compact(out: Output, r: CompactResult) -> None:
    doc = {"removed_messages": r.removed_messages, "removed_deliveries": r.removed_deliveries,
           "removed_dead_letters": r.removed_dead_letters,
           "removed_exactly_once": r.removed_exactly_once, "bytes_before": r.bytes_before,
           "bytes_after": r.bytes_after, "reclaimed_bytes": r.reclaimed_bytes,
           "free_bytes": r.free_bytes, "vacuumed": r.vacuumed, "dry_run": r.dry_run}
    if out.json:
        _dump(doc)
        return
    _kv_line(doc)
    if r.dry_run:
        note("dry run: nothing was removed")
    elif not r.vacuumed and r.free_bytes and out.tty:
        note(f"{r.free_bytes:,} bytes are free inside the file for new messages; "
             "`acomm compact --vacuum` gives them back to the file system")


def flush_result(out: Output, r: FlushResult) -> None:
    doc = {"busy": r.busy, "wal_frames": r.wal_frames,
           "checkpointed_frames": r.checkpointed_frames, "wal_bytes_before": r.wal_bytes_before,
           "wal_bytes_after": r.wal_bytes_after}
    if out.json:
        _dump(doc)
    else:
        _kv_line(doc)
    if r.busy:
        note("another process is reading the store: the WAL was not fully checkpointed; "
             "run `acomm flush` again later")


def config_report(out: Output, r: ConfigReport) -> None:
    if out.json:
        _dump({"settings": [{"key": e.key, "value": e.value, "source": e.source}
                            for e in r.settings],
               "store": {"path": r.store.value, "source": r.store.source},
               "config_file": {"path": r.config_file.value, "source": r.config_file.source},
               "agents": r.agents_doc})
        return
    import json  # not at the top: `acomm send` prints no JSON unless asked (issue 17)

    listing(out, "configuration", cols.CONFIG,
            [(e.key, json.dumps(e.value) if isinstance(e.value, (dict, list)) else e.value,
              e.source) for e in (r.store, r.config_file, *r.settings, *r.agents)])


# ---------------------------------------------------------------- export and audit


class progress:  # lower case: used as `with render.progress(out, label) as start:`
    """A progress bar on stderr when it is a terminal (and output is not JSON).

    `with progress(out, label) as start:` gives None without a terminal, else `start(total)`,
    which returns `advance(n)`."""

    def __init__(self, out: Output, label: str) -> None:
        self.out, self.label = out, label
        self.bar: Progress | None = None

    def __enter__(self) -> Callable[[int], Callable[[int], None]] | None:
        if self.out.json or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
            return None  # a dumb terminal cannot redraw a bar in place
        return self._start  # rich is loaded, and the bar drawn, only once there is work

    def _start(self, total: int) -> Callable[[int], None]:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        bar = self.bar
        if bar is None:
            bar = self.bar = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TimeRemainingColumn(),
                                      console=self.out.console(stderr=True), transient=True)
            bar.__enter__()
        task = bar.add_task(self.label, total=total)
        done = [0]

        def advance(n: int) -> None:  # never past the total (a catch-up tick can exceed it)
            n = max(0, min(n, total - done[0]))
            done[0] += n
            bar.advance(task, n)

        return advance

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.bar is not None:
            self.bar.__exit__(exc_type, exc, tb)


# ---------------------------------------------------------------- mailbox bridge (issue 6)


def bridge_notes(r: SyncResult) -> None:
    """Diagnostics of a bridge sync on stderr: each response file left in place once (bad,
    refused for now, or committed but not deleted), failed mirror writes and removals."""
    for path, reason in r.bad_files:
        note(f"bridge: response file {path} left in place: {reason}")
    for path, reason in r.deferred_files:
        note(f"bridge: response file {path} not ingested yet: {reason}")
    for path, reason in r.undeleted_files:
        note(f"bridge: response file {path} {reason}")
    if r.failed:
        note(f"warning: mailbox bridge: {r.failed} mirror write(s) failed; `acomm tick` "
             "retries them (see `acomm doctor`)")
    if r.remove_failed:
        note(f"warning: mailbox bridge: {r.remove_failed} mirror removal(s) failed; "
             "`acomm tick` retries them (see `acomm doctor`)")


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


# ---------------------------------------------------------------- agent dispatch (issue 7)


def message_json(m: Message) -> str:
    """The document an agent's command reads on stdin: what `receive --json` prints for it."""
    import json  # not at the top: `acomm send` prints no JSON unless asked (issue 17)

    return json.dumps(message_doc(m), ensure_ascii=False)


def receipt_doc(r: Receipt) -> dict[str, Any]:
    return {"run_id": r.run_id, "message_id": r.message_id, "agent": r.agent,
            "status": r.status, "reason": r.reason, "exit_code": r.exit_code,
            "started_at": iso(r.started_at), "finished_at": iso(r.finished_at),
            "attempt": r.attempt, "next_retry_at": iso(r.next_retry_at)}


def _receipt_rows(out: Output, items: Sequence[Receipt]) -> None:
    listing(out, "receipts", cols.RECEIPTS,
            [(r.run_id, r.message_id, r.agent, r.status, r.exit_code, r.attempt,
              iso(r.started_at), iso(r.next_retry_at), r.reason) for r in items],
            (receipt_doc(r) for r in items))


def receipts(out: Output, page: ReceiptPage) -> None:
    if out.json:
        _dump({"receipts": [receipt_doc(r) for r in page.receipts],
               "total_count": page.total_count, "has_more": page.has_more})
        return
    _receipt_rows(out, page.receipts)
    if out.tty and page.has_more:
        note(f"showing {len(page.receipts)} of {page.total_count}; use --offset/--limit")


def dispatch_result(out: Output, r: DispatchResult) -> None:
    """`acomm dispatch`: the receipts of this pass (with --dry-run, what would run)."""
    if out.json:
        doc: dict[str, Any] = {"now": iso(r.now), "dry_run": r.dry_run, **r.counts(),
                               "receipts": [receipt_doc(x) for x in r.receipts]}
        if r.dry_run:
            doc["due"] = [{"message_id": d.message_id, "agent": d.agent, "channel": d.channel,
                           "type": d.type, "priority": d.priority, "attempt": d.attempt,
                           "action": d.action} for d in r.due]
        _dump(doc)
        return
    if r.dry_run:
        _table(out, "due", ["message", "agent", "channel", "type", "priority", "attempt",
                            "action"],
               [(d.message_id, d.agent, d.channel, d.type, d.priority, d.attempt, d.action)
                for d in r.due])
        return
    _receipt_rows(out, r.receipts)
    if r.dead_lettered:
        note(f"{r.dead_lettered} delivery(ies) dead-lettered (dispatch_failed); see "
             "`acomm deadletter list --reason dispatch_failed`")


def tick_retry(exc: CommError, in_s: float) -> None:
    """A `tick --every` pass that failed and will be tried again (cron mails stderr)."""
    when = f"in {round(in_s, 1):g}s" if in_s >= 0.05 else "now"
    note(f"note: tick: {exc.message}; trying again {when}")


def dispatch_off(exc: CommError) -> None:
    """`tick --every` with a bad `agents:` section: the timers run, the agents do not."""
    note(f"note: tick: dispatch is off, the timers still run: {exc.code}: {exc.message}")


def dispatch_notes(r: DispatchResult) -> None:
    """`tick`'s diagnostics on stderr (cron mails them): each failed run, once."""
    for x in r.receipts:
        if x.status == "failed":
            then = (f"; retry at {iso(x.next_retry_at)}" if x.next_retry_at is not None
                    else "")
            note(f"dispatch: {x.agent} failed on message {x.message_id} (attempt {x.attempt}, "
                 f"{x.run_id}): {x.reason}{then}")


def invites(out: Output, docs: Sequence[dict[str, Any]]) -> None:
    """`invite list`: invites without their tokens."""
    if out.json:
        _dump({"invites": list(docs)})
        return
    listing(out, "invites", cols.INVITES,
            [(d["invite_id"], d["state"], d["expected_node"], d["expires_at"], d["used_by"])
             for d in docs], docs)


def peers(out: Output, doc: dict[str, Any]) -> None:
    """`peers`: the other nodes (the JSON document as it was; a table otherwise)."""
    if out.json:
        _dump(doc)
        return
    listing(out, "peers", cols.PEERS,
            [tuple(p.get(name) for name in column_names(cols.PEERS)) for p in doc["peers"]],
            doc["peers"])
