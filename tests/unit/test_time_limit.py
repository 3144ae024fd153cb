"""The turn time limit: a validator that overruns is cut off and recorded, the other
validators' findings stand, and the timer never outlives the turn."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from factledger.collector.judge.time_limit import TimeLimitedRunner
from factledger.processors.model import Turn
from factledger.processors.runner import ValidationRunner, default_validators
from factledger.processors.settings import ValidationSettings
from tests.integration.stuck_validators import MARKER, StuckValidator


def _runner() -> ValidationRunner:
    return ValidationRunner([*default_validators(ValidationSettings()), StuckValidator()])


def test_an_overrunning_validator_is_cut_off_and_recorded() -> None:
    limited = TimeLimitedRunner(_runner(), seconds=0.2)
    turn = Turn(reply="I have refunded order #W0000001.", user_message=f"{MARKER} refund it")
    started = time.monotonic()
    verdict = limited.validate(turn)
    assert time.monotonic() - started < 5
    kinds = {f.kind.value for f in verdict.findings}
    assert "validator_error" in kinds and "claim_without_tool" in kinds
    (error,) = [f for f in verdict.findings if f.kind.value == "validator_error"]
    assert error.validator == "stuck@1" and "TurnTimeLimit" in error.message
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0), "no timer left running"


def test_a_turn_within_the_limit_is_judged_as_without_it() -> None:
    turn = Turn(reply="Order #W0000001 has shipped.", user_message="where is it?")
    assert TimeLimitedRunner(_runner(), seconds=5).validate(turn) == _runner().validate(turn)
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_the_limit_needs_the_main_thread_and_a_positive_time() -> None:
    errors: list[Exception] = []

    def build() -> None:
        try:
            TimeLimitedRunner(_runner())
        except ValueError as exc:
            errors.append(exc)

    thread = threading.Thread(target=build)
    thread.start()
    thread.join()
    assert [str(e) for e in errors] == ["a time limit needs the main thread (SIGALRM)"]
    with pytest.raises(ValueError, match="positive"):
        TimeLimitedRunner(_runner(), seconds=0)
