"""Outboxes on NATS JetStream (docs/FEDERATION_NATS.md): a second `Transport`, chosen per node
by its url (`nats://` or `tls://`, recorded by `node init --transport` and advertised in the room).

- Each node's outbox is a stream `ACOMM_<node>` on subject `acomm.<node>.out` (stream names
  may not contain dots, node ids may: see `escape`). The stream is filled in outbox order
  from seq 1, so the stream sequence IS the outbox seq and a peer's cursor means the same on
  HTTP and on NATS (`fed migrate` needs no arithmetic, only a record).
- Appending stays local (the row in `fed_outbox`, in the transaction that emits it);
  `publish` drains the rows past `fed_nats.published_seq` in order, each with
  `Nats-Msg-Id = eventId:attempt`. A crash between the publish and the mark republishes: the
  duplicate window drops it, and past the window the stream's last seq tells what is there.
- A reader has one durable pull consumer per peer stream (named after the reader, AckAll).
  The SQLite cursor stays the truth: `pull` commits the page and the cursor in one
  transaction and only then calls `committed`, which acks. A consumer that is not exactly
  at the cursor (a crash before the ack, a lost consumer) is recreated there.

- A transport url may name a JetStream cluster, `nats://a:4222,nats://b:4222,nats://c:4222`:
  the client connects to any member that answers and fails over to another when its server
  goes away; the node's stream gets the replicas `node init --replicas` recorded. A member
  that does not answer is named in a note; fewer than a majority answering is said too.
- After a command's commit (cli/invocation.py), an outbox append on a NATS node is
  published at once: by the gateway's warm publisher where `gateway serve --push` runs
  (federation/push.py, woken by the commit), else by the command itself
  (`publish_after_commit`); what could not be published waits in the outbox for the next
  publisher (tick, fed pull, the gateway, the next command). Two publishers may race:
  each publish names the stream seq it must follow, and a row already there comes back as
  a duplicate, so the stream never holds an event twice or out of order.

nats-py is imported inside `Link.connect`: `acomm send` never loads it. The client runs on
its own event loop in a daemon thread so the synchronous puller can call it; every call has
a deadline, and any trouble (server down, timeout, refusal) is `Unreachable`."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from acomm_cli.errors import InvalidState, ValidationFailed
from acomm_cli.federation.transport import Page, Unreachable
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

SCHEMES = ("nats://", "tls://")
CREDS_ENV = "ACOMM_NATS_CREDS"
# the other ways to prove who we are, and whom to trust, never advertised in the room
CA_ENV = "ACOMM_NATS_CA"  # a CA file for tls:// servers (default: the system's)
USER_ENV, PASSWORD_ENV, TOKEN_ENV = "ACOMM_NATS_USER", "ACOMM_NATS_PASSWORD", "ACOMM_NATS_TOKEN"
# kill this process right after a command's commit, before its publish (the crash tests)
FAULT_ENV = "ACOMM_FAULT_BEFORE_PUBLISH"
# kill this process right after a pulled page's commit, before its ack (the crash tests)
ACK_FAULT_ENV = "ACOMM_FAULT_BEFORE_ACK"
MAX_REPLICAS = 5
PROBE_TIMEOUT_S = 1.0
DUPLICATE_WINDOW_S = 120.0
ACK_WAIT_S = 30.0
CALL_TIMEOUT_S = 10.0
PUBLISH_BATCH = 1000
WRONG_LAST_SEQUENCE = 10071  # JetStream: Nats-Expected-Last-Sequence did not hold
T = TypeVar("T")


def is_nats(url: str | None) -> bool:
    return bool(url) and str(url).startswith(SCHEMES)


def servers(url: str) -> list[str]:
    """The members a transport url names: `nats://a:4222,nats://b:4222` is a cluster."""
    return [u.strip() for u in str(url).split(",") if u.strip()]


def check_url(url: str, field: str = "transport") -> str:
    from urllib.parse import urlsplit

    members = servers(url) if is_nats(url) else []
    for member in members or [url]:
        try:
            host = urlsplit(member).hostname
        except ValueError:
            host = None
        if not is_nats(member) or not host:
            raise ValidationFailed(
                f"{field}: a NATS url, nats://HOST:PORT (or tls://...; a cluster: "
                f"nats://A:4222,nats://B:4222,...), not {member!r}",
                field=field,
                value=url,
            )
    return url


def check_replicas(replicas: int, url: str) -> int:
    """1..5 (JetStream's limit), and no more than the servers the url names."""
    n = len(servers(url))
    if not 1 <= replicas <= MAX_REPLICAS or replicas > n:
        raise ValidationFailed(
            f"replicas: {replicas} is not between 1 and {min(MAX_REPLICAS, n)} (JetStream "
            f"keeps at most {MAX_REPLICAS}, and the transport names {n} server(s))",
            field="replicas",
            value=str(replicas),
        )
    return replicas


def escape(node: str) -> str:
    """A node id as a stream or consumer name token: `_` -> `__`, `.` -> `_d` (one to one)."""
    return node.replace("_", "__").replace(".", "_d")


def stream_name(node: str) -> str:
    return "ACOMM_" + escape(node)


def subject(node: str) -> str:
    return f"acomm.{node}.out"


def consumer_name(reader: str) -> str:
    return "acomm_" + escape(reader)


def creds_file(stored: str | None) -> str | None:
    """$ACOMM_NATS_CREDS wins over the file `node init --nats-creds` recorded."""
    return os.environ.get(CREDS_ENV) or stored or None


class Link:
    """One NATS connection on a private event loop thread, connected lazily and again after
    any failure; `call` runs a coroutine there with a deadline."""

    def __init__(
        self,
        url: str,
        creds: str | None = None,
        timeout_s: float = CALL_TIMEOUT_S,
        note: Callable[[str], None] | None = None,
        probe_always: bool = False,
    ) -> None:
        self.url, self.creds, self.timeout_s = url, creds, timeout_s
        self.servers = servers(url)
        self.note = note  # told which cluster members are down (else they are kept)
        # a long-running caller checks every member at each connect; a command only when
        # nats-py met trouble (one TCP connect per member is a cost it need not pay)
        self.probe_always = probe_always
        self.down: dict[str, str] = {}  # member -> why, as the last connect found it
        self.last_error: str | None = None  # nats-py's last complaint while connecting
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True, name="acomm-nats")
        self.thread.start()
        self.nc: Any = None
        self.subs: dict[str, Any] = {}

    def call(
        self, coro: Coroutine[Any, Any, T], extra_s: float = 0.0, limit_s: float | None = None
    ) -> T:
        """`coro` on the link's loop, waited for timeout_s + extra_s at most (or `limit_s`
        when that is shorter: what is left of a peer's deadline)."""
        import concurrent.futures

        fut = asyncio.run_coroutine_threadsafe(self._guard(coro), self.loop)
        wait = (
            self.timeout_s + extra_s if limit_s is None else min(limit_s, self.timeout_s + extra_s)
        )
        try:
            return fut.result(max(wait, 0.0))
        except concurrent.futures.TimeoutError:
            fut.cancel()
            self.call_reset()
            raise Unreachable(f"NATS at {self.url}: no answer in {wait:g}s") from None

    async def _guard(self, coro: Coroutine[Any, Any, T]) -> T:
        import nats.errors

        try:
            return await coro
        except (TimeoutError, nats.errors.Error, OSError) as exc:
            await self._reset()
            raise Unreachable(f"NATS at {self.url}: {_reason(exc)}") from None

    async def js(self) -> Any:
        if self.nc is None or self.nc.is_closed:
            await self.connect()
        return self.nc.jetstream(timeout=self.timeout_s)

    async def connect(self) -> None:
        import nats
        import nats.errors

        troubles: list[BaseException] = []
        connecting = True

        async def noted(exc: BaseException) -> None:  # nats-py logs every trouble; we
            troubles.append(exc)  # report our own, naming the member and the reason
            if connecting and _fatal(exc):  # the same answer again: stop at the first
                raise _Refused(exc)  # (and nats-py hangs retrying a failed TLS handshake)

        async def quiet(*_: Any) -> None:
            return None

        # each member refusing a first connection is retried once, 0.2 s later, then
        # NoServersError (max_reconnect_attempts=0 would mean "forever" in nats-py's server
        # selection). Once connected, a lost server is replaced by another member (or one
        # the cluster told us of) the same way; the call waiting meanwhile has its deadline.
        opts: dict[str, Any] = {
            "servers": self.servers,
            "connect_timeout": 2,
            "allow_reconnect": True,
            "max_reconnect_attempts": 1 if len(self.servers) == 1 else 3,
            "reconnect_time_wait": 0.2,
            "error_cb": noted,
            "disconnected_cb": quiet,
            "reconnected_cb": quiet,
            "closed_cb": quiet,
            "name": "acomm",
            **auth_options(self.creds),
        }
        self.subs = {}
        try:
            self.nc = await nats.connect(**opts)
        except _Refused as refused:
            why = _reason(refused.exc)
            self.down = {u: why for u in self.servers} if len(self.servers) == 1 else {}
            raise Unreachable(f"NATS at {self.url}: {why}") from None
        except nats.errors.NoServersError:
            self.last_error = _reason(troubles[-1]) if troubles else None
            await self._probe()
            raise Unreachable(self.why_down()) from None
        connecting = False
        if len(self.servers) > 1 and (troubles or self.probe_always):  # say who is down
            await self._probe()
        elif self.down:
            self.down = {}

    async def _probe(self) -> None:
        """Which members answer (a NATS server greets a connection with INFO): the note
        names each member that does not, and whether a majority still answers."""
        found = await asyncio.gather(*(_greets(u) for u in self.servers))
        self.down = {u: why for u, why in zip(self.servers, found, strict=True) if why}
        if self.down and self.note is not None and len(self.down) < len(self.servers):
            self.note(self.members_note())

    def members_note(self) -> str:
        up = len(self.servers) - len(self.down)
        quorum = up > len(self.servers) // 2
        members = "; ".join(f"NATS member {u} is down ({why})" for u, why in self.down.items())
        return f"{members}; {up} of {len(self.servers)} answer" + (
            "" if quorum else ": no majority, JetStream may refuse writes until one returns"
        )

    def why_down(self) -> str:
        if len(self.servers) == 1:
            why = self.last_error or self.down.get(self.url) or "no server answered"
            return f"NATS at {self.url}: {why}"
        members = "; ".join(f"{u}: {why}" for u, why in self.down.items())
        if not members:
            members = self.last_error or "no server answered"
        return f"NATS cluster {self.url}: no member answered ({members})"

    async def _reset(self) -> None:
        nc, self.nc, self.subs = self.nc, None, {}
        if nc is not None:
            try:
                await nc.close()
            except Exception:  # already gone
                pass

    def call_reset(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._reset(), self.loop).result(2)
        except Exception:  # the loop is stuck or gone: the thread is a daemon
            pass

    def close(self) -> None:
        self.call_reset()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(2)


