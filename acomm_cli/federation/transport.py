"""How a node reads another node's outbox: one small interface, so that HTTP,
NATS JetStream or Kafka can replace it without touching the envelope or the cursors.
Appending is always local (this node's own `fed_outbox`, in the transaction of whatever
emits the event), so the interface only reads.

`StoreTransport` reads a peer's outbox straight from the peer's store file, over a read-only
connection: two or three nodes on one machine, and the tests. A peer is reached through the
url of its node entry in the room copy; StoreTransport takes `store:PATH` urls."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Protocol

from acomm_cli.errors import PeerUnreachable
from acomm_cli.store import federation as sql

TYPE_CHECKING = False  # lite.records' dataclass: a pull does not load dataclasses
if TYPE_CHECKING:
    from dataclasses import dataclass, field
else:
    from acomm_cli.lite.records import dataclass, field


class Unreachable(PeerUnreachable):
    """The peer's outbox cannot be read now (its store is missing, locked, not a node...):
    `peer_unreachable`, counted by `fed pull` and `tick`, exit 7 for `fed pull --peer`."""


@dataclass(frozen=True)
class Page:
    events: list[dict[str, Any]]  # envelopes in seq order, each with its `seq`
    head: int  # the peer outbox's last seq
    # what the peer says about itself in its room copy: (map, key, value) rows; StoreTransport
    # fills it (the gateway's Yjs room replaces this)
    room: list[tuple[str, str, str]] = field(default_factory=list)


class Transport(Protocol):
    def read(self, source_node: str, after_seq: int, limit: int) -> Page: ...


class StoreTransport:
    """Read peers' outboxes from their store files; `urls` maps node -> `store:PATH`."""

    def __init__(self, urls: dict[str, str], busy_timeout_ms: int = 2000) -> None:
        self.urls = urls
        self.busy_timeout_ms = busy_timeout_ms

    def _path(self, node: str) -> Path:
        url = self.urls.get(node) or ""
        if not url.startswith("store:"):
            raise Unreachable(
                f"node {node} has no store: url ({url or 'none'}); "
                "only the gateway's HTTP transport reads other urls"
            )
        path = Path(url[len("store:") :])
        if not path.is_file():
            raise Unreachable(f"node {node}: no store at {path}")
        return path

    def read(self, source_node: str, after_seq: int, limit: int) -> Page:
        path = self._path(source_node)
        try:
            conn = sqlite3.connect(
                f"{path.as_uri()}?mode=ro", uri=True, timeout=self.busy_timeout_ms / 1000
            )
        except sqlite3.Error as exc:
            raise Unreachable(f"node {source_node}: {exc}") from None
        try:
            conn.execute("BEGIN")  # one snapshot: the page, the head and the room agree
            if sql.node_id(conn) != source_node:
                raise Unreachable(f"the store at {path} is not node {source_node}")
            events, head = sql.outbox_page(conn, after_seq, limit)
            room = [
                (m, k, v)
                for m in (
                    "nodes",
                    "agents",
                    "routing",
                    "capabilities.catalog",
                    "capabilities.index",
                )
                for k, v in sql.room_map(conn, m)
            ]
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            raise Unreachable(f"node {source_node}: {exc}") from None
        finally:
            conn.close()
        return Page(events, head, room)
