"""Rich messages: a message's format (text | markdown) and subject, and the files it carries.

Files are stored content-addressed: one blob per sha256 in `attachments`, however many
messages name it, and each message names its files in `message_attachments`. A send reads
its files (`read_files`) before its transaction begins, so the write lock is never held
while a file is read, and every refusal (a directory, a FIFO, an unreadable file, one past
the limits) comes before anything is written. On read, `decorate` adds the rich parts to
message documents, with the kinds at both ends of a direct message (`direction`)."""

from __future__ import annotations

import os
import sqlite3
import stat

from acomm_cli import model
from acomm_cli.errors import (
    AttachmentCorrupt,
    AttachmentTooLarge,
    NotFound,
    NotParticipant,
    ValidationFailed,
)
from acomm_cli.lite.paths import file_kind
from acomm_cli.model import Attachment, Limits, Message, RichParts
from acomm_cli.store import attachments as q
from acomm_cli.store import presence

TYPE_CHECKING = False  # typing's, without importing typing
if TYPE_CHECKING:
    from collections.abc import Sequence

FORMATS = ("text", "markdown")
MAX_SUBJECT_CHARS = 256
MAX_NAME_BYTES = 255  # a file name on every common file system (the bridge mirrors them)
# The kind letters of `direction`: a human is U (a user), an agent or a service is A.
_LETTER = {"human": "U", "agent": "A", "service": "A"}
DIRECTIONS = ("U2U", "U2A", "A2U", "A2A")  # sender's kind, then the other end's


def parts(
    fmt: str | None, subject: str | None, paths: Sequence[str] | None, limits: Limits
) -> RichParts | None:
    """What `send --format/--subject/--attach` asks for, checked, its files read; None when
    nothing was asked (a plain send stays as it was)."""
    if fmt is None and subject is None and not paths:
        return None
    rich = RichParts(format=fmt, subject=subject, attachments=read_files(paths or (), limits))
    check(rich, limits)
    return rich


def check(rich: RichParts, limits: Limits) -> None:
    """The rules every rich send passes, whoever built it (the send path calls it again
    inside its transaction; files already read are only counted)."""
    if rich.format is not None and rich.format not in FORMATS:
        raise ValidationFailed(
            f"format: {rich.format!r} is not one of {', '.join(FORMATS)}",
            field="format",
            value=rich.format,
        )
    if rich.subject is not None:
        _check_subject(rich.subject)
    names: set[str] = set()
    total = 0
    for a in rich.attachments:
        check_name(a.name, a.name)
        if a.name in names:
            raise ValidationFailed(
                f"attach: two files are named {a.name!r}; a message names each file once",
                field="attach",
                value=a.name,
            )
        names.add(a.name)
        _check_size(a.name, a.size, limits)
        total += a.size
        _check_total(total, limits)


def _check_subject(subject: str) -> None:
    if not isinstance(subject, str) or subject == "":
        raise ValidationFailed("subject: must not be empty", field="subject", value=subject)
    model.utf8(subject, "subject")
    if len(subject) > MAX_SUBJECT_CHARS:
        raise ValidationFailed(
            f"subject: {len(subject)} characters; at most {MAX_SUBJECT_CHARS}",
            field="subject",
            value_length=len(subject),
        )
    if any(c < " " or c == "\x7f" for c in subject):
        raise ValidationFailed(
            "subject: must be one line, without control characters", field="subject"
        )


def check_name(name: str, given: str, field: str = "attach") -> None:
    """A file's name on a message: its base name, a plain file name (it becomes a file name
    beside the bridge's inbox files and under `attachment get -o`)."""
    model.utf8(name, field)
    if (
        name in ("", ".", "..")
        or "/" in name
        or len(name.encode("utf-8")) > MAX_NAME_BYTES
        or any(c < " " or c == "\x7f" for c in name)
    ):
        raise ValidationFailed(
            f"{field}: {given!r} does not end in a usable file name (1-{MAX_NAME_BYTES} "
            "bytes, no control characters)",
            field=field,
            value=given,
        )


def _check_size(name: str, size: int, limits: Limits, field: str = "attach") -> None:
    if limits.max_attachment_bytes and size > limits.max_attachment_bytes:
        raise AttachmentTooLarge(
            f"{field}: {name} is {size} bytes, more than limits.max_attachment_bytes "
            f"({limits.max_attachment_bytes})",
            field=field,
            value=name,
            size=size,
            limit=limits.max_attachment_bytes,
        )


