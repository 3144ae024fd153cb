# FactLedger: `make run` starts the service, the dashboard and demo traffic; `make test` runs
# every check (unit, integration and browser tests).
# Both create .venv when it is missing. `make run` installs what running needs (the package
# with its service and dashboard extras, `all`: `pip install factledger` alone is the agent
# side, docs/install.md); `make test` adds the development tools (the `dev` extra: ruff,
# mypy, pytest, Playwright, ...). pip's output stays visible: the first install takes minutes.

PYTHON ?= python3

# The tests start some hundreds of Python processes (services, their workers, agents). Where
# the shell sets PYTHONDONTWRITEBYTECODE, each would compile every module it imports again:
# instead the first import writes the bytecode and the rest read it (the environments are
# installed without bytecode for this reason too, below).
unexport PYTHONDONTWRITEBYTECODE

VENV   := .venv
BIN    := $(VENV)/bin
STAMP     := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test lint typecheck unit coverage browser install install-dev clean conformance-envs peers compiled prepare

# The venv's own setuptools is brought up to what pyproject.toml builds with (a fresh venv
# of Python 3.11 carries 65.x, which cannot read the SPDX license field).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip "setuptools>=77"

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[all]'
	touch $(STAMP)

# The dev install holds the run install too. It leaves compiling to bytecode to the first
# import (most of what the tools bring, the tests never import).
$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --no-compile -e '.[all,dev]'
	touch $(DEV_STAMP) $(STAMP)

install: $(STAMP)

install-dev: $(DEV_STAMP)

run: install
	$(BIN)/factledger up

# The dependency rules between the packages (docs/architecture.md) are import-linter
# contracts in pyproject.toml; a broken one fails the lint.
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python tools/lint_imports.py

# mypy over everything; pyright over the four package folders, which import nothing of
# factledger/ itself (pyright does not follow its pkgutil path; docs/architecture.md).
typecheck: install-dev
	$(BIN)/mypy
	$(BIN)/pyright collector/src processors/src dashboard/src schemas/src verifiers/src

# Two workers (pytest-xdist): a test mostly waits on the processes it starts, so one
# pytest keeps about one of the two cores busy. tests/conftest.py says which tests go
# together.
unit: install-dev browser conformance-envs peers compiled
	$(BIN)/pytest -q -p no:cacheprovider --durations=15 -n 2

# Line coverage of the unit and integration tests, the service's child processes included
# ([tool.coverage] in pyproject.toml), per file and per top-level folder. The sources run
# as Python (FACTLEDGER_PURE_PYTHON=1): a mypyc-compiled module would count as unrun.
coverage: install-dev
	rm -f .coverage .coverage.*
	FACTLEDGER_PURE_PYTHON=1 $(BIN)/coverage run -m pytest -q -p no:cacheprovider tests/unit tests/integration
	$(BIN)/coverage combine -q
	$(BIN)/coverage report
	$(BIN)/python tools/coverage_by_folder.py

# The hot modules of factledger.processors (normalizing spans, building and judging turns)
# compiled with mypyc into factledger/_mypyc/ (tools/mypyc_build.py, factledger/compiled.py),
# so the tests run against what a checkout serves with. Built when missing or stale (a source of
# factledger.processors, the set of modules or mypy changed); an edited source falls back
# to pure Python until then. `make run` does not build them (it needs neither mypy nor a C
# compiler) but uses a fresh build when there. A failed build is a note, not a failure:
# every module then runs from its source, with the same answers.
compiled: install-dev
	@$(BIN)/python tools/mypyc_build.py --if-stale || { \
		echo "NOTE: the mypyc build failed (above): factledger runs from its Python sources,"; \
		echo "      with the same answers, only slower at assembling and judging turns"; \
	}

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

# The conformance suite runs real agent frameworks, each in its own virtualenv under
# .conformance/ (their dependencies clash), built from the pinned tests/conformance/envs/*.txt
# and rebuilt when that file changes.
# The test environments (these and the peers' below) are installed by the pip of .venv, so
# they carry no pip of their own to create and upgrade, and without compiling every module
# they receive to bytecode: Python compiles the few a test imports when it first imports
# them. Together that halves the time a fresh clone spends building them.
# $(call test_env,FOLDER,KIND) builds FOLDER from the requirements file $< (KIND names it).
define test_env
	@echo "building the $(2) environment $* ($(1))"
	rm -rf $(1)
	$(PYTHON) -m venv --without-pip $(1)
	$(BIN)/python -m pip --python $(1)/bin/python install --quiet --progress-bar off --no-compile -r $<
	touch $@
endef

CONFORMANCE_ENVS := $(patsubst tests/conformance/envs/%.txt,.conformance/%/.installed,$(wildcard tests/conformance/envs/*.txt))

.conformance/%/.installed: tests/conformance/envs/%.txt | $(BIN)/python
	$(call test_env,.conformance/$*,conformance)

# The Node.js set-ups share one npm folder, tests/conformance/node/, installed from its lock
# file (exact versions) into .conformance/node/ and rebuilt when either file changes. Its
# programs find the packages through the ignored link tests/conformance/node/node_modules.
# The folder pins Node itself (the registry's `node` package, whose install script fetches
# the matching binary package from the same registry): the frameworks need Node >= 22.13.
NODE_FOLDER := tests/conformance/node

.conformance/node/.installed: $(NODE_FOLDER)/package.json $(NODE_FOLDER)/package-lock.json
	@echo "building the conformance environment node (.conformance/node)"
	rm -rf .conformance/node $(NODE_FOLDER)/node_modules
	mkdir -p .conformance/node
	cp $(NODE_FOLDER)/package.json $(NODE_FOLDER)/package-lock.json .conformance/node/
	npm ci --prefix .conformance/node --no-audit --no-fund --loglevel=error
	ln -s ../../../.conformance/node/node_modules $(NODE_FOLDER)/node_modules
	touch $@

conformance-envs: $(CONFORMANCE_ENVS) .conformance/node/.installed

# The export tests run real peer products (Phoenix, MLflow) on loopback, each from its own
# virtualenv under .peers/ (their dependencies are heavy and clash with ours), built from
# the pinned tests/peers/*.txt and rebuilt when that file changes.
PEER_ENVS := $(patsubst tests/peers/%.txt,.peers/%/.installed,$(wildcard tests/peers/*.txt))

.peers/%/.installed: tests/peers/%.txt | $(BIN)/python
	$(call test_env,.peers/$*,peer)

peers: $(PEER_ENVS)

# Everything the tests need is prepared two jobs at a time (one pip install keeps one core
# busy, and a fresh clone builds some 25 environments), each job's output printed whole
# when it ends; then the tests run.
prepare: install-dev
	@$(MAKE) --no-print-directory -j2 --output-sync=target lint typecheck compiled browser conformance-envs peers

test: prepare
	@$(MAKE) --no-print-directory unit

clean:
	rm -rf $(VENV) .conformance .peers build factledger/_mypyc *.egg-info .mypy_cache .pytest_cache .ruff_cache \
		.import_linter_cache .coverage .coverage.* htmlcov
