"""The pipeline's bounds: accepted-but-unstored spans are capped, and past the cap the
receiver is told to retry later; a restart replays the write-ahead log. Turns are judged
alike in a worker process (the default) and in the pipeline's own thread."""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from clickhouse_connect.driver.client import Client

from benchmarks.ingest import PROTOBUF as PROTOBUF_TURNS
from benchmarks.ingest import TurnFactory
from factledger.collector import otlp
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import VERDICT_DELAY, Pipeline, PipelineFull, RequestTooLarge
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from factledger.processors.runner import default_runner
from tests.integration.app_server import served_app
from tests.integration.otlp_turns import turn_request
from tests.integration.store_clients import DiskFullClient
from tests.integration.worker_process import wait_until

MODES = pytest.mark.parametrize("in_worker", [True, False], ids=["worker-process", "thread"])


def _pipeline(
    store: Store,
    wal_dir: Path,
    metrics: Metrics,
    max_pending: int,
    in_worker: bool = True,
    *,
    max_bytes: int = 64 * 1024 * 1024,
) -> Pipeline:
    return Pipeline(
        store,
        WriteAheadLog(wal_dir),
        default_runner(),
        metrics,
        grace_seconds=0.1,
        max_wait_seconds=2,
        max_pending_spans=max_pending,
        max_pending_bytes=max_bytes,
        judge_in_worker=in_worker,
    )


def rows_dropped(scrape: str) -> float:
    """The rows the store refused for good, summed over the scrape's series (each table
    shows 0 from start-up)."""
    values = re.findall(r"^factledger_rows_dropped_total\{.*\} (\S+)$", scrape, re.M)
    assert values, "the family is on the scrape"
    return sum(float(v) for v in values)


def test_pending_spans_are_bounded_and_refusals_counted_apart_from_drops(
    store: Store, tmp_path: Path
) -> None:
    """A full backlog refuses with a retryable error: the client sends the spans again, so
    they are counted as refused, not as dropped."""
    metrics = Metrics()
    pipeline = _pipeline(store, tmp_path / "wal", metrics, max_pending=6)  # workers not started
    body, _ = turn_request(1, hallucinate=False)
    spans = otlp.decode_request(body, otlp.JSON).spans
    pipeline.submit(otlp.JSON, "default", body, spans)
    assert not pipeline.has_capacity() or len(spans) < 6
    with pytest.raises(PipelineFull):
        pipeline.submit(otlp.JSON, "default", body, spans)
    assert metrics.value("factledger_spans_refused_total", reason="queue_full") == len(spans)
    assert metrics.value("factledger_spans_dropped_total", reason="queue_full") == 0


@MODES
def test_pending_spans_are_bounded_by_their_bytes_too(
    store: Store, tmp_path: Path, in_worker: bool
) -> None:
    """A few spans may carry megabytes: the backlog is bounded by the bytes behind it as
    well as by count. A request alone is always taken (the body limit bounds it), and the
    bytes leave the backlog with the spans, once they are stored and judged."""
    metrics = Metrics()
    body, _ = turn_request(11, hallucinate=False, result="x" * 40_000)
    spans = otlp.decode_request(body, otlp.JSON).spans
    pipeline = _pipeline(
        store, tmp_path / "wal", metrics, 1000, in_worker, max_bytes=len(body) + 1000
    )
    pipeline.submit(otlp.JSON, "default", body, spans)  # nearly the whole bound, alone
    small, _ = turn_request(12, hallucinate=False)
    with pytest.raises(PipelineFull):
        pipeline.submit(otlp.JSON, "default", small, otlp.decode_request(small, otlp.JSON).spans)
    assert metrics.value("factledger_spans_refused_total", reason="queue_full") > 0
    assert metrics.gauge_value("factledger_queue_bytes") == len(body)

    pipeline.start()
    try:
        assert pipeline.force_flush(30, judge_open_turns=True)
        assert metrics.gauge_value("factledger_queue_bytes") == 0
        assert pipeline.has_capacity()
        pipeline.submit(otlp.JSON, "default", small, otlp.decode_request(small, otlp.JSON).spans)
        assert pipeline.force_flush(30, judge_open_turns=True)
    finally:
        pipeline.shutdown()
    assert store.list_turns("default")[1] == 2


