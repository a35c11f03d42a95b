"""A node's identity: its id and Ed25519 key pair (`acomm node init --id NODE`), and the node
proof a node signs with that key (a join whose invite pins the key, a rejoin without invite).

Public keys travel as PASERK `k4.public.<base64url>` (the 32 raw bytes, no padding): the form
PASETO v4 tooling (pyseto) reads. The private key (its 32-byte seed) stays in the store file,
which acomm creates 0600 (docs/DECISIONS.md). `cryptography` is imported inside the functions
that sign or verify: nothing here loads on a store that is not a node."""

from __future__ import annotations

import base64
import re
import sqlite3
from typing import Any

from acomm_cli.errors import InvalidState, ValidationFailed
from acomm_cli.model import utf8
from acomm_cli.store import federation as sql
from acomm_cli.store.connection import write

TYPE_CHECKING = False  # lite.records' dataclass: a pull does not load dataclasses
if TYPE_CHECKING:
    from dataclasses import dataclass
else:
    from acomm_cli.lite.records import dataclass

# Stricter than agent ids: node ids end up in URLs, HTTP headers, room keys and, later,
# addresses like `agent@node`; so no `@`, and they start with a letter or digit.
_NODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", re.ASCII)
PASERK_PUBLIC = "k4.public."
PROOF_CONTEXT = b"acomm-node-proof:v1\n"


@dataclass(frozen=True)
class Node:
    node_id: str
    public_key: bytes  # 32 raw bytes
    private_key: bytes  # the 32-byte seed
    created_at: int

    @property
    def public_paserk(self) -> str:
        return paserk_public(self.public_key)


def node_id(value: Any, field: str = "node") -> str:
    """Validate a node id: 1-64 characters of A-Z a-z 0-9 . _ -, starting with a letter or a
    digit, no `..`."""
    if isinstance(value, str):
        utf8(value, field)
    if not isinstance(value, str) or not _NODE_ID.fullmatch(value) or ".." in value:
        raise ValidationFailed(
            f"{field}: {value!r} is not a valid node id (1-64 characters of A-Z a-z 0-9 . _ -, "
            "starting with a letter or a digit, no '..')",
            field=field,
            value=value,
        )
    return value


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    """Decode unpadded base64url; ValueError on anything else."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text, re.ASCII):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def paserk_public(raw: bytes) -> str:
    return PASERK_PUBLIC + b64url(raw)


def parse_public_key(text: Any, field: str = "key") -> bytes:
    """A PASERK `k4.public.` key -> its 32 raw bytes; exit 3 for anything else."""
    try:
        if not isinstance(text, str) or not text.startswith(PASERK_PUBLIC):
            raise ValueError
        raw = unb64url(text[len(PASERK_PUBLIC) :])
        if len(raw) != 32:
            raise ValueError
    except ValueError:
        raise ValidationFailed(
            f"{field}: not an Ed25519 public key as PASERK (k4.public. and 43 base64url "
            "characters)",
            field=field,
        ) from None
    return raw


def load(conn: sqlite3.Connection) -> Node | None:
    row = sql.node(conn)
    if row is None:
        return None
    return Node(row[0], bytes(row[1]), bytes(row[2]), row[3])


def require(conn: sqlite3.Connection) -> Node:
    """This store's node, or exit 5 saying how to make it one."""
    node = load(conn)
    if node is None:
        raise InvalidState(
            "this store is not a federation node: run `acomm node init --id NODE` first",
            field="node",
        )
    return node


def init_node(conn: sqlite3.Connection, value: str, now_ms: int) -> tuple[Node, bool]:
    """Give the store its node id and a new key pair; (node, created). The same id again is a
    no-op returning the same key; another id is exit 5 (a node never changes its id)."""
    wanted = node_id(value)
    with write(conn):
        node = load(conn)
        if node is not None:
            if node.node_id != wanted:
                raise InvalidState(
                    f"this store is already node {node.node_id!r}; a node never changes its id",
                    field="node",
                    node=node.node_id,
                )
            return node, False
        private, public = _new_key_pair()
        sql.insert_node(conn, wanted, public, private, now_ms)
    return Node(wanted, public, private, now_ms), True


def _new_key_pair() -> tuple[bytes, bytes]:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import (
        Encoding,
        NoEncryption,
        PrivateFormat,
        PublicFormat,
    )

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, public


def proof_message(node: str, nonce: str) -> bytes:
    """What a node proof signs: a fixed context, the node id and the exchange's nonce."""
    return PROOF_CONTEXT + node.encode() + b"\n" + nonce.encode()


def sign_proof(private_key: bytes, node: str, nonce: str) -> str:
    """A node proof: the Ed25519 signature of proof_message, base64url."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(private_key)
    return b64url(key.sign(proof_message(node, nonce)))


def verify_proof(public_key: bytes, node: str, nonce: str, proof: Any) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        signature = unb64url(proof)
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, proof_message(node, nonce))
    except (ValueError, InvalidSignature):
        return False
    return True


REQUEST_CONTEXT = b"acomm-signed-request:v1\n"


def request_message(node: str, target: str, timestamp_ms: int) -> bytes:
    """What a signed HTTP read signs: a fixed context, the caller's node id, the request's
    path and query exactly as sent, and its timestamp in ms."""
    return REQUEST_CONTEXT + f"{node}\n{target}\n{timestamp_ms}".encode()


def sign_request(private_key: bytes, node: str, target: str, timestamp_ms: int) -> str:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.from_private_bytes(private_key)
    return b64url(key.sign(request_message(node, target, timestamp_ms)))


def verify_request(
    public_key: bytes, node: str, target: str, timestamp_ms: int, signature: Any
) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_key).verify(
            unb64url(signature), request_message(node, target, timestamp_ms)
        )
    except (ValueError, InvalidSignature):
        return False
    return True
