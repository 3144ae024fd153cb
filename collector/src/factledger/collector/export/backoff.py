"""How long a delivery lane waits before it sends a failed batch again.

Exponential from `initial_seconds`, doubling up to `max_seconds`; a target that said when
to come back (`TargetUnavailable.retry_after_seconds`, from a Retry-After header) is
waited for that long instead, still at most `max_seconds`, so that one odd header cannot
park a lane for a day.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    initial_seconds: float = 1.0
    max_seconds: float = 60.0

    def delay(self, failures: int, retry_after_seconds: float | None = None) -> float:
        """The wait after the `failures`-th failure in a row (1 for the first)."""
        if retry_after_seconds is not None and retry_after_seconds >= 0:
            return min(retry_after_seconds, self.max_seconds)
        return min(self.initial_seconds * 2.0 ** max(0, failures - 1), self.max_seconds)
