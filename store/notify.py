"""Waking when another process writes the store: Linux inotify on the store's directory (the
WAL and the database file), through libc by ctypes; elsewhere, or when inotify is not there,
no watch at all and the waiter polls `PRAGMA data_version`.

A write to the WAL comes just before the commit it belongs to is visible (SQLite updates the
shared-memory index after writing the frames, and a write through shared memory raises no
event), so an event is a hint: the waiter re-reads data_version, and a hint with no commit
visible yet is followed by short re-checks (RECHECK_S) for a while. A bounded timeout on
every wait keeps the poll as the safety net: nothing is ever missed, only seen later."""

from __future__ import annotations

import os
import select

TYPE_CHECKING = False  # typing's, without importing typing (a receive's start-up time)
if TYPE_CHECKING:
    from ctypes import CDLL

IN_MODIFY = 0x00000002
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000
RECHECK_S = 0.001  # after a write with no commit visible yet: how soon to look again


class Watch:
    """A watch on one store's directory for writes to its files. `fileno()` turns readable on
    an event; `drain()` reads the pending events and says whether one was the store's."""

    kind = "inotify"

    def __init__(self, fd: int, names: tuple[bytes, ...]) -> None:
        self.fd = fd
        self.names = names

    def fileno(self) -> int:
        return self.fd

    def drain(self) -> bool:
        """True when a pending event names the store, its WAL or its journal."""
        ours = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return ours
            except InterruptedError:
                continue
            if not data:
                return ours
            pos = 0
            while pos + 16 <= len(data):  # struct inotify_event: wd, mask, cookie, len, name
                size = int.from_bytes(data[pos + 12 : pos + 16], "little")
                name = data[pos + 16 : pos + 16 + size].rstrip(b"\x00")
                if name in self.names:
                    ours = True
                pos += 16 + size

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_LIBC: list[CDLL | None] = []


def _libc() -> CDLL | None:
    if not _LIBC:
        try:
            import ctypes  # here: only a waiter on Linux loads it

            lib = ctypes.CDLL(None, use_errno=True)
            lib.inotify_init1.argtypes = [ctypes.c_int]
            lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _LIBC.append(lib)
        except (OSError, AttributeError):
            _LIBC.append(None)
    return _LIBC[0]


def watch(path: str) -> Watch | None:
    """A watch on the store at `path` (absolute), or None: not Linux, no inotify in libc, or
    no watch could be added (the per-user limit reached): the caller then polls."""
    if not path or not os.uname().sysname == "Linux" or os.environ.get("ACOMM_NO_INOTIFY"):
        return None
    lib = _libc()
    if lib is None:
        return None
    fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    directory, base = os.path.split(os.fsencode(path))
    if lib.inotify_add_watch(fd, directory or b".", IN_MODIFY | IN_CREATE | IN_MOVED_TO) < 0:
        os.close(fd)
        return None
    return Watch(fd, (base, base + b"-wal", base + b"-journal"))


def wait(w: Watch, timeout_s: float, also: int | None = None) -> bool:
    """Block until `w` (or the descriptor `also`, a stop request's pipe) turns readable or
    `timeout_s` passes; True when an event named the store."""
    fds = [w.fd] if also is None else [w.fd, also]
    ready, _, _ = select.select(fds, [], [], max(0.0, timeout_s))
    return w.fd in ready and w.drain()
