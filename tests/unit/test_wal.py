"""The write-ahead log: appended records survive, torn tails are ignored, old segments go."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from factledger.collector.ingest.wal import SEGMENT_SECONDS, WalUnavailable, WriteAheadLog


class FullDisk:
    """An `os.write` that runs out of space after `room` more bytes: the write that
    crosses the limit writes what fits (a torn record) and the next one raises ENOSPC,
    as a file system does. `room=None` means plenty of space."""

    def __init__(self) -> None:
        self.room: int | None = None

    def __call__(self, fd: int, data: memoryview) -> int:
        if self.room is None:
            return os.write(fd, data)
        if self.room == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = os.write(fd, data[: self.room])
        self.room -= written
        return written


def test_records_replay_in_order_after_reopen(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    seqs = [wal.append("application/json", "default", f"body-{i}".encode()) for i in range(5)]
    wal.close()
    reopened = WriteAheadLog(tmp_path)
    records = list(reopened.replay())
    assert [r.seq for r in records] == seqs == [1, 2, 3, 4, 5]
    assert [r.body for r in records] == [f"body-{i}".encode() for i in range(5)]
    assert records[0].content_type == "application/json" and records[0].tenant == "default"
    assert reopened.append("application/x-protobuf", "t2", b"\0\1binary\0") == 6


def test_torn_tail_is_not_replayed(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    wal.append("application/json", "default", b"complete")
    wal.append("application/json", "default", b"cut short by a crash")
    wal.close()
    (segment,) = tmp_path.glob("segment-*.wal")
    size = segment.stat().st_size
    os.truncate(segment, size - 5)
    assert [r.body for r in WriteAheadLog(tmp_path).replay()] == [b"complete"]


def test_corrupt_record_ends_the_segment(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    wal.append("application/json", "default", b"first")
    wal.close()
    (segment,) = tmp_path.glob("segment-*.wal")
    data = bytearray(segment.read_bytes())
    data[-1] ^= 0xFF  # the checksum no longer matches
    segment.write_bytes(bytes(data))
    assert list(WriteAheadLog(tmp_path).replay()) == []


def test_segments_roll_over_and_released_old_ones_are_deleted(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path, segment_bytes=200, retain_seconds=0)
    for i in range(10):
        wal.append("application/json", "default", b"x" * 100 + bytes([i]))
    assert len(list(tmp_path.glob("segment-*.wal"))) == 10
    wal.release(5)
    remaining = sorted(r.seq for r in wal.replay(include_released=True))
    assert remaining == [6, 7, 8, 9, 10]
    wal.release(10)
    assert [r.seq for r in wal.replay(include_released=True)] == [10]  # the open segment
    assert list(wal.replay()) == []
    wal.close()
    wal.close()


def test_unreleased_segments_are_kept(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path, segment_bytes=50, retain_seconds=0)
    for _ in range(4):
        wal.append("application/json", "default", b"y" * 60)
    wal.release(0)
    assert len(list(wal.replay())) == 4


def test_a_restart_replays_only_what_was_not_stored(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path)
    for i in range(4):
        wal.append("application/json", "default", f"r{i}".encode())
    wal.release(2)
    wal.close()  # a crash: records 3 and 4 were acknowledged but not stored
    reopened = WriteAheadLog(tmp_path)
    assert reopened.released == 2
    assert [r.body for r in reopened.replay()] == [b"r2", b"r3"]
    assert len(list(reopened.replay(include_released=True))) == 4


def test_a_record_torn_by_a_full_disk_hides_no_later_record(tmp_path: Path) -> None:
    disk = FullDisk()
    wal = WriteAheadLog(tmp_path, write=disk)
    wal.append("application/json", "default", b"before")
    disk.room = 10  # part of the next record's header fits, then the disk is full
    with pytest.raises(WalUnavailable) as raised:
        wal.append("application/json", "default", b"never acknowledged")
    assert raised.value.errno == errno.ENOSPC
    disk.room = None  # space freed
    after = wal.append("application/json", "default", b"after")
    wal.close()
    records = list(WriteAheadLog(tmp_path).replay())
    assert [r.body for r in records] == [b"before", b"after"]
    assert records[-1].seq == after


def test_a_failed_fsync_leaves_nothing_to_replay(tmp_path: Path) -> None:
    def failing_sync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    wal = WriteAheadLog(tmp_path, fsync=True, sync=failing_sync)
    with pytest.raises(WalUnavailable):
        wal.append("application/json", "default", b"written, not synced")
    wal.close()
    assert list(WriteAheadLog(tmp_path).replay()) == []


def test_a_segment_torn_by_a_crash_is_cut_before_appending_to_it(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path, segment_bytes=50)
    for i in range(3):
        wal.append("application/json", "default", b"z" * 40 + bytes([i]))  # a segment each
    wal.close()
    last = sorted(tmp_path.glob("segment-*.wal"))[-1]
    os.truncate(last, 7)  # a crash tore the first record of the newest segment
    reopened = WriteAheadLog(tmp_path, segment_bytes=50)
    seq = reopened.append("application/json", "default", b"after the crash")
    reopened.close()
    replayed = list(WriteAheadLog(tmp_path).replay())
    assert [r.body for r in replayed][-1] == b"after the crash"
    assert replayed[-1].seq == seq


def test_sequence_numbers_go_on_after_every_segment_was_deleted(tmp_path: Path) -> None:
    wal = WriteAheadLog(tmp_path, retain_seconds=0)
    for i in range(3):
        wal.append("application/json", "default", f"stored-{i}".encode())
    wal.release(3)
    wal.close()
    restarted = WriteAheadLog(tmp_path, retain_seconds=0)
    restarted.release(3)  # the stored records' segment is deleted
    restarted.close()
    assert list(tmp_path.glob("segment-*.wal")) == []
    again = WriteAheadLog(tmp_path)
    assert again.last_seq == 3
    seq = again.append("application/json", "default", b"acknowledged, not stored")
    again.close()  # a crash before it was stored
    assert seq == 4
    assert [r.body for r in WriteAheadLog(tmp_path).replay()] == [b"acknowledged, not stored"]


class Clock:
    """Wall seconds that move only when told."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def test_a_quiet_segment_rolls_over_by_age(tmp_path: Path) -> None:
    clock = Clock()
    wal = WriteAheadLog(tmp_path, segment_seconds=300, clock=clock)
    wal.append("application/json", "default", b"first")
    clock.now += 299
    wal.append("application/json", "default", b"same segment")
    assert len(list(tmp_path.glob("segment-*.wal"))) == 1
    clock.now += 1
    wal.append("application/json", "default", b"a new segment")
    assert len(list(tmp_path.glob("segment-*.wal"))) == 2


