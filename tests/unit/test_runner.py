"""ValidationRunner: fail-open, severity overrides, disabled kinds and validators, outcome_of."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path

import pytest

from factledger.processors.errors import ConfigError
from factledger.processors.kinds import Kind, Outcome, Severity
from factledger.processors.limits import MAX_FINDINGS_PER_VALIDATOR
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.runner import ValidationRunner, default_validators, outcome_of
from factledger.processors.settings import ValidationSettings
from factledger.processors.validators.base import Validator

SHA = "3f9a1c2e7b4d5a6c8e9f0a1b2c3d4e5f6a7b8c9d"
TURN = Turn(reply="hello", user_message="hi")


class Emits:
    """A validator that returns the findings it was built with."""

    version = "0.1"
    kinds = frozenset(Kind)

    def __init__(self, name: str, *kinds: Kind) -> None:
        self.name = name
        self._kinds = kinds

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        return [Finding(kind=k, message=f"{self.name} saw {k}", token=k.value) for k in self._kinds]


class Raises:
    name = "boom"
    version = "0.1"
    kinds = frozenset({Kind.STALL})

    def __init__(self, exc: Exception) -> None:
        self._exc = exc

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        raise self._exc


def run(*validators: Validator, settings: ValidationSettings | None = None) -> Verdict:
    return ValidationRunner(validators, settings).validate(TURN)


# --- fail open ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "exc",
    [RuntimeError("kaput"), KeyError("kaput"), RecursionError("kaput"), ValueError("kaput")],
    ids=["runtime-error", "key-error", "recursion-error", "value-error"],
)
def test_raising_validator_fails_open(exc):
    verdict = run(
        Emits("before", Kind.FABRICATED_IDENTIFIER),
        Raises(exc),
        Emits("after", Kind.MISSING_TOOL_ARGUMENTS),
    )
    assert [f.kind for f in verdict.findings] == [
        Kind.FABRICATED_IDENTIFIER,
        Kind.VALIDATOR_ERROR,
        Kind.MISSING_TOOL_ARGUMENTS,
    ]
    error = verdict.findings[1]
    assert error.severity is Severity.INFO
    assert error.validator == "boom@0.1"
    assert f"boom@0.1 raised {type(exc).__name__}" in error.message
    assert "kaput" in error.message
    assert verdict.outcome is Outcome.REJECT  # the other validators' findings still count
    assert verdict.validators == ("before@0.1", "boom@0.1", "after@0.1")


def test_validator_error_alone_passes():
    verdict = run(Raises(RuntimeError("x")))
    assert verdict.outcome is Outcome.PASS
    assert verdict.kinds == ("validator_error",)


def test_validator_error_can_be_regraded_like_any_kind():
    settings = ValidationSettings(severity={Kind.VALIDATOR_ERROR: Severity.FLAG})
    assert run(Raises(RuntimeError("x")), settings=settings).outcome is Outcome.FLAG


def test_validator_that_crashes_on_a_real_turn_keeps_the_suite_running():
    boom = Raises(TypeError("bad"))
    combined = ValidationRunner([boom, *default_validators(ValidationSettings())])
    turn = Turn(reply=f"The commit is {SHA}.", user_message="which commit?")
    verdict = combined.validate(turn)
    assert verdict.kinds[0] == "validator_error"
    assert "fabricated_identifier" in verdict.kinds
    assert verdict.outcome is Outcome.REJECT


def test_findings_per_validator_are_capped():
    flood = Emits("flood", *([Kind.MISSING_TOOL_ARGUMENTS] * (MAX_FINDINGS_PER_VALIDATOR + 10)))
    verdict = run(flood, Emits("other", Kind.STALL))
    assert len(verdict.findings) == MAX_FINDINGS_PER_VALIDATOR + 1
    assert verdict.findings[-1].kind is Kind.STALL


# --- grading ------------------------------------------------------------------------------


def test_findings_get_their_default_severity_stamped():
    verdict = run(Emits("v", Kind.STALL, Kind.MISSING_TOOL_ARGUMENTS, Kind.VALIDATOR_ERROR))
    assert [f.severity for f in verdict.findings] == [
        Severity.REJECT,
        Severity.FLAG,
        Severity.INFO,
    ]


@pytest.mark.parametrize(
    ("override", "outcome"),
    [
        ({}, Outcome.REJECT),
        ({Kind.FABRICATED_IDENTIFIER: Severity.FLAG}, Outcome.FLAG),
        ({Kind.FABRICATED_IDENTIFIER: Severity.INFO}, Outcome.PASS),
        ({Kind.STALL: Severity.INFO}, Outcome.REJECT),
    ],
    ids=["default-rejects", "override-to-flag", "override-to-info-passes", "other-kind-no-effect"],
)
def test_severity_override_changes_the_outcome(override, outcome):
    settings = ValidationSettings(severity=override)
    verdict = run(Emits("v", Kind.FABRICATED_IDENTIFIER), settings=settings)
    assert verdict.outcome is outcome
    assert verdict.findings[0].effective_severity is override.get(
        Kind.FABRICATED_IDENTIFIER, Severity.REJECT
    )


def test_severity_override_raises_a_flag_kind_to_reject():
    settings = ValidationSettings(severity={Kind.MISSING_TOOL_ARGUMENTS: Severity.REJECT})
    assert run(Emits("v", Kind.MISSING_TOOL_ARGUMENTS)).outcome is Outcome.FLAG
    assert run(Emits("v", Kind.MISSING_TOOL_ARGUMENTS), settings=settings).outcome is Outcome.REJECT


@pytest.mark.parametrize(
    ("override", "outcome"),
    [
        ({}, Outcome.REJECT),
        ({Kind.FABRICATED_IDENTIFIER: Severity.FLAG}, Outcome.FLAG),
        ({Kind.FABRICATED_IDENTIFIER: Severity.INFO}, Outcome.PASS),
    ],
    ids=["default-suite-rejects-fabricated-sha", "suite-flag", "suite-info-passes"],
)
def test_severity_override_with_the_real_suite(override, outcome):
    runner = ValidationRunner.from_settings(ValidationSettings(severity=override))
    verdict = runner.validate(Turn(reply=f"The latest commit is {SHA}.", user_message="commit?"))
    assert verdict.kinds == ("fabricated_identifier",)
    assert verdict.outcome is outcome


# --- switching things off -------------------------------------------------------------------


def test_disabled_kinds_remove_findings_and_their_effect():
    settings = ValidationSettings(disabled_kinds=frozenset({Kind.FABRICATED_IDENTIFIER}))
    verdict = run(
        Emits("v", Kind.FABRICATED_IDENTIFIER, Kind.MISSING_TOOL_ARGUMENTS), settings=settings
    )
    assert verdict.kinds == ("missing_tool_arguments",)
    assert verdict.outcome is Outcome.FLAG


def test_disabled_validator_error_kind_hides_crashes():
    settings = ValidationSettings(disabled_kinds=frozenset({Kind.VALIDATOR_ERROR}))
    verdict = run(Raises(RuntimeError("x")), settings=settings)
    assert verdict.findings == ()
    assert verdict.outcome is Outcome.PASS


def test_disabled_validators_are_left_out_of_the_suite():
    full = ValidationRunner.from_settings()
    trimmed = ValidationRunner.from_settings(
        ValidationSettings(disabled_validators=frozenset({"identifiers", "stall"}))
    )
    assert "identifiers@1.2" in full.labels
    assert "stall@1.1" in full.labels
    assert set(full.labels) - set(trimmed.labels) == {"identifiers@1.2", "stall@1.1"}
    verdict = trimmed.validate(Turn(reply=f"The latest commit is {SHA}.", user_message="?"))
    assert "fabricated_identifier" not in verdict.kinds
    assert verdict.validators == trimmed.labels


def test_bad_claim_rules_path_fails_when_building_the_suite(tmp_path: Path):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\ncapability = "x"\npatterns = ["("]\ntools = ["x"]\n')
    with pytest.raises(ConfigError, match="pattern"):
        ValidationRunner.from_settings(ValidationSettings(claim_rules_path=rules))


# --- outcome_of and Verdict ----------------------------------------------------------------


def _f(kind: Kind, severity: Severity | None = None) -> Finding:
    return Finding(kind=kind, message="", severity=severity)


@pytest.mark.parametrize(
    ("findings", "outcome"),
    [
        ([], Outcome.PASS),
        ([_f(Kind.VALIDATOR_ERROR)], Outcome.PASS),
        ([_f(Kind.CONFABULATED_IDENTIFIER_SET)], Outcome.FLAG),
        ([_f(Kind.CONFABULATED_IDENTIFIER_SET), _f(Kind.STALL)], Outcome.REJECT),
        ([_f(Kind.STALL, Severity.INFO)], Outcome.PASS),
        ([_f(Kind.VALIDATOR_ERROR, Severity.REJECT)], Outcome.REJECT),
    ],
    ids=[
        "nothing-passes",
        "info-passes",
        "flag-flags",
        "worst-wins",
        "explicit-info-beats-default",
        "explicit-reject-beats-default",
    ],
)
def test_outcome_of(findings, outcome):
    assert outcome_of(findings) is outcome


def test_verdict_kinds_are_distinct_in_first_seen_order():
    verdict = Verdict(
        Outcome.REJECT, findings=(_f(Kind.STALL), _f(Kind.CLAIM_WITHOUT_TOOL), _f(Kind.STALL))
    )
    assert verdict.kinds == ("stall", "claim_without_tool")


def test_a_runner_pickles_to_one_that_judges_alike() -> None:
    """The runner crosses to the judge worker pickled, compiled validators and all (a class
    compiled by mypyc unpickles only through a reducer)."""
    settings = ValidationSettings(severity={Kind.CLAIM_WITHOUT_TOOL: Severity.FLAG})
    runner = ValidationRunner(
        [*default_validators(settings), Emits("custom", Kind.STALL)], settings
    )
    turn = Turn(
        reply=f"Pushed commit {SHA} and deleted the branch.", user_message="push it", tools=()
    )
    copy = pickle.loads(pickle.dumps(runner, protocol=pickle.HIGHEST_PROTOCOL))
    assert copy.labels == runner.labels
    assert copy.validate(turn) == runner.validate(turn)
    assert {f.kind for f in copy.validate(turn).findings} >= {
        Kind.FABRICATED_IDENTIFIER,
        Kind.CLAIM_WITHOUT_TOOL,
        Kind.STALL,
    }
