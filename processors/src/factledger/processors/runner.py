"""Run the validator suite over a turn and derive the verdict.

Fail open: a validator that raises yields a `validator_error` finding and the
other validators' findings stand; the turn is never lost to a validator bug.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import lru_cache

from .claim_rules import load_claim_rules
from .kinds import SEVERITY_RANK, Kind, Outcome, Severity
from .limits import MAX_FINDINGS_PER_VALIDATOR
from .model import Finding, Turn, Verdict
from .settings import ValidationSettings
from .validators.arguments import ArgumentGroundingValidator
from .validators.artifacts import ArtifactValidator
from .validators.base import Validator, label
from .validators.citations import CitationValidator
from .validators.claims import ClaimValidator
from .validators.confabulation import ConfabulationValidator
from .validators.identifiers import IdentifierValidator
from .validators.mirror import MirrorDriftValidator
from .validators.placeholders import PlaceholderValidator
from .validators.quantities import QuantityGroundingValidator
from .validators.record_state import RecordStateValidator
from .validators.stall import StallValidator
from .validators.tool_calls import ToolCallValidator


def default_validators(settings: ValidationSettings) -> list[Validator]:
    """The full suite, minus the validators the settings switch off."""
    rules = load_claim_rules(settings.claim_rules_path)
    suite: list[Validator] = [
        IdentifierValidator(),
        ClaimValidator(rules),
        StallValidator(),
        CitationValidator(),
        ToolCallValidator(),
        ArgumentGroundingValidator(),
        ConfabulationValidator(),
        MirrorDriftValidator(),
        PlaceholderValidator(),
        ArtifactValidator(),
        RecordStateValidator(),
        QuantityGroundingValidator(),
    ]
    return [v for v in suite if v.name not in settings.disabled_validators]


class ValidationRunner:
    """Applies validators to turns; holds no per-turn state, safe to share between threads.
    Pickled to the judge worker, so not compiled (tools/mypyc_build.py): a compiled class
    cannot be subclassed by an interpreted one, as a runner of one's own may be."""

    def __init__(
        self, validators: Sequence[Validator], settings: ValidationSettings | None = None
    ) -> None:
        self._validators = tuple(validators)
        self._settings = settings or ValidationSettings()
        self.labels = tuple(label(v) for v in self._validators)

    @classmethod
    def from_settings(cls, settings: ValidationSettings | None = None) -> ValidationRunner:
        settings = settings or ValidationSettings()
        return cls(default_validators(settings), settings)

    def validate(self, turn: Turn) -> Verdict:
        findings: list[Finding] = []
        for validator in self._validators:
            try:
                produced = validator(turn)
                if not isinstance(produced, (list, tuple)):
                    produced = list(produced)  # a generator raises here, inside the try
            except Exception as exc:  # fail open: one validator never sinks the turn
                produced = [
                    Finding(
                        kind=Kind.VALIDATOR_ERROR,
                        message=f"{label(validator)} raised {type(exc).__name__}: {exc}",
                        validator=label(validator),
                    )
                ]
            # Most validators find nothing in most turns: no work for them past the call.
            for found in produced[:MAX_FINDINGS_PER_VALIDATOR] if produced else ():
                findings.append(self._graded(found))
        disabled = self._settings.disabled_kinds
        kept = tuple(f for f in findings if f.kind not in disabled) if disabled else tuple(findings)
        return Verdict(outcome=outcome_of(kept), findings=kept, validators=self.labels)

    def graded(self, finding: Finding) -> Finding | None:
        """`finding` with the severity the settings give its kind; None when its kind is
        switched off. For findings made outside the validators (verification's)."""
        if finding.kind in self._settings.disabled_kinds:
            return None
        return self._graded(finding)

    def _graded(self, finding: Finding) -> Finding:
        severity = self._settings.severity.get(finding.kind, finding.effective_severity)
        return dataclasses.replace(finding, severity=severity)


def outcome_of(findings: Sequence[Finding]) -> Outcome:
    """`reject` if any finding rejects, else `flag` if any flags, else `pass`."""
    worst = max((SEVERITY_RANK[f.effective_severity] for f in findings), default=0)
    if worst == SEVERITY_RANK[Severity.REJECT]:
        return Outcome.REJECT
    if worst == SEVERITY_RANK[Severity.FLAG]:
        return Outcome.FLAG
    return Outcome.PASS


@lru_cache(maxsize=1)
def default_runner() -> ValidationRunner:
    """The shared runner with default settings (built once: compiling rules costs)."""
    return ValidationRunner.from_settings()
