"""Agent dispatch (docs/DISPATCH.md): agents from config, claims, runs, receipts.
Imports the engine, the store and the core; never the command line."""
