"""FactLedgerSpanProcessor with the real OpenTelemetry SDK: spans in, verdicts out."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.trace import SpanKind, Status, StatusCode

from factledger.processors.assembly.assembler import AssembledTurn
from factledger.processors.model import Verdict
from factledger.processors.span_processor import (
    FactLedgerSpanProcessor,
    span_record_from_readable,
)
from tests.unit.sdk_turns import ASK, REPLY, emit_agent_turn, text


class Verdicts:
    """The callback: records what it is given; can be told to raise or to wait."""

    def __init__(self, *, raises: bool = False) -> None:
        self.received: list[tuple[AssembledTurn, Verdict]] = []
        self.raises = raises
        self.entered = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def __call__(self, assembled: AssembledTurn, verdict: Verdict) -> None:
        self.entered.set()
        self.release.wait(5)
        self.received.append((assembled, verdict))
        if self.raises:
            raise RuntimeError("callback bug")


def provider_with(processor: FactLedgerSpanProcessor) -> TracerProvider:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "fixer-svc"}), shutdown_on_exit=False
    )
    provider.add_span_processor(processor)
    return provider


@pytest.fixture
def verdicts() -> Verdicts:
    return Verdicts()


@pytest.fixture
def processor(verdicts: Verdicts) -> Iterator[FactLedgerSpanProcessor]:
    # A grace period longer than the emission, so the turn is judged once, at shutdown.
    p = FactLedgerSpanProcessor(verdicts, grace_seconds=0.5, max_wait_seconds=5.0)
    yield p
    p.shutdown()


def test_agent_turn_claiming_a_push_that_never_ran_is_rejected(processor, verdicts):
    provider = provider_with(processor)
    emit_agent_turn(provider.get_tracer("test"))
    provider.shutdown()  # delivers every turn still open
    [(assembled, verdict)] = verdicts.received
    assert verdict.outcome == "reject"
    assert {"claim_without_tool", "fabricated_identifier"} <= set(verdict.kinds)
    turn = assembled.turn
    assert (turn.user_message, turn.reply, turn.agent, turn.model) == (
        ASK,
        REPLY,
        "fixer",
        "gpt-4o",
    )
    assert (assembled.version, len(assembled.span_ids), assembled.service) == (1, 4, "fixer-svc")
    [run_tests] = turn.tool_calls
    assert (run_tests.result, run_tests.span_id is not None) == ("48 passed", True)


def test_force_flush_delivers_turns_that_are_due(verdicts):
    processor = FactLedgerSpanProcessor(verdicts, grace_seconds=0.0)
    provider = provider_with(processor)
    emit_agent_turn(provider.get_tracer("test"))
    assert processor.force_flush(5_000)
    # With no grace at all a slow machine may judge before the agent span: then twice.
    assert [a.version for a, _ in verdicts.received] in ([1], [1, 2])
    assert verdicts.received[-1][0].turn.agent == "fixer"
    delivered = len(verdicts.received)
    provider.shutdown()
    assert len(verdicts.received) == delivered  # nothing was left to judge


def test_callback_errors_are_counted_and_never_reach_the_agent():
    verdicts = Verdicts(raises=True)
    processor = FactLedgerSpanProcessor(verdicts, grace_seconds=0.0)
    provider = provider_with(processor)
    emit_agent_turn(provider.get_tracer("test"))  # must not raise
    assert processor.force_flush(5_000)
    emit_agent_turn(provider.get_tracer("test"))
    provider.shutdown()
    assert len(verdicts.received) >= 2
    assert processor.drops == {"callback_error": len(verdicts.received)}


def test_on_end_never_raises_on_a_span_it_cannot_read(processor):
    processor.on_end(object())
    assert processor.drops == {"conversion_error": 1}


def test_full_queue_drops_without_blocking_and_counts(verdicts):
    processor = FactLedgerSpanProcessor(verdicts, grace_seconds=0.0, max_queue_size=1)
    tracer = provider_with(processor).get_tracer("test")
    verdicts.release.clear()
    lone_call = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps([text("user", "hi")]),
        "gen_ai.output.messages": json.dumps([text("assistant", "hello")]),
    }
    with tracer.start_as_current_span("chat", attributes=lone_call):
        pass
    assert verdicts.entered.wait(5)  # the worker is now stuck in the callback
    for _ in range(3):
        with tracer.start_as_current_span("execute_tool", attributes={"gen_ai.tool.name": "x"}):
            pass
    assert processor.drops == {"queue_full": 2}
    verdicts.release.set()
    processor.shutdown()


def test_shutdown_is_idempotent_and_later_spans_are_counted(processor):
    provider = provider_with(processor)
    processor.shutdown()
    processor.shutdown()
    provider.shutdown()
    assert processor.force_flush(1_000)
    with provider.get_tracer("test").start_as_current_span("late"):
        pass
    assert processor.drops == {"shutdown": 1}


# --- span_record_from_readable --------------------------------------------------------------


class Capture(FactLedgerSpanProcessor):
    """Keeps the raw SDK spans (the record conversion is tested on them directly)."""

    def __init__(self) -> None:
        super().__init__(lambda a, v: None)
        self.spans: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.spans.append(span)


def test_sdk_span_becomes_a_span_record():
    capture = Capture()
    provider = provider_with(capture)
    tracer = provider.get_tracer("agent.lib", "1.2")
    with (
        tracer.start_as_current_span("parent"),
        tracer.start_as_current_span("chat", kind=SpanKind.CLIENT) as span,
    ):
        span.set_attribute("gen_ai.response.finish_reasons", ["stop"])
        span.set_attribute("gen_ai.usage.input_tokens", 12)
        span.add_event("gen_ai.choice", {"index": 0})
        span.set_status(Status(StatusCode.ERROR, "rate limited"))
    provider.shutdown()
    child, parent = capture.spans
    r = span_record_from_readable(child, tenant="acme")
    assert r.trace_id == format(child.context.trace_id, "032x") and len(r.trace_id) == 32
    assert r.span_id == format(child.context.span_id, "016x") and len(r.span_id) == 16
    assert r.parent_span_id == format(parent.context.span_id, "016x")
    assert (r.name, r.kind, r.status_code, r.status_message) == ("chat", 3, 2, "rate limited")
    assert r.attributes == {
        "gen_ai.response.finish_reasons": ["stop"],
        "gen_ai.usage.input_tokens": 12,
    }
    assert [(e.name, dict(e.attributes)) for e in r.events] == [("gen_ai.choice", {"index": 0})]
    assert r.start_time_unix_nano > 0 and r.end_time_unix_nano >= r.start_time_unix_nano
    assert (r.service_name, r.scope_name, r.scope_version, r.tenant) == (
        "fixer-svc",
        "agent.lib",
        "1.2",
        "acme",
    )
    root = span_record_from_readable(parent)
    assert (root.parent_span_id, root.kind) == ("", 1)
