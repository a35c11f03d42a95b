"""The SQLite store: connection and pragmas, schema migrations, named queries.

Installed as `acomm_cli.store`. Knows nothing of the command line.
"""

from acomm_cli.store.connection import open_store, savepoint, write

__all__ = ["open_store", "savepoint", "write"]
