"""Replay `factledger eval` cases as GenAI spans to an OTLP/HTTP endpoint (`factledger replay`).

Each record becomes one trace: a root `invoke_agent` span (conversation id = the record's
id) holding one `chat` span per assistant message of the transcript's turn and one
`execute_tool` span per tool result of the turn, written with `factledger.instrument`
through the real OpenTelemetry SDK and OTLP/HTTP exporter. The spans carry everything
needed to rebuild exactly the turn `turn_from_transcript` reads from the transcript:
every chat span's input messages are all messages before its output, so history stays
history and is never replayed as separate turns.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Tracer

from factledger.evaluation import read_cases
from factledger.instrument import (
    INSTRUMENTATION_NAME,
    INSTRUMENTATION_VERSION,
    chat,
    execute_tool,
    invoke_agent,
    tool_call_list,
)
from factledger.processors.assembly.transcript import content_text
from factledger.processors.errors import FactLedgerError, TranscriptError
from factledger.processors.nudges import is_framework_nudge
from factledger.progress import progress_bar

SERVICE_NAME = "factledger-replay"
REPLAY_AGENT = "factledger-replay"
MAX_QUEUE = 16_384
FLUSH_BEHIND = 2_048
"""Spans allowed to wait for export before the producer blocks on a flush: the batch
processor drops what overflows its queue, so a fast producer must wait for the exporter."""
MAX_ERRORS = 20


class ExportError(FactLedgerError):
    """The endpoint accepted none of the spans sent so far (unreachable, wrong URL, auth)."""


@dataclass(frozen=True)
class ReplayReport:
    records: int
    """Records replayed (one trace each)."""
    spans: int
    """Spans emitted."""
    failed: int
    """Spans the endpoint did not acknowledge: failed exports and queue drops."""
    skipped: int = 0
    """Records whose transcript could not be replayed (see `errors`)."""
    errors: tuple[str, ...] = ()
    """The first skipped records' reasons (at most 20)."""


class DeliveryCounter(SpanExporter):
    """Wraps an exporter and counts the spans each export delivered or lost.

    Export outcomes are values; the counts are the only place a lost batch shows, so the
    report can say how many spans never arrived.
    """

    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter
        self._lock = threading.Lock()
        self.delivered = 0
        self.lost = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        try:
            result = self._exporter.export(spans)
        except Exception:
            result = SpanExportResult.FAILURE
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self.delivered += len(spans)
            else:
                self.lost += len(spans)
        return result

    @property
    def accounted(self) -> int:
        with self._lock:
            return self.delivered + self.lost

    def shutdown(self) -> None:
        self._exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._exporter.force_flush(timeout_millis)


