"""The one error hierarchy: every failure a user can see has a stable code and exit status."""

from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing typing (a send must not load it)
if TYPE_CHECKING:
    from typing import Any


class CommError(Exception):
    """Base of every expected failure; the CLI turns it into a message and an exit status."""

    code = "internal"
    exit_status = 1
    # True where the same work may well succeed a little later (a lock, a full store others
    # are draining): a `tick --every` worker notes it and carries on instead of dying
    transient = False

    def __init__(self, message: str, *, field: str | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.extra = extra

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        out.update(self.extra)
        return out


class UsageError(CommError):
    code = "usage"
    exit_status = 2


class ValidationFailed(CommError):
    code = "validation_failed"
    exit_status = 3


class UnsafePath(ValidationFailed):
    """A mailbox bridge path that is not a real directory or file where one is expected (a
    symbolic link, a file for a directory): the bridge leaves it alone and says so."""


# The libraries of each optional extra (pyproject.toml's optional-dependencies), by the name
# they are imported under.
EXTRAS = {
    "federation": (
        "pycrdt",
        "pycrdt_websocket",
        "pycrdt_store",
        "uvicorn",
        "starlette",
        "pyseto",
        "cryptography",
        "httpx",
        "httpx_ws",
        "nats",
        "nkeys",
        "anyio",
        "prometheus_client",
    ),
    "mcp": ("mcp", "mcp_types", "pydantic"),
    "ui": ("textual",),
    "web": ("jinja2", "markupsafe", "markdown_it", "multipart"),
    "spark": ("pyarrow", "pyspark", "py4j", "matplotlib"),
    "otel": ("opentelemetry",),
}


def install_command(extra: str) -> str:
    return f"pip install 'acomm[{extra}]'"


class MissingExtra(ValidationFailed):
    """A command whose libraries are an optional extra that is not installed here: the
    message names the extra and the exact command that installs it."""

    code = "missing_extra"

    @classmethod
    def of(cls, module: str | None) -> MissingExtra | None:
        """The refusal for a command that failed to import `module`, when an extra holds it
        (None for any other module: that is a bug, not a missing extra)."""
        top = (module or "").partition(".")[0]
        extra = next((e for e, names in EXTRAS.items() if top in names), None)
        if extra is None:
            return None
        install = install_command(extra)
        return cls(
            f"this command needs {top}, which the `{extra}` extra installs: {install}",
            extra=extra,
            install=install,
            missing=[top],
        )


class NotFound(CommError):
    code = "not_found"
    exit_status = 4


class InvalidState(CommError):
    code = "invalid_state"
    exit_status = 5


class NotParticipant(CommError):
    code = "not_participant"
    exit_status = 5


class Forbidden(CommError):
    """Refused for who is asking: an observer sending, anyone but the owner sending on a
    broadcast channel, an agent that is neither a channel's owner nor one of its admins
    changing its state, settings or members, a channel acomm made."""

    code = "forbidden"
    exit_status = 5


class InsecurePeer(Forbidden):
    """A node on the production profile refusing a plain-HTTP peer url (a seed to join, a
    peer to pull, its own public url), naming the url."""

    code = "insecure_peer"


class NoRecipient(CommError):
    """A send or query that would reach nobody (a channel with no other member, a `_fed:`
    channel used directly, a publish no subscription matches under `--require-recipient`):
    refused before anything is stored, so a script never takes it for delivered."""

    code = "no_recipient"
    exit_status = 5


class NoOwner(CommError):
    """Federation: the recipient has no owner node (or it is unknown here)."""

    code = "no_owner"
    exit_status = 5


class OwnerOffline(NoOwner):
    """Federation: the owner node is offline and no fallback node is online."""

    code = "owner_offline"


class NoCapability(CommError):
    """Capabilities: a task for a capability that is unknown, unpublished, or given to an
    agent that is not its owner (a routing miss, counted for the review)."""

    code = "no_capability"
    exit_status = 5


class OutputMismatch(ValidationFailed):
    """Capabilities: a task's result does not match its capability's contract schema (the
    completion is refused and a review incident opened)."""

    code = "output_mismatch"


class EventRejected(CommError):
    """Federation: one event read from a peer is refused (a malformed envelope, or one the
    peer may not send). `fed pull` rolls that event back, records it with `reason`, moves
    its cursor past it and goes on with the next event and the next peer."""

    code = "federation_rejected"
    exit_status = 5

    def __init__(self, reason: str, **extra: Any) -> None:
        super().__init__(reason, **extra)
        self.reason = reason


class UnknownNode(CommError):
    code = "unknown_node"
    exit_status = 4


class Duplicate(CommError):
    code = "duplicate"
    exit_status = 5


class StoreFull(CommError):
    code = "store_full"
    exit_status = 6
    transient = True


class StoreCapacity(CommError):
    code = "store_capacity"
    exit_status = 6
    transient = True


class AttachmentTooLarge(StoreCapacity):
    """`send --attach`: a file, or a message's files together, past the store's limits
    (limits.max_attachment_bytes, limits.max_message_attachment_bytes): refused before
    anything is written, and not worth retrying as it is."""

    code = "attachment_too_large"
    transient = False


class DiskFull(CommError):
    """The filesystem holding the store has no space left: not corruption, and nothing was
    written (SQLite rolled the transaction back)."""

    code = "disk_full"
    exit_status = 6
    transient = True  # `tick --every` tries again: space may be freed meanwhile


class StoreUnavailable(CommError):
    code = "store_unavailable"
    exit_status = 7


class StoreLocked(StoreUnavailable):
    """Locked by another process past the busy timeout: the same code and status as any
    unavailable store, but worth trying again (a corrupt or newer store is not)."""

    transient = True


class AttachmentCorrupt(StoreUnavailable):
    """A stored attachment whose bytes no longer hash to the sha256 its message names: the
    store is damaged there; nothing is written out."""

    code = "attachment_corrupt"


class StoreReadOnly(StoreUnavailable):
    """A write on a store that this process may only read (read-only mount, permissions)."""


class PeerUnreachable(StoreUnavailable):
    """Federation: a peer's outbox could not be read (`fed pull`, after the other peers)."""

    code = "peer_unreachable"


class GatewayNotRunning(StoreUnavailable):
    """`gateway status` on a node whose gateway is not running: no state file, its process
    gone, or its heartbeat stale (killed, or hung)."""

    code = "gateway_not_running"


class Timeout(CommError):
    code = "timeout"
    exit_status = 124


class OutputFailed(CommError):
    """stdout could not take a receive's output (a closed pipe, EIO, ENOSPC, a closed stdout,
    a reader that stalled): the messages stay unread. 141 is what shells report for a process
    killed by SIGPIPE, so `set -o pipefail` scripts see the failure."""

    code = "output_failed"
    exit_status = 141


class SparkError(CommError):
    """`acomm audit`: a Spark job failed (an unreadable export file, a lost cluster). Its own
    exit status: 1 means a bug in acomm, and this is neither that nor the store's fault."""

    code = "spark_error"
    exit_status = 8


class SparkUnavailable(SparkError):
    """`acomm audit`: Spark cannot run here (no Java 17+, or the JVM did not start)."""

    code = "spark_unavailable"


class Internal(CommError):
    code = "internal"
    exit_status = 1