# ---------------------------------------------------------------- the publisher


def auth_options(creds: str | None) -> dict[str, Any]:
    """nats-py's options for who we are and whom we trust: a `.creds` file, else a user and
    password or a token from the environment (or the url's userinfo, which nats-py reads
    itself); a CA file for tls:// servers."""
    opts: dict[str, Any] = {}
    if creds:
        opts["user_credentials"] = creds
    elif os.environ.get(TOKEN_ENV):
        opts["token"] = os.environ[TOKEN_ENV]
    elif os.environ.get(USER_ENV):
        opts["user"] = os.environ[USER_ENV]
        opts["password"] = os.environ.get(PASSWORD_ENV, "")
    ca = os.environ.get(CA_ENV)
    if ca:
        import ssl

        try:
            opts["tls"] = ssl.create_default_context(cafile=ca)
        except (OSError, ssl.SSLError) as exc:
            raise ValidationFailed(
                f"{CA_ENV}: cannot read the CA file {ca}: {exc}", field=CA_ENV, value=ca
            ) from None
    return opts


class _Refused(Exception):
    """A server answered and refused us (TLS, credentials): no use trying again now."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(str(exc))
        self.exc = exc


def _fatal(exc: BaseException) -> bool:
    import ssl

    import nats.errors

    return isinstance(exc, ssl.SSLError | nats.errors.AuthorizationError) or (
        "authorization violation" in str(exc).lower()
    )


def _reason(exc: BaseException) -> str:
    """A connection trouble in words a person can act on."""
    import ssl

    text = str(exc) or type(exc).__name__
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS: the server's certificate is not trusted ({exc.verify_message}; {CA_ENV})"
    if isinstance(exc, ssl.SSLError):
        return f"TLS: {text}"
    if "authorization" in text.lower() or "authentication" in text.lower():
        return f"refused our credentials ({text.strip()})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return "no answer"
    return text


async def _greets(url: str) -> str | None:
    """None when a NATS server answers at `url`; else why not."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, parts.port or 4222), PROBE_TIMEOUT_S
        )
    except (OSError, TimeoutError) as exc:
        return _reason(exc)
    try:
        line = await asyncio.wait_for(reader.readline(), PROBE_TIMEOUT_S)
        return None if line.startswith(b"INFO") else "not a NATS server"
    except (OSError, TimeoutError) as exc:
        return _reason(exc)
    finally:
        writer.close()