class OtlpPipeline:
    """A private TracerProvider exporting through OTLP/HTTP with a BatchSpanProcessor.

    Never the global provider: replaying must not mix with the process's own telemetry.
    `keep_up(emitted)` blocks while too many spans wait, `close()` flushes and shuts down
    (safe to call twice).
    """

    def __init__(
        self,
        endpoint: str,
        *,
        service_name: str,
        headers: Mapping[str, str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self.url = traces_url(endpoint)
        self.counter = DeliveryCounter(
            OTLPSpanExporter(endpoint=self.url, headers=dict(headers or {}), timeout=timeout)
        )
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self.provider.add_span_processor(BatchSpanProcessor(self.counter, max_queue_size=MAX_QUEUE))
        self.tracer: Tracer = self.provider.get_tracer(
            INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION
        )
        self._closed = False

    def keep_up(self, emitted: int, *, force: bool = False) -> None:
        """Flush when `emitted - exported` reaches the limit (or when `force`); raise
        ExportError when everything exported so far was lost."""
        if force or emitted - self.counter.accounted >= FLUSH_BEHIND:
            self.provider.force_flush()
            if self.counter.lost and not self.counter.delivered:
                raise ExportError(
                    f"{self.url} accepted none of the first {self.counter.lost} spans "
                    "(is the service running, the URL a base URL, the auth header set?)"
                )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.provider.force_flush()
        self.provider.shutdown()


def traces_url(endpoint: str) -> str:
    """The traces URL for a base endpoint, as OTEL_EXPORTER_OTLP_ENDPOINT reads it:
    "http://127.0.0.1:4318" and "http://127.0.0.1:4318/" give ".../v1/traces"."""
    return endpoint.rstrip("/") + "/v1/traces"


def replay(
    path: Path,
    endpoint: str,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10.0,
    progress: bool = True,
) -> ReplayReport:
    """Send every case of an eval JSONL file as one trace of GenAI spans.

    Raises TranscriptError for an unreadable line (as `factledger eval` does) and
    ExportError when the endpoint accepts nothing; a record whose transcript cannot be
    replayed is skipped and counted.
    """
    pipeline = OtlpPipeline(endpoint, service_name=SERVICE_NAME, headers=headers, timeout=timeout)
    records = spans = skipped = 0
    errors: list[str] = []
    bar = progress_bar(total=None, unit="record", enabled=progress)
    try:
        for case in read_cases(path):
            try:
                if case.transcript is None:
                    raise TranscriptError("an OTLP case has no transcript to replay")
                spans += transcript_spans(case.transcript, pipeline.tracer, conversation_id=case.id)
            except TranscriptError as exc:
                skipped += 1
                if len(errors) < MAX_ERRORS:
                    errors.append(f"{case.where} (case {case.id}): {exc}")
                continue
            records += 1
            # The first flush finds a wrong endpoint after one request, not after the file.
            pipeline.keep_up(spans, force=records == 1)
            bar.update()
    finally:
        bar.close()
        pipeline.close()
    failed = spans - pipeline.counter.delivered
    return ReplayReport(records, spans, failed, skipped, tuple(errors))


def transcript_spans(
    transcript: Mapping[str, Any],
    tracer: Tracer,
    *,
    conversation_id: str = "",
    agent_name: str = REPLAY_AGENT,
) -> int:
    """Emit one trace for a transcript's turn; return the number of spans emitted.

    Raises TranscriptError (before emitting anything) when the transcript has no
    assistant message or a message is malformed.
    """
    messages = normalized_messages(transcript)
    reply = _last_index(messages, lambda m: m["role"] == "assistant")
    if reply is None:
        raise TranscriptError("transcript has no assistant message to replay")
    start = _last_index(
        messages[:reply],
        lambda m: m["role"] == "user" and not is_framework_nudge(content_text(m.get("content"))),
    )
    first = 0 if start is None else start + 1
    model = str(transcript.get("model") or "unknown")
    raw_tools = transcript.get("tools")
    tools = raw_tools if isinstance(raw_tools, list) else None
    calls = {
        str(call["id"]): call
        for m in messages[first : reply + 1]
        if m["role"] == "assistant"
        for call in m["tool_calls"]
    }

    # A fresh context: a replayed record is a root, whatever span the caller has open.
    token = otel_context.attach(otel_context.Context())
    emitted = 1
    try:
        # The reply's speaker is the agent, as the transcript loader reads it.
        agent = str(messages[reply].get("name") or agent_name)
        with invoke_agent(
            agent, conversation_id=conversation_id or None, model=model, tracer=tracer
        ):
            for index in range(first, len(messages)):
                message = messages[index]
                if message["role"] == "assistant" and index <= reply:
                    with chat(
                        model, input_messages=messages[:index], tools=tools, tracer=tracer
                    ) as llm:
                        llm.set_output(
                            text=content_text(message.get("content")) or None,
                            tool_calls=message["tool_calls"] or None,
                            name=message.get("name"),
                        )
                    emitted += 1
                elif message["role"] == "tool" and message.get("tool_call_id") in calls:
                    _tool_span(message, calls[message["tool_call_id"]], tracer)
                    emitted += 1
    finally:
        otel_context.detach(token)
    return emitted


def _tool_span(message: Mapping[str, Any], call: Mapping[str, Any], tracer: Tracer) -> None:
    function = call["function"]
    result = content_text(message.get("content"))
    with execute_tool(
        str(function.get("name") or ""),
        call_id=str(call["id"]),
        arguments=_arguments_text(function.get("arguments")),
        tracer=tracer,
    ) as tool:
        tool.set_result(result)
        if message.get("is_error"):
            tool.set_error(result.strip().splitlines()[0][:200] if result.strip() else "error")


def normalized_messages(transcript: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A transcript's messages with roles mapped (developer -> system, function -> tool),
    speakers' `name`s kept, tool calls parsed into
    `{"id", "type", "function": {"name", "arguments"}}` with the transcript loader's
    default ids, and tool messages' `tool_call_id` filled in.

    Raises TranscriptError naming the offending message.
    """
    if not isinstance(transcript, Mapping):
        raise TranscriptError("a transcript must be a JSON object with 'messages'")
    raw_messages = transcript.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise TranscriptError("transcript has no 'messages' list")
    out: list[dict[str, Any]] = []
    for index, raw in enumerate(raw_messages):
        if not isinstance(raw, Mapping):
            raise TranscriptError(f"messages[{index}] is not an object")
        raw_role = raw.get("role")
        if raw_role not in ("system", "user", "assistant", "tool", "developer", "function"):
            raise TranscriptError(f"messages[{index}] has unknown role {raw_role!r}")
        role = {"developer": "system", "function": "tool"}.get(raw_role, raw_role)
        message: dict[str, Any] = {"role": role, "content": raw.get("content")}
        if role in ("user", "assistant") and raw.get("name"):
            message["name"] = str(raw["name"])  # a group chat's speaker
        if role == "assistant":
            message["tool_calls"] = _normalized_calls(index, raw.get("tool_calls"))
        elif role == "tool":
            message["tool_call_id"] = str(raw.get("tool_call_id") or raw.get("name") or "")
            if raw.get("is_error"):
                message["is_error"] = True
        out.append(message)
    return out


def _normalized_calls(index: int, raw: Any) -> list[dict[str, Any]]:
    try:
        calls = tool_call_list(raw)
    except ValueError as exc:
        raise TranscriptError(f"messages[{index}].{exc}") from exc
    out = []
    for j, call in enumerate(calls):
        function = call.get("function") if isinstance(call.get("function"), Mapping) else call
        assert isinstance(function, Mapping)
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise TranscriptError(f"messages[{index}].tool_calls[{j}] has no function name")
        out.append(
            {
                "id": str(call.get("id") or f"call_{index}_{j}"),
                "type": "function",
                "function": {"name": name, "arguments": function.get("arguments")},
            }
        )
    return out


def _arguments_text(raw: Any) -> str | Mapping[str, Any] | None:
    if raw is None or isinstance(raw, str | Mapping):
        return raw
    return json.dumps(raw, ensure_ascii=False, default=str)


def _last_index(items: Sequence[Mapping[str, Any]], predicate: Any) -> int | None:
    for i in range(len(items) - 1, -1, -1):
        if predicate(items[i]):
            return i
    return None
