"""`acomm ui` (docs/UI.md): a live dashboard in the terminal, on Textual.

`data.py` and `actions.py` read and act through the engine's functions and know nothing of
Textual (tests drive them directly); `app.py`, `panes.py` and `screens.py` are the Textual
application. Only `commands/ui_run.py` imports this package, and only when `acomm ui` runs:
`textual` is never loaded by any other command (tests/test_startup.py)."""
