"""`acomm export`: the store's history as hive-partitioned Parquet (or JSON Lines) datasets plus
a manifest, the input of `acomm audit` (docs/EXPORT.md describes every column).

Rules:
- Messages are exported by id range, in chunks of CHUNK ids; deliveries (and their earlier
  attempts), dead letters and tasks (with their history) go with their message (same chunk,
  same partition), as they stand at export time. `channels/`, `incidents/` and `agents/`
  are snapshots, rewritten by every export.
- Partitions: `date=YYYY-MM-DD`, the UTC day the message (for tasks and their history: the
  task; for channels and incidents: the channel, the incident) was created; for agents, the
  day the name was registered.
- File names are deterministic per id range (`part-<first id>-<last id>-<batch>`), and the
  manifest records which id ranges the directory holds: an export never writes an id that is
  already there, so exporting the same range twice never duplicates a row. Files not listed in
  the manifest (left by an interrupted export) are removed before writing.
- `--incremental` starts after the watermark kept in the store for that output (the table
  `exports`), which every export to it raises.
- A chunk written while some of its deliveries could still change (unread, awaiting an ack,
  waiting for a retry, queued), or while one of its tasks is open, is listed in the manifest
  as `unsettled` and written again, whole, by every later export to the directory until it is
  settled: so late reads, acks, retries, dead letters and task outcomes reach the audit, and
  the files of that range are replaced, never added to.
- Memory is bounded: rows are read with fetchmany(BATCH) and written a batch at a time.

pyarrow is imported inside the functions that need it (start-up time is a feature).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acomm_cli import __version__, clock
from acomm_cli.analytics.datasets import (
    CHUNKED,
    DATASET_TABLE,
    DATASET_VERSION,
    DATASETS,
    SNAPSHOTS,
)
from acomm_cli.clock import iso
from acomm_cli.errors import InvalidState, ValidationFailed
from acomm_cli.store import export as sql
from acomm_cli.store import stats, write
from acomm_cli.store.maintenance import snapshot

if TYPE_CHECKING:  # annotations only: pyarrow loads inside the functions that use it
    import pyarrow as pa

FORMATS = ("parquet", "jsonl")
MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
CHUNK = 50_000  # message ids per chunk
BATCH = 100_000  # rows per fetchmany (and at most per file)
DAY_MS = 86_400_000
NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"  # what Spark and pyarrow read as a null date
PRIORITY_NAMES = ("low", "normal", "high", "urgent", "critical")

Progress = Callable[[int], None]  # called with the number of message ids just exported


@dataclass
class ExportResult:
    out: str
    format: str
    incremental: bool
    datasets: dict[str, int]  # rows written by this run
    id_range: tuple[int, int] | None  # message ids this run covered
    files: list[dict[str, Any]]  # files written by this run
    manifest: dict[str, Any] = field(repr=False)
    notes: list[str] = field(default_factory=list)
    refreshed: list[tuple[int, int]] = field(default_factory=list)  # unsettled, rewritten


# ---------------------------------------------------------------- schemas


def _schemas() -> dict[str, pa.Schema]:
    import pyarrow as pa

    types = {
        "int64": pa.int64(),
        "int32": pa.int32(),
        "int8": pa.int8(),
        "string": pa.string(),
        "bool": pa.bool_(),
        "float64": pa.float64(),
        "timestamp": pa.timestamp("ms", tz="UTC"),
    }
    return {d.name: pa.schema([(n, types[t]) for n, t in d.columns]) for d in DATASET_TABLE}


_COLUMNS = sql.COLUMNS  # what each dataset's SELECT returns, in order


def _table(dataset: str, rows: list[tuple[Any, ...]], schema: pa.Schema, now: int) -> pa.Table:
    """Rows from SQLite -> a pyarrow table of the dataset's schema (column by column)."""
    import pyarrow as pa

    names = _COLUMNS[dataset]
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    arrays: dict[str, Any] = {}
    for name, values in zip(names, columns, strict=True):
        typ = schema.field(name).type
        if pa.types.is_boolean(typ):
            arrays[name] = pa.array(values, pa.int8()).cast(pa.bool_())
        elif pa.types.is_timestamp(typ):
            arrays[name] = _bounded_times(pa.array(values, pa.int64())).cast(typ)
        else:
            arrays[name] = pa.array(values, typ)
    if dataset == "messages":
        arrays["priority_name"] = pa.array(PRIORITY_NAMES).take(arrays["priority"])
    if "exported_at" in schema.names:
        arrays["exported_at"] = pa.array([now] * len(rows), pa.timestamp("ms", tz="UTC"))
    return pa.table([arrays[n] for n in schema.names], schema=schema)


