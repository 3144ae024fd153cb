"""Recovery after a restart reads back exactly the turns still owed a verdict: a judged
turn is never judged again (not even one joined from several traces), and a late span,
stored before the stop or arriving after it, gives the turn's next version."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from factledger.collector import otlp, rows
from factledger.collector import pipeline as pipeline_module
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.store import Store
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord
from tests.integration.otlp_turns import turn_request
from tests.integration.worker_process import judge_worker_pid, wait_until

MODES = pytest.mark.parametrize("in_worker", [True, False], ids=["worker-process", "thread"])
TENANT = "default"
CALL_ID = "call_0123456789abcdef"
ASK = "Where is my order #W0000001?"
RESULT = json.dumps({"order_id": "#W0000001", "status": "shipped", "carrier": "UPS"})
ANSWER = "Order #W0000001 has shipped with UPS."


def _messages(prefix: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """OpenInference's flattened `prefix.N.message.*` attributes."""
    flat: dict[str, Any] = {}
    for n, message in enumerate(messages):
        key = f"{prefix}.{n}.message"
        flat[f"{key}.role"] = message["role"]
        if "content" in message:
            flat[f"{key}.content"] = message["content"]
        if "tool_call_id" in message:
            flat[f"{key}.tool_call_id"] = message["tool_call_id"]
        for m, (name, arguments) in enumerate(message.get("calls", ())):
            call = f"{key}.tool_calls.{m}.tool_call"
            flat[f"{call}.id"] = CALL_ID
            flat[f"{call}.function.name"] = name
            flat[f"{call}.function.arguments"] = json.dumps(arguments)
    return flat


def _llm_call(
    trace: int, inputs: list[dict[str, Any]], output: dict[str, Any], at_ms: int
) -> SpanRecord:
    """One LLM call as OpenInference records it without an agent span: a trace of its own."""
    start = (int(time.time()) - 60) * 10**9 + at_ms * 10**6
    return SpanRecord(
        trace_id=f"{trace:032x}",
        span_id=f"{trace:016x}",
        name="ChatCompletion",
        kind=1,
        start_time_unix_nano=start,
        end_time_unix_nano=start + 10**8,
        attributes={
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            **_messages("llm.input_messages", inputs),
            **_messages("llm.output_messages", [output]),
        },
        tenant=TENANT,
    )


USER = {"role": "user", "content": ASK}
CALLING = {"role": "assistant", "calls": [("get_order", {"order_id": "#W0000001"})]}
TOOL = {"role": "tool", "tool_call_id": CALL_ID, "content": RESULT}
# One user request, two LLM calls, two traces: they join into one turn.
PER_CALL_TURN = [
    _llm_call(0xA1, [USER], CALLING, at_ms=0),
    _llm_call(0xB2, [USER, CALLING, TOOL], {"role": "assistant", "content": ANSWER}, 500),
]


def _pipeline(
    store: Store, wal: Path, in_worker: bool, *, grace: float = 0.1, max_wait: float = 5
) -> Pipeline:
    return Pipeline(
        store,
        WriteAheadLog(wal),
        default_runner(),
        Metrics(),
        grace_seconds=grace,
        max_wait_seconds=max_wait,
        judge_in_worker=in_worker,
    )


def _run(store: Store, wal: Path, in_worker: bool, *batches: list[SpanRecord]) -> None:
    """A pipeline's life: take `batches`, judge everything, stop."""
    pipeline = _pipeline(store, wal, in_worker)
    pipeline.start()
    try:
        for spans in batches:
            pipeline.submit("application/json", TENANT, b"{}", spans)
        assert pipeline.force_flush(60, judge_open_turns=True)
    finally:
        pipeline.shutdown()


@MODES
def test_a_turn_joined_from_per_call_traces_is_not_judged_again_after_a_restart(
    store: Store, tmp_path: Path, in_worker: bool
) -> None:
    _run(store, tmp_path / "wal", in_worker, PER_CALL_TURN)
    turns, total = store.list_turns(TENANT)
    assert total == 1 and turns[0]["trace_id"] == f"{0xA1:032x}"
    _run(store, tmp_path / "wal", in_worker)  # a restart: recovery only
    assert store.list_turns(TENANT)[1] == 1
    detail = store.get_turn(TENANT, turns[0]["turn_id"])
    assert detail is not None and len(detail["versions"]) == 1


