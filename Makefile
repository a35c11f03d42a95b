# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench docs clean .faketime .shells

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

# faketime drives time in subprocess tests; install it from Debian's packages when missing.
.faketime:
	@command -v faketime >/dev/null 2>&1 || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq faketime >/dev/null; }

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

test: $(STAMP) .faketime .shells
	$(BIN)/ruff check acomm_cli store commands tests bench
	$(BIN)/python -m pytest -q

# Regenerate man/, completions/ and docs/cli.md from the app (tests fail when they drift).
docs: $(STAMP)
	$(BIN)/python -m acomm_cli.docgen .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
