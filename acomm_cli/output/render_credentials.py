"""What the credential commands print (`agent token`, `init --admin`): a new secret once,
alone on stdout so that `$(acomm agent token bob)` captures it, and nothing of it after."""

from __future__ import annotations

from acomm_cli.output import render
from acomm_cli.output.render import Output

TYPE_CHECKING = False  # typing's, without importing typing (the fast path does not load it)
if TYPE_CHECKING:
    from typing import Any


def secret(out: Output, doc: dict[str, Any]) -> None:
    """A secret just issued: the JSON document, or the secret alone on stdout with a note."""
    render.ok(out, doc, doc["token"])
    if not out.json:
        render.note(
            f"note: {doc['agent']}'s secret, shown this once (the store keeps only its hash): "
            "hand it to the agent as $ACOMM_AGENT_TOKEN or in a --token-file"
        )


def revoked(out: Output, doc: dict[str, Any]) -> None:
    n = doc["revoked"]
    render.change(
        out,
        doc,
        n > 0,
        f"{doc['agent']} had no secret in force",
        f"revoked {n} secret{'s' if n != 1 else ''} of {doc['agent']}",
    )
