"""Every set-up, every case: exactly one turn per request, each field right.

A set-up whose virtualenv (or npm folder) is missing fails under CI=true and is skipped
otherwise, with the command that builds it (`make conformance-envs`).
"""

from __future__ import annotations

import os

import pytest

from .checks import check_case
from .conftest import Runs
from .registry import SETUPS, SetUp
from .table import PAGE, complete, page_table, render

CASES = [
    pytest.param(setup, case, id=f"{setup.id}-{case}")
    for setup in SETUPS
    if not setup.unavailable
    for case in setup.cases
]


def _require_env(setup: SetUp) -> None:
    if setup.interpreter.exists():
        return
    message = f"{setup.interpreter} is missing: `make conformance-envs` builds it"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.parametrize(("setup", "case"), CASES)
def test_case(runs: Runs, setup: SetUp, case: str) -> None:
    _require_env(setup)
    run = runs.of(setup)
    result = check_case(setup, case, run.turns, run.errors.get(case))
    runs.record(run, case, result.as_json())
    assert result.ok, f"{setup.id} {case}:\n" + "\n".join(result.problems)


def test_conformance_table_is_the_last_full_run(runs: Runs) -> None:
    """docs/conformance.md's table is generated from a full run; after one, it must match it."""
    if not complete(runs.results):
        pytest.skip("not every set-up ran in this session: the conformance table is kept")
    table = render(runs.results)
    assert page_table(PAGE.read_text()) == table, (
        "docs/conformance.md's conformance table differs from this run: "
        "`.venv/bin/python -m tests.conformance.table` writes it"
    )
