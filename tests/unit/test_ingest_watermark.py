"""The log's stored-through mark: the log is released only up to the highest sequence
number below which every record is stored, never past a record still being appended or
queued, and the mark never moves back."""

from __future__ import annotations

import threading
from pathlib import Path

from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.ingest.watermark import StoredMark


class CountingLog:
    """A log that numbers records from 1. After `hold_next`, the next append takes its
    number and then waits for `release` before it returns (a slow fsync)."""

    def __init__(self) -> None:
        self.last_seq = 0
        self._lock = threading.Lock()
        self._holding = False
        self._released = threading.Event()
        self.numbered = threading.Event()

    def hold_next(self) -> None:
        self._holding = True

    def release(self) -> None:
        self._released.set()

    def append(self, content_type: str, tenant: str, body: bytes) -> int:
        with self._lock:
            self.last_seq += 1
            seq, hold, self._holding = self.last_seq, self._holding, False
        if hold:
            self.numbered.set()
            self._released.wait(5)
        return seq


def appended(mark: StoredMark, count: int) -> list[int]:
    return [mark.append("application/json", "default", b"{}") for _ in range(count)]


def test_records_stored_in_order_release_up_to_each() -> None:
    mark = StoredMark(CountingLog())
    one, two = appended(mark, 2)
    assert mark.stored([one]) == 1
    assert mark.stored([two]) == 2


def test_a_later_record_stored_first_waits_for_the_earlier_one() -> None:
    mark = StoredMark(CountingLog())
    one, two, three = appended(mark, 3)
    assert mark.stored([two, three]) == 0
    assert mark.stored([one]) == 3


def test_a_record_still_being_appended_holds_the_mark_below_it() -> None:
    """Record 2 has its number but its append has not returned: record 3, appended and
    stored meanwhile, may not release it."""
    log = CountingLog()
    mark = StoredMark(log)
    (one,) = appended(mark, 1)
    assert mark.stored([one]) == 1
    log.hold_next()
    slow = threading.Thread(target=appended, args=(mark, 1))
    slow.start()
    try:
        assert log.numbered.wait(5)
        (three,) = appended(mark, 1)
        assert three == 3
        assert mark.stored([three]) == 1
    finally:
        log.release()
        slow.join(5)
    assert mark.stored([2]) == 3


def test_the_mark_never_moves_back() -> None:
    mark = StoredMark(CountingLog())
    one, two = appended(mark, 2)
    assert mark.stored([one, two]) == 2
    assert mark.stored([one]) == 2  # stored again (a replay): the mark stays


def test_replayed_records_hold_the_mark_until_stored(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path / "wal")
    try:
        for _ in range(3):
            wal.append("application/json", "default", b"{}")
        mark = StoredMark(wal)
        seqs = [record.seq for record in wal.replay()]
        for seq in seqs:
            mark.replayed(seq)
        assert mark.stored([seqs[1]]) == seqs[0] - 1
        assert mark.stored([seqs[0], seqs[2]]) == seqs[2]
        new = mark.append("application/json", "default", b"{}")
        assert new == seqs[2] + 1
        assert mark.stored([new]) == new
    finally:
        wal.close()
