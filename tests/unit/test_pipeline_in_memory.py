"""The whole pipeline over the in-memory store, judging in its own thread: a request is
stored, judged and released from the log; after a restart, spans stored that no verdict
holds are read back and judged; a store that cannot write is waited out while new
requests are refused. The stages as they are composed, without ClickHouse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.collector import otlp
from factledger.collector.ingest.base import StoreUnavailable
from factledger.collector.ingest.memory import InMemoryStore
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.store import StoreError
from factledger.processors.runner import default_runner
from tests.integration.otlp_turns import turn_request


@pytest.fixture
def wal(tmp_path: Path) -> Iterator[WriteAheadLog]:
    log = WriteAheadLog(tmp_path / "wal")
    yield log
    log.close()


def pipeline(store: InMemoryStore, wal: WriteAheadLog, metrics: Metrics) -> Pipeline:
    return Pipeline(
        store,
        wal,
        default_runner(),
        metrics,
        grace_seconds=0.05,
        max_wait_seconds=1,
        judge_in_worker=False,
    )


def verdicts(store: InMemoryStore) -> dict[str, str]:
    return {row["TraceId"]: row["Verdict"] for row in store.rows("turns")}


def test_a_request_is_stored_judged_and_released(wal: WriteAheadLog) -> None:
    store, metrics = InMemoryStore(), Metrics()
    body, _ = turn_request(1, hallucinate=True)
    spans = otlp.decode_request(body, otlp.JSON).spans
    running = pipeline(store, wal, metrics)
    running.start()
    try:
        seq = running.submit(otlp.JSON, "default", body, spans)
        assert running.force_flush(10, judge_open_turns=True)
    finally:
        running.shutdown()
    assert len(store.rows("spans")) == len(spans)
    assert verdicts(store) == {spans[0].trace_id: "reject"}
    assert store.rows("findings")
    assert wal.released == seq
    assert metrics.value("factledger_spans_stored_total") == len(spans)


def test_spans_no_verdict_holds_are_judged_after_a_restart(wal: WriteAheadLog) -> None:
    store = InMemoryStore()
    body, _ = turn_request(2, hallucinate=False)
    spans = otlp.decode_request(body, otlp.JSON).spans
    crashed = pipeline(store, wal, Metrics())  # never started: as if killed after the append
    crashed.submit(otlp.JSON, "default", body, spans)
    restarted = pipeline(store, wal, Metrics())
    restarted.start()
    try:
        assert restarted.force_flush(10, judge_open_turns=True)
    finally:
        restarted.shutdown()
    assert verdicts(store) == {spans[0].trace_id: "pass"}


def test_a_store_that_cannot_write_is_waited_out_and_requests_refused(
    wal: WriteAheadLog,
) -> None:
    store, metrics = InMemoryStore(), Metrics()
    full = StoreError("no space left on device", retryable=True)
    store.fail("spans", full, full)
    first, _ = turn_request(3, hallucinate=False)
    second, _ = turn_request(4, hallucinate=False)
    refused = otlp.decode_request(second, otlp.JSON).spans
    running = pipeline(store, wal, metrics)
    running.start()
    try:
        running.submit(otlp.JSON, "default", first, otlp.decode_request(first, otlp.JSON).spans)
        for _ in range(200):
            if not running.store_writable:
                break
            running.force_flush(0.01)
        assert not running.store_writable
        with pytest.raises(StoreUnavailable):
            running.submit(otlp.JSON, "default", second, refused)
        assert running.force_flush(10, judge_open_turns=True)
        assert running.store_writable
    finally:
        running.shutdown()
    assert metrics.value("factledger_store_errors_total", table="spans") == 2
    assert metrics.value("factledger_spans_refused_total", reason="store_unavailable") == len(
        refused
    )
    assert len(verdicts(store)) == 1
