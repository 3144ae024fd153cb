"""A time limit on judging one turn, for the judge worker process.

The validators are linear in their input, but a turn is client data and a validator is
code: one that does not finish must not hold every later verdict. In the worker, judging
runs on the main thread, so a real-time interval timer (SIGALRM) can interrupt it: the
validator that overran ends with `TurnTimeLimit`, which the runner records like any other
validator error (`validator_error`, naming the validator), and the turn's other findings
stand. What a signal cannot interrupt (a long call inside C code that never returns) is
the service's to catch: it kills a worker that stays silent while it owes results.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

from factledger.processors.errors import FactLedgerError
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn, Verdict
from factledger.processors.runner import ValidationRunner, outcome_of

DEFAULT_TURN_SECONDS = 10.0
"""Far above any turn measured (p99 ~1 ms; a 1 MB adversarial reply takes 0.65 s)."""


class TurnTimeLimit(FactLedgerError):
    """Judging a turn took longer than its time limit."""


class TimeLimitedRunner:
    """`runner` with at most `seconds` of wall time per turn. Install it on the main
    thread of the process (signal handlers run there); `validate` must be called there.
    Raises ValueError when that is not the case."""

    def __init__(self, runner: ValidationRunner, seconds: float = DEFAULT_TURN_SECONDS) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise ValueError("a time limit needs the main thread (SIGALRM)")
        if seconds <= 0:
            raise ValueError(f"the time limit must be positive, not {seconds}")
        self._runner = runner
        self._seconds = seconds
        self._armed = False
        signal.signal(signal.SIGALRM, self._expired)

    def validate(self, turn: Turn) -> Verdict:
        self._armed = True
        signal.setitimer(signal.ITIMER_REAL, self._seconds)
        try:
            return self._runner.validate(turn)
        except TurnTimeLimit:  # fired outside every validator's own error handling
            finding = Finding(
                kind=Kind.VALIDATOR_ERROR,
                message=f"judging the turn took longer than {self._seconds:g} s",
            )
            return Verdict(outcome_of((finding,)), (finding,), self._runner.labels)
        finally:
            self._armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)

    def _expired(self, signum: int, frame: FrameType | None) -> None:
        # A late signal (the turn finished just as the timer fired) is ignored.
        if self._armed:
            self._armed = False
            raise TurnTimeLimit(f"judging the turn took longer than {self._seconds:g} s")
