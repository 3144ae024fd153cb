"""`factledger up` keeps its dashboard alive: a dashboard process that exits is reported
(with where its log is) and started again, at most MAX_RESTARTS times within
RESTART_WINDOW_SECONDS; past that `up` gives up and exits non-zero rather than serve on
with no dashboard and no word about it.

`DashboardWatch.check` is called from `up`'s main loop, on its thread only; it never
blocks longer than the restarted dashboard takes to answer its health check.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

MAX_RESTARTS = 3
RESTART_WINDOW_SECONDS = 600.0
"""Restarts count within this window: a dashboard that dies once a day is restarted every
time, one that dies at once on every start is given up on after MAX_RESTARTS tries."""


@dataclass
class RestartBudget:
    """At most `limit` restarts within any `window` seconds of `clock`."""

    limit: int = MAX_RESTARTS
    window: float = RESTART_WINDOW_SECONDS
    clock: Callable[[], float] = time.monotonic
    _restarts: deque[float] = field(default_factory=deque)

    def take(self) -> bool:
        """Whether one more restart is allowed now (and count it when it is)."""
        now = self.clock()
        while self._restarts and now - self._restarts[0] >= self.window:
            self._restarts.popleft()
        if len(self._restarts) >= self.limit:
            return False
        self._restarts.append(now)
        return True

    @property
    def used(self) -> int:
        return len(self._restarts)


class DashboardWatch:
    """The dashboard process of `up`, started again by `start` when it exits.

    `start` returns a new running dashboard process; `healthy` waits for one to answer
    (False when it does not); `log_path` is named in every message, written to `out`.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        start: Callable[[], subprocess.Popen[bytes]],
        log_path: Path,
        *,
        healthy: Callable[[subprocess.Popen[bytes]], bool] = lambda _: True,
        budget: RestartBudget | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.process = process
        self._start = start
        self._healthy = healthy
        self._log_path = log_path
        self._budget = budget or RestartBudget()
        self._out = out

    def check(self) -> bool:
        """True while a dashboard runs (restarting one that exited, within the budget);
        False once it exited and no restart is left: the caller stops."""
        code = self.process.poll()
        if code is None:
            return True
        if not self._budget.take():
            self._say(
                f"factledger: the dashboard exited again (code {code}) after "
                f"{self._budget.limit} restarts; stopping. Its log: {self._log_path}"
            )
            return False
        self._say(
            f"factledger: the dashboard exited (code {code}); its log: {self._log_path}. "
            f"Restarting it ({self._budget.used} of {self._budget.limit})."
        )
        self.process = self._start()
        if self._healthy(self.process):
            self._say("factledger: the dashboard answers again.")
        return True

    def _say(self, text: str) -> None:
        out = self._out or sys.stderr
        print(text, file=out, flush=True)