def _check_total(total: int, limits: Limits, field: str = "attach") -> None:
    cap = limits.max_message_attachment_bytes
    if cap and total > cap:
        raise AttachmentTooLarge(
            f"{field}: the files add up to more than limits.max_message_attachment_bytes ({cap})",
            field=field,
            size=total,
            limit=cap,
        )


def from_base64(
    items: Sequence[tuple[str, str]], limits: Limits, field: str = "attachments"
) -> tuple[Attachment, ...]:
    """Files given as (name, base64 text) pairs, as an API carries them, checked like
    `send --attach`'s: each size is bounded from the text's length before it is decoded,
    so no file past the limits is ever decoded; then decoded strictly and hashed."""
    import binascii
    import hashlib
    import mimetypes

    out: list[Attachment] = []
    names: set[str] = set()
    total = 0
    for name, text in items:
        check_name(name, name, field)
        if name in names:
            raise ValidationFailed(
                f"{field}: two files are named {name!r}; a message names each file once",
                field=field,
                value=name,
            )
        names.add(name)
        at_least = len(text) // 4 * 3 - 2  # what the text decodes to, padding aside
        _check_size(name, max(at_least, 0), limits, field)
        _check_total(total + max(at_least, 0), limits, field)
        try:
            data = binascii.a2b_base64(text.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError):
            raise ValidationFailed(
                f"{field}: the content of {name!r} is not valid base64",
                field=field,
                value=name,
            ) from None
        _check_size(name, len(data), limits, field)
        total += len(data)
        _check_total(total, limits, field)
        kind = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
        out.append(Attachment(name, hashlib.sha256(data).hexdigest(), len(data), kind, data))
    return tuple(out)


def read_files(paths: Sequence[str], limits: Limits) -> tuple[Attachment, ...]:
    """Each file read whole and hashed, in order; refused (nothing read further, nothing
    written) for a path that is not a readable regular file or is past the limits."""
    import hashlib
    import mimetypes

    out: list[Attachment] = []
    names: set[str] = set()
    total = 0
    for path in paths:
        name = os.path.basename(path)
        check_name(name, path)
        if name in names:
            raise ValidationFailed(
                f"attach: two files are named {name!r}; a message names each file once",
                field="attach",
                value=path,
            )
        names.add(name)
        data = _read_regular(path, name, limits)
        total += len(data)
        _check_total(total, limits)
        kind = mimetypes.guess_type(name, strict=False)[0] or "application/octet-stream"
        out.append(Attachment(name, hashlib.sha256(data).hexdigest(), len(data), kind, data))
    return tuple(out)


def _read_regular(path: str, name: str, limits: Limits) -> bytes:
    """The bytes of a regular file. The open never blocks (a FIFO with no writer would hold
    the send forever) and whatever it opened is checked to be a regular file before a
    byte is read; its size is checked before reading and again by reading one byte past
    the limit (a file that grows meanwhile)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ValidationFailed(
            f"attach: cannot read {path}: {exc.strerror}", field="attach", value=path
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValidationFailed(
                f"attach: {path} is {file_kind(st.st_mode)}, not a regular file",
                field="attach",
                value=path,
            )
        _check_size(name, st.st_size, limits)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        cap = limits.max_attachment_bytes
        try:
            data = fh.read(cap + 1) if cap else fh.read()
        except OSError as exc:
            raise ValidationFailed(
                f"attach: cannot read {path}: {exc.strerror}", field="attach", value=path
            ) from None
    _check_size(name, len(data), limits)
    return data


def store(conn: sqlite3.Connection, message_id: int, rich: RichParts, now: int) -> None:
    """Inside the send's transaction: the format and subject on the message's row, each file's
    blob (once per hash) and its name on the message."""
    fmt = None if rich.format in (None, "text") else rich.format
    if fmt is not None or rich.subject is not None:
        q.set_format_subject(conn, message_id, fmt, rich.subject)
    for a in rich.attachments:
        assert a.data is not None  # read_files reads them
        q.add_blob(conn, a.sha256, a.data, now)
    q.name_files(
        conn,
        [(message_id, a.name, a.sha256, a.size, a.content_type) for a in rich.attachments],
    )


# ---------------------------------------------------------------- reading


def decorate(
    conn: sqlite3.Connection, msgs: Sequence[Message], *, rich: set[int] | None = None
) -> None:
    """Set `rich` on the messages that have a format, a subject or files, and on every direct
    message (its `direction`): one query for the parts, one for the kinds when a direct
    message is among them. `rich`: the ids that have parts, when the read knew
    (store/reads.inbox): only those are looked up."""
    if not msgs:
        return
    found: dict[int, tuple[str | None, str | None, list[Attachment]]] = {}
    ids = [m.id for m in msgs] if rich is None else sorted(rich)
    for mid, fmt, subject, name, sha, size, ctype in q.rich_rows(conn, ids) if ids else ():
        entry = found.setdefault(mid, (fmt, subject, []))
        if name is not None:
            entry[2].append(Attachment(name, sha or "", size or 0, ctype))
    found_directions = directions(conn, [(m.channel, m.sender) for m in msgs])
    for m in msgs:
        fmt, subject, files = found.get(m.id, (None, None, []))
        direction = found_directions.get((m.channel, m.sender))
        if m.id in found or direction is not None:
            m.rich = RichParts(fmt, subject, tuple(files), direction)


def directions(
    conn: sqlite3.Connection, sent: Sequence[tuple[str, str]]
) -> dict[tuple[str, str], str]:
    """(channel, sender) -> the kinds at both ends of a direct message (U2U, U2A, A2U, A2A),
    for the pairs on a direct channel; one query for the kinds of all of them. Read by
    message documents and by dispatch's `direction` rules."""
    pairs = {(ch, sender): _pair(ch) for ch, sender in sent}
    names = {n for p in pairs.values() if p is not None for n in p}
    kinds = presence.kinds(conn, names) if names else {}
    out: dict[tuple[str, str], str] = {}
    for (ch, sender), pair in pairs.items():
        if pair is None:
            continue
        to = pair[1] if pair[0] == sender else pair[0]
        # a name the directory does not hold (an agent of another node) counts as an
        # agent: the directory's own default kind
        out[(ch, sender)] = (
            _LETTER.get(kinds.get(sender, "agent"), "A")
            + "2"
            + _LETTER.get(kinds.get(to, "agent"), "A")
        )
    return out


