"""Verdict records for the export target tests: a rejected turn with findings of two
kinds, and its later versions."""

from __future__ import annotations

import dataclasses

from factledger.collector.export.base import ExportedFinding, Verdict, VerdictRecord

FINDINGS = (
    ExportedFinding("identifier", "reject", "ORD-1", "ORD-1 was never returned by a tool", 1),
    ExportedFinding("claim", "flag", "shipped", "No tool reported the order as shipped", 2),
)


def record(
    trace_id: str = "5b8efff798038103d269b633813fc60c",
    span_id: str = "eee19b7ec3c1b174",
    version: int = 1,
    verdict: Verdict = "reject",
    findings: tuple[ExportedFinding, ...] = FINDINGS,
    turn_id: str = "turn-1",
) -> VerdictRecord:
    return VerdictRecord(
        tenant="acme",
        turn_id=turn_id,
        version=version,
        cause="judged",
        verdict=verdict,
        trace_id=trace_id,
        span_id=span_id,
        response_id="resp-1",
        service_name="orders-agent",
        agent_name="support",
        model="gpt-test",
        findings=findings,
        turn_url=f"http://127.0.0.1:7070/turns/{turn_id}",
        judged_at_ms=1_780_000_000_000 + version * 60_000,
    )


def later(first: VerdictRecord, verdict: Verdict = "pass") -> VerdictRecord:
    """The next version of `first`: a verification cleared it, no findings left."""
    return dataclasses.replace(
        first,
        version=first.version + 1,
        cause="verified",
        verdict=verdict,
        findings=(),
        judged_at_ms=first.judged_at_ms + 60_000,
    )
