"""Turn the example trace files (shared `otel_trace_examples/`) into `SpanRecord`s.

Two layouts:

- `openinference/*.json`: either one span's flat attribute dict, or a list of spans as the
  OTel JS SDK prints them (`name`, `spanContext: {traceId, spanId}`, `parentSpanId`,
  `status: {code, message}`, `startTime`/`endTime` as `[seconds, nanos]`, `events`,
  `attributes`). Missing ids are made up, deterministically, from the file name.
- `langfuse_framework_traces/*.trace.json`: a Langfuse export `{trace, observations[]}`.
  An observation's `metadata` (JSON text or an object) holds the original span's
  `attributes`, `resourceAttributes` and `scope`. Langfuse moved the payload attributes
  out of `attributes` into the observation's `input` / `output`; they are put back under
  the key the span's own convention uses (first matching row wins; a span that still
  carries any payload key is left as it is):

  | the remaining attributes show    | input key                    | output key
  |-----------------------------------|------------------------------|------------------------
  | `openinference.span.kind`         | `input.value`                | `output.value`
  | `ai.operationId` = `ai.toolCall`  | `ai.toolCall.args`           | `ai.toolCall.result`
  | `ai.operationId` = `*.doGenerate` | `ai.prompt.messages`         | `ai.response.toolCalls`
  |   or `*.doStream`                 |                              |   (a list), else
  |                                   |                              |   `ai.response.text`
  | other `ai.operationId`            | `ai.prompt`                  | as above
  | `langsmith.span.kind` (LangSmith) | `gen_ai.prompt`              | `gen_ai.completion`
  | `execute_tool`/`gen_ai.tool.name` | `gen_ai.tool.call.arguments` | `gen_ai.tool.call.result`
  | other `gen_ai.operation.name`     | `gen_ai.input.messages`      | `gen_ai.output.messages`
  | no `attributes` (Langfuse SDK)    | `langfuse.observation.input` | `.output`

  Langfuse SDK observations also get back `langfuse.observation.type`, `.model.name`,
  `.level` and `langfuse.observation.metadata.<key>` (JSON text for non-strings), as the
  SDK wrote them.

Loading raises `ValueError` naming the file when a layout is not recognised: these are
test inputs, and a silent empty result would hide a broken file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..spans import STATUS_ERROR, STATUS_UNSET, SpanEvent, SpanRecord

_OI_KIND = "openinference.span.kind"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LLM_AI_OPERATIONS = ("doGenerate", "doStream")
_PAYLOAD_KEYS = frozenset(
    {
        "input.value",
        "output.value",
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.prompt",
        "gen_ai.completion",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "tool_arguments",
        "tool_response",
        "ai.prompt",
        "ai.prompt.messages",
        "ai.response.text",
        "ai.response.toolCalls",
        "ai.toolCall.args",
        "ai.toolCall.result",
    }
)


def load_example(path: Path) -> list[SpanRecord]:
    """The spans of one example file, in file order, in either layout (see module doc)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not readable as JSON: {exc}") from exc
    if isinstance(document, Mapping) and isinstance(document.get("observations"), list):
        return spans_from_langfuse(document, source=path.name)
    if isinstance(document, list):
        return spans_from_sdk_list(document, source=path.name)
    if isinstance(document, Mapping):
        return [_flat_span(document, source=path.name)]
    raise ValueError(f"{path}: neither a span list, an attribute dict nor a Langfuse trace")


# --- OTel SDK span lists and flat attribute dicts -----------------------------------------


def spans_from_sdk_list(items: Sequence[Any], *, source: str) -> list[SpanRecord]:
    """Spans printed by an OTel SDK (`spanContext`, `[s, ns]` times, `status.code`)."""
    spans = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ValueError(f"{source}: item {index} is not a span object")
        context = item.get("spanContext") if isinstance(item.get("spanContext"), Mapping) else {}
        assert isinstance(context, Mapping)
        parent = item.get("parentSpanId") or _nested(item, "parentSpanContext", "spanId")
        status = item.get("status") if isinstance(item.get("status"), Mapping) else {}
        assert isinstance(status, Mapping)
        attributes = item.get("attributes")
        spans.append(
            SpanRecord(
                trace_id=_hex_id(context.get("traceId"), 32, source),
                span_id=_hex_id(context.get("spanId"), 16, f"{source}:{index}"),
                parent_span_id=_hex_id(parent, 16, "") if parent else "",
                name=str(item.get("name") or ""),
                kind=item["kind"] if isinstance(item.get("kind"), int) else 0,
                start_time_unix_nano=_hrtime(item.get("startTime")),
                end_time_unix_nano=_hrtime(item.get("endTime")),
                status_code=_status_code(status.get("code")),
                status_message=str(status.get("message") or ""),
                attributes=dict(attributes) if isinstance(attributes, Mapping) else {},
                events=tuple(_sdk_event(e) for e in item.get("events") or () if _is_map(e)),
                resource_attributes=_mapping(_nested(item, "resource", "attributes")),
                scope_name=str(_nested(item, "instrumentationScope", "name") or ""),
                scope_version=str(_nested(item, "instrumentationScope", "version") or ""),
            )
        )
    return spans


def _flat_span(attributes: Mapping[str, Any], *, source: str) -> SpanRecord:
    stem = source.removesuffix(".json")
    return SpanRecord(
        trace_id=_hex_id(None, 32, source),
        span_id=_hex_id(None, 16, f"{source}:0"),
        name=stem,
        attributes=dict(attributes),
    )