def test_a_request_over_the_bound_is_refused_even_on_an_empty_backlog(
    store: Store, tmp_path: Path
) -> None:
    metrics = Metrics()
    body, _ = turn_request(1, hallucinate=False)
    spans = otlp.decode_request(body, otlp.JSON).spans
    pipeline = _pipeline(store, tmp_path / "wal", metrics, max_pending=len(spans) - 1)
    with pytest.raises(RequestTooLarge) as refused:
        pipeline.submit(otlp.JSON, "default", body, spans)
    assert refused.value.spans == len(spans) and refused.value.bound == len(spans) - 1
    assert pipeline.has_capacity()  # nothing was taken into the backlog
    assert metrics.value("factledger_spans_refused_total", reason="too_many_spans") == len(spans)
    assert metrics.value("factledger_spans_dropped_total", reason="too_many_spans") == 0


@MODES
def test_restart_replays_what_was_acknowledged(
    store: Store, tmp_path: Path, in_worker: bool
) -> None:
    body, _ = turn_request(2, hallucinate=True)
    spans = otlp.decode_request(body, otlp.JSON).spans
    crashed = _pipeline(store, tmp_path / "wal", Metrics(), max_pending=1000)
    crashed.submit(otlp.JSON, "default", body, spans)  # acknowledged, never processed

    restarted = _pipeline(store, tmp_path / "wal", Metrics(), 1000, in_worker)
    restarted.start()
    assert restarted.force_flush(30, judge_open_turns=True)
    restarted.shutdown()
    turns, total = store.list_turns("default")
    assert total == 1 and turns[0]["verdict"] == "reject"
    assert store.span_count("default") == len(spans)


def test_a_row_the_store_refuses_is_dropped_and_its_neighbours_stored(
    store: Store, tmp_path: Path
) -> None:
    metrics = Metrics()
    body, _ = turn_request(3, hallucinate=False)
    good = list(otlp.decode_request(body, otlp.JSON).spans)
    poison = dataclasses.replace(
        good[0], span_id="ffffffffffff0001", start_time_unix_nano=2**63 + 1
    )
    pipeline = _pipeline(store, tmp_path / "wal", metrics, max_pending=1000)
    pipeline.start()
    pipeline.submit(otlp.JSON, "default", body, [poison, *good])
    assert pipeline.force_flush(60)
    pipeline.shutdown()
    assert store.span_count("default") == len(good)
    assert metrics.value("factledger_rows_dropped_total", table="spans", reason="unstorable") == 1


@MODES
@pytest.mark.parametrize("tenant", ["default", "acme"], ids=["default-tenant", "named-tenant"])
def test_turns_stored_but_not_judged_are_finished_after_a_restart(
    store: Store, tmp_path: Path, tenant: str, in_worker: bool
) -> None:
    body, _ = turn_request(4, hallucinate=True)
    spans = otlp.decode_request(body, otlp.JSON, tenant=tenant).spans
    first = Pipeline(
        store,
        WriteAheadLog(tmp_path / "wal"),
        default_runner(),
        Metrics(),
        grace_seconds=3600,
        max_wait_seconds=7200,  # it would judge only much later
        judge_in_worker=in_worker,
    )
    first.start()
    first.submit(otlp.JSON, tenant, body, spans)
    assert first.force_flush(30)  # stored and released from the log, not judged
    assert store.span_count(tenant) == len(spans)
    assert store.list_turns(tenant) == ([], 0)

    second = _pipeline(store, tmp_path / "wal", Metrics(), 1000, in_worker)
    assert list(WriteAheadLog(tmp_path / "wal").replay()) == []  # nothing left to replay
    second.start()
    assert second.force_flush(30, judge_open_turns=True)
    second.shutdown()
    turns, total = store.list_turns(tenant)
    assert total == 1 and turns[0]["verdict"] == "reject"


def _judged(store: Store) -> dict[str, tuple[object, ...]]:
    """Every stored turn by trace: verdict, kinds, findings (kind, token, span, message,
    ...) and tool calls."""
    turns, _ = store.list_turns("default", limit=1000)
    judged: dict[str, tuple[object, ...]] = {}
    for summary in turns:
        detail = store.get_turn("default", summary["turn_id"])
        assert detail is not None
        judged[summary["trace_id"]] = (
            summary["verdict"],
            sorted(summary["kinds"]),
            detail["findings"],
            detail["tool_calls"],
        )
    return judged