def _bounded_times(ms: pa.Array) -> pa.Array:
    """A time stored outside the years 1-9999 (written before times were bounded) is exported
    as the nearest bound, as every reader shows it: Parquet readers and JSON Lines get a
    date, never garbage or an overflow."""
    import pyarrow.compute as pc

    low = pc.min_element_wise(ms, clock.MAX_TIME_MS, skip_nulls=False)
    return pc.max_element_wise(low, clock.MIN_TIME_MS, skip_nulls=False)


def _by_day(table: pa.Table, column: str) -> Iterator[tuple[str, pa.Table]]:
    """Split a table by the UTC day of `column`: (partition value, rows of that day)."""
    import pyarrow.compute as pc

    ms = table.column(column).cast("int64")
    days = pc.floor(pc.divide(ms.cast("float64"), float(DAY_MS))).cast("int64")
    for day in pc.unique(days).to_pylist():
        if day is None:
            yield NULL_PARTITION, table.filter(pc.is_null(days))
        else:
            part = clock.iso_ms(day * DAY_MS)[:10]  # YYYY-MM-DD, years 1-9999
            yield part, table.filter(pc.equal(days, day))


# ---------------------------------------------------------------- files


class _Output:
    """The output directory, on any file system pyarrow knows (local paths, file://, s3://,
    hdfs://, ...): every file is built in memory, hashed, then written in one go.

    An export holds every message, so on a local path it is owner-only like the store,
    whatever the umask: the directories it creates and its dataset directories are 0700, its
    files 0600 (an `OUT` directory that already exists keeps its mode). A remote URI's
    permissions are its storage's (docs/EXPORT.md)."""

    def __init__(self, out: str) -> None:
        from pyarrow import fs

        self.local: Path | None = None
        if "://" in out:
            self.target = out.rstrip("/")
            self.fs, self.root = fs.FileSystem.from_uri(self.target)
            if isinstance(self.fs, fs.LocalFileSystem):  # file://
                self.local = Path(self.root)
        else:
            p = Path(out).expanduser().resolve()
            if p.exists() and not p.is_dir():
                raise ValidationFailed(
                    f"out: {p} exists and is not a directory", field="out", value=str(p)
                )
            self.target = str(p)
            self.fs, self.root = fs.LocalFileSystem(), str(p)
            self.local = p
        if self.local is not None:
            _private_dirs(self.local, tighten=False)
        else:
            self.fs.create_dir(self.root, recursive=True)

    def path(self, rel: str) -> str:
        return f"{self.root}/{rel}"

    def read_manifest(self) -> dict[str, Any] | None:
        from pyarrow import fs

        info = self.fs.get_file_info(self.path(MANIFEST))
        if info.type == fs.FileType.NotFound:
            return None
        with self.fs.open_input_stream(self.path(MANIFEST)) as fh:
            try:
                return json.loads(fh.read().decode("utf-8"))
            except ValueError as exc:
                raise InvalidState(
                    f"{self.target}/{MANIFEST} is not valid JSON ({exc}); "
                    "export to a new directory",
                    field="out",
                ) from None

    def put(self, rel: str, data: bytes | pa.Buffer) -> tuple[int, str]:
        """Write bytes (or a pyarrow Buffer) to `rel`; returns (size, sha256)."""
        digest = hashlib.sha256(memoryview(data)).hexdigest()
        parent = rel.rpartition("/")[0]
        if self.local is not None:
            _private_write(self.local, rel, memoryview(data))
            return len(memoryview(data)), digest
        if parent:
            self.fs.create_dir(self.path(parent), recursive=True)
        with self.fs.open_output_stream(self.path(rel)) as fh:
            fh.write(data)
        return len(memoryview(data)), digest

    def remove(self, rel: str) -> None:
        try:
            self.fs.delete_file(self.path(rel))
        except FileNotFoundError:
            pass

    def data_files(self) -> list[str]:
        """Relative paths of every part file under the dataset directories."""
        from pyarrow import fs

        found = []
        for dataset in DATASETS:
            sel = fs.FileSelector(self.path(dataset), recursive=True, allow_not_found=True)
            for info in self.fs.get_file_info(sel):
                if info.type == fs.FileType.File and info.base_name.startswith("part-"):
                    found.append(info.path[len(self.root) + 1 :])
        return found


