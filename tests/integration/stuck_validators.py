"""A validator that never finishes on turns whose request says STUCK, for the judge
worker's time limits. A module of its own: the worker process imports it to unpickle it."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn

MARKER = "STUCK"


_EXPONENTIAL = re.compile(r"(a+)+$")


class StuckValidator:
    """Sleeps for an hour on a STUCK turn. With `like_c_code` it runs a regular expression
    that backtracks exponentially instead: C code that holds the GIL for longer than
    anyone waits, so neither the turn time limit nor the worker's other threads run."""

    name = "stuck"
    version = "1"
    kinds: frozenset[Kind] = frozenset()

    def __init__(self, *, like_c_code: bool = False) -> None:
        self.like_c_code = like_c_code

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if MARKER in turn.user_message:
            if self.like_c_code:
                _EXPONENTIAL.match("a" * 64 + "b")
            time.sleep(3600)
        return ()


SLOW_MARKER = "SLOW"


class SlowValidator:
    """Takes `seconds` on a turn whose request says SLOW: slow, never stuck."""

    name = "slow"
    version = "1"
    kinds: frozenset[Kind] = frozenset()

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if SLOW_MARKER in turn.user_message:
            time.sleep(self.seconds)
        return ()
