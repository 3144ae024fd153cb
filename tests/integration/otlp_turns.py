"""OTLP/JSON requests holding whole agent turns in the current GenAI conventions, a turn
sent through the OTel SDK's exporters, and the judged turn read back."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import LogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter

# Recent enough to stay inside the tables' retention, fixed so resent requests are equal.
_BASE_NS = (time.time_ns() // 1_000_000_000 - 3600) * 1_000_000_000


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


def _span(
    trace_id: str,
    span_id: str,
    parent: str,
    name: str,
    start: int,
    end: int,
    attributes: dict[str, Any],
    *,
    error: bool = False,
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 3 if name.startswith("chat") else 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": [_attr(k, v) for k, v in attributes.items()],
    }
    if error:
        span["status"] = {"code": 2, "message": "tool failed"}
    return span


def turn_request(
    index: int,
    *,
    hallucinate: bool,
    model: str = "gpt-4o",
    user_text: str | None = None,
    result: str | None = None,
    reply: str | None = None,
    agent_attributes: dict[str, Any] | None = None,
) -> tuple[bytes, list[str]]:
    """One agent turn as an OTLP/JSON request body, and its span ids.

    The agent looks up an order and replies; when `hallucinate` is set the reply also
    claims a refund it never issued and quotes an invented ticket key. `user_text`,
    `result` (the tool's), `reply` and extra `agent_attributes` replace the defaults.
    """
    trace_id = f"{index:032x}"
    ids = [f"{index:012x}{k:04x}" for k in range(4)]
    agent, chat1, tool, chat2 = ids
    start = _BASE_NS + index * 10_000_000
    user = {
        "role": "user",
        "parts": [{"type": "text", "content": user_text or f"Where is order #W{index:07d}?"}],
    }
    call = {
        "type": "tool_call",
        "id": f"call_{index}",
        "name": "get_order",
        "arguments": {"order_id": f"#W{index:07d}"},
    }
    if result is None:
        result = json.dumps({"order_id": f"#W{index:07d}", "status": "shipped"})
    if reply is None:
        reply = f"Order #W{index:07d} has shipped."
        if hallucinate:
            reply += f" I have refunded the shipping fee, ticket OPS-9{index:03d}."
    tools = json.dumps(
        [{"type": "function", "name": "get_order", "parameters": {"type": "object"}}]
    )
    spans = [
        _span(
            trace_id,
            agent,
            "",
            "invoke_agent support",
            start,
            start + 9_000_000,
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.conversation.id": f"conv-{index}",
                **(agent_attributes or {}),
            },
        ),
        _span(
            trace_id,
            chat1,
            agent,
            f"chat {model}",
            start + 1_000_000,
            start + 3_000_000,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
                "gen_ai.provider.name": "openai",
                "gen_ai.tool.definitions": tools,
                "gen_ai.input.messages": json.dumps([user]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [call]}]),
            },
        ),
        _span(
            trace_id,
            tool,
            agent,
            "execute_tool get_order",
            start + 3_500_000,
            start + 4_000_000,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "get_order",
                "gen_ai.tool.call.id": f"call_{index}",
                "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
                "gen_ai.tool.call.result": result,
            },
        ),
        _span(
            trace_id,
            chat2,
            agent,
            f"chat {model}",
            start + 5_000_000,
            start + 8_000_000,
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
                "gen_ai.provider.name": "openai",
                "gen_ai.tool.definitions": tools,
                "gen_ai.input.messages": json.dumps(
                    [
                        user,
                        {"role": "assistant", "parts": [call]},
                        {
                            "role": "tool",
                            "parts": [
                                {
                                    "type": "tool_call_response",
                                    "id": f"call_{index}",
                                    "response": result,
                                }
                            ],
                        },
                    ]
                ),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": reply}]}]
                ),
            },
        ),
    ]
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "shop-agent")]},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": spans}],
            }
        ]
    }
    return json.dumps(body).encode(), ids


def post_turn(url: str, index: int, *, hallucinate: bool) -> None:
    """Send turn `index` (see `turn_request`) as OTLP/JSON to the service at `url`; the
    service must accept it."""
    body, _ = turn_request(index, hallucinate=hallucinate)
    sent = httpx.post(
        f"{url}/v1/traces",
        headers={"Content-Type": "application/json"},
        content=body,
        timeout=10,
    )
    assert sent.status_code == 200, sent.text


def log_request(
    trace_id: str,
    span_id: str,
    events: list[tuple[str, Any]],
    *,
    service: str = "shop-agent",
    start: int | None = None,
) -> bytes:
    """An OTLP/JSON logs request as Semantic Kernel writes GenAI content: one log record
    per (event name, body) naming span `span_id` of trace `trace_id`, the event name in
    the `event.name` attribute and the body as JSON text, 1 µs apart from `start`."""
    base = _BASE_NS if start is None else start
    records = [
        {
            "timeUnixNano": str(base + index * 1_000),
            "traceId": trace_id,
            "spanId": span_id,
            "severityNumber": 9,
            "severityText": "INFO",
            "body": {"stringValue": json.dumps(body)},
            "attributes": [_attr("event.name", name), _attr("gen_ai.system", "openai")],
        }
        for index, (name, body) in enumerate(events)
    ]
    document = {
        "resourceLogs": [
            {
                "resource": {"attributes": [_attr("service.name", service)]},
                "scopeLogs": [{"scope": {"name": "tests"}, "logRecords": records}],
            }
        ]
    }
    return json.dumps(document).encode()


def chat_span_request(
    trace_id: str, span_id: str, *, service: str = "shop-agent", model: str = "gpt-4o"
) -> bytes:
    """An OTLP/JSON trace request of one GenAI chat span with no content of its own (its
    messages come as log records: `log_request`)."""
    span = _span(
        trace_id,
        span_id,
        "",
        f"chat {model}",
        _BASE_NS,
        _BASE_NS + 50_000_000,
        {"gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": model},
    )
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "tests"}, "spans": [span]}],
            }
        ]
    }
    return json.dumps(body).encode()


def write_eval_cases(path: Path, corpora: Sequence[Path]) -> Path:
    """`path` as a file of eval cases: the labelled corpora's lines, then OTLP/JSON cases
    whose spans are assembled into turns (every other one hallucinating)."""
    lines = [line for corpus in corpora for line in corpus.read_text("utf-8").splitlines()]
    for index in range(1, 13):
        hallucinate = index % 2 == 0
        reply = (
            f"Order #W{index:07d} left today, tracking 1Z{index:08d}." if index % 5 == 0 else None
        )
        body, _ = turn_request(
            index,
            hallucinate=hallucinate,
            model=("gpt-4o", "claude-sonnet-4")[index % 3 == 0],
            reply=reply,
        )
        expected = {"verdict": "reject" if hallucinate and reply is None else "pass"}
        case = {"id": f"otlp-{index}", "otlp": json.loads(body), "expected": expected}
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def judged_turn(url: str, trace_id: str, timeout: float = 30, **want: str) -> dict[str, Any]:
    """The turn of `trace_id` once judged (and, with `want`, once its fields say so), read
    back through the query API of the service at `url`."""
    deadline = time.monotonic() + timeout
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        turns = httpx.get(f"{url}/api/v1/turns", params={"limit": 1000}, timeout=10).json()
        for turn in turns["turns"]:
            if turn["trace_id"] == trace_id:
                last = httpx.get(f"{url}/api/v1/turns/{turn['turn_id']}", timeout=10).json()
                if all(last.get(k) == v for k, v in want.items()):
                    return last
        time.sleep(0.2)
    raise AssertionError(f"no turn of {trace_id} with {want} in time; last: {last}")


def sdk_log_turn(
    span_exporter: SpanExporter,
    log_exporter: LogRecordExporter,
    logger_name: str,
    user: str,
    reply: str,
) -> str:
    """One chat span with its prompt and completion written as log records, through the
    SDK's exporters (either transport), the way Semantic Kernel writes them (Python
    logging with `event.name` in `extra`, the message as JSON text); the trace id."""
    resource = Resource({"service.name": "sdk-logs-app"})
    tracer_provider = TracerProvider(resource=resource)
    tracer_provider.add_span_processor(SimpleSpanProcessor(span_exporter))
    logger_provider = LoggerProvider(resource=resource)
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(log_exporter))
    handler = LoggingHandler(logger_provider=logger_provider)
    logger = logging.getLogger(logger_name)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(handler)
    tracer = tracer_provider.get_tracer("tests")
    try:
        with tracer.start_as_current_span("chat gpt-4o") as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.system": "openai"})
            logger.info(
                json.dumps({"role": "user", "content": user}),
                extra={"event.name": "gen_ai.user.message", "gen_ai.system": "openai"},
            )
            logger.info(
                json.dumps({"message": {"role": "assistant", "content": reply}}),
                extra={"event.name": "gen_ai.choice", "gen_ai.system": "openai"},
            )
            trace_id = format(span.get_span_context().trace_id, "032x")
    finally:
        logger.removeHandler(handler)
        logger_provider.shutdown()
        tracer_provider.shutdown()
    return trace_id
