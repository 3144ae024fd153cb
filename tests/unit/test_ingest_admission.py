"""Admission: the backlog is bounded in spans and in request bytes, a request alone is
always taken, one larger than the bound itself is refused for good, and every refusal is
counted by reason as a refusal, never as a drop."""

from __future__ import annotations

import pytest

from factledger.collector.ingest.admission import READ_BACK_SPAN_BYTES, Backlog
from factledger.collector.ingest.base import PipelineFull, RequestTooLarge
from factledger.collector.metrics import Metrics

REFUSED = "factledger_spans_refused_total"


def backlog(spans: int = 10, size: int = 1_000) -> tuple[Backlog, Metrics]:
    metrics = Metrics()
    return Backlog(spans, size, metrics), metrics


@pytest.mark.parametrize(
    ("held_spans", "held_bytes", "spans", "size", "taken"),
    [
        (0, 0, 10, 1_000, True),
        (0, 0, 8, 5_000, True),  # alone, past the byte bound: waits for nothing
        (5, 100, 5, 100, True),
        (5, 100, 6, 100, False),
        (5, 100, 1, 901, False),
        (9, 900, 1, 100, True),
    ],
    ids=[
        "the-whole-bound-into-an-empty-backlog",
        "a-request-alone-is-taken-past-the-byte-bound",
        "up-to-the-span-bound",
        "one-span-past-the-span-bound",
        "one-byte-past-the-byte-bound",
        "exactly-full",
    ],
)
def test_admit_takes_a_request_while_both_bounds_hold(
    held_spans: int, held_bytes: int, spans: int, size: int, taken: bool
) -> None:
    queue, metrics = backlog()
    if held_spans:
        queue.admit(held_spans, held_bytes)
    if taken:
        queue.admit(spans, size)
        assert (queue.pending, queue.bytes) == (held_spans + spans, held_bytes + size)
    else:
        with pytest.raises(PipelineFull):
            queue.admit(spans, size)
        assert (queue.pending, queue.bytes) == (held_spans, held_bytes)
        assert metrics.value(REFUSED, reason="queue_full") == spans
    assert metrics.value("factledger_spans_dropped_total", reason="queue_full") == 0


def test_a_request_of_more_spans_than_the_bound_is_refused_for_good() -> None:
    queue, metrics = backlog(spans=10)
    queue.check_size(10)
    with pytest.raises(RequestTooLarge) as refused:
        queue.check_size(11)
    assert (refused.value.spans, refused.value.bound) == (11, 10)
    assert "FACTLEDGER_QUEUE_SPANS" in str(refused.value)
    assert metrics.value(REFUSED, reason="too_many_spans") == 11
    assert queue.empty


@pytest.mark.parametrize(
    ("held_spans", "held_bytes", "request_bytes", "room"),
    [
        (0, 0, 10**9, True),
        (3, 500, 0, True),
        (3, 500, 500, True),
        (3, 500, 501, False),
        (3, 1_000, 0, False),  # size unknown counts as one byte
        (10, 10, 0, False),
    ],
    ids=[
        "empty-has-room-for-anything",
        "unknown-size",
        "exactly-the-bytes-left",
        "a-byte-too-many",
        "no-byte-left",
        "no-span-left",
    ],
)
def test_has_capacity_answers_before_the_body_is_read(
    held_spans: int, held_bytes: int, request_bytes: int, room: bool
) -> None:
    queue, _ = backlog()
    queue.replayed(held_spans, held_bytes)
    assert queue.has_capacity(request_bytes) is room


def test_spans_count_from_accepted_until_assembled_and_never_in_neither_state() -> None:
    queue, _ = backlog(spans=100, size=10_000)
    queue.admit(10, 4_000)
    queue.stored(10, 4_000)
    assert (queue.pending, queue.unassembled, queue.bytes) == (0, 10, 4_000)
    assert queue.spans == 10 and not queue.empty
    queue.assembled(4)  # bytes leave in proportion: turns are not requests
    assert (queue.unassembled, queue.bytes) == (6, 2_400)
    queue.assembled(6)
    assert queue.empty and queue.bytes == 0


def test_assembled_past_what_is_held_empties_the_bytes_and_zero_is_nothing() -> None:
    queue, _ = backlog(spans=100, size=10_000)
    queue.read_back(3)
    assert queue.bytes == 3 * READ_BACK_SPAN_BYTES
    queue.assembled(0)
    assert queue.unassembled == 3
    queue.assembled(5)
    assert queue.bytes == 0


def test_withdrawn_spans_leave_the_backlog_and_free_its_room() -> None:
    queue, _ = backlog(spans=10)
    queue.admit(10, 100)
    assert not queue.has_capacity()
    queue.withdraw(10, 100)
    assert queue.empty and queue.has_capacity()


@pytest.mark.parametrize(
    ("spans", "size", "half"),
    [(5, 500, True), (6, 0, False), (0, 501, False)],
    ids=["half-in-both", "past-half-the-spans", "past-half-the-bytes"],
)
def test_at_most_half_full_in_spans_and_in_bytes(spans: int, size: int, half: bool) -> None:
    queue, _ = backlog()
    queue.replayed(spans, size)
    assert queue.at_most_half_full is half
