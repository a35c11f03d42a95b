"""Light stand-ins for standard-library modules whose import costs the hot commands' start-up.
Below everything but the error tree; imports nothing of acomm's.

Each stays only while it saves at least 2 ms of an `acomm send` or `acomm receive` process:
`.venv/bin/python bench/lite.py` runs both commands with each stand-in and with the standard
module in its place (median CPU time of a regular install's process; docs/BENCHMARKS.md,
"Start-up cost of acomm_cli/lite/'s stand-ins"). What each saved on Python 3.11 and two shared
cores, and when it may go:

- `records` (for `dataclasses`): 17-19 ms of a send, 19-21 ms of a receive. `dataclasses`
  imports `inspect` (with `ast`, `dis`, `tokenize`, `re`, `enum`) and compiles five or six
  methods per class. It may go when `python -X importtime -c "import dataclasses"` shows under
  about 1 ms and building model.py's classes with it adds under 1 ms, or when the hot commands
  import `dataclasses` anyway (through a dependency, or the fast path handing them to Typer).
  Records are dataclasses to the `dataclasses` functions too (`asdict`, `replace`, `fields`):
  only a caller of those imports the module.
- `paths` (for `pathlib`): 5-6 ms of a send, 4-5 ms of a receive. `pathlib` imports `fnmatch`
  (with `re`), `urllib.parse` and `ipaddress`. It may go when `import pathlib` costs under 2 ms,
  or when the hot commands load `pathlib` anyway (an editable install's finder does, before
  acomm runs: the saving is a regular install's).

Measured and removed: a stand-in for `enum` (model.py's enums; 1.5-2 ms of a send, under 1 ms
of a receive), and a generated module of the records' `__init__` precompiled (1-1.5 ms of a
send, about 2 ms of a receive against compiling every `__init__` at class definition; `records`
now compiles each on its first use, which leaves the generated module under 1 ms to save). The
name rules as character sets instead of `re` (model.py, topics.py) are not stand-ins of this
package and were not measured here.
"""
