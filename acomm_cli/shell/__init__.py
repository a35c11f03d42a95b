"""What walks the command tree: help metadata, completions, man pages and reference
docs generated from the Typer app, and the fast path that runs the hot commands from a tree
generated the same way (`fastpath`). Above app.py; imported by commands and make docs."""