async def ensure_stream(js: Any, node: str, replicas: int = 1) -> int:
    """The node's stream (created when missing, with `replicas`; raised to them when it has
    fewer); returns its last seq."""
    from nats.js.errors import NotFoundError

    try:
        info = await js.stream_info(stream_name(node))
    except NotFoundError:
        info = await js.add_stream(
            name=stream_name(node),
            subjects=[subject(node)],
            duplicate_window=DUPLICATE_WINDOW_S,
            num_replicas=replicas,
        )
    if int(info.config.num_replicas or 1) < replicas:
        info.config.num_replicas = replicas
        await js.update_stream(info.config)
    return int(info.state.last_seq)


def publish(conn: sqlite3.Connection, link: Link, node: str) -> int:
    """Drain this node's unpublished outbox rows into its stream, in seq order; returns how
    many were published now. What is unpublished follows from the stream's last seq (the
    truth, also after a crash between a publish and its mark, or with another publisher at
    work); the mark `published_seq` moves in its own short transaction per batch."""
    cfg = sql.nats_config(conn)
    if cfg is None:
        return 0
    replicas = int(cfg[6] or 1)
    total = 0
    while True:
        head = sql.outbox_head(conn)
        last = link.call(_stream_last(link, node, replicas))
        if last > head:  # another publisher may have put out a row committed since
            head = sql.outbox_head(conn)
            if last > head:
                raise InvalidState(
                    f"stream {stream_name(node)} has {last} events, the outbox "
                    f"{head}: it belongs to another store of node {node}",
                    field="transport",
                    value=link.url,
                )
        if last < head:
            rows = sql.unpublished(conn, last, PUBLISH_BATCH)
            done = link.call(_publish_rows(link, node, rows, last), extra_s=len(rows) * 0.05)
            total += done - last
            last = done
        with write(conn):
            sql.set_published(conn, last)
        if last >= head:
            return total


