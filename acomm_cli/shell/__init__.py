"""What walks the command tree: help metadata, completions, man pages and reference
docs generated from the Typer app. Above app.py; imported by commands and make docs."""
