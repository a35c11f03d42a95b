"""Light stand-ins for standard-library modules whose import costs the hot commands' start-up.
Below everything but the error tree; imports nothing of acomm's.

Each stays only while it saves at least 2 ms of an `acomm send` or `acomm receive` process
(`.venv/bin/python bench/lite.py` measures it: the command with the stand-in against the same
command with the standard module in its place; docs/BENCHMARKS.md, "Start-up cost of
acomm_cli/lite/'s stand-ins"). What each saved on Python 3.11, two shared cores, and when it
may go:

- `records` (for `dataclasses`): about 16-18 ms of a send, 17-19 ms of a receive. `dataclasses`
  imports `inspect` (with `ast`, `dis`, `tokenize`, `re`, `enum`) and compiles five or six
  methods per class. It may go when `python -X importtime -c "import dataclasses"` shows under
  about 1 ms and building model.py's classes with it adds under 1 ms, or when the hot commands
  import `dataclasses` anyway (through a dependency, or the fast path handing them to Typer).
- `paths` (for `pathlib`): about 5-6 ms of a send, 3-4 ms of a receive. `pathlib` imports
  `fnmatch` (with `re`), `urllib.parse` and `ipaddress`. It may go when `import pathlib` costs
  under 2 ms, or when the hot commands load `pathlib` anyway (an editable install's finder
  does, before acomm runs: the saving is a regular install's).

Measured and removed (under 2 ms on both commands): an `enum` stand-in for model.py's enums
(about 1.5-2 ms of a send, under 1 ms of a receive) and `__init__` precompiled into a
generated module (about 1.5 ms of a send, 2 ms of a receive; `records` now compiles a class's
`__init__` on its first use instead, which a process needs for few of its classes). The name
rules as character sets instead of `re` (model.py, topics.py) are not stand-ins here.
"""
