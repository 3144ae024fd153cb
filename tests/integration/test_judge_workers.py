"""Several judge workers judge as one does: conversations whose every LLM call is a trace
of its own, interleaved in time, meet in one worker (routed by their conversation id),
so the turns, their versions and verdicts are those of a single worker; routed by trace
id alone they would not be. A worker of two that dies is restarted and the turns it held
are judged, once."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from factledger.collector import otlp
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.judge.routing import Router, route_key
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.store import Store, StoreConfig
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord
from tests.integration.otlp_turns import turn_request
from tests.integration.worker_process import judge_worker_pids, wait_until

TENANT = "default"
CONVERSATIONS = 6
SINGLE_TRACE_TURNS = range(1, 7)
_BASE_NS = (int(time.time()) - 600) * 10**9


def _messages(prefix: str, messages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """OpenInference's flattened `prefix.N.message.*` attributes."""
    flat: dict[str, Any] = {}
    for n, message in enumerate(messages):
        key = f"{prefix}.{n}.message"
        flat[f"{key}.role"] = message["role"]
        for field in ("content", "tool_call_id"):
            if field in message:
                flat[f"{key}.{field}"] = message[field]
        for m, (call_id, name, arguments) in enumerate(message.get("calls", ())):
            call = f"{key}.tool_calls.{m}.tool_call"
            flat[f"{call}.id"] = call_id
            flat[f"{call}.function.name"] = name
            flat[f"{call}.function.arguments"] = json.dumps(arguments)
    return flat


def _trace_id(conversation: int, step: int) -> str:
    return f"{0xC0000 + conversation * 16 + step:032x}"


def _llm_call(
    conversation: int,
    step: int,
    inputs: Sequence[dict[str, Any]],
    output: dict[str, Any],
) -> SpanRecord:
    """One LLM call as OpenInference records it without an agent span: a trace of its own,
    its conversation named by `session.id`. Calls of all conversations interleave."""
    start = _BASE_NS + (step * CONVERSATIONS + conversation) * 200_000_000
    return SpanRecord(
        trace_id=_trace_id(conversation, step),
        span_id=f"{0xC0000 + conversation * 16 + step:016x}",
        name="ChatCompletion",
        kind=1,
        start_time_unix_nano=start,
        end_time_unix_nano=start + 100_000_000,
        attributes={
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "session.id": f"session-{conversation}",
            **_messages("llm.input_messages", inputs),
            **_messages("llm.output_messages", [output]),
        },
        tenant=TENANT,
    )


def _conversation(c: int) -> list[SpanRecord]:
    """Two requests in three per-call traces: an order lookup (a call asking for the tool,
    a call answering with its result) and a follow-up answered without a tool."""
    order = f"#W{c:07d}"
    call_id = f"call_{c:06d}abcdefgh"
    user = {"role": "user", "content": f"Where is my order {order}?"}
    calling = {"role": "assistant", "calls": [(call_id, "get_order", {"order_id": order})]}
    result = json.dumps({"order_id": order, "status": "shipped", "carrier": "UPS"})
    tool = {"role": "tool", "tool_call_id": call_id, "content": result}
    answer = f"Order {order} has shipped with UPS."
    if c % 2 == 0:
        answer += f" I opened ticket OPS-7{c:03d} to track it."
    replied = {"role": "assistant", "content": answer}
    follow_up = {"role": "user", "content": "Thanks. Can you cancel it?"}
    if c % 3 == 0:
        last = f"I have cancelled order {order} and refunded you."
    else:
        last = "A shipped order cannot be cancelled; you can return it once it arrives."
    return [
        _llm_call(c, 0, [user], calling),
        _llm_call(c, 1, [user, calling, tool], replied),
        _llm_call(
            c, 2, [user, calling, tool, replied, follow_up], {"role": "assistant", "content": last}
        ),
    ]


def _late_tool_span(c: int) -> SpanRecord:
    """The tool execution of a conversation's first call, arriving after its turn was
    judged: the turn's next version. It carries no conversation id."""
    order = f"#W{c:07d}"
    first = _conversation(c)[0]
    return SpanRecord(
        trace_id=first.trace_id,
        span_id=f"{0xD0000 + c:016x}",
        parent_span_id=first.span_id,
        name="get_order",
        start_time_unix_nano=first.end_time_unix_nano + 10_000_000,
        end_time_unix_nano=first.end_time_unix_nano + 50_000_000,
        attributes={
            "openinference.span.kind": "TOOL",
            "tool.name": "get_order",
            "input.value": json.dumps({"order_id": order}),
            "output.value": json.dumps({"order_id": order, "status": "shipped"}),
        },
        tenant=TENANT,
    )


def _single_trace_turn(index: int) -> list[SpanRecord]:
    """An agent turn in one trace; only its agent span carries the conversation id."""
    body, _ = turn_request(index, hallucinate=index % 3 == 0)
    return list(otlp.decode_request(body, otlp.JSON).spans)


def _batches() -> list[list[SpanRecord]]:
    """What arrives first, one request at a time: every per-call trace in the order its
    call ran (the conversations interleaved), with the single-trace turns among them."""
    calls = sorted(
        (span for c in range(CONVERSATIONS) for span in _conversation(c)),
        key=lambda span: span.start_time_unix_nano,
    )
    batches = [[span] for span in calls]
    for position, index in enumerate(SINGLE_TRACE_TURNS):
        batches.insert(position * 3, _single_trace_turn(index))
    return batches


