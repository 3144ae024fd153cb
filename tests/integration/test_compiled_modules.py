"""The compiled (mypyc) modules: the suite runs against them when `make test` built them, and
the pure-Python sources give the same turns, verdicts and eval figures.

Without a fresh build (no C compiler, a failed build, a source edited since) the tests that
need one skip, except under CI=true, where `make test` has just built it: there they fail.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from factledger.compiled import BUILD_DIR, PURE_PYTHON_ENV, compiled_status, extension_suffix
from factledger.processors.assembly.assembler import PriorVerdict
from tests.integration.otlp_turns import write_eval_cases

ROOT = Path(__file__).resolve().parents[2]
CORPUS = sorted((ROOT / "tests" / "corpus").glob("*.jsonl"))


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _need_the_build() -> None:
    status = compiled_status()
    if status.active:
        return
    message = f"the compiled modules are not in use: {status.reason} (`make compiled` builds them)"
    if _in_ci() and not os.environ.get(PURE_PYTHON_ENV):
        pytest.fail(message)
    pytest.skip(message)


def test_the_suite_imports_the_compiled_modules() -> None:
    _need_the_build()
    modules = compiled_status().modules
    assert "factledger.processors.assembly.assembler" in modules
    for name in modules:
        module = sys.modules.get(name) or __import__(name, fromlist=["*"])
        origin = Path(module.__file__ or "")
        assert origin.is_relative_to(BUILD_DIR), f"{name} imported from {origin}"
        assert origin.name.endswith(extension_suffix()), origin


def _dry_run(target: str, venv: Path) -> list[str]:
    done = subprocess.run(
        ["make", "-n", f"VENV={venv}", target], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()


def test_make_test_builds_them_before_the_tests_and_make_run_does_not(tmp_path: Path) -> None:
    test = _dry_run("test", tmp_path / "venv")
    builds = [n for n, line in enumerate(test) if "tools/mypyc_build.py --if-stale" in line]
    pytest_runs = [n for n, line in enumerate(test) if "/bin/pytest" in line]
    assert builds and pytest_runs and builds[0] < pytest_runs[0], test
    assert not [line for line in _dry_run("run", tmp_path / "venv") if "mypyc" in line]


def test_prior_verdicts_cross_to_the_judge_worker_pickled() -> None:
    # Compiled, a frozen dataclass unpickles by setting its fields, which it refuses;
    # PriorVerdict rebuilds itself instead (its __reduce__).
    prior = PriorVerdict(tenant="acme", turn_id="t-1", version=3, span_ids=("a", "b"))
    again = pickle.loads(pickle.dumps(prior, protocol=pickle.HIGHEST_PROTOCOL))
    assert again == prior
    assert hash(again) == hash(prior)


def _probe(cases: Path, *, pure: bool) -> list[str]:
    env = {key: value for key, value in os.environ.items() if key != PURE_PYTHON_ENV}
    if pure:
        env[PURE_PYTHON_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "tests.integration.compiled_probe", str(cases)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the eval found mismatches
    return done.stdout.splitlines()


def test_pure_python_gives_the_same_turns_verdicts_and_eval_figures(tmp_path: Path) -> None:
    _need_the_build()
    cases = write_eval_cases(tmp_path / "cases.jsonl", CORPUS)
    compiled = _probe(cases, pure=False)
    pure = _probe(cases, pure=True)

    assert json.loads(compiled[0])["compiled"] is True
    assert json.loads(pure[0]) == {"compiled": False, "modules": []}
    report_end = compiled.index("}") + 1  # the eval's JSON report, then one line per case
    report = json.loads("\n".join(compiled[1:report_end]))
    assert report["cases"] == len(compiled) - report_end > 300
    different = [
        (ours, theirs)
        for ours, theirs in zip(compiled[1:], pure[1:], strict=True)
        if ours != theirs
    ]
    assert not different, (
        f"{len(different)} lines differ, first:\n{different[0][0]}\n{different[0][1]}"
    )
