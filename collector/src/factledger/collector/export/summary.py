"""A verdict version as score-taking targets show it: one score for the turn's verdict
and one per finding kind, with the same metadata on each.

Scores: pass 1.0, flag 0.5, reject 0.0 (higher is better, as evaluators in these products
score). A kind's verdict is the worst verdict among its findings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from factledger.collector.export.base import ExportedFinding, Verdict, VerdictRecord

VERDICT_NAME = "factledger.verdict"

VERDICT_SCORES: dict[Verdict, float] = {"pass": 1.0, "flag": 0.5, "reject": 0.0}

_SEVERITY: dict[Verdict, int] = {"pass": 0, "flag": 1, "reject": 2}

MAX_EXPLANATION_CHARS = 4000
"""Longer explanations are cut: every product here caps a comment or rationale."""


@dataclass(frozen=True)
class Score:
    """One score to show on the judged span: the turn's verdict, or one finding kind."""

    name: str
    kind: str | None
    verdict: Verdict
    value: float
    explanation: str
    tokens: tuple[str, ...]


def scores(record: VerdictRecord) -> tuple[Score, ...]:
    """The verdict score first, then one per finding kind in the order kinds first appear."""
    kinds: dict[str, list[ExportedFinding]] = {}
    for finding in record.findings:
        kinds.setdefault(finding.kind, []).append(finding)
    turn = Score(
        name=VERDICT_NAME,
        kind=None,
        verdict=record.verdict,
        value=VERDICT_SCORES[record.verdict],
        explanation=explanation(record.findings) or f"FactLedger: {record.verdict}",
        tokens=tuple(dict.fromkeys(f.token for f in record.findings)),
    )
    per_kind = tuple(_kind_score(kind, found) for kind, found in kinds.items())
    return (turn, *per_kind)


def _kind_score(kind: str, found: list[ExportedFinding]) -> Score:
    verdict = _worst(f.verdict for f in found)
    return Score(
        name=f"factledger.{kind}",
        kind=kind,
        verdict=verdict,
        value=VERDICT_SCORES[verdict],
        explanation=explanation(found),
        tokens=tuple(dict.fromkeys(f.token for f in found)),
    )


def _worst(verdicts: Iterable[Verdict]) -> Verdict:
    worst: Verdict = "pass"
    for verdict in verdicts:
        if _SEVERITY[verdict] > _SEVERITY[worst]:
            worst = verdict
    return worst


def explanation(findings: tuple[ExportedFinding, ...] | list[ExportedFinding]) -> str:
    """The findings' messages, one a line, cut to `MAX_EXPLANATION_CHARS`."""
    text = "\n".join(dict.fromkeys(f.message for f in findings))
    if len(text) > MAX_EXPLANATION_CHARS:
        return text[: MAX_EXPLANATION_CHARS - 1] + "…"
    return text


def metadata(record: VerdictRecord, score: Score) -> dict[str, str | int]:
    """What every target attaches to a score so a reader can find the turn again."""
    found: dict[str, str | int] = {
        "factledger.tenant": record.tenant,
        "factledger.turn_id": record.turn_id,
        "factledger.version": record.version,
        "factledger.judged_at_ms": record.judged_at_ms,
        "factledger.cause": record.cause,
        "factledger.turn_url": record.turn_url,
        "factledger.verdict": record.verdict,
    }
    if score.kind is not None:
        found["factledger.kind"] = score.kind
    if score.tokens:
        found["factledger.tokens"] = ",".join(score.tokens)
    return found


def latest(records: Iterable[VerdictRecord]) -> list[VerdictRecord]:
    """The newest record (`VerdictRecord.order`) of each turn in `records`, in the order
    turns first appear: a batch may hold two versions of one turn, or a version and its
    label, and only the later one should stand."""
    found: dict[tuple[str, str], VerdictRecord] = {}
    for record in records:
        key = (record.tenant, record.turn_id)
        if key not in found or record.order > found[key].order:
            found[key] = record
    return list(found.values())


def stable_id(*parts: str) -> str:
    """A deterministic id of `parts`: the same turn and name give the same id in every
    version and every retry, which is what lets an upserting target replace, not add."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
    return digest[:32]
