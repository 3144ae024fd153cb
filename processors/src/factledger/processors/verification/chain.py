"""Asking verifiers about subjects, in order, within a time budget.

Each subject goes to the verifiers in the order given (the turn's own trace first, then
the configured sources); the first that settles it (confirmed or refuted) answers. When
none does, the answer is the last unverifiable one, or `no source` when no verifier had
one for it. A verifier that raises answers `unverifiable` (`verifier error`): a broken
source never costs the turn its verdict. The budget bounds the whole call; each
verifier gets what is left of it, at most `per_source_seconds`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from ..model import Turn
from .base import Subject, Verification, VerificationOutcome, Verifier

log = logging.getLogger("factledger.verification")

NO_SOURCE = "no source"
BUDGET_SPENT = "time budget spent"


def verify_subjects(
    subjects: Sequence[Subject],
    turn: Turn,
    verifiers: Sequence[Verifier],
    *,
    budget_seconds: float,
    per_source_seconds: float = 10.0,
    clock: Callable[[], float] = time.monotonic,
) -> list[Verification]:
    """One answer per subject, in the subjects' order."""
    deadline = clock() + max(0.0, budget_seconds)
    return [
        _answer(subject, turn, verifiers, deadline, per_source_seconds, clock)
        for subject in subjects
    ]


def _answer(
    subject: Subject,
    turn: Turn,
    verifiers: Sequence[Verifier],
    deadline: float,
    per_source_seconds: float,
    clock: Callable[[], float],
) -> Verification:
    last: Verification | None = None
    for verifier in verifiers:
        remaining = deadline - clock()
        if remaining <= 0:
            return last or unverifiable(subject, "budget", BUDGET_SPENT, retryable=True)
        try:
            answer = verifier.verify(subject, turn, min(per_source_seconds, remaining))
        except Exception as exc:  # a broken source is an unanswered question, not a crash
            log.exception("verifier %s raised on %s", _name(verifier), subject.name)
            answer = unverifiable(
                subject, _name(verifier), "verifier error", answer=f"{type(exc).__name__}: {exc}"
            )
        if answer is None:
            continue
        if answer.settled:
            return answer
        last = answer
    return last or unverifiable(subject, "none", NO_SOURCE)


def unverifiable(
    subject: Subject, source: str, reason: str, *, answer: str = "", retryable: bool = False
) -> Verification:
    return Verification(
        subject=subject,
        outcome=VerificationOutcome.UNVERIFIABLE,
        source=source,
        answer=answer[:500],
        checked_at=time.time(),
        reason=reason,
        retryable=retryable,
    )


def _name(verifier: Verifier) -> str:
    try:
        return verifier.name
    except Exception:
        return type(verifier).__name__