def _late_batches() -> list[list[SpanRecord]]:
    """Spans that arrive after their turns were judged."""
    late = [[_late_tool_span(c)] for c in range(CONVERSATIONS) if c % 2 == 1]
    for index in SINGLE_TRACE_TURNS:
        if index % 2 == 0:
            tool = _single_trace_turn(index)[2]
            late.append([dataclasses.replace(tool, span_id=f"{index:012x}ffff")])
    return late


class ByTraceOnly(Router):
    """Routing by trace id alone, as the Collector's `traceID` key does."""

    def key_of(self, tenant: str, trace_id: str, spans: object) -> str:
        return route_key(tenant, "", trace_id)


OpenStore = Callable[[], Store]


@pytest.fixture
def stores(store_config: StoreConfig) -> Iterator[OpenStore]:
    """Opens a fresh store (a database of its own) per call: one per run."""
    opened: list[Store] = []

    def open_one() -> Store:
        database = f"{store_config.database[:56]}_run{len(opened)}"
        opened.append(Store.open(dataclasses.replace(store_config, database=database)))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


def _pipeline(
    store: Store, wal: Path, workers: int, router: Router | None = None, grace: float = 0.2
) -> Pipeline:
    return Pipeline(
        store,
        WriteAheadLog(wal),
        default_runner(),
        Metrics(),
        grace_seconds=grace,
        max_wait_seconds=30,
        judge_workers=workers,
        router=router,
    )


def _run(
    store: Store,
    wal: Path,
    workers: int,
    phases: Sequence[list[list[SpanRecord]]],
    router: Router | None = None,
) -> dict[str, Stored]:
    """A pipeline's life: each phase's requests, then every turn judged; its verdicts."""
    pipeline = _pipeline(store, wal, workers, router)
    pipeline.start()
    try:
        for phase in phases:
            for spans in phase:
                pipeline.submit(otlp.JSON, TENANT, b"{}", spans)
            assert pipeline.force_flush(60, judge_open_turns=True)
    finally:
        pipeline.shutdown()
    return _judged(store)


class Stored(NamedTuple):
    """A stored turn: its trace, spans, versions (number, verdict, kinds), and the latest
    version's findings and tool calls."""

    trace_id: str
    span_ids: list[str]
    versions: list[tuple[int, str, list[str]]]
    findings: list[dict[str, Any]]
    tool_calls: list[dict[str, Any]]


def _judged(store: Store) -> dict[str, Stored]:
    """Every stored turn by turn id."""
    turns, _ = store.list_turns(TENANT, limit=1000)
    judged: dict[str, Stored] = {}
    for summary in turns:
        detail = store.get_turn(TENANT, summary["turn_id"])
        assert detail is not None
        judged[summary["turn_id"]] = Stored(
            summary["trace_id"],
            sorted(detail["span_ids"]),
            [(v["version"], v["verdict"], sorted(v["kinds"])) for v in detail["versions"]],
            detail["findings"],
            detail["tool_calls"],
        )
    return judged


def test_two_workers_judge_interleaved_conversations_as_one_does(
    stores: OpenStore, tmp_path: Path
) -> None:
    phases = [_batches(), _late_batches()]
    one = _run(stores(), tmp_path / "wal1", 1, phases)
    two = _run(stores(), tmp_path / "wal2", 2, phases)

    # The input is what it should be: each conversation's lookup is one turn joined from
    # two traces, its follow-up another; late spans gave next versions; both verdicts.
    assert len(one) == 2 * CONVERSATIONS + len(SINGLE_TRACE_TURNS)
    for c in range(CONVERSATIONS):
        calls = {_conversation(c)[0].span_id, _conversation(c)[1].span_id}
        assert any(calls <= set(turn.span_ids) for turn in one.values()), f"conversation {c}"
    versions = [turn.versions for turn in one.values()]
    assert sum(len(v) == 2 for v in versions) == len(_late_batches())
    assert {v[-1][1] for v in versions} == {"pass", "reject"}
    assert two == one

    # Routed by trace id alone, the calls of a conversation split between the workers and
    # the turns differ: this comparison can fail.
    by_trace = _run(stores(), tmp_path / "wal3", 2, phases, router=ByTraceOnly(2))
    assert by_trace != one


def test_a_killed_worker_of_two_is_restarted_and_its_turns_judged_once(
    stores: OpenStore, tmp_path: Path
) -> None:
    batches = _batches()
    one = _run(stores(), tmp_path / "wal1", 1, [batches])

    store = stores()
    metrics = Metrics()
    # A grace period long enough that both workers still hold turns when one is killed.
    pipeline = Pipeline(
        store,
        WriteAheadLog(tmp_path / "wal2"),
        default_runner(),
        metrics,
        grace_seconds=5,
        max_wait_seconds=30,
        judge_workers=2,
    )
    pipeline.start()
    try:
        pids = judge_worker_pids(os.getpid())
        assert len(pids) == 2
        for spans in batches:
            pipeline.submit(otlp.JSON, TENANT, b"{}", spans)
        wait_until(lambda: metrics.gauge_value("factledger_open_turns") > 0, 30, "open turns")
        assert store.list_turns(TENANT)[1] == 0
        os.kill(pids[0], signal.SIGKILL)
        wait_until(
            lambda: metrics.value("factledger_judge_worker_restarts_total") == 1,
            30,
            "the killed worker to be restarted",
        )
        wait_until(lambda: pipeline.ready, 60, "two live workers again")
        assert set(judge_worker_pids(os.getpid())) & set(pids) == {pids[1]}
        assert pipeline.force_flush(60, judge_open_turns=True)
    finally:
        pipeline.shutdown()
    assert _judged(store) == one