def _sdk_event(event: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(event.get("name") or ""),
        time_unix_nano=_hrtime(event.get("time")),
        attributes=_mapping(event.get("attributes")),
    )


def _hrtime(value: Any) -> int:
    if isinstance(value, list | tuple) and len(value) == 2:
        seconds, nanos = value
        if isinstance(seconds, int | float) and isinstance(nanos, int | float):
            return int(seconds) * 1_000_000_000 + int(nanos)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return int(value)
    return 0


# --- Langfuse exports ---------------------------------------------------------------------


def spans_from_langfuse(document: Mapping[str, Any], *, source: str) -> list[SpanRecord]:
    """One span per observation of a Langfuse trace export, payload attributes restored."""
    trace = document.get("trace") if isinstance(document.get("trace"), Mapping) else {}
    assert isinstance(trace, Mapping)
    spans = []
    for index, observation in enumerate(document["observations"]):
        if not isinstance(observation, Mapping):
            raise ValueError(f"{source}: observation {index} is not an object")
        metadata = _metadata(observation.get("metadata"), f"{source}: observation {index}")
        scope = _mapping(metadata.get("scope"))
        trace_id = observation.get("traceId") or trace.get("id")
        level = str(observation.get("level") or "")
        spans.append(
            SpanRecord(
                trace_id=_hex_id(trace_id, 32, source),
                span_id=_hex_id(observation.get("id"), 16, f"{source}:{index}"),
                parent_span_id=_hex_id(observation.get("parentObservationId"), 16, "")
                if observation.get("parentObservationId")
                else "",
                name=str(observation.get("name") or ""),
                start_time_unix_nano=_iso_nanos(observation.get("startTime")),
                end_time_unix_nano=_iso_nanos(observation.get("endTime")),
                status_code=STATUS_ERROR if level == "ERROR" else STATUS_UNSET,
                status_message=str(observation.get("statusMessage") or ""),
                attributes=_restored_attributes(observation, metadata),
                resource_attributes=_mapping(metadata.get("resourceAttributes")),
                scope_name=str(scope.get("name") or ""),
                scope_version=str(scope.get("version") or ""),
            )
        )
    return spans


def _metadata(value: Any, where: str) -> Mapping[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"{where}: metadata is not JSON: {exc}") from exc
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: metadata is not an object")
    return value


def _restored_attributes(
    observation: Mapping[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    if not isinstance(metadata.get("attributes"), Mapping):
        return _langfuse_sdk_attributes(observation, metadata)
    attributes = dict(metadata["attributes"])
    input_key, output_key = _payload_keys(attributes)
    present = _PAYLOAD_KEYS & attributes.keys()
    if input_key and not present:
        for key, field in ((input_key, "input"), (output_key, "output")):
            if observation.get(field) is not None:
                attributes[key] = observation[field]
        if output_key == "ai.response.toolCalls" and not _is_list(observation.get("output")):
            attributes.pop(output_key, None)
            if observation.get("output") is not None:
                attributes["ai.response.text"] = observation["output"]
    return attributes


def _payload_keys(attributes: Mapping[str, Any]) -> tuple[str, str]:
    """The (input, output) keys the span's convention keeps its payload under."""
    ai_operation = str(attributes.get("ai.operationId") or "")
    operation = str(attributes.get("gen_ai.operation.name") or "")
    if _OI_KIND in attributes:
        return "input.value", "output.value"
    if ai_operation == "ai.toolCall":
        return "ai.toolCall.args", "ai.toolCall.result"
    if ai_operation.endswith(_LLM_AI_OPERATIONS):
        return "ai.prompt.messages", "ai.response.toolCalls"
    if ai_operation:
        return "ai.prompt", "ai.response.toolCalls"
    if "langsmith.span.kind" in attributes:
        return "gen_ai.prompt", "gen_ai.completion"
    if operation == "execute_tool" or "gen_ai.tool.name" in attributes:
        return "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"
    if operation:
        return "gen_ai.input.messages", "gen_ai.output.messages"
    return "", ""


def _is_list(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return isinstance(value, list)


def _langfuse_sdk_attributes(
    observation: Mapping[str, Any], metadata: Mapping[str, Any]
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "langfuse.observation.type": str(observation.get("type") or "span").lower(),
    }
    for key, field in (("input", "input"), ("output", "output"), ("model.name", "model")):
        if observation.get(field) is not None:
            attributes[f"langfuse.observation.{key}"] = observation[field]
    level = observation.get("level")
    if level and level != "DEFAULT":
        attributes["langfuse.observation.level"] = level
    for key, value in metadata.items():
        if key in ("resourceAttributes", "scope") or value is None:
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        attributes[f"langfuse.observation.metadata.{key}"] = text
    return attributes


def _iso_nanos(value: Any) -> int:
    if not isinstance(value, str) or not value:
        return 0
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return 0
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # Integer arithmetic: a float timestamp would lose digits.
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1_000


# --- small helpers ------------------------------------------------------------------------


def _hex_id(value: Any, length: int, seed: str) -> str:
    """`value` when it is hex of `length` digits, else a made-up id derived from `seed`."""
    if isinstance(value, str):
        lowered = value.lower()
        if len(lowered) == length and all(c in "0123456789abcdef" for c in lowered):
            return lowered
        if value:
            seed = value
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _status_code(value: Any) -> int:
    return value if isinstance(value, int) and value in (0, 1, 2) else STATUS_UNSET


def _nested(item: Mapping[str, Any], key: str, inner: str) -> Any:
    holder = item.get(key)
    return holder.get(inner) if isinstance(holder, Mapping) else None


def _mapping(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)
