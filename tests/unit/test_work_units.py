"""How `make test` shares the tests between its two workers (tests/conftest.py)."""

from __future__ import annotations

import pytest

from tests.conftest import work_unit


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        ("tests/browser/test_dashboard.py::test_overview", "browser"),
        ("tests/conformance/test_conformance.py::test_case[crewai-push]", "conformance"),
        ("tests/conformance/test_guards.py::test_guard", "conformance"),
        ("tests/integration/test_api.py::test_turns", "tests/integration/test_api.py"),
        ("tests/integration/test_api.py::TestPaging::test_next", "tests/integration/test_api.py"),
        ("tests/unit/test_wal.py", "tests/unit/test_wal.py"),
        # A parameter may hold a slash or "::": the file is still the unit.
        (
            "tests/unit/test_redaction.py::test_shape[tests/browser/x::y]",
            "tests/unit/test_redaction.py",
        ),
        ("tests/unit/test_x.py::test_y[browser]", "tests/unit/test_x.py"),
    ],
)
def test_a_test_runs_with_its_folder_or_its_file(nodeid: str, unit: str) -> None:
    assert work_unit(nodeid) == unit
