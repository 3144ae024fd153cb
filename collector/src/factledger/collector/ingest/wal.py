"""The write-ahead log: acknowledged means durable.

The receiver appends each accepted request here before it answers 200. An append is one
`os.write` to a file opened for appending, so the bytes are in the kernel's page cache
when it returns and survive `kill -9` of the service (not a power cut, unless `fsync`
is on). After a restart every record still on disk is replayed through the pipeline;
storage and verdicts are idempotent (spans collapse by id, a turn's id is derived from
its content), so replaying a record twice changes nothing.

Record layout, little-endian: magic (2 bytes) | length of the rest (4) | crc32 of the
payload (4) | sequence number (8) | payload. The payload is
`content_type NUL tenant NUL body` with the decompressed request body. A record cut
short by a crash fails its length or checksum and ends the replay of that segment; it
was never acknowledged.

An append that fails part-way (a full disk, an I/O error, a failed `fsync`) cuts the
segment back to where the record began and raises `WalUnavailable`: the record was not
acknowledged, and no torn bytes stay in front of the records appended after it (they
would end the replay of the segment before them). Should even that cut fail, the
segment is closed and the next append starts a new one. A segment opened for appending
(a new one, or one left by a crash) loses any torn tail first; one without a single
whole record (torn bytes of a request never acknowledged) is deleted at open.

Segments roll over at `segment_bytes` or `segment_seconds` after they were opened,
whichever comes first. `release(seq)` marks records up to `seq` as stored and persists
the mark (a small file, replaced atomically), so a restart replays only what was
acknowledged but not yet stored; whole segments below the mark and last written more
than `retain_seconds` ago are deleted. `expire()` does that deleting (and closes an open
segment that is old enough and wholly stored) without a release, for idle times: a raw
request then stays on disk at most `segment_seconds + retain_seconds` after it arrived,
or `retain_seconds` after it was stored if storing took longer.

Nothing reads a released record again (a restart replays only what is above the mark;
a turn finished after a restart is built from stored, redacted spans), so the defaults
keep raw requests, secrets included, only briefly: segments of `SEGMENT_SECONDS` and no
retention, about ten seconds after arrival at any traffic. Sequence numbers never go
back, across restarts too: they continue from the newest record on disk or the mark,
whichever is higher.
"""

from __future__ import annotations

import os
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from factledger.collector.private_dirs import FILE_MODE, private_directory
from factledger.collector.refusals import WalUnavailable as WalUnavailable

_MAGIC = b"FL"
_HEADER = struct.Struct("<2sIIQ")
_SEGMENT_GLOB = "segment-*.wal"
_RELEASED_FILE = "released"

SEGMENT_SECONDS = 10.0
"""A segment is closed this long after it was opened even when far from full. Requests
are kept raw (secrets included) until their segment is deleted, which is once the
segment is closed and all of it is stored; at low traffic a 64 MiB segment would
otherwise stay open, and on disk, for days. Ten seconds is a new file at most every ten
seconds: nothing next to the cost of the requests it holds."""


@dataclass(frozen=True)
class WalRecord:
    seq: int
    content_type: str
    tenant: str
    body: bytes
    written_before: float = 0.0
    """Replayed: when its segment was last written (wall seconds), so the record was
    received no later; 0 when not known."""


