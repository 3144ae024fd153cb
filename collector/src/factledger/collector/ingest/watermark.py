"""The write-ahead log's stored-through mark: how far the log may be released.

Appending a request and queueing its spans are two steps, and the span writer stores
batches in the order they were queued, so a request may be queued after a later one was
queued and stored. The log may only drop records every one of which is stored: the mark
is the highest sequence number below which no record is still being appended, queued or
written, and it never moves back.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Protocol


class SequencedLog(Protocol):
    """The part of `collector.ingest.wal.WriteAheadLog` the mark watches."""

    @property
    def last_seq(self) -> int:
        """The highest sequence number appended so far."""
        ...

    def append(self, content_type: str, tenant: str, body: bytes) -> int:
        """Write one record durably; returns its sequence number (above `last_seq`)."""
        ...


class StoredMark:
    """Tracks which of `log`'s records are stored. Thread-safe: the receiver's threads
    append while the span writer marks batches stored."""

    def __init__(self, log: SequencedLog) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._appending: list[int] = []
        """For each append in progress, the log's last sequence number before it."""
        self._unstored: set[int] = set()
        """Sequence numbers appended (or replayed) whose spans are not stored yet."""
        self._stored_seq = 0

    def append(self, content_type: str, tenant: str, body: bytes) -> int:
        """Append to the log. From before the record has its sequence number until it is
        marked stored, the mark stays below it. Raises what the log's append raises."""
        with self._lock:
            floor = self._log.last_seq  # this record's number will be above it
            self._appending.append(floor)
        try:
            seq = self._log.append(content_type, tenant, body)
            with self._lock:
                self._unstored.add(seq)
            return seq
        finally:
            with self._lock:
                self._appending.remove(floor)

    def replayed(self, seq: int) -> None:
        """A record replayed from the log at start: not stored until marked so."""
        with self._lock:
            self._unstored.add(seq)

    def stored(self, seqs: Iterable[int]) -> int:
        """Mark the records `seqs` (at least one) stored; returns the highest sequence
        number up to which every record of the log is stored (what it may release)."""
        with self._lock:
            done = list(seqs)
            self._unstored.difference_update(done)
            self._stored_seq = max(self._stored_seq, *done)
            through = self._stored_seq
            if self._appending:
                through = min(through, min(self._appending))
            if self._unstored:
                through = min(through, min(self._unstored) - 1)
            return through
