# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-fast lint format layout bench docs clean .faketime .shells .nats .chromium

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,federation,mcp,ui,web,browser,spark,otel]'
	@touch $(STAMP)

# faketime drives time in subprocess tests; install it from Debian's packages when missing.
.faketime:
	@command -v faketime >/dev/null 2>&1 || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq faketime >/dev/null; }

# nats-server runs the NATS JetStream tests; from Debian's packages when missing.
.nats:
	@command -v nats-server >/dev/null 2>&1 || test -x /usr/sbin/nats-server || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nats-server >/dev/null; }

# chromium runs the browser tier (acomm web, driven by Playwright through executable_path);
# from Debian's packages when missing: never `playwright install`, which downloads a browser.
.chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# zsh and fish (completion tests), tmux (the terminal test) and groff (man pages), from Debian's
# packages when missing. Not fatal: without them those tests are skipped and say why.
.shells:
	@missing=""; for p in zsh:zsh fish:fish tmux:tmux groff:groff-base; do \
	  command -v $${p%%:*} >/dev/null 2>&1 || missing="$$missing $${p#*:}"; done; \
	[ -z "$$missing" ] || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  { $$SUDO apt-get install -y -qq --no-install-recommends $$missing || \
	    { $$SUDO apt-get update -qq && \
	      $$SUDO apt-get install -y -qq --no-install-recommends $$missing; }; } >/dev/null 2>&1 \
	  || echo "make: could not install$$missing; their tests will be skipped"; }

demo: $(STAMP)
	@PATH="$(CURDIR)/$(BIN):$$PATH" bash examples/demo.sh

# Every tier on every core (docs/TESTING.md): a file's tests share one worker, and so do all
# the Spark tests (one JVM).
PYTEST := $(BIN)/python -m pytest -q -n auto --dist loadgroup
test: lint .faketime .nats .shells .chromium
	$(PYTEST)

# While working: the unit and cli tiers, in process (no lint, no servers, no JVM).
test-fast: $(STAMP)
	$(PYTEST) -m "unit or cli"

# The installed layout for mypy and import-linter: setuptools' strict editable link tree
# (build/layout -> build/__editable__.acomm-*: symlinks to the repository's files, with store/
# and commands/ inside acomm_cli/ as pyproject's package-dir maps them), installed into a
# private prefix, not the venv: the venv keeps the ordinary editable install, because with a
# strict one the repository's own acomm_cli/ (first on sys.path for `python -m` run here)
# would hide store/ and commands/. Links follow edits; adding, removing or renaming a module
# changes the file list, which rebuilds the tree (about 4 s). tests/test_layers.py runs
# `make layout` too.
SOURCES := $(sort $(shell find acomm_cli store commands -name '*.py' 2>/dev/null))
build/sources.txt: FORCE
	@mkdir -p build && printf '%s\n' $(SOURCES) > $@.new && \
	  { cmp -s $@.new $@ && rm $@.new || mv $@.new $@; }
build/layout: build/sources.txt pyproject.toml
	@rm -rf build/editable build/__editable__.acomm-* build/layout
	$(BIN)/python -m pip install --quiet --no-deps --ignore-installed --prefix build/editable -e . \
	  --config-settings editable_mode=strict > build/editable.log 2>&1 || \
	  { cat build/editable.log >&2; exit 1; }
	@ln -s "$$(cat build/editable/lib/*/site-packages/__editable__.acomm-*.pth)" $@
	@test -d $@/acomm_cli/store || { echo "make: no link tree at $@" >&2; exit 1; }
layout: build/layout
FORCE:

# ruff (the format is `ruff format`'s: run `make format` to apply it), then mypy and
# import-linter on the installed layout (mypy's paths are shown as they are in the repository).
PY_DIRS := acomm_cli store commands tests bench
lint: $(STAMP) build/layout
	$(BIN)/ruff format --check --quiet $(PY_DIRS) || \
	  { echo "make: run 'make format' to apply ruff's format" >&2; exit 1; }
	$(BIN)/ruff check $(PY_DIRS)
	cd build/layout && { $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml \
	  --cache-dir $(CURDIR)/build/mypy-cache acomm_cli > $(CURDIR)/build/mypy.out; status=$$?; \
	  sed -e 's#^acomm_cli/store/#store/#' -e 's#^acomm_cli/cli/commands/#commands/#' \
	  $(CURDIR)/build/mypy.out; exit $$status; }
	cd build/layout && PYTHONPATH=. $(CURDIR)/$(BIN)/lint-imports --config $(CURDIR)/pyproject.toml

format: $(STAMP)
	$(BIN)/ruff format $(PY_DIRS)

# Regenerate man/, completions/ and docs/cli.md from the app (tests fail when they drift).
docs: $(STAMP)
	$(BIN)/python -m acomm_cli.cli.docgen .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
