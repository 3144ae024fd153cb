"""The in-loop guard for agent frameworks: check a turn, nudge the model, annotate the reply.

    result = check(transcript)                 # or check(turn)
    if result.nudge and budget_left:           # send as a framework message, then retry
        messages.append({"role": "user", "content": result.nudge})
    else:
        reply = result.annotate(after_self_correction=retried)

Three footnotes: a first flag, a flag that survived a self-correction attempt,
and identifiers quoted from the user (an echo, not a fabrication).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .assembly.transcript import turn_from_transcript
from .kinds import Outcome, Severity
from .model import Finding, Turn, Verdict
from .nudges import build_nudge
from .runner import ValidationRunner, default_runner
from .validators.identifiers import user_quoted_identifiers
from .verification.base import Verification, Verifier
from .verification.chain import verify_subjects
from .verification.settle import settled_verdict
from .verification.subjects import subjects


@dataclass(frozen=True)
class CheckResult:
    """What the guard concluded about one turn."""

    turn: Turn
    verdict: Verdict
    nudge: str | None
    user_quoted: tuple[str, ...]
    verifications: tuple[Verification, ...] = ()
    """What the sources of truth answered, when `check` was given verifiers."""

    @property
    def outcome(self) -> Outcome:
        return self.verdict.outcome

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.verdict.findings

    @property
    def ok(self) -> bool:
        return self.verdict.outcome is Outcome.PASS

    def annotate(self, *, after_self_correction: bool = False) -> str:
        """The reply with the footnote that fits; unchanged when there is nothing to say."""
        return annotate_reply(
            self.turn.reply,
            self.findings,
            user_quoted=self.user_quoted,
            after_self_correction=after_self_correction,
        )


def check(
    turn_or_transcript: Turn | Mapping[str, Any],
    *,
    runner: ValidationRunner | None = None,
    verifiers: Sequence[Verifier] = (),
    budget_seconds: float = 5.0,
) -> CheckResult:
    """Validate one turn (a `Turn` or an OpenAI-style transcript) and prepare the guard's
    answer. With `verifiers` (`factledger.verifiers`, in the order to ask them), the
    names of the verdict are settled at those sources within `budget_seconds` before the
    answer: a confirmed fabrication is a reject (and gets a nudge), a refuted suspicion
    is withdrawn. A source that is slow or down leaves its names as the validators found
    them."""
    turn = (
        turn_or_transcript
        if isinstance(turn_or_transcript, Turn)
        else turn_from_transcript(turn_or_transcript)
    )
    runner = runner or default_runner()
    verdict = runner.validate(turn)
    answers: list[Verification] = []
    if verifiers:
        asked = subjects(turn, verdict)
        answers = verify_subjects(asked, turn, verifiers, budget_seconds=budget_seconds)
        settled = {a.subject.key: a for a in answers}
        verdict = settled_verdict(verdict, settled, runner.graded)
    actionable = [f for f in verdict.findings if f.effective_severity is Severity.REJECT]
    return CheckResult(
        turn=turn,
        verdict=verdict,
        nudge=build_nudge(actionable),
        user_quoted=user_quoted_identifiers(turn),
        verifications=tuple(answers),
    )


def annotate_reply(
    reply: str,
    findings: tuple[Finding, ...],
    *,
    user_quoted: tuple[str, ...] = (),
    after_self_correction: bool = False,
) -> str:
    """Append a clearly marked footnote naming what the tool trace does not back."""
    flagged = [f for f in findings if f.effective_severity is not Severity.INFO]
    if flagged:
        listed = _listed(f.token or f.kind.value for f in flagged)
        kinds = ", ".join(dict.fromkeys(f.kind.value for f in flagged))
        if after_self_correction:
            note = (
                f"FactLedger note: this reply still contains {listed} ({kinds}) after a "
                "self-correction attempt; no tool call of this turn backs it. Treat the claim "
                "as unverified and check the source of truth before relying on it."
            )
        else:
            note = (
                f"FactLedger note: this turn's tool trace does not back {listed} ({kinds}). "
                "This may be a hallucinated success report: verify on the source of truth "
                "before relying on it."
            )
    elif user_quoted:
        note = (
            f"FactLedger note: {_listed(user_quoted)} was quoted from your message, not "
            "returned by a tool in this turn; the tool trace does not contain it."
        )
    else:
        return reply
    return f"{reply.rstrip()}\n\n⚠️ _{note}_"


def _listed(tokens: Any) -> str:
    unique = list(dict.fromkeys(str(t) for t in tokens))
    shown = ", ".join(f"`{t[:80]}`" for t in unique[:8])
    return shown + (f" and {len(unique) - 8} more" if len(unique) > 8 else "")