def _pair(channel: str) -> tuple[str, str] | None:
    """The two agents of a direct channel (`_dm:a:b`, or a node's `_fed:local:remote`)."""
    for prefix in ("_dm:", "_fed:"):
        if channel.startswith(prefix):
            a, sep, b = channel[len(prefix) :].partition(":")
            return (a, b) if sep and a and b else None
    return None


def files_of(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, list[Attachment]]:
    """message id -> the files it names (without their bytes), for the messages that have
    any (the mailbox bridge mirrors them beside its inbox files)."""
    out: dict[int, list[Attachment]] = {}
    for mid, _, _, name, sha, size, ctype in q.rich_rows(conn, ids):
        if name is not None:
            out.setdefault(mid, []).append(Attachment(name, sha or "", size or 0, ctype))
    return out


def data_of(conn: sqlite3.Connection, a: Attachment) -> bytes:
    """A file's bytes, checked against its hash."""
    import hashlib

    data = q.blob(conn, a.sha256)
    if data is None or hashlib.sha256(data).hexdigest() != a.sha256:
        raise AttachmentCorrupt(
            f"the stored bytes of {a.name!r} are "
            + ("missing" if data is None else "not those of sha256 " + a.sha256),
            field="name",
            value=a.name,
            sha256=a.sha256,
        )
    return data


def listing(conn: sqlite3.Connection, message_id: int, agent: str) -> list[Attachment]:
    """The files a message names, for a participant of its channel."""
    _authorize(conn, message_id, agent)
    return [Attachment(*row) for row in q.named(conn, message_id)]


def fetch(conn: sqlite3.Connection, message_id: int, name: str, agent: str) -> Attachment:
    """One file of a message with its bytes, checked against the hash the message names."""
    _authorize(conn, message_id, agent)
    for row in q.named(conn, message_id):
        if row[0] == name:
            a = Attachment(*row)
            break
    else:
        raise NotFound(f"message {message_id} has no file named {name!r}", field="name", value=name)
    return Attachment(a.name, a.sha256, a.size, a.content_type, data_of(conn, a))


def _authorize(conn: sqlite3.Connection, message_id: int, agent: str) -> None:
    """Only a participant of the message's channel reads its files."""
    from acomm_cli.engine.channels import channel_by_id
    from acomm_cli.store import reads

    model.agent_id(agent, "as")
    msg = reads.message_by_id(conn, message_id)
    if msg is None:
        raise NotFound(f"message {message_id} does not exist", field="message", value=message_id)
    if channel_by_id(conn, msg.channel_id).role_of(agent) is None:
        raise NotParticipant(
            f"{agent!r} is not a participant of {msg.channel!r}, the channel of message "
            f"{message_id}",
            field="as",
            value=agent,
        )
