"""Paths under the bridge's directories, safely: an agent id becomes a path component only
after `model.agent_id` validated it; every directory under a bridge root must be a real
directory (lstat), and files are opened with O_NOFOLLOW, so no symbolic link leads a write
(or a read) out of the configured directories."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from acomm_cli.errors import UnsafePath


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


def read_nofollow(path: Path) -> bytes | None:
    """The file's bytes, None if it does not exist; a symbolic link raises OSError."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise UnsafePath(f"{path} is not a regular file")
        return fh.read()


def split_team(agent: str) -> tuple[str, str]:
    name, _, team = agent.partition("@")
    return name, team
