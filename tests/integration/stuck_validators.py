"""A validator that never finishes on turns whose request says STUCK, for the judge
worker's time limits. A module of its own: the worker process imports it to unpickle it."""

from __future__ import annotations

import signal
import time
from collections.abc import Sequence

from factledger.processors.kinds import Kind
from factledger.processors.model import Finding, Turn

MARKER = "STUCK"


class StuckValidator:
    """Sleeps for an hour on a STUCK turn. With `like_c_code`, SIGALRM is blocked first,
    as a long call inside C code would hold off the turn time limit."""

    name = "stuck"
    version = "1"
    kinds: frozenset[Kind] = frozenset()

    def __init__(self, *, like_c_code: bool = False) -> None:
        self.like_c_code = like_c_code

    def __call__(self, turn: Turn) -> Sequence[Finding]:
        if MARKER in turn.user_message:
            if self.like_c_code:
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
            time.sleep(3600)
        return ()
