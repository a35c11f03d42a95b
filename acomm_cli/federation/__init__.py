"""Federation (spec 002, DESIGN.md §7): several stores, each a node, deliver to each other's
agents. So far: the node identity (`identity.py`), invites on a seed (`invites.py`) and the
join handshake's logic (`handshake.py`). The gateway, the state room, the outbox transport and
`fed pull` come next. These modules import the `acomm[federation]` extra (cryptography,
pyseto) inside their functions: none of it loads on a store that is not a node."""
