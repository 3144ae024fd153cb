"""Turns judged and then verified, written into a store as the pipeline writes them: the
first verdict (version 1, or the one given), then the sources' answers applied to it by
the real settlement (`settled_verdict`) as the next version, with its `verifications`
rows.

The answers are given by name (`Answer`): each subject of the turn (`subjects`, the
findings' names and the candidates such as short SHAs) with an answer is "asked"; a turn
without answers gets no second version, as a turn verification asked nothing about does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from factledger.collector import rows
from factledger.collector.store import Store
from factledger.processors.model import Finding, ToolCall, Turn, Verdict
from factledger.processors.runner import outcome_of
from factledger.processors.verification.base import Verification, VerificationOutcome
from factledger.processors.verification.settle import settled_verdict
from factledger.processors.verification.subjects import subjects

CONFIRMED = VerificationOutcome.CONFIRMED
REFUTED = VerificationOutcome.REFUTED
UNVERIFIABLE = VerificationOutcome.UNVERIFIABLE


@dataclass(frozen=True)
class Answer:
    """What a source answered about one name of the reply."""

    outcome: VerificationOutcome
    source: str
    query: str = ""
    answer: str = ""
    reason: str = ""
    duration_ms: float = 12.5


def write_verified_turn(
    store: Store,
    turn_id: str,
    reply: str,
    findings: tuple[Finding, ...],
    answers: Mapping[str, Answer],
    *,
    started_at: datetime,
    tool_calls: tuple[ToolCall, ...] = (),
    agent: str = "coder",
    version: int = 1,
) -> Verdict:
    """Store one turn's first verdict as `version` and, when any subject has an answer,
    the verdict the answers settle as the next version; returns the latest verdict."""
    turn = Turn(
        reply=reply,
        user_message="What changed in the repository?",
        tool_calls=tool_calls,
        model="gpt-4o",
        tenant="default",
        trace_id=turn_id.encode().hex()[:32].rjust(32, "0"),
        turn_id=turn_id,
        agent=agent,
    )
    first = Verdict(outcome=outcome_of(findings), findings=findings, validators=("v@1",))
    checked_at = started_at + timedelta(seconds=3)
    verifications = [
        Verification(
            subject,
            answer.outcome,
            answer.source,
            query=answer.query,
            answer=answer.answer,
            checked_at=checked_at.timestamp(),
            duration_ms=answer.duration_ms,
            reason=answer.reason,
        )
        for subject in subjects(turn, first)
        if (answer := answers.get(subject.name)) is not None
    ]
    versions: list[tuple[int, Verdict, list[Verification]]] = [(version, first, [])]
    if verifications:
        settled = settled_verdict(first, {v.subject.key: v for v in verifications})
        versions.append((version + 1, settled, verifications))
    for number, verdict, answered in versions:
        validated = started_at + timedelta(seconds=1 + number)
        store.insert_turns(
            [
                rows.turn_row(
                    turn,
                    verdict,
                    version=number,
                    started_at=started_at,
                    ended_at=started_at + timedelta(seconds=1),
                    validated_at=validated,
                    span_ids=(),
                )
            ]
        )
        store.insert_findings(
            rows.finding_rows(turn, verdict, version=number, started_at=started_at)
        )
        if answered:
            store.insert_verifications(
                rows.verification_rows(
                    turn, verdict, answered, version=number, started_at=started_at
                )
            )
    return versions[-1][1]
