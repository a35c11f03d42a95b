"""What `acomm attachment` prints: a message's files, and one file's bytes (to stdout, or
written to a file)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence

from acomm_cli.errors import Duplicate, ValidationFailed
from acomm_cli.model import Attachment
from acomm_cli.output import columns as cols
from acomm_cli.output.render import Output, _dump, listing, note
from acomm_cli.output.render_messages import attachment_doc


def files(out: Output, message_id: int, found: Sequence[Attachment]) -> None:
    docs = [attachment_doc(a) for a in found]
    if out.json:
        _dump({"message": message_id, "attachments": docs})
        return
    listing(
        out,
        f"files of message {message_id}",
        cols.ATTACHMENTS,
        [(a.name, a.size, a.content_type, a.sha256) for a in found],
        docs,
    )


def refuse_existing(path: str, force: bool) -> None:
    """Said before the store is read: an existing file is replaced only with --force."""
    if not force and os.path.lexists(path):
        raise Duplicate(
            f"output: {path} already exists; give --force to replace it",
            field="output",
            value=path,
        )


def content(out: Output, message_id: int, a: Attachment, path: str | None, force: bool) -> None:
    """The bytes, as they are, on stdout; or written to `path` (mode 0600) by a rename, so
    the file is never seen half written, and never over an existing one without `force`."""
    assert a.data is not None
    if path is None:
        sys.stdout.buffer.write(a.data)
        sys.stdout.buffer.flush()
        return
    _write(path, a.data, force)
    doc = {**attachment_doc(a), "message": message_id, "path": path}
    if out.json:
        _dump(doc)
    else:
        note(f"wrote {a.size} bytes to {path} (sha256 {a.sha256})")


def _write(path: str, data: bytes, force: bool) -> None:
    directory = os.path.dirname(path) or "."
    tmp = os.path.join(
        directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    )
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise ValidationFailed(
            f"output: cannot write in {directory}: {exc.strerror}", field="output", value=path
        ) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if force:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)  # fails if the name was taken meanwhile: never overwrites
            except FileExistsError:
                refuse_existing(path, False)
                raise
            os.unlink(tmp)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ValidationFailed(
            f"output: cannot write {path}: {exc.strerror}", field="output", value=path
        ) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
