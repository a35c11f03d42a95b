"""Agent dispatch (spec 004): agents from config, claims, runs, receipts.
Imports the engine, the store and the core; never the command line."""
