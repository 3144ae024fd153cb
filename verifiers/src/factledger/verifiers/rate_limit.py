"""At most N requests per second to one host, shared by every check of a process.

A verifier asks `acquire(host, deadline)` before each request (each redirect hop too):
it waits for the host's next free slot when that slot comes before the deadline, and
answers False at once when it would not, so the caller can say `rate limited` instead of
overrunning its timeout. Slots are handed out in order of asking, spaced 1/N seconds
apart, so a burst of checks of one site is spread out rather than refused.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# Hosts not asked for this long are forgotten, so the table stays small.
_FORGET_AFTER_SECONDS = 60.0


class HostRateLimiter:
    def __init__(
        self,
        per_second: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_second <= 0:
            raise ValueError("per_second must be positive")
        self._interval = 1.0 / per_second
        self._clock = clock
        self._sleep = sleep
        self._next_slot: dict[str, float] = {}
        self._lock = threading.Lock()

    def acquire(self, host: str, deadline: float) -> bool:
        """Wait for a slot for `host`; False (without waiting) when none comes by `deadline`."""
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot.get(host, now))
            if slot > deadline:
                return False
            self._next_slot[host] = slot + self._interval
            if len(self._next_slot) > 1024:
                self._forget_idle(now)
        if slot > now:
            self._sleep(slot - now)
        return True

    def _forget_idle(self, now: float) -> None:
        idle = [
            host for host, slot in self._next_slot.items() if slot < now - _FORGET_AFTER_SECONDS
        ]
        for host in idle:
            del self._next_slot[host]