def test_a_late_span_stored_before_the_worker_died_gives_the_next_version(
    store: Store, tmp_path: Path
) -> None:
    body, _ = turn_request(7, hallucinate=False)
    spans = otlp.decode_request(body, otlp.JSON, tenant=TENANT).spans
    late = next(s for s in spans if s.name.startswith("execute_tool"))
    # The grace period leaves time to kill the worker before it judges the late span.
    pipeline = _pipeline(store, tmp_path / "wal", in_worker=True, grace=3, max_wait=60)
    pipeline.start()
    try:
        pipeline.submit(otlp.JSON, TENANT, b"{}", [s for s in spans if s is not late])
        wait_until(lambda: store.list_turns(TENANT)[1] == 1, 30, "the first verdict")
        (turn,), _ = store.list_turns(TENANT)
        pipeline.submit(otlp.JSON, TENANT, b"{}", [late])
        assert pipeline.force_flush(30)  # stored and with the worker, not yet judged
        worker = judge_worker_pid(os.getpid())
        assert worker is not None
        os.kill(worker, signal.SIGKILL)  # within the grace period
        # The next worker reads the trace back with its verdict and judges version 2.
        wait_until(lambda: store.list_turns(TENANT)[0][0]["version"] == 2, 60, "the second verdict")
    finally:
        pipeline.shutdown()
    detail = store.get_turn(TENANT, turn["turn_id"])
    assert detail is not None
    assert [v["version"] for v in detail["versions"]] == [1, 2]
    assert late.span_id in {s["span_id"] for s in detail["spans"]}
    assert store.list_turns(TENANT)[1] == 1


@MODES
def test_a_late_span_after_a_restart_gives_the_next_version(
    store: Store, tmp_path: Path, in_worker: bool
) -> None:
    body, _ = turn_request(8, hallucinate=False)
    spans = otlp.decode_request(body, otlp.JSON, tenant=TENANT).spans
    late = next(s for s in spans if s.name.startswith("execute_tool"))
    _run(store, tmp_path / "wal", in_worker, [s for s in spans if s is not late])
    (turn,), _ = store.list_turns(TENANT)
    # After the restart the assembler knows nothing of the turn: the trace is read back
    # with its verdict, so the late span completes it instead of standing alone.
    _run(store, tmp_path / "wal", in_worker, [late])
    (again,), total = store.list_turns(TENANT)
    assert (total, again["turn_id"], again["version"]) == (1, turn["turn_id"], 2)
    detail = store.get_turn(TENANT, turn["turn_id"])
    assert detail is not None
    assert {s["span_id"] for s in detail["spans"]} == {s.span_id for s in spans}


def _aged(spans: Sequence[SpanRecord], by_ns: int) -> list[SpanRecord]:
    """The spans as if recorded `by_ns` earlier (start, end and event times)."""
    return [
        dataclasses.replace(
            s,
            start_time_unix_nano=s.start_time_unix_nano - by_ns,
            end_time_unix_nano=s.end_time_unix_nano - by_ns,
            events=tuple(
                dataclasses.replace(e, time_unix_nano=e.time_unix_nano - by_ns) for e in s.events
            ),
        )
        for s in spans
    ]


@MODES
def test_turns_owed_since_an_outage_of_days_are_judged_after_a_restart_in_pages(
    store: Store, tmp_path: Path, in_worker: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Spans stored hours and days ago (ingest and start times) that no verdict holds: a
    restart reads them back oldest first, a page of traces at a time, and judges them
    all."""
    monkeypatch.setattr(pipeline_module, "RECOVERY_PAGE_TRACES", 1)
    now_ms = int(time.time() * 1000)
    traces = []
    for index, age_hours in ((21, 2), (22, 26), (23, 24 * 6)):
        body, _ = turn_request(index, hallucinate=index == 22)
        age_ns = age_hours * 3600 * 10**9
        spans = _aged(otlp.decode_request(body, otlp.JSON, tenant=TENANT).spans, age_ns)
        store.insert_spans([rows.span_row(s, now_ms - age_ns // 10**6) for s in spans])
        traces.append(spans[0].trace_id)
    assert store.list_turns(TENANT) == ([], 0)
    _run(store, tmp_path / "wal", in_worker)  # a restart: recovery only
    turns, total = store.list_turns(TENANT, limit=10)
    assert total == 3
    assert {t["trace_id"]: t["verdict"] for t in turns}[traces[1]] == "reject"
    assert {t["trace_id"] for t in turns} == set(traces)
