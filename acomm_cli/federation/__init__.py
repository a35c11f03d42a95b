"""Federation (docs/FEDERATION.md; its source is docs/spec/distributed-pipes.txt): several
stores, each a node, deliver to each other's agents: the node identity (`identity.py`), invites
and the join handshake on a seed (`invites.py`, `handshake.py`), the gateway and the state room
(`gateway.py`, `roomsync.py`), the transports that read a peer's outbox (`transport.py`,
`http_transport.py`, `nats_transport.py`) and `fed pull` (`pull.py`). These modules import the
`acomm[federation]` extra (cryptography, pyseto) inside their functions: none of it loads on a
store that is not a node."""
