"""The bridge's settings and what one sync did (shared by every part of the bridge)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acomm_cli import model


@dataclass(frozen=True)
class BridgeConfig:
    inbox_dir: Path | None = None
    outbox_dir: Path | None = None
    teams_dir: Path | None = None
    read_ttl_ms: int = 24 * 3600 * 1000
    # where a response object naming no target goes; None: a reply to the agent's latest message
    default_channel: str | None = None

    @property
    def configured(self) -> bool:
        return any((self.inbox_dir, self.outbox_dir, self.teams_dir))


@dataclass
class SyncResult:
    written: int = 0  # mirror files written or team entries appended
    failed: int = 0  # mirror writes that failed this time (recorded, retried later)
    removed: int = 0  # mirrors taken away because their delivery is no longer unread
    remove_failed: int = 0  # mirror removals that failed this time (kept, retried later)
    marked_read: int = 0  # deliveries the agent read through its files
    pruned: int = 0  # read team entries older than bridge.read_ttl
    ingested: int = 0  # response files turned into messages or acks
    # Response files newly reported (each once, until it changes): bad (stays until fixed),
    # deferred (refused for now, e.g. a paused channel: tried again by every sync), and
    # undeleted (committed, but deleting the file failed: only its deletion is retried).
    bad_files: list[tuple[str, str]] = field(default_factory=list)
    deferred_files: list[tuple[str, str]] = field(default_factory=list)
    undeleted_files: list[tuple[str, str]] = field(default_factory=list)
    # Team inbox files left alone because they are bad (not a JSON array, not a regular file,
    # past the size or nesting bound): said when a delivery first fails on one; counted in
    # `failed`, retried with the other failed mirrors.
    bad_team_files: list[tuple[str, str]] = field(default_factory=list)

    def doc(self) -> dict[str, int]:
        return {
            "written": self.written,
            "failed": self.failed,
            "removed": self.removed,
            "remove_failed": self.remove_failed,
            "marked_read": self.marked_read,
            "pruned": self.pruned,
            "ingested": self.ingested,
            "bad_files": len(self.bad_files),
            "deferred_files": len(self.deferred_files),
            "undeleted_files": len(self.undeleted_files),
        }


def config(value: Callable[[str], Any], **flags: str | None) -> BridgeConfig:
    """The bridge settings: `value(key)` reads a setting (`Settings.value`, already parsed and
    checked); a flag given here wins."""

    def pick(name: str) -> Path | None:
        chosen = flags.get(name) or value(f"bridge.{name}")
        return Path(chosen).expanduser() if chosen else None

    channel = flags.get("default_channel")
    if channel:  # the setting is checked where it is read; a flag here
        model.channel_name(channel)
    return BridgeConfig(
        inbox_dir=pick("inbox_dir"),
        outbox_dir=pick("outbox_dir"),
        teams_dir=pick("teams_dir"),
        read_ttl_ms=value("bridge.read_ttl"),
        default_channel=channel or value("bridge.default_channel"),
    )