async def _stream_last(link: Link, node: str, replicas: int = 1) -> int:
    return await ensure_stream(await link.js(), node, replicas)


async def _publish_rows(
    link: Link, node: str, rows: list[tuple[int, str, int, str]], last: int
) -> int:
    """Publish `rows` after stream seq `last`; returns the last seq now known in the stream.
    Each publish names the seq it must follow (Nats-Expected-Last-Sequence), so two
    publishers racing never append an event twice nor out of order: a row the other one
    put there already comes back as a duplicate (its Nats-Msg-Id) carrying the seq it got,
    and once the duplicate window has passed the server refuses it as out of sequence; then
    the caller reads the stream's last seq again and carries on from there.
    The batch goes out at once on a plain subscription's reply subjects, one per row, and
    the stream's acks are read together (one round trip and no task or timer a row, as
    nats-py's JetStream publish would cost): the server takes the publishes in their order,
    and the expected seq of each holds that order whatever comes back; an ack missing is
    "no answer", and what follows a refused row counts for nothing here."""
    import nats.errors

    await link.js()  # (connected)
    nc, stream, subj = link.nc, stream_name(node), subject(node)
    inbox = nc.new_inbox()
    answers: dict[int, Any] = {}
    all_in = asyncio.Event()

    async def take(m: Any) -> None:
        answers[int(m.subject.rpartition(".")[2])] = m
        if len(answers) >= len(rows):
            all_in.set()

    sub = await nc.subscribe(inbox + ".*", cb=take)
    try:
        for i, (seq, event_id, attempt, envelope) in enumerate(rows):
            await nc.publish(
                subj,
                envelope.encode(),
                reply=f"{inbox}.{i}",
                headers={
                    "Nats-Msg-Id": f"{event_id}:{attempt}",
                    "Nats-Expected-Last-Sequence": str(seq - 1),
                    "Nats-Expected-Stream": stream,
                },
            )
        try:
            await asyncio.wait_for(all_in.wait(), link.timeout_s)
        except TimeoutError:
            pass  # each missing one is said below
    finally:
        await sub.unsubscribe()
    for i, (seq, _, _, _) in enumerate(rows):
        m = answers.get(i)
        if m is None:
            raise nats.errors.TimeoutError
        if (m.headers or {}).get("Status") == "503":
            raise nats.errors.NoRespondersError
        ack = json.loads(m.data or b"{}")
        error = ack.get("error")
        if error:
            if error.get("err_code") == WRONG_LAST_SEQUENCE:
                return last  # another publisher got there first: look again
            raise nats.errors.Error(f"JetStream refused seq {seq}: {error.get('description')}")
        if int(ack.get("seq", 0)) != seq:
            raise InvalidState(
                f"stream {stream} is out of step: outbox seq {seq} "
                f"became stream seq {ack.get('seq')}",
                field="transport",
                value=link.url,
            )
        last = seq
    return last


