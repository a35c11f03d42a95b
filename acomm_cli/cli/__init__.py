"""Command-line machinery the commands share: settings and config, rendering, views,
option types, signal handling. May import everything below it (worker, subsystems, engine, core)."""
