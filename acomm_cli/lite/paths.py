"""The few pathlib operations the start-up path needs, on strings, without importing pathlib.

`pathlib` imports `fnmatch` (with `re`), `urllib.parse` and `ipaddress`: about 5 ms of an
`acomm send` process (bench/lite.py), and the reason `re` was loaded at all.
Store resolution and opening work on `str` paths; each function here gives exactly the string
its pathlib counterpart gives on POSIX (named in its docstring), so every message naming a
path reads as before. tests/test_lite_names.py checks them against pathlib.
"""

from __future__ import annotations

import os


def pure(path: str) -> str:
    """`str(PurePosixPath(path))`: empty and `.` segments dropped, `..` kept, `//` kept as a
    root only when exactly two slashes lead."""
    root = ""
    if path[:1] == "/":
        root = "//" if path[:2] == "//" and path[2:3] != "/" else "/"
    parts = [p for p in path.split("/") if p and p != "."]
    return root + "/".join(parts) if root or parts else "."


def expanduser(path: str) -> str:
    """`str(Path(path).expanduser())`: a leading `~` or `~user` segment replaced by that
    home directory (RuntimeError when it cannot be found, as pathlib raises)."""
    p = pure(path)
    if p[:1] != "~":
        return p
    first, sep, rest = p.partition("/")
    home = os.path.expanduser(first)
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return pure(home + sep + rest)


def absolute(path: str) -> str:
    """`str(Path(path).absolute())`: joined to the working directory, not resolved."""
    p = pure(path)
    if p[:1] == "/":
        return p
    return pure(os.getcwd() + "/" + p)


def sibling(path: str, name: str) -> str:
    """`str(Path(path).parent / name)`."""
    parent = os.path.dirname(pure(path))
    return pure(os.path.join(parent, name)) if parent else name


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words (from its `st_mode`): the bridge's
    readers and `send --attach` refuse it so."""
    import stat

    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"
