# FactLedger: `make run` starts the service, the dashboard and demo traffic; `make test` runs
# every check (unit, integration and browser tests).
# Both create .venv when it is missing and install what they need into it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: run test lint typecheck unit browser install clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip "setuptools>=68" wheel

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

run: install
	$(BIN)/factledger up

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

unit: install browser
	$(BIN)/pytest -q -p no:cacheprovider

# The browser tests drive Debian's Chromium (never a downloaded browser). As root, install
# it when missing; otherwise say plainly that the browser tests will be skipped (under
# CI=true they fail instead of skipping).
browser:
	@if [ -e /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = "0" ]; then \
		echo "installing Debian's chromium for the browser tests"; \
		apt-get update -qq && apt-get install -y -qq chromium; \
	else \
		echo "NOTE: /usr/bin/chromium is missing and this is not root: the browser tests"; \
		echo "      will be skipped (install the Debian package 'chromium' to run them)"; \
	fi

test: lint typecheck unit

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
