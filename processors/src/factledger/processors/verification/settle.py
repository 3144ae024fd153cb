"""A verdict after verification: what the sources of truth settled, applied to it.

    confirmed     a flag becomes a reject (an `info` the settings chose stays info); a
                  candidate (`Subject.finding` None) becomes a finding of its own
    refuted       the finding is withdrawn, unless its kind is about what the turn did
                  (`subjects.NEVER_WITHDRAWN`: an unfetched citation that exists is still
                  unfetched); a turn whose findings are all withdrawn passes
    unverifiable  nothing changes

Findings are matched to verifications by the subject they name (`subjects.finding_subject`),
not by position, so the same verifications apply to a later version of the turn whose
verdict lists its findings in another order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping

from ..kinds import Severity
from ..model import Finding, Verdict
from ..runner import outcome_of
from .base import Subject, Verification, VerificationOutcome
from .subjects import CANDIDATE_KINDS, NEVER_WITHDRAWN, finding_subject

VALIDATOR = "verification@1.0"
"""The label of findings verification makes and of verdicts it changed."""

Grade = Callable[[Finding], "Finding | None"]
"""The settings' severity for a finding, None when its kind is switched off
(`ValidationRunner.graded`)."""

VerificationsByKey = Mapping[tuple[str, str, bool], Verification]


def settled_verdict(
    verdict: Verdict, verifications: VerificationsByKey, grade: Grade | None = None
) -> Verdict:
    """`verdict` with `verifications` applied (keyed by `Subject.key`)."""
    if not verifications:
        return verdict
    kept: list[Finding] = []
    for index, f in enumerate(verdict.findings):
        subject = finding_subject(f, index)
        answer = verifications.get(subject.key) if subject else None
        if answer is None or not answer.settled:
            kept.append(f)
        elif answer.outcome is VerificationOutcome.CONFIRMED:
            kept.append(_confirmed(f, answer))
        elif f.kind in NEVER_WITHDRAWN:
            kept.append(f)  # refuted: it exists, but the finding is not about existing
    named = {s.key for i, f in enumerate(verdict.findings) if (s := finding_subject(f, i))}
    for key, answer in verifications.items():
        if key in named or answer.outcome is not VerificationOutcome.CONFIRMED:
            continue
        made = _candidate_finding(answer)
        graded = grade(made) if grade else made
        if graded is not None:
            kept.append(graded)
    findings = tuple(kept)
    validators = verdict.validators
    if VALIDATOR not in validators:
        validators = (*validators, VALIDATOR)
    return Verdict(outcome=outcome_of(findings), findings=findings, validators=validators)


def evidence_note(answer: Verification) -> str:
    """One line for a finding: where it was settled and what the source said."""
    return f"{answer.outcome.value} by {answer.source}: {answer.answer}".strip().rstrip(":")


def _confirmed(f: Finding, answer: Verification) -> Finding:
    severity = f.effective_severity
    if severity is Severity.FLAG:
        severity = Severity.REJECT
    return dataclasses.replace(f, severity=severity, checked_note=evidence_note(answer))


def _candidate_finding(answer: Verification) -> Finding:
    subject: Subject = answer.subject
    kind = CANDIDATE_KINDS[subject.claimed_absent]
    if subject.claimed_absent:
        message = f"the reply says `{subject.name}` does not exist, but {answer.source} has it"
    else:
        message = (
            f"`{subject.name}` is named as a {subject.kind.value} but {answer.source} has none"
        )
    return Finding(
        kind=kind,
        message=message,
        token=subject.name,
        span=subject.span,
        validator=VALIDATOR,
        checked_note=evidence_note(answer),
    )
