"""The verdict writer stores a version's findings, answers and evidence before its turn
row: a reader finds a version by its turn row, and must find all of it there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from factledger.collector import otlp
from factledger.collector.ingest.admission import Backlog
from factledger.collector.judge.results import VerdictWriter
from factledger.collector.judge.turn_judge import TurnJudge
from factledger.collector.metrics import Metrics
from factledger.processors.runner import default_runner
from tests.integration.otlp_turns import turn_request


def test_a_versions_turn_row_is_stored_after_everything_else_of_it() -> None:
    body, _ = turn_request(1, hallucinate=True, model="gpt-4o")
    judge = TurnJudge(default_runner(), grace_seconds=0, max_wait_seconds=60)
    judged = judge.judge(otlp.decode_request(body, otlp.JSON).spans, flush=True)
    assert judged.turn_rows and judged.finding_rows and judged.evidence_rows
    order: list[str] = []

    def table(name: str) -> Any:
        def send(rows: Sequence[Sequence[Any]]) -> bool:
            order.append(name)
            return True

        return send

    metrics = Metrics()
    writer = VerdictWriter(
        table("turns"),
        table("findings"),
        table("verifications"),
        Backlog(1_000, 1_000_000, metrics),
        metrics,
        snapshots=table("snapshots"),
        evidence=table("evidence"),
    )
    writer.write([judged])
    assert order[-1] == "turns"
    assert {"findings", "evidence"} <= set(order[:-1])
