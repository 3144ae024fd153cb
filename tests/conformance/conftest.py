"""Conformance fixtures: one scripted LLM and one real service for the whole run, and each
set-up run once (its turns are shared by the tests of its cases)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factledger.service_process import ServiceProcess

from .fake_llm import FakeLlm
from .harness import SetUpRun, run_setup
from .registry import SetUp
from .table import RESULTS


@pytest.fixture(scope="session")
def fake_llm() -> Iterator[FakeLlm]:
    with FakeLlm() as llm:
        yield llm


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {"FACTLEDGER_GRACE_SECONDS": "0.5", "FACTLEDGER_MAX_WAIT_SECONDS": "20"}
    with ServiceProcess(tmp_path_factory.mktemp("conformance"), env) as svc:
        yield svc


class Runs:
    """Each set-up's run, made the first time a test asks for it, and the case results
    gathered for the conformance table (docs/conformance.md)."""

    def __init__(self, service: ServiceProcess, llm: FakeLlm) -> None:
        self.service = service
        self.llm = llm
        self.runs: dict[str, SetUpRun | Exception] = {}
        self.results: dict[str, dict[str, Any]] = {}

    def of(self, setup: SetUp) -> SetUpRun:
        if setup.id not in self.runs:
            try:
                self.runs[setup.id] = run_setup(setup, self.service.url, self.llm.base_url)
            except Exception as error:  # every case of the set-up reports it
                self.runs[setup.id] = error
        run = self.runs[setup.id]
        if isinstance(run, Exception):
            raise run
        return run

    def record(self, run: SetUpRun, case: str, result: dict[str, Any]) -> None:
        entry = self.results.setdefault(run.setup.id, {"versions": run.versions, "cases": {}})
        entry["cases"][case] = result


@pytest.fixture(scope="session")
def runs(service: ServiceProcess, fake_llm: FakeLlm) -> Iterator[Runs]:
    gathered = Runs(service, fake_llm)
    yield gathered
    if gathered.results:
        _merge_results(RESULTS, gathered.results)


def _merge_results(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """Results of this run replace those of the same set-ups; others are kept, so a run of
    one set-up does not erase the rest of the table's source."""
    path.parent.mkdir(parents=True, exist_ok=True)
    merged: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
    merged.update(results)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(merged, indent=1, sort_keys=True))
    temporary.replace(path)
