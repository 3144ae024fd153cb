"""The benchmarks run from a checkout or an install without the test tree: none of them
imports `tests`, except the one that measures the in-loop guards inside the agent
frameworks, which runs the framework set-ups of tests/conformance in their virtualenvs
(.conformance/, built in a checkout only)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CHECKOUT_ONLY = {"guards.py"}
BENCHMARKS = sorted(
    path
    for path in (Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py")
    if path.name not in CHECKOUT_ONLY
)


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_imports_nothing_from_the_tests(path: Path) -> None:
    assert [n for n in _imported(path) if n == "tests" or n.startswith("tests.")] == []