def test_a_worker_process_judges_as_the_thread_does(
    store: Store, store_config: StoreConfig, tmp_path: Path
) -> None:
    requests = [turn_request(index, hallucinate=index % 3 == 0)[0] for index in range(1, 31)]
    other = Store.open(dataclasses.replace(store_config, database=f"{store_config.database}_t"))
    try:
        results = []
        for target, worker in ((store, True), (other, False)):
            pipeline = _pipeline(target, tmp_path / f"wal{worker}", Metrics(), 10_000, worker)
            pipeline.start()
            for body in requests:
                pipeline.submit(
                    otlp.JSON, "default", body, otlp.decode_request(body, otlp.JSON).spans
                )
            assert pipeline.force_flush(60, judge_open_turns=True)
            pipeline.shutdown()
            results.append(_judged(target))
    finally:
        other.close()
    by_worker, by_thread = results
    assert len(by_worker) == len(requests)
    assert by_worker == by_thread
    assert {judged[0] for judged in by_worker.values()} == {"pass", "reject"}


@MODES
def test_each_first_verdict_counts_its_delay_from_the_turn_end(
    store: Store, tmp_path: Path, in_worker: bool
) -> None:
    metrics = Metrics()
    pipeline = _pipeline(store, tmp_path / "wal", metrics, 10_000, in_worker)
    pipeline.start()
    try:
        body = TurnFactory(PROTOBUF_TURNS, b"delays00", first=1).body(5)  # turns ending now
        spans = otlp.decode_request(body, otlp.PROTOBUF).spans
        pipeline.submit(otlp.PROTOBUF, "default", body, spans)
        wait_until(
            lambda: metrics.observations(VERDICT_DELAY)[-1][1] == 5, 60, "five verdict delays"
        )
    finally:
        pipeline.shutdown()
    buckets = dict(metrics.observations(VERDICT_DELAY))
    text = metrics.render()
    assert f"{VERDICT_DELAY}_count 5" in text
    total = float(text.split(f"{VERDICT_DELAY}_sum ")[1].split()[0])
    assert total >= 5 * 0.1  # none before its grace period ran out
    assert buckets[60] == 5  # and none waited a minute


def test_a_full_disk_holds_acknowledged_spans_and_refuses_new_ones_until_it_clears(
    store: Store, tmp_path: Path
) -> None:
    client = DiskFullClient(store._live())
    full_disk = Store(cast(Client, client), store.config)
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    first, _ = turn_request(5, hallucinate=False)
    second, _ = turn_request(6, hallucinate=False)
    first_spans = len(otlp.decode_request(first, otlp.JSON).spans)
    second_spans = len(otlp.decode_request(second, otlp.JSON).spans)
    headers = {"Content-Type": otlp.JSON}
    client.full.set()
    with served_app(settings, full_disk) as url:
        assert httpx.post(f"{url}/v1/traces", headers=headers, content=first).status_code == 200
        assert client.refused.wait(30)
        refused = httpx.post(f"{url}/v1/traces", headers=headers, content=second)
        assert refused.status_code == 503 and refused.headers["Retry-After"]
        assert store.span_count("default") == 0
        assert [r.seq for r in WriteAheadLog(settings.wal_dir).replay()] == [1]

        client.full.clear()
        wait_until(lambda: store.span_count("default") == first_spans, 30, "the held spans")
        wait_until(
            lambda: (
                httpx.post(f"{url}/v1/traces", headers=headers, content=second).status_code == 200
            ),
            30,
            "the service to take requests again",
        )
        total = first_spans + second_spans
        wait_until(lambda: store.span_count("default") == total, 30, "every span")
        metrics = httpx.get(f"{url}/metrics").text
    assert rows_dropped(metrics) == 0


def test_an_unstorable_row_is_logged_once_with_its_reason(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    body = TurnFactory(PROTOBUF_TURNS, b"unstore0", first=1).body(20)
    good = list(otlp.decode_request(body, otlp.PROTOBUF).spans)
    poison = dataclasses.replace(
        good[0], span_id="ffffffffffff0002", start_time_unix_nano=2**63 + 1
    )
    metrics = Metrics()
    pipeline = _pipeline(store, tmp_path / "wal", metrics, max_pending=10_000, in_worker=False)
    pipeline.start()
    with caplog.at_level(logging.WARNING):
        pipeline.submit(otlp.PROTOBUF, "default", body, [*good[:32], poison, *good[32:]])
        assert pipeline.force_flush(60)
    pipeline.shutdown()
    assert store.span_count("default") == len(good)
    assert metrics.value("factledger_rows_dropped_total", table="spans", reason="unstorable") == 1
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.exc_info for r in logged] == [None] * len(logged)  # no traceback
    assert len(logged) == 1 and "Timestamp" in logged[0].getMessage()