# ---------------------------------------------------------------- the reader


class NatsTransport:
    """Read peers' streams through durable pull consumers named after `reader`."""

    def __init__(
        self, link: Link, reader: str, wait_s: float = 0.0, deadline_s: float = 30.0
    ) -> None:
        self.link, self.reader, self.wait_s = link, reader, max(wait_s, 0.0)
        self.deadline_s = deadline_s
        self.until: dict[str, float] = {}  # peer -> monotonic time this pass's reads end by
        self.held: dict[str, list[tuple[int, Any]]] = {}  # peer -> (stream seq, message)
        self.at: dict[str, int] = {}  # where each peer's consumer stands, as we know it
        self.heads: dict[str, int] = {}  # each peer's stream head, as its last page showed

    def begin_peer(self, source_node: str) -> None:
        """This pass reaches the peer: every read of its stream ends by the deadline."""
        self.until[source_node] = time.monotonic() + self.deadline_s + self.wait_s

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        until = self.until.get(source_node)
        left = None if until is None else until - time.monotonic()
        if left is not None and left <= 0:
            raise Unreachable(
                f"node {source_node}: no complete answer within "
                f"{self.deadline_s + self.wait_s:g}s (federation.peer_deadline)"
            )
        return self.link.call(
            self._read(source_node, after_seq, limit), extra_s=self.wait_s, limit_s=left
        )

    def committed(self, source_node: str, position: int) -> None:
        """The page up to `position` is in SQLite: ack it, one ack for the page (the
        consumer acks all: an ack acks every message delivered before it too)."""
        msgs = [(q, m) for q, m in self.held.pop(source_node, []) if q <= position]
        if msgs and os.environ.get(ACK_FAULT_ENV):
            import signal

            os.kill(os.getpid(), signal.SIGKILL)
        if msgs:
            try:
                self.link.call(msgs[-1][1].ack_sync(timeout=5.0))
                self.at[source_node] = msgs[-1][0]
            except Unreachable:
                self.at.pop(source_node, None)  # the next read places the consumer again

    async def _read(self, source: str, after: int, limit: int) -> Page:
        from nats.js.errors import NotFoundError

        js = await self.link.js()
        head = self.heads.get(source, 0)
        if not (head > after and self.at.get(source) == after and source in self.link.subs):
            try:  # (else the last page said what follows it: no need to ask the stream)
                head = int((await js.stream_info(stream_name(source))).state.last_seq)
            except NotFoundError:
                return Page([], 0)  # nothing published yet
        if head <= after and self.wait_s <= 0:
            return Page([], head)
        inbox = await self._placed(js, source, after)
        if head <= after:  # nothing yet: the long poll ends with the first event
            got = await inbox.fetch(1, self.wait_s, wait=True)
            pending = got[-1][2] if got else 0
            if pending and limit > 1:  # what came with it, asked for by its count
                got += await inbox.fetch(min(limit - 1, pending), 2.0)
        else:
            got = await inbox.fetch(min(limit, head - after), 2.0)
        if inbox.lost:  # the server ended a request for a reason of its own
            self.at.pop(source, None)  # (a consumer deleted, say): look at it again
        got = [g for g in got if g[0] > after]
        # the page runs on from the cursor, one seq after another: a gap, or a delivery
        # of an earlier consumer come late (a repeat), and the next read places it afresh
        for due, (q, _, _) in enumerate(got, start=after + 1):
            if q != due:
                self.at.pop(source, None)
                raise Unreachable(
                    f"stream {stream_name(source)}: the consumer delivered seq {q} where "
                    f"{due} was due"
                )
        self.held[source] = [(q, m) for q, m, _ in got]
        events = []
        loads = json.loads
        for q, m, _ in got:
            try:
                env = loads(m.data)
            except (ValueError, RecursionError):
                env = m.data  # refused alone by the pull (not an object)
            if isinstance(env, dict):
                env["seq"] = q
            events.append(env)
        if got:
            head = max(head, got[-1][0] + got[-1][2])
        self.heads[source] = head
        return Page(events, head)

    async def _placed(self, js: Any, source: str, after: int) -> _Inbox:
        """The durable consumer, placed right after `after`: kept when it has delivered
        exactly that far with nothing unacked, else recreated there (a crash before an ack,
        a rewound cursor, a lost consumer). Our own last ack needs no check."""
        from nats.js import api
        from nats.js.errors import NotFoundError

        stream, durable = stream_name(source), consumer_name(self.reader)
        inbox = self.link.subs.get(source)
        if inbox is not None and self.at.get(source) == after:
            return inbox
        try:
            info = await js.consumer_info(stream, durable)
            placed = int(info.delivered.stream_seq) == after and not int(info.num_ack_pending or 0)
            # a page is acked by its last message: a consumer of this name that does not
            # ack all (made by hand, say; JetStream cannot change it in place) is made anew
            placed = placed and info.config.ack_policy == api.AckPolicy.ALL
        except NotFoundError:
            info, placed = None, False
        if not placed:
            if info is not None:
                await js.delete_consumer(stream, durable)
            await js.add_consumer(
                stream,
                api.ConsumerConfig(
                    durable_name=durable,
                    ack_policy=api.AckPolicy.ALL,
                    ack_wait=ACK_WAIT_S,
                    deliver_policy=api.DeliverPolicy.BY_START_SEQUENCE
                    if after
                    else api.DeliverPolicy.ALL,
                    opt_start_seq=after + 1 if after else None,
                ),
            )
        if inbox is None:
            inbox = _Inbox(self.link.nc, stream, durable)
            await inbox.start()
            self.link.subs[source] = inbox
        else:
            inbox.drop()  # what an earlier consumer delivered is delivered again
        self.at[source] = after
        return inbox


