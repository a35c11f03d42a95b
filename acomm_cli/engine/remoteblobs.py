"""Files across nodes, by reference: a message to another node's agent carries, per file,
its name, sha256, size and content type (`payload.attachments`), never the bytes. The
receiving node names the files on its copy with the node that holds them (`origin_node`) and
stores no blob; the bytes are fetched from that node when someone asks for them and stored
only once they hash to the sha256 and have the size the reference gave.

The rules here are the engine's half (what a reference is, who gets what, what a fetched blob
must be); the fetch itself, over the network, is federation's (federation/blobs.py). Imported
only on a node's paths, and by the bridge for a file it cannot mirror yet."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from acomm_cli.engine import attachments
from acomm_cli.errors import (
    AttachmentCorrupt,
    AttachmentTooLarge,
    EventRejected,
    NotFound,
    ValidationFailed,
)
from acomm_cli.model import Attachment, Limits, RichParts
from acomm_cli.store import attachments as files_sql
from acomm_cli.store import federation as fed_sql
from acomm_cli.store import remoteblobs as q

SHA256 = re.compile(r"[0-9a-f]{64}")
MAX_FILES = 100  # references in one message event
MAX_SIZE = 2**31 - 1  # what SQLite stores in one blob


@dataclass(frozen=True)
class Wanted:
    """A file of a message whose bytes are on another node and not here yet."""

    message_id: int
    file: Attachment
    origin: str


# ---------------------------------------------------------------- the envelope


def refs(rich: RichParts | None) -> list[dict[str, Any]]:
    """A message's files as the references its event carries (no bytes)."""
    if rich is None:
        return []
    return [
        {"name": a.name, "sha256": a.sha256, "size": a.size, "contentType": a.content_type}
        for a in rich.attachments
    ]


def check_refs(value: Any) -> list[Attachment]:
    """A peer's `payload.attachments`, each reference checked as a local file's name and
    hash are; EventRejected naming the first thing wrong."""
    if not isinstance(value, list) or len(value) > MAX_FILES:
        raise EventRejected(f"payload.attachments: not a list of at most {MAX_FILES} references")
    out: list[Attachment] = []
    names: set[str] = set()
    for i, ref in enumerate(value):
        where = f"payload.attachments[{i}]"
        if not isinstance(ref, dict):
            raise EventRejected(f"{where}: not an object")
        name, sha, size, ctype = (ref.get(k) for k in ("name", "sha256", "size", "contentType"))
        try:
            if not isinstance(name, str):
                raise ValidationFailed("name")
            attachments.check_name(name, name)
        except ValidationFailed:
            raise EventRejected(f"{where}.name: not a usable file name") from None
        if name in names:
            raise EventRejected(f"{where}.name: {name!r} twice")
        names.add(name)
        if not isinstance(sha, str) or not SHA256.fullmatch(sha):
            raise EventRejected(f"{where}.sha256: not 64 lowercase hex digits")
        if type(size) is not int or not 0 <= size <= MAX_SIZE:
            raise EventRejected(f"{where}.size: not an integer from 0 to {MAX_SIZE}")
        if ctype is not None and (not isinstance(ctype, str) or not 1 <= len(ctype) <= 255):
            raise EventRejected(f"{where}.contentType: not a string of 1-255 characters")
        out.append(Attachment(name, sha, size, ctype))
    return out


def name_inbound(
    conn: sqlite3.Connection, message_id: int, files: list[Attachment], origin: str
) -> None:
    """Inside the inbound event's savepoint: the message's files, held by `origin`."""
    q.name_remote(
        conn, [(message_id, a.name, a.sha256, a.size, a.content_type, origin) for a in files]
    )


# ---------------------------------------------------------------- the receiving node


def wanted(conn: sqlite3.Connection, message_id: int, name: str, agent: str) -> Wanted | None:
    """For a participant of the message's channel: the file when its bytes are on another
    node and not here yet; None when they are here (or the file is this node's own)."""
    for a in attachments.listing(conn, message_id, agent):  # refuses a non-participant
        if a.name == name:
            break
    else:
        raise NotFound(f"message {message_id} has no file named {name!r}", field="name", value=name)
    origin = q.origin_of(conn, message_id, name)
    if origin is None or q.has_blob(conn, a.sha256):
        return None
    return Wanted(message_id, a, origin)


def too_large(want: Wanted, limits: Limits) -> None:
    """A reference past this node's own limit for one file: refused before a byte is asked
    for (the same limit as a local send's, exit 6)."""
    cap = limits.max_attachment_bytes
    if cap and want.file.size > cap:
        raise AttachmentTooLarge(
            f"{want.file.name}: {want.file.size} bytes on node {want.origin!r}, more than "
            f"limits.max_attachment_bytes ({cap}); not fetched",
            field="name",
            value=want.file.name,
            size=want.file.size,
            limit=cap,
        )


def cap(limits: Limits) -> int:
    """The most bytes a fetch reads: one file's limit (0: SQLite's)."""
    return limits.max_attachment_bytes or MAX_SIZE


def accept(conn: sqlite3.Connection, want: Wanted, data: bytes, now: int) -> None:
    """Store the fetched bytes when they are the file the message names; AttachmentCorrupt
    otherwise, and nothing is stored (the caller records the refusal)."""
    import hashlib

    a = want.file
    got = hashlib.sha256(data).hexdigest()
    if len(data) != a.size or got != a.sha256:
        raise AttachmentCorrupt(
            f"node {want.origin!r} sent {len(data)} bytes with sha256 {got} for {a.name!r}; "
            f"the message names {a.size} bytes with sha256 {a.sha256}; nothing was stored",
            field="name",
            value=a.name,
            sha256=a.sha256,
            peer=want.origin,
        )
    files_sql.add_blob(conn, a.sha256, data, now)


def record_refused(conn: sqlite3.Connection, want: Wanted, reason: str, now: int) -> None:
    """A blob the origin sent that was not the file: kept with the events refused from that
    node (`fed status` shows them), under the message's global id."""
    from acomm_cli.store import reads

    msg = reads.message_by_id(conn, want.message_id)
    fed_sql.record_rejected(
        conn,
        want.origin,
        None,
        None if msg is None else msg.global_id,
        "attachment",
        reason,
        now,
    )


# ---------------------------------------------------------------- the origin node


def servable(conn: sqlite3.Connection, node: str, sha256: str) -> bytes | None:
    """The blob's bytes for a peer node that is entitled to them (a message this node sent
    to it names the blob as this node's own file); None otherwise, and for a blob not here."""
    if not SHA256.fullmatch(sha256) or not q.sent_to_node(conn, node, sha256):
        return None
    return files_sql.blob(conn, sha256)


# ---------------------------------------------------------------- the bridge


def local_data(conn: sqlite3.Connection, a: Attachment) -> bytes | None:
    """A file's bytes as `attachments.data_of` reads them, or None for a file held by
    another node and not fetched yet (a mirror lists it without a copy)."""
    if not q.has_blob(conn, a.sha256) and q.held_elsewhere(conn, a.sha256):
        return None
    return attachments.data_of(conn, a)