class _PausingLog(WriteAheadLog):
    """Stops the first append once its record is written, until `resume` is set: the
    moment between a request's append and its queueing."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory)
        self.appended = threading.Event()
        self.resume = threading.Event()

    def append(self, content_type: str, tenant: str, body: bytes) -> int:
        seq = super().append(content_type, tenant, body)
        if not self.appended.is_set():
            self.appended.set()
            assert self.resume.wait(30)
        return seq


class _GatedClient:
    """The real client; the second span insert waits for `go` (announced by `waiting`)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.first_done = threading.Event()
        self.waiting = threading.Event()
        self.go = threading.Event()

    def insert(self, table: str, *args: Any, **kwargs: Any) -> Any:
        if table == "spans" and self.first_done.is_set():
            self.waiting.set()
            assert self.go.wait(30)
        result = self._client.insert(table, *args, **kwargs)
        if table == "spans":
            self.first_done.set()
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def test_a_request_queued_after_a_later_one_stays_in_the_log_until_stored(
    store: Store, tmp_path: Path
) -> None:
    client = _GatedClient(store._live())
    wal = _PausingLog(tmp_path / "wal")
    pipeline = Pipeline(
        Store(cast(Client, client), store.config),
        wal,
        default_runner(),
        Metrics(),
        grace_seconds=0.1,
        judge_in_worker=False,
    )
    first, _ = turn_request(7, hallucinate=False)
    second, _ = turn_request(8, hallucinate=False)
    first_spans = otlp.decode_request(first, otlp.JSON).spans
    second_spans = otlp.decode_request(second, otlp.JSON).spans
    pipeline.start()
    try:
        earlier = threading.Thread(
            target=pipeline.submit, args=(otlp.JSON, "default", first, first_spans)
        )
        earlier.start()
        assert wal.appended.wait(30)  # the first request is in the log (seq 1), not queued
        assert pipeline.submit(otlp.JSON, "default", second, second_spans) == 2
        assert client.first_done.wait(30)  # the second request is stored
        wal.resume.set()
        earlier.join(30)  # the first request is acknowledged now
        assert client.waiting.wait(30)  # and being stored: the second one's release is done
        # A crash here must replay the first request: it is acknowledged, not stored.
        assert 1 in [record.seq for record in WriteAheadLog(tmp_path / "wal").replay()]
        client.go.set()
        assert pipeline.force_flush(30)
    finally:
        client.go.set()
        pipeline.shutdown()
    assert wal.released == 2
    assert store.span_count("default") == len(first_spans) + len(second_spans)


def test_text_the_store_cannot_hold_is_repaired_and_times_past_it_refused_before_the_ack(
    store: Store, tmp_path: Path
) -> None:
    now = time.time_ns()

    def span(span_id: str, **extra: object) -> dict[str, object]:
        return {
            "traceId": "5b8efff798038103d269b633813fc60d",
            "spanId": span_id,
            "name": "chat gpt-4o \ud800",  # a lone surrogate, sent as the escape \ud800
            "kind": 3,
            "startTimeUnixNano": str(now),
            "endTimeUnixNano": str(now + 1_000_000_000),
            "attributes": [{"key": "note\udfff", "value": {"stringValue": "a\ud800b"}}],
            **extra,
        }

    late_event = {"name": "e", "timeUnixNano": str(2**63)}
    body = json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                span("eee19b7ec3c1b180"),
                                span("eee19b7ec3c1b181", events=[late_event]),
                            ]
                        }
                    ]
                }
            ]
        }
    ).encode()
    assert b"\\ud800" in body
    settings = ServiceSettings(data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5)
    with served_app(settings, store) as url:
        reply = httpx.post(f"{url}/v1/traces", headers={"Content-Type": otlp.JSON}, content=body)
        assert reply.status_code == 200
        partial = reply.json()["partialSuccess"]
        assert int(partial["rejectedSpans"]) == 1 and "invalid_event" in partial["errorMessage"]
        wait_until(lambda: store.span_count("default") == 1, 30, "the repaired span")
        metrics = httpx.get(f"{url}/metrics").text
    [stored] = store.spans_for_traces("default", ["5b8efff798038103d269b633813fc60d"])
    assert stored["SpanId"] == "eee19b7ec3c1b180"
    assert stored["SpanName"] == "chat gpt-4o \ufffd"
    assert stored["SpanAttributes"] == {"note\ufffd": "a\ufffdb"}
    assert rows_dropped(metrics) == 0