class _Inbox:
    """A consumer's deliveries, asked for in batches on the JetStream API
    ($JS.API.CONSUMER.MSG.NEXT, as nats-py's own fetch does) and taken by one callback on a
    plain subscription: a batch of a thousand costs one request and one wake-up, where
    nats-py's fetch starts a task and a timer per message. Each request has its own reply
    subject under the inbox, so the status that ends one (no messages, timed out) is never
    taken for the end of the next; messages are the consumer's, in its order, whichever
    request they came with (a long poll given up on may still bring one: it is kept)."""

    def __init__(self, nc: Any, stream: str, durable: str) -> None:
        self.nc, self.prefix = nc, nc.new_inbox()
        self.next_subject = f"$JS.API.CONSUMER.MSG.NEXT.{stream}.{durable}"
        self.got: list[tuple[int, Any, int]] = []  # (stream seq, message, pending after)
        self.want = 0
        self.request = ""  # the reply subject of the request waited for
        self.lost = False  # a request ended by the server for a reason of its own
        self.ready = asyncio.Event()
        self.n = 0

    async def start(self) -> None:
        await self.nc.subscribe(self.prefix + ".*", cb=self._take)

    def drop(self) -> None:
        self.got = []

    async def _take(self, m: Any) -> None:
        if not m.reply:  # a status from the server, on the request's reply subject
            status = (m.headers or {}).get("Status", "")
            if status == "100" or m.subject != self.request:
                return  # a heartbeat, or the end of an earlier request
            self.lost = status not in ("404", "408")  # no messages; request timed out
            self.ready.set()
            return
        seq, pending = _position(m.reply)
        self.got.append((seq, m, pending))
        if len(self.got) >= self.want:
            self.ready.set()

    async def fetch(
        self, limit: int, wait_s: float, wait: bool = False
    ) -> list[tuple[int, Any, int]]:
        """Up to `limit` messages: those there now, or with `wait` the first to come
        within `wait_s`."""
        self.n += 1
        self.want, self.request, self.lost = max(limit, 1), f"{self.prefix}.{self.n}", False
        if len(self.got) < self.want:
            self.ready.clear()
            ask: dict[str, Any] = {"batch": self.want - len(self.got)}
            if wait:
                ask["expires"] = int(max(wait_s, 0.2) * 1e9)
            else:
                ask["no_wait"] = True
            await self.nc.publish(self.next_subject, json.dumps(ask).encode(), self.request)
            try:
                await asyncio.wait_for(self.ready.wait(), max(wait_s, 0.2) + (0.5 if wait else 0))
            except TimeoutError:
                pass  # what came so far
        got, self.got = self.got[: self.want], self.got[self.want :]
        return got