class WriteAheadLog:
    """Thread-safe appender and replayer of segment files in one directory.

    `write` and `sync` default to `os.write` and `os.fsync`; tests pass ones that fail
    to stand in for a full disk. `clock` (wall seconds) dates segments."""

    def __init__(
        self,
        directory: Path,
        *,
        segment_bytes: int = 64 * 1024 * 1024,
        retain_seconds: float = 0.0,
        segment_seconds: float = SEGMENT_SECONDS,
        fsync: bool = False,
        write: Callable[[int, memoryview], int] = os.write,
        sync: Callable[[int], None] = os.fsync,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = directory
        self._segment_bytes = segment_bytes
        self._retain_seconds = retain_seconds
        self._segment_seconds = segment_seconds
        self._clock = clock
        self._fsync = fsync
        self._write = write
        self._sync = sync
        self._lock = threading.Lock()
        private_directory(directory)  # raw requests: readable by the service's user only
        # Last sequence number per segment, read once at start and kept current after.
        self._segment_last: dict[Path, int] = {}
        self._written_at: dict[Path, float] = {}  # last write per segment, by `clock`
        for path in self._segments():
            last = _last_seq_of(path)
            if last is not None:
                self._segment_last[path] = last
                self._written_at[path] = path.stat().st_mtime
            else:  # empty, or torn bytes of a request that was never acknowledged
                path.unlink()
        self._released = _read_mark(directory / _RELEASED_FILE)
        # Sequence numbers go on from the highest one ever handed out: the newest record
        # on disk, or the release mark when every segment holding it is deleted (a number
        # at or below the mark would be taken as stored and never replayed).
        self._seq = max([self._released, *self._segment_last.values()])
        self._fd: int | None = None
        self._path: Path | None = None
        self._segment_size = 0
        self._opened_at = 0.0
        self._closed = False

    @property
    def last_seq(self) -> int:
        return self._seq

    def append(self, content_type: str, tenant: str, body: bytes) -> int:
        """Write one record and return its sequence number; durable once this returns."""
        payload = b"\0".join((content_type.encode(), tenant.encode(), body))
        with self._lock:
            if self._closed:
                raise RuntimeError("write-ahead log is closed")
            self._seq += 1
            record = _HEADER.pack(_MAGIC, len(payload) + 12, zlib.crc32(payload), self._seq)
            record += payload
            try:
                fd = self._segment_for(len(record))
                view = memoryview(record)
                while view:
                    written = self._write(fd, view)
                    view = view[written:]
                if self._fsync:
                    self._sync(fd)
            except OSError as exc:
                self._cut_back()
                raise WalUnavailable(exc.errno, f"write-ahead log append failed: {exc}") from exc
            self._segment_size += len(record)
            assert self._path is not None
            self._segment_last[self._path] = self._seq
            self._written_at[self._path] = self._clock()
            return self._seq

    @property
    def released(self) -> int:
        """The highest sequence number known to be stored."""
        return self._released

    def replay(self, *, include_released: bool = False) -> Iterator[WalRecord]:
        """Intact records on disk not yet released, oldest first (call before appending
        new ones); with `include_released`, every record still on disk."""
        for path in self._segments():
            written = path.stat().st_mtime
            for record in _read_segment(path):
                if include_released or record.seq > self._released:
                    yield replace(record, written_before=written)

    def release(self, seq: int) -> None:
        """Records up to `seq` are stored; drop whole segments that are old enough."""
        with self._lock:
            if seq > self._released:
                self._released = seq
                _write_mark(self.directory / _RELEASED_FILE, seq)
            self._expire()

    def expire(self) -> None:
        """Close the open segment once it is `segment_seconds` old and wholly stored, and
        delete stored segments last written `retain_seconds` ago. Cheap when nothing is
        due (no system call): call it often when no release comes (the pipeline does
        while idle), so raw requests leave the disk on time at any traffic."""
        with self._lock:
            self._expire()

    def _expire(self) -> None:
        now = self._clock()
        open_path = self._path
        if (
            self._fd is not None
            and open_path is not None
            and now - self._opened_at >= self._segment_seconds
            and self._segment_last.get(open_path, 0) <= self._released
        ):
            os.close(self._fd)
            self._fd = None
            self._path = None
            if open_path not in self._segment_last:  # every append to it failed
                open_path.unlink(missing_ok=True)
        cutoff = now - self._retain_seconds
        for path, last in list(self._segment_last.items()):
            if path == self._path or last > self._released:
                continue  # never the segment being written, nor one not yet stored
            if self._written_at.get(path, 0.0) <= cutoff:
                path.unlink(missing_ok=True)
                del self._segment_last[path]
                self._written_at.pop(path, None)

    def close(self) -> None:
        """Close the open segment; safe to call twice."""
        with self._lock:
            self._closed = True
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _cut_back(self) -> None:
        """Drop what a failed append left after the last whole record of the open
        segment; if that fails too, give the segment up so nothing follows the tear."""
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, self._segment_size)
            if self._fsync:
                self._sync(self._fd)
        except OSError:
            os.close(self._fd)
            self._fd = None

    def _segment_for(self, size: int) -> int:
        now = self._clock()
        if (
            self._fd is None
            or self._segment_size + size > self._segment_bytes
            or now - self._opened_at >= self._segment_seconds
        ):
            if self._fd is not None:
                os.close(self._fd)
            path = self.directory / f"segment-{self._seq:020d}.wal"
            self._fd = None
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, FILE_MODE)
            try:
                intact = _intact_length(path)
                if os.fstat(fd).st_size > intact:
                    os.ftruncate(fd, intact)  # a torn tail left by a crash or a full disk
            except OSError:
                os.close(fd)
                raise
            self._fd = fd
            self._path = path
            self._segment_size = intact
            self._opened_at = now
        return self._fd

    def _segments(self) -> list[Path]:
        return sorted(self.directory.glob(_SEGMENT_GLOB))


def _read_segment(path: Path) -> Iterator[WalRecord]:
    for record, _ in _records_with_ends(path.read_bytes()):
        yield record


def _records_with_ends(data: bytes) -> Iterator[tuple[WalRecord, int]]:
    offset = 0
    while offset + _HEADER.size <= len(data):
        magic, length, crc, seq = _HEADER.unpack_from(data, offset)
        end = offset + 6 + length
        payload = data[offset + _HEADER.size : end]
        if magic != _MAGIC or end > len(data) or zlib.crc32(payload) != crc:
            return  # a torn tail: written by a crash, never acknowledged
        content_type, tenant, body = payload.split(b"\0", 2)
        yield WalRecord(seq, content_type.decode(), tenant.decode(), body), end
        offset = end


def _intact_length(path: Path) -> int:
    """Bytes of `path` up to the end of its last whole record (0 for a missing file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return max((end for _, end in _records_with_ends(data)), default=0)


def _last_seq_of(path: Path) -> int | None:
    last = None
    for record in _read_segment(path):
        last = record.seq
    return last


def _read_mark(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (OSError, ValueError):
        return 0  # no mark (or a torn one): replay everything on disk, which is safe


def _write_mark(path: Path, seq: int) -> None:
    temporary = path.with_suffix(".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    try:
        os.write(fd, str(seq).encode())
    finally:
        os.close(fd)
    os.replace(temporary, path)