def test_raw_requests_leave_the_disk_on_time_without_more_traffic(tmp_path: Path) -> None:
    clock = Clock()
    wal = WriteAheadLog(tmp_path, segment_seconds=300, retain_seconds=60, clock=clock)
    seq = wal.append("application/json", "default", b"Authorization: Bearer sk-raw")
    clock.now += 1
    wal.release(seq)  # stored at once, then no request for days
    clock.now += 299
    wal.expire()  # the segment is 300 s old and wholly stored: closed ...
    clock.now += 60
    wal.expire()  # ... and deleted once last written `retain_seconds` ago
    assert list(tmp_path.glob("segment-*.wal")) == []
    assert list(wal.replay(include_released=True)) == []
    assert wal.append("application/json", "default", b"next") == seq + 1


@pytest.mark.parametrize("traffic", [False, True], ids=["idle", "under-steady-traffic"])
def test_by_default_a_raw_request_leaves_the_disk_seconds_after_it_is_stored(
    tmp_path: Path, traffic: bool
) -> None:
    clock = Clock()
    wal = WriteAheadLog(tmp_path, clock=clock)  # the defaults the service runs with
    secret = b"Authorization: Bearer sk-raw"
    seq = wal.append("application/json", "default", secret)
    wal.release(seq)
    for _ in range(int(SEGMENT_SECONDS) + 1):
        clock.now += 1
        if traffic:  # a request a second, each stored at once: the segment never idles
            wal.release(wal.append("application/json", "default", b"next"))
        else:
            wal.expire()
    on_disk = b"".join(path.read_bytes() for path in tmp_path.glob("segment-*.wal"))
    assert secret not in on_disk


def test_an_old_segment_is_kept_while_it_holds_what_is_not_stored(tmp_path: Path) -> None:
    clock = Clock()
    wal = WriteAheadLog(tmp_path, segment_seconds=300, retain_seconds=0, clock=clock)
    wal.append("application/json", "default", b"stored")
    seq = wal.append("application/json", "default", b"not stored yet")
    wal.release(seq - 1)
    clock.now += 3600
    wal.expire()
    assert [r.body for r in wal.replay()] == [b"not stored yet"]
    wal.release(seq)
    wal.expire()
    assert list(tmp_path.glob("segment-*.wal")) == []


def test_the_log_is_private_whatever_the_umask(tmp_path: Path) -> None:
    directory = tmp_path / "wal"
    directory.mkdir()
    directory.chmod(0o755)
    previous = os.umask(0o022)
    try:
        wal = WriteAheadLog(directory, segment_bytes=64)
        seq = wal.append("application/json", "default", b"x" * 100)
        wal.append("application/json", "default", b"y" * 100)  # rolls over: a new segment
        wal.release(seq)  # writes the released mark
        wal.close()
    finally:
        os.umask(previous)
    assert directory.stat().st_mode & 0o777 == 0o700
    files = {path.name: path.stat().st_mode & 0o777 for path in directory.iterdir()}
    assert "released" in files and any(name.endswith(".wal") for name in files)
    assert set(files.values()) == {0o600}, files
