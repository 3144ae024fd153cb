"""Recovery against the in-memory store: every trace owed a verdict is read back, oldest
first, a page at a time, with the verdicts already stored for it; a trace every span of
which a verdict holds is not; a late span brings its judged trace back once; a page waits
for room in the backlog."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from factledger.collector import rows
from factledger.collector.ingest.admission import READ_BACK_SPAN_BYTES, Backlog
from factledger.collector.ingest.assembly import ReadBack
from factledger.collector.ingest.memory import InMemoryStore
from factledger.collector.ingest.recovery import Recovery
from factledger.collector.metrics import Metrics
from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.spans import SpanRecord
from tests.unit.verdict_rows import verdict_row

TENANT = "default"
NOW_NS = 1_750_000_000 * 10**9


def span(trace: int, index: int, start_ns: int = NOW_NS) -> SpanRecord:
    return SpanRecord(
        trace_id=f"{trace:032x}",
        span_id=f"{trace:08x}{index:08x}",
        name=f"span {index}",
        start_time_unix_nano=start_ns,
        end_time_unix_nano=start_ns + 1_000,
    )


def store_spans(store: InMemoryStore, ingested_ms: int, *spans: SpanRecord) -> None:
    store.insert_spans([rows.span_row(s, ingested_ms) for s in spans])


def store_verdict(store: InMemoryStore, turn: str, version: int, *spans: SpanRecord) -> None:
    store.insert_turns([verdict_row(turn, version, datetime.now(UTC), spans)])


class Stage:
    def __init__(self, store: InMemoryStore, *, page_traces: int = 1_000) -> None:
        self.metrics = Metrics()
        self.backlog = Backlog(100, 1_000_000, self.metrics)
        self.stop = threading.Event()
        self.handed_on: list[ReadBack] = []
        self.recovery = Recovery(
            store,
            self.backlog,
            self.handed_on.append,
            self.metrics,
            self.stop,
            page_traces=page_traces,
        )

    def walk(self, worker: int | None = None) -> list[ReadBack]:
        """One requested walk, on a recovery thread, to its end."""
        self.recovery.request(worker)
        assert not self.recovery.idle
        thread = threading.Thread(target=self.recovery.run)
        thread.start()
        for _ in range(500):
            if self.recovery.idle:
                break
            self.stop.wait(0.01)
        self.stop.set()
        thread.join(5)
        return self.handed_on


def test_owed_traces_are_read_back_oldest_first_a_page_at_a_time() -> None:
    store = InMemoryStore()
    store_spans(store, 3_000, span(1, 0), span(1, 1))
    store_spans(store, 1_000, span(2, 0))
    store_spans(store, 2_000, span(3, 0))
    stage = Stage(store, page_traces=1)
    handed = stage.walk()
    assert [[s.trace_id for s in r.spans] for r in handed] == [
        [f"{2:032x}"],
        [f"{3:032x}"],
        [f"{1:032x}", f"{1:032x}"],
    ]
    assert all(r.workers is None and r.priors == () for r in handed)
    assert stage.backlog.unassembled == 4
    assert stage.backlog.bytes == 4 * READ_BACK_SPAN_BYTES
    assert stage.metrics.value("factledger_recovered_spans_total") == 4


def test_a_judged_trace_is_left_and_a_half_judged_one_comes_with_its_verdict() -> None:
    store = InMemoryStore()
    judged, half = (span(1, 0), span(1, 1)), (span(2, 0), span(2, 1))
    store_spans(store, 1_000, *judged, *half)
    store_verdict(store, "turn-1", 1, *judged)
    store_verdict(store, "turn-2", 1, half[0])
    store_verdict(store, "turn-2", 2, half[0])
    stage = Stage(store)
    (handed,) = stage.walk(worker=1)
    assert handed.spans == half
    assert handed.priors == (PriorVerdict(TENANT, "turn-2", 2, (half[0].span_id,)),)
    assert handed.workers == frozenset({1})


def test_a_page_waits_for_a_backlog_at_most_half_full() -> None:
    store = InMemoryStore()
    store_spans(store, 1_000, span(1, 0))
    stage = Stage(store)
    stage.backlog.replayed(51, 0)  # past half of 100
    stage.recovery.request()
    thread = threading.Thread(target=stage.recovery.run)
    thread.start()
    try:
        stage.stop.wait(0.2)
        assert stage.handed_on == [] and not stage.recovery.idle
        stage.backlog.withdraw(1, 0)
        for _ in range(500):
            if stage.recovery.idle:
                break
            stage.stop.wait(0.01)
        assert [r.spans for r in stage.handed_on] == [(span(1, 0),)]
    finally:
        stage.stop.set()
        thread.join(5)


def test_a_late_span_brings_its_judged_trace_back_once() -> None:
    store = InMemoryStore()
    earlier = span(1, 0, NOW_NS - 10**9)
    store_spans(store, 1_000, earlier)
    store_verdict(store, "turn-1", 1, earlier)
    stage = Stage(store)
    stage.recovery.started_ns = NOW_NS
    late = span(1, 1, NOW_NS - 10**9)
    stage.recovery.late_spans([late, span(2, 0, NOW_NS + 1)])  # the second began since
    (handed,) = stage.handed_on
    assert handed.spans == (earlier,)
    assert handed.priors == (PriorVerdict(TENANT, "turn-1", 1, (earlier.span_id,)),)
    stage.recovery.late_spans([span(1, 2, NOW_NS - 10**9)])
    assert len(stage.handed_on) == 1  # each trace is looked up once


def test_a_late_span_of_a_trace_never_judged_reads_nothing_back() -> None:
    store = InMemoryStore()
    stage = Stage(store)
    stage.recovery.started_ns = NOW_NS
    stage.recovery.late_spans([span(1, 0, NOW_NS - 10**9)])
    assert stage.handed_on == []
