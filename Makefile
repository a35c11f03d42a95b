# Two entry points for a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench docs clean .faketime .shells .nats

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,federation,mcp,ui,spark]'
	@touch $(STAMP)

# faketime drives time in subprocess tests; install it from Debian's packages when missing.
.faketime:
	@command -v faketime >/dev/null 2>&1 || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq faketime >/dev/null; }

# nats-server runs the NATS JetStream tests (issue 22); from Debian's packages when missing.
.nats:
	@command -v nats-server >/dev/null 2>&1 || test -x /usr/sbin/nats-server || { \
	  SUDO=$$(command -v sudo >/dev/null 2>&1 && [ "$$(id -u)" != 0 ] && echo sudo); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq nats-server >/dev/null; }

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

test: lint .faketime .nats .shells
	$(BIN)/python -m pytest -q

# ruff, then mypy and import-linter on a copy of the installed layout (store/ and commands/ go
# inside acomm_cli/ there, as setuptools installs them: neither tool follows the editable
# install's finder). mypy's paths are shown as they are in the repository.
LINT := build/lint
lint: $(STAMP)
	$(BIN)/ruff check acomm_cli store commands tests bench
	@rm -rf $(LINT) && mkdir -p $(LINT) && cp -r acomm_cli $(LINT)/ && \
	  cp -r store $(LINT)/acomm_cli/store && cp -r commands $(LINT)/acomm_cli/commands && \
	  find $(LINT) -name __pycache__ -prune -exec rm -rf {} +
	cd $(LINT) && { $(CURDIR)/$(BIN)/mypy --config-file $(CURDIR)/pyproject.toml \
	  --cache-dir $(CURDIR)/build/mypy-cache acomm_cli > mypy.out; status=$$?; \
	  sed -e 's#^acomm_cli/store/#store/#' -e 's#^acomm_cli/commands/#commands/#' mypy.out; \
	  exit $$status; }
	cd $(LINT) && PYTHONPATH=. $(CURDIR)/$(BIN)/lint-imports --config $(CURDIR)/pyproject.toml

# Regenerate man/, completions/ and docs/cli.md from the app (tests fail when they drift).
docs: $(STAMP)
	$(BIN)/python -m acomm_cli.shell.docgen .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