def _private_dirs(path: Path, tighten: bool) -> None:
    """Create `path` and its missing parents as 0700 (the umask cannot widen it); with
    `tighten`, an existing `path` is made 0700 too (the directories inside an export)."""
    import os

    missing = []
    at = path
    while not at.exists():  # a file in the way is the mkdir's error below, never chmodded
        missing.append(at)
        at = at.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=0o700)
        except FileExistsError:  # made meanwhile by another export: tightened all the same
            if not d.is_dir():
                raise
        os.chmod(d, 0o700)
    if tighten and not missing and path.is_dir():
        os.chmod(path, 0o700)


def _private_write(root: Path, rel: str, data: memoryview) -> None:
    """Write `root/rel` as an owner-only file (0600 whatever the umask, and an existing file
    written by an older export is narrowed too), its directories under `root` 0700."""
    import os

    parts = rel.split("/")
    at = root
    for name in parts[:-1]:
        at = at / name
        _private_dirs(at, tighten=True)
    fd = os.open(at / parts[-1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        view = data
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _encode(table: pa.Table, fmt: str) -> bytes | pa.Buffer:
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        return sink.getvalue()
    return _jsonl(table)


def _jsonl(table: pa.Table) -> bytes:
    """JSON Lines: timestamps as ISO 8601 strings with milliseconds and `Z`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = []
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_timestamp(col.type):
            col = pc.strftime(col, format="%Y-%m-%dT%H:%M:%SZ")
        cols.append(col)
    plain = pa.table(cols, names=table.column_names)
    return "".join(
        json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
        for row in plain.to_pylist()
    ).encode("utf-8")


# ---------------------------------------------------------------- id ranges


def _merge(ranges: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return out


def _missing(lo: int, hi: int, covered: list[list[int]]) -> list[tuple[int, int]]:
    """The parts of lo..hi that no covered range holds yet."""
    gaps, at = [], lo
    for c_lo, c_hi in _merge(covered):
        if c_hi < at or c_lo > hi:
            continue
        if c_lo > at:
            gaps.append((at, c_lo - 1))
        at = max(at, c_hi + 1)
    if at <= hi:
        gaps.append((at, hi))
    return gaps


def _subtract(covered: list[list[int]], holes: list[tuple[int, int]]) -> list[list[int]]:
    """`covered` without the id ranges in `holes`."""
    out: list[list[int]] = []
    for lo, hi in _merge(covered):
        for h_lo, h_hi in sorted(holes):
            if h_hi < lo or h_lo > hi:
                continue
            if h_lo > lo:
                out.append([lo, h_lo - 1])
            lo = max(lo, h_hi + 1)
        if lo <= hi:
            out.append([lo, hi])
    return out


def _chunks(ranges: list[tuple[int, int]], size: int) -> Iterator[tuple[int, int]]:
    for lo, hi in ranges:
        for start in range(lo, hi + 1, size):
            yield start, min(hi, start + size - 1)


# ---------------------------------------------------------------- export


def export(
    conn: sqlite3.Connection,
    out: str,
    now: int,
    *,
    since: int | None = None,
    until: int | None = None,
    incremental: bool = False,
    fmt: str = "parquet",
    progress: Callable[[int], Progress] | None = None,
    chunk: int = CHUNK,
    batch: int = BATCH,
) -> ExportResult:
    """Export messages created in [since, until) (all by default) not yet in `out`.

    `progress`, if given, is called once with the number of message ids to go and returns the
    callback that is then told of each chunk done."""
    if fmt not in FORMATS:
        raise ValidationFailed(
            f"format: {fmt!r} is not one of {', '.join(FORMATS)}", field="format", value=fmt
        )
    if since is not None and until is not None and since >= until:
        raise ValidationFailed("since: --since must be earlier than --until", field="since")
    dest = _Output(out)
    store_id = stats.meta(conn, "store_id")
    schema_version = stats.schema_version(conn)
    old = dest.read_manifest()
    notes: list[str] = []
    if old is not None:
        if old.get("store", {}).get("store_id") != store_id:
            raise InvalidState(
                f"{dest.target} holds an export of store {old.get('store', {}).get('store_id')}"
                f", not of this store ({store_id}); export each store to its own directory",
                field="out",
                value=dest.target,
            )
        if old.get("format") != fmt:
            raise InvalidState(
                f"{dest.target} holds a {old.get('format')} export; export "
                f"--format {fmt} to another directory",
                field="format",
                value=fmt,
            )
    listed = {f["path"] for f in old["files"]} if old else set()
    for stray in dest.data_files():  # left behind by an export that did not finish
        if stray not in listed:
            dest.remove(stray)
    covered: list[list[int]] = [list(r) for r in old["ranges"]] if old else []
    refresh = [tuple(r) for r in old.get("unsettled", [])] if old else []
    if refresh:  # exported while still in flight: written again below, whole
        covered = _subtract(covered, refresh)
    floor = None
    if incremental:
        floor = sql.watermark(conn, dest.target)
        if floor is not None and old is None:
            notes.append(
                f"{dest.target} has no {MANIFEST}: exporting from the first message "
                f"again (the store's watermark was message {floor})"
            )
            floor = None
    schemas = _schemas()
    written: list[dict[str, Any]] = []
    rows = dict.fromkeys(DATASETS, 0)
    with snapshot(conn):  # one consistent view of every dataset
        bounds = (
            sql.id_bounds(conn, since, until)
            if since is not None or until is not None
            else sql.id_bounds_all(conn)
        )
        todo: list[tuple[int, int]] = []
        if bounds is not None:
            lo, hi = bounds
            if floor is not None:
                lo = max(lo, floor + 1)
            if lo <= hi:
                todo = _missing(lo, hi, _merge(covered + [list(r) for r in refresh]))
        # refreshed ranges keep their old boundaries, so their file names stay the same
        work = sorted([*refresh, *_chunks(todo, chunk)])
        total = sum(h - lo_ + 1 for lo_, h in work)
        tick = progress(total) if progress else None
        in_flight: list[list[int]] = []
        chunked = [d for d in CHUNKED if sql.may_have_rows(conn, d)]
        for lo, hi in work:
            for dataset in chunked:
                cur = sql.rows_between(conn, dataset, lo, hi)
                n = 0
                while batch_rows := cur.fetchmany(batch):
                    table = _table(dataset, batch_rows, schemas[dataset], now)
                    for day, part in _by_day(table, "created_at"):
                        rel = f"{dataset}/date={day}/part-{lo:012d}-{hi:012d}-{n:04d}.{fmt}"
                        written.append(_file(dest, rel, dataset, part, fmt, (lo, hi), now))
                    rows[dataset] += table.num_rows
                    n += 1
            if sql.unsettled(conn, lo, hi):
                in_flight.append([lo, hi])
            if tick:
                tick(hi - lo + 1)
        whole = {
            name: _table(name, sql.snapshot_rows(conn, name), schemas[name], now)
            for name in SNAPSHOTS
        }
    snapshot_files = []  # every snapshot dataset's files (channels, incidents, agents)
    partition = {d.name: d.partition_by for d in DATASET_TABLE}
    for name, table in whole.items():
        snapshot_files += [
            _file(dest, f"{name}/date={day}/part-{name}.{fmt}", name, part, fmt, None, now)
            for day, part in _by_day(table, partition[name])
        ]
        rows[name] = table.num_rows
    new_paths = {f["path"] for f in written + snapshot_files}
    old_files = old["files"] if old else []
    redone = set(refresh)
    # the snapshots and the refreshed ranges replace what was there before; the old
    # files go only once the new manifest no longer lists them
    replaced = [
        f
        for f in old_files
        if f["dataset"] in SNAPSHOTS or (f.get("id_range") and tuple(f["id_range"]) in redone)
    ]
    kept = [f for f in old_files if f not in replaced]
    done = [[lo, hi] for lo, hi in work]
    manifest = _manifest(
        old,
        dest,
        conn,
        store_id,
        schema_version,
        fmt,
        now,
        kept + written + snapshot_files,
        covered + done,
        in_flight,
        {
            "at": iso(now),
            "incremental": incremental,
            "since": iso(since),
            "until": iso(until),
            "id_range": [todo[0][0], todo[-1][1]] if todo else None,
            "refreshed": [list(r) for r in refresh],
            "rows": rows,
        },
    )
    dest.put(MANIFEST, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    for f in replaced:
        if f["path"] not in new_paths:
            dest.remove(f["path"])
    if work:
        with write(conn):
            sql.set_watermark(conn, dest.target, work[-1][1], now)
    return ExportResult(
        out=dest.target,
        format=fmt,
        incremental=incremental,
        datasets=rows,
        id_range=(todo[0][0], todo[-1][1]) if todo else None,
        files=written + snapshot_files,
        manifest=manifest,
        notes=notes,
        refreshed=list(refresh),
    )


def _file(
    dest: _Output,
    rel: str,
    dataset: str,
    table: pa.Table,
    fmt: str,
    id_range: tuple[int, int] | None,
    now: int,
) -> dict[str, Any]:
    size, digest = dest.put(rel, _encode(table, fmt))
    return {
        "path": rel,
        "dataset": dataset,
        "rows": table.num_rows,
        "bytes": size,
        "sha256": digest,
        "id_range": list(id_range) if id_range else None,
        "exported_at": iso(now),
        "dataset_version": DATASET_VERSION,
    }


def _manifest(
    old: dict[str, Any] | None,
    dest: _Output,
    conn: sqlite3.Connection,
    store_id: str | None,
    schema_version: int,
    fmt: str,
    now: int,
    files: list[dict[str, Any]],
    ranges: list[list[int]],
    unsettled: list[list[int]],
    run: dict[str, Any],
) -> dict[str, Any]:
    from acomm_cli.store import federation as fed
    from acomm_cli.store.maintenance import db_path

    files = sorted(files, key=lambda f: f["path"])
    merged = _merge(ranges)
    totals = dict.fromkeys(DATASETS, 0)
    for f in files:
        totals[f["dataset"]] += f["rows"]
    return {
        "manifest_version": MANIFEST_VERSION,
        # the columns this run wrote (datasets.DATASET_VERSION); each file keeps its own:
        # a directory may hold files of older runs, whose newer columns read as null
        "dataset_version": DATASET_VERSION,
        "acomm_version": __version__,
        "created_at": old["created_at"] if old else iso(now),
        "exported_at": iso(now),
        "exported_at_ms": now,
        "store": {
            "path": db_path(conn),
            "store_id": store_id,
            "schema_version": schema_version,
            "node_id": fed.node_id(conn),
        },
        "out": dest.target,
        "format": fmt,
        "partitioning": "hive, date=YYYY-MM-DD: the UTC day the message (for tasks and "
        "their history, the task; for channels and incidents, the channel "
        "or the incident) was created; for agents, the day the name was registered",
        "timestamps": "timestamp[ms, UTC]" if fmt == "parquet" else "ISO 8601 strings, UTC",
        "datasets": list(DATASETS),
        "rows": totals,
        "id_range": [merged[0][0], merged[-1][1]] if merged else None,
        "ranges": merged,
        # id ranges written while deliveries were still in flight: the next export rewrites them
        "unsettled": sorted(unsettled),
        "files": files,
        "exports": [*(old["exports"] if old else []), run],
    }


def read_manifest(path: str) -> tuple[str, dict[str, Any]]:
    """(normalised location, manifest) of an export directory; NotFound when it has none."""
    from pyarrow import fs

    from acomm_cli.errors import NotFound

    if "://" in path:
        base = path.rstrip("/")
        filesystem, root = fs.FileSystem.from_uri(base)
    else:
        base = root = str(Path(path).expanduser().resolve())
        filesystem = fs.LocalFileSystem()
    where = f"{root}/{MANIFEST}"
    if filesystem.get_file_info(where).type != fs.FileType.File:
        raise NotFound(
            f"{base} is not an acomm export (no {MANIFEST}); make one with `acomm export`",
            field="export",
            value=base,
        )
    with filesystem.open_input_stream(where) as fh:
        return base, parse_manifest(base, fh.read())


def parse_manifest(base: str, data: bytes | str) -> dict[str, Any]:
    """The manifest of the export at `base` from its bytes, checked: valid JSON of a version
    this acomm reads."""
    try:
        doc = json.loads(data)
    except ValueError as exc:
        raise InvalidState(
            f"{base}/{MANIFEST} is not valid JSON ({exc})", field="export", value=base
        ) from None
    if not isinstance(doc, dict) or doc.get("manifest_version") != MANIFEST_VERSION:
        got = doc.get("manifest_version") if isinstance(doc, dict) else None
        raise InvalidState(
            f"{base}/{MANIFEST} has manifest version {got!r}; this acomm reads {MANIFEST_VERSION}",
            field="export",
            value=base,
        )
    return dict(doc)
