"""One behavioural suite over both pipeline stores: the in-memory fake
(`collector.ingest.memory`) answers the recovery reads as ClickHouse does, on the same
rows, so a stage tested against the fake behaves as it does against the store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from factledger.collector import rows
from factledger.collector.ingest.memory import InMemoryStore
from factledger.collector.ingest.sink import PipelineStore
from factledger.processors.spans import SpanEvent, SpanRecord
from tests.unit.verdict_rows import verdict_row

TENANT = "acme"
EPOCH = datetime.fromtimestamp(0, UTC)
NOW = datetime.now(UTC).replace(microsecond=0)
NOW_MS = rows.epoch_ms(NOW)


def span(trace: int, index: int, *, tenant: str = TENANT, offset_ms: int = 0) -> SpanRecord:
    start = (NOW_MS + offset_ms) * 10**6
    return SpanRecord(
        trace_id=f"{trace:032x}",
        span_id=f"{trace:08x}{index:08x}",
        name=f"span {index}",
        start_time_unix_nano=start,
        end_time_unix_nano=start + 5 * 10**6,
        attributes={"gen_ai.operation.name": "chat", "n": index},
        events=(SpanEvent("event", start + 1, {"k": "v"}),),
        tenant=tenant,
    )


def fill(store: PipelineStore) -> None:
    """Four traces: one owed whole, one judged whole, one judged in part (twice), one
    stored earlier; a second tenant; a span stored twice."""
    store.insert_spans([rows.span_row(span(1, i), NOW_MS + 3_000) for i in range(2)])
    store.insert_spans([rows.span_row(span(2, i), NOW_MS + 1_000) for i in range(2)])
    store.insert_spans([rows.span_row(span(3, i), NOW_MS + 2_000) for i in range(3)])
    store.insert_spans([rows.span_row(span(4, 0, offset_ms=-60_000), NOW_MS - 60_000)])
    store.insert_spans([rows.span_row(span(4, 0, offset_ms=-60_000), NOW_MS - 60_000)])
    store.insert_spans([rows.span_row(span(9, 0, tenant="other"), NOW_MS)])
    store.insert_turns(
        [
            verdict_row("turn-2", 1, NOW, [span(2, 0), span(2, 1)]),
            verdict_row("turn-3", 1, NOW, [span(3, 0)]),
            verdict_row("turn-3", 2, NOW + timedelta(seconds=1), [span(3, 0), span(3, 1)]),
        ]
    )


@pytest.fixture(params=["in-memory", "clickhouse"])
def pipeline_store(request: pytest.FixtureRequest) -> Iterator[PipelineStore]:
    in_memory = request.param == "in-memory"
    made: PipelineStore = InMemoryStore() if in_memory else request.getfixturevalue("store")
    fill(made)
    yield made


def test_tenants_since(pipeline_store: PipelineStore) -> None:
    assert pipeline_store.recent_tenants(EPOCH) == ["acme", "other"]
    assert pipeline_store.recent_tenants(NOW + timedelta(seconds=2)) == ["acme"]


def test_owed_traces_oldest_first_and_paged(pipeline_store: PipelineStore) -> None:
    owed = pipeline_store.owed_traces(TENANT, EPOCH)
    assert [o.trace_id for o in owed] == [f"{4:032x}", f"{3:032x}", f"{1:032x}"]
    assert owed[0].first_ingested_ms == NOW_MS - 60_000
    first = pipeline_store.owed_traces(TENANT, EPOCH, 1)
    rest = pipeline_store.owed_traces(TENANT, EPOCH, 10, first[-1])
    assert first + rest == owed
    since = pipeline_store.owed_traces(TENANT, NOW)
    assert [o.trace_id for o in since] == [f"{3:032x}", f"{1:032x}"]


def test_spans_for_traces_once_each_as_rows_that_read_back(
    pipeline_store: PipelineStore,
) -> None:
    read = pipeline_store.spans_for_traces(TENANT, [f"{4:032x}", f"{3:032x}", f"{3:032x}"])
    assert [(row["TraceId"], row["SpanId"]) for row in read] == [
        (f"{3:032x}", span(3, i).span_id) for i in range(3)
    ] + [(f"{4:032x}", span(4, 0).span_id)]
    assert rows.span_from_row(read[0]) == span(3, 0)


def test_verdicts_for_traces_and_for_spans(pipeline_store: PipelineStore) -> None:
    by_trace = pipeline_store.verdicts_for(TENANT, [f"{3:032x}"], (), EPOCH)
    assert [(p.turn_id, p.version, p.span_ids) for p in by_trace] == [
        ("turn-3", 2, (span(3, 0).span_id, span(3, 1).span_id))
    ]
    by_span = pipeline_store.verdicts_for(TENANT, [], [span(2, 1).span_id], EPOCH)
    assert [p.turn_id for p in by_span] == ["turn-2"]
    later = pipeline_store.verdicts_for(
        TENANT, [], [span(2, 1).span_id], NOW + timedelta(seconds=5)
    )
    assert later == []
