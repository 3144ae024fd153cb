"""A bounded cache of answers that expire: the same link asked twice is asked once.

Each entry has its own time to live (a settled answer lives longer than an unverifiable
one, which may change as soon as the source is back). At most `max_entries` are kept; the
oldest goes first. Safe to share between threads.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class AnswerCache(Generic[V]):
    def __init__(
        self, max_entries: int = 4096, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> V | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            expires, value = entry
            if expires <= self._clock():
                del self._entries[key]
                return None
            return value

    def put(self, key: str, value: V, ttl: float) -> None:
        if ttl <= 0 or self._max_entries <= 0:
            return
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (self._clock() + ttl, value)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
