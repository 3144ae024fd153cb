"""The benchmarks run from a checkout or an install without the test tree: none of them
imports `tests`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("*.py"))


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