def _position(reply: str) -> tuple[int, int]:
    """A delivery's stream seq and the count pending after it, from its ack subject:
    $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>,
    or the longer form with a domain and an account hash before the stream."""
    t = reply.split(".")
    if len(t) == 9:
        return int(t[5]), int(t[8])
    return int(t[7]), int(t[10])


def link_for(
    conn: sqlite3.Connection,
    peer_url: str | None = None,
    note: Callable[[str], None] | None = None,
    probe_always: bool = False,
) -> Link:
    """A link to this node's own NATS server when it has one (its credentials), else to the
    peer's advertised one (with $ACOMM_NATS_CREDS if set). A cluster member that is down is
    told to `note`, by default left among the connection's notes for the command to print."""
    if note is None:
        note = _conn_note(conn)
    cfg = sql.nats_config(conn)
    if cfg is not None:
        return Link(str(cfg[0]), creds_file(cfg[1]), note=note, probe_always=probe_always)
    if peer_url is None:
        raise InvalidState(
            "this node has no NATS transport (acomm node init --transport nats://HOST:PORT)",
            field="transport",
        )
    return Link(peer_url, creds_file(None), note=note, probe_always=probe_always)


def _conn_note(conn: sqlite3.Connection) -> Callable[[str], None] | None:
    if not hasattr(conn, "notes"):
        return None

    def note(text: str) -> None:
        notes = conn.notes or []
        if "note: " + text not in notes:
            conn.notes = [*notes, "note: " + text]

    return note


