"""`acomm web`: the operator's console in a browser (Starlette, Jinja2, server-sent events;
the `web` extra). `data.py` reads what the pages show through the engine, `actions.py` makes
the changes through the engine functions of their commands, `charts.py` draws the charts as
SVG, `access.py` holds who may see and act, `live.py` the one `data_version` poll every open
page shares, and `app.py` the Starlette application. Imported only by `commands/web_run.py`."""
