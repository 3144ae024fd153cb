"""load_example: the example-file layouts (flat attributes, SDK span lists, Langfuse
exports) read into SpanRecords, each tested on a small literal file written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from factledger.processors.normalize.fixtures import load_example
from factledger.processors.spans import STATUS_ERROR, STATUS_OK


def _write(tmp_path: Path, name: str, document: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_flat_attribute_file_is_one_span_with_made_up_ids(tmp_path):
    (record,) = load_example(_write(tmp_path, "one.json", {"gen_ai.operation.name": "chat"}))
    assert record.name == "one"
    assert len(record.trace_id) == 32 and len(record.span_id) == 16
    assert int(record.trace_id + record.span_id, 16) >= 0
    assert record.attributes == {"gen_ai.operation.name": "chat"}


def test_sdk_span_list_keeps_ids_times_status_events_and_parents(tmp_path):
    document = [
        {
            "name": "child",
            "spanContext": {"traceId": "A" * 32, "spanId": "b" * 16},
            "parentSpanId": "c" * 16,
            "status": {"code": 2, "message": "boom"},
            "startTime": [1_770_000_000, 5],
            "endTime": [1_770_000_001, 0],
            "events": [{"name": "e", "time": [1, 2], "attributes": {"k": "v"}}],
            "attributes": {"ai.operationId": "ai.toolCall"},
        },
        {"name": "no ids", "attributes": {}},
    ]
    child, bare = load_example(_write(tmp_path, "list.json", document))
    assert (child.trace_id, child.span_id, child.parent_span_id) == ("a" * 32, "b" * 16, "c" * 16)
    assert (child.status_code, child.status_message) == (STATUS_ERROR, "boom")
    assert child.start_time_unix_nano == 1_770_000_000_000_000_005
    assert child.end_time_unix_nano == 1_770_000_001_000_000_000
    assert child.events[0].name == "e" and child.events[0].time_unix_nano == 1_000_000_002
    assert len(bare.span_id) == 16 and bare.span_id != child.span_id


def _observation(**fields: Any) -> dict[str, Any]:
    base = {
        "id": "1" * 16,
        "traceId": "2" * 32,
        "parentObservationId": None,
        "type": "GENERATION",
        "name": "chat",
        "startTime": "2025-12-22T10:46:15.528Z",
        "endTime": "2025-12-22T10:46:18.725Z",
        "level": "DEFAULT",
        "statusMessage": None,
        "input": None,
        "output": None,
        "metadata": None,
    }
    return {**base, **fields}


def test_langfuse_export_restores_the_payload_attributes(tmp_path):
    metadata = {
        "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
        "resourceAttributes": {"service.name": "svc"},
        "scope": {"name": "agent_framework", "version": "1.0"},
    }
    observation = _observation(
        metadata=json.dumps(metadata),
        input='[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
        output='[{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]',
        level="ERROR",
        statusMessage="rate limited",
        parentObservationId="3" * 16,
    )
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes["gen_ai.input.messages"] == observation["input"]
    assert record.attributes["gen_ai.output.messages"] == observation["output"]
    assert (record.status_code, record.status_message) == (STATUS_ERROR, "rate limited")
    assert (record.span_id, record.trace_id, record.parent_span_id) == (
        "1" * 16,
        "2" * 32,
        "3" * 16,
    )
    assert record.start_time_unix_nano == 1_766_400_375_528_000_000
    assert (record.service_name, record.scope_name, record.scope_version) == (
        "svc",
        "agent_framework",
        "1.0",
    )
    assert record.status_code != STATUS_OK


def test_langfuse_export_keeps_payload_attributes_the_span_still_has(tmp_path):
    metadata = {"attributes": {"openinference.span.kind": "TOOL", "output.value": "kept"}}
    observation = _observation(metadata=metadata, input="{}", output="from langfuse")
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes["output.value"] == "kept"
    assert "input.value" not in record.attributes


def test_langfuse_sdk_observation_gets_its_langfuse_attributes_back(tmp_path):
    observation = _observation(
        metadata=json.dumps({"thread_id": "t-1", "inputs": {"q": 1}, "scope": {"name": "x"}}),
        input="[]",
        model="gpt-4o",
    )
    (record,) = load_example(_write(tmp_path, "t.trace.json", {"observations": [observation]}))
    assert record.attributes == {
        "langfuse.observation.type": "generation",
        "langfuse.observation.input": "[]",
        "langfuse.observation.model.name": "gpt-4o",
        "langfuse.observation.metadata.thread_id": "t-1",
        "langfuse.observation.metadata.inputs": '{"q": 1}',
    }


@pytest.mark.parametrize(
    ("content", "message"),
    [
        pytest.param("{broken", "not readable as JSON", id="invalid-json"),
        pytest.param("42", "neither a span list", id="unknown-layout"),
        pytest.param(
            json.dumps({"observations": [_observation(metadata="{bad")]}),
            "metadata is not JSON",
            id="langfuse-metadata-unreadable",
        ),
    ],
)
def test_unreadable_example_files_fail_naming_the_file(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as excinfo:
        load_example(path)
    assert "bad.json" in str(excinfo.value)