def publish_after_commit(conn: sqlite3.Connection) -> str | None:
    """After a command committed outbox rows on a NATS node: publish them now, so a peer
    sees an ack, a reply or a task event at once, not at this node's next tick. The rows
    are safe in the outbox already: a server that is down is a note returned (the next
    publisher catches up from the outbox), never an error. Nothing to do, or a gateway's
    live publisher to do it (gwstate.publisher_live): no connection."""
    from acomm_cli import clock
    from acomm_cli.federation import gwstate

    cfg = sql.nats_config(conn) if sql.has_nats(conn) else None
    if cfg is None or int(cfg[2]) >= sql.outbox_head(conn):
        return None
    if gwstate.publisher_live(getattr(conn, "path", ""), clock.now_ms()):
        return None  # the gateway's publisher, woken by the commit, puts them out
    if os.environ.get(FAULT_ENV):
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    node = sql.node_id(conn)
    link = link_for(conn)
    try:
        publish(conn, link, str(node))
    except (Unreachable, InvalidState) as exc:
        return f"note: {exc}; it waits in the outbox for the next publish"
    finally:
        link.close()
    return None


def check(url: str, creds: str | None, replicas: int = 1) -> None:
    check_url(url)
    check_replicas(replicas, url)
    if creds is not None and not os.path.isfile(creds):
        raise ValidationFailed(
            f"nats-creds: no such file: {creds}", field="nats-creds", value=creds
        )


def configure(
    conn: sqlite3.Connection, url: str, creds: str | None, replicas: int = 1
) -> dict[str, Any]:
    """`node init --transport`: record this node's NATS server(s), credentials file and
    stream replicas. A node whose outbox already went out over HTTP switches with `fed
    migrate --to` instead, so that the switch is recorded."""
    check(url, creds, replicas)
    if not sql.has_nats(conn) and sql.outbox_head(conn) > 0:
        raise InvalidState(
            "this node's outbox already went out over HTTP: switch with "
            f"`acomm fed migrate --to {url}`",
            field="transport",
            value=url,
        )
    sql.set_nats(conn, url, os.path.abspath(creds) if creds else None)
    sql.set_nats_replicas(conn, replicas)
    return {"transport": url, "replicas": replicas}


def migrate(conn: sqlite3.Connection, url: str, creds: str | None, now: int) -> dict[str, Any]:
    """`fed migrate --to`: move this node's outbox onto NATS JetStream without losing an
    event. Every outbox row so far goes into the stream in seq order (stream seq = outbox
    seq), so each peer's cursor carries over unchanged; that mapping is recorded. NATS down:
    exit 7 and the store is as it was (the node stays on HTTP)."""
    from acomm_cli.errors import PeerUnreachable
    from acomm_cli.federation import identity, room

    check(url, creds)
    me = identity.require(conn).node_id
    old = sql.nats_config(conn)
    if old is not None and old[0] == url:
        raise InvalidState(f"this node's outbox is on {url} already", field="to", value=url)
    before = room.url_of(conn, me) if old is None else str(old[0])
    with write(conn):
        sql.set_nats(conn, url, os.path.abspath(creds) if creds else None)
    link = Link(url, creds_file(os.path.abspath(creds) if creds else None))
    try:
        published = publish(conn, link, me)
    except (Unreachable, InvalidState) as exc:
        with write(conn):
            if old is None:
                sql.drop_nats(conn)
            else:
                sql.set_nats(conn, str(old[0]), old[1])
        if isinstance(exc, InvalidState):
            raise
        raise PeerUnreachable(str(exc), field="to", value=url) from None
    finally:
        link.close()
    head = sql.outbox_head(conn)
    with write(conn):
        sql.set_nats_migrated(conn, before or "http", head, now)
    return {
        "node_id": me,
        "from": before or None,
        "to": url,
        "stream": stream_name(me),
        "subject": subject(me),
        "published": published,
        "cursor_map": {"outbox_seq": head, "stream_seq": head},
    }
