"""Command-line machinery the commands share: settings and config, rendering, views,
signal handling. May import everything below it (worker, subsystems, engine, core)."""
