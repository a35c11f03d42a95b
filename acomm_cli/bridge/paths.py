"""Paths under the bridge's directories, safely: an agent id becomes a path component only
after `model.agent_id` validated it; every directory under a bridge root must be a real
directory (lstat), and files are opened with O_NOFOLLOW, so no symbolic link leads a write
(or a read) out of the configured directories.

Whoever can write in those directories may leave anything there, so every file the bridge
reads goes through `read_regular` and `parse_json`: opened without blocking (a FIFO would
otherwise hold the reader until someone writes to it), refused unless it is a regular file,
read only up to a size bound, and parsed only once its nesting is known to be shallow (a
deep one would end the parser with a RecursionError). What they refuse is a bad file: it is
left in place and reported, never a failed command."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acomm_cli import jsondepth
from acomm_cli.errors import UnsafePath, ValidationFailed
from acomm_cli.lite.paths import file_kind

# The limits of a file the bridge reads (docs/BRIDGE.md, "Files the bridge reads").
MAX_RESPONSE_BYTES = 8 * 1024**2  # a response file: a message of the default 1 MiB, and room
MAX_TEAM_INBOX_BYTES = 16 * 1024**2  # a team inbox: unread entries are never pruned
MAX_JSON_DEPTH = jsondepth.MAX_DEPTH  # arrays and objects nested in one another


def _real_dir(path: Path, create: bool) -> Path:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)
        st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{path} is not a directory (a symbolic link or a file)")
    return path


def under(root: Path, parts: Iterable[str], *, create: bool) -> Path:
    """root/part/...: every part a plain name, every level a real directory (the root itself
    may be a link to one). A missing level without `create` raises FileNotFoundError."""
    if not os.path.isdir(root):
        if not create:
            if not os.path.lexists(root):
                raise FileNotFoundError(f"{root} does not exist")
            raise UnsafePath(f"{root} is not a directory")
        os.makedirs(root, mode=0o700, exist_ok=True)
    path = root
    for part in parts:
        if not part or part.startswith(".") or "/" in part or "\x00" in part:
            raise UnsafePath(f"{part!r} cannot be a path component")
        path = _real_dir(path / part, create)
    return path


def write_atomic(directory: Path, name: str, data: bytes) -> None:
    final = directory / name
    tmp = directory / f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # the data is on disk before the name points at it
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)  # and the rename itself survives a power loss


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems refuse fsync on a directory; the file is synced
        pass
    finally:
        os.close(fd)


kind = file_kind  # what a file that is not a regular file is, in words


def read_regular(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of a regular file of at most `max_bytes`, None if it does not exist. Never
    blocks: the open is non-blocking and anything but a regular file (a symbolic link, a FIFO,
    a socket, a device, a directory) raises UnsafePath before a byte is read; a larger file
    raises ValidationFailed, judged by its size and by reading one byte past the bound."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):  # what O_NOFOLLOW says of a link
            raise UnsafePath("a symbolic link, not a regular file") from None
        if exc.errno in (errno.ENXIO, errno.EOPNOTSUPP):  # a socket, a FIFO with no writer
            raise UnsafePath("not a regular file") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(f"{kind(st.st_mode)}, not a regular file")
        if st.st_size > max_bytes:
            raise ValidationFailed(f"{_too_large(max_bytes)} ({st.st_size} bytes)")
        data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew since the fstat
            raise ValidationFailed(_too_large(max_bytes))
        return data


def _too_large(max_bytes: int) -> str:
    return f"larger than the bridge reads ({max_bytes // 1024**2} MiB at most)"


def parse_json(raw: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`raw` parsed as JSON; ValidationFailed when it is not JSON or nests arrays and objects
    deeper than `max_depth`."""
    try:
        return jsondepth.loads(raw, max_depth)
    except jsondepth.TooDeep as exc:
        raise ValidationFailed(f"not valid JSON for the bridge: {exc}") from None
    except jsondepth.NotJson as exc:
        raise ValidationFailed(f"not valid JSON ({exc})") from None


def split_team(agent: str) -> tuple[str, str]:
    name, _, team = agent.partition("@")
    return name, team
