"""The MLflow target against a real MLflow tracking server on loopback (.peers/mlflow):
MLflow's own client creates a trace, verdicts are delivered as assessments, and MLflow's
client reads them back (tests/peers/mlflow_trace.py, run in the MLflow virtualenv)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from factledger.collector.export import mlflow
from factledger.collector.export.base import TargetUnavailable
from tests.integration.export_records import later, record
from tests.integration.peers import ROOT, mlflow_server, peer_bin

SCRIPT = ROOT / "tests" / "peers" / "mlflow_trace.py"


@pytest.fixture(scope="module")
def mlflow_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as url:
        yield url


def in_mlflow(*args: str) -> Any:
    python = peer_bin("mlflow", "python")
    done = subprocess.run(
        [str(python), str(SCRIPT), *args], capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def by_name(found: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    named: dict[str, list[dict[str, Any]]] = {}
    for assessment in found:
        named.setdefault(assessment["name"], []).append(assessment)
    return named


def test_assessments_on_the_trace_and_a_later_version_updates(mlflow_url: str) -> None:
    created = in_mlflow("trace", mlflow_url)
    assert created["trace_id"].startswith("tr-")
    first = record(trace_id=created["trace_id"][3:], span_id=created["span_id"])
    target = mlflow.build({"tracking_uri": mlflow_url})
    assert target.deliver([first], 10).count == 1

    found = by_name(in_mlflow("assessments", mlflow_url, created["trace_id"]))
    assert sorted(found) == ["factledger.claim", "factledger.identifier", "factledger.verdict"]
    [verdict] = found["factledger.verdict"]
    assert verdict["span_id"] == created["span_id"]
    assert (verdict["source_type"], verdict["source_id"]) == ("CODE", "factledger")
    assert verdict["value"] == "reject"
    assert "ORD-1 was never returned by a tool" in verdict["rationale"]
    assert verdict["metadata"]["factledger.version"] == "1"
    assert verdict["metadata"]["factledger.score"] == "0.0"
    assert verdict["metadata"]["factledger.turn_url"] == first.turn_url

    target.deliver([first], 10)
    again = by_name(in_mlflow("assessments", mlflow_url, created["trace_id"]))
    assert {name: len(rows) for name, rows in again.items()} == {name: 1 for name in found}

    target.deliver([later(first)], 10)
    updated = by_name(in_mlflow("assessments", mlflow_url, created["trace_id"]))
    [verdict_now] = updated["factledger.verdict"]
    assert verdict_now["assessment_id"] == verdict["assessment_id"]
    assert (verdict_now["value"], verdict_now["valid"]) == ("pass", True)
    assert verdict_now["metadata"]["factledger.version"] == "2"
    old, new = sorted(updated["factledger.identifier"], key=lambda a: a["valid"])
    assert (old["valid"], old["value"]) == (False, "reject")
    assert (new["valid"], new["value"]) == (True, "pass")
    assert new["overrides"] == old["assessment_id"]

    target.deliver([later(first)], 10)
    target.deliver([first], 10)
    settled = in_mlflow("assessments", mlflow_url, created["trace_id"])
    assert len(settled) == len([a for rows in updated.values() for a in rows])
    [verdict_last] = by_name(settled)["factledger.verdict"]
    assert verdict_last["value"] == "pass"
    target.shutdown()


def test_a_trace_mlflow_does_not_have_yet_stays_retryable(mlflow_url: str) -> None:
    target = mlflow.build({"tracking_uri": mlflow_url})
    with pytest.raises(TargetUnavailable, match="404"):
        target.deliver([record(trace_id="0" * 31 + "1")], 10)
    target.shutdown()
