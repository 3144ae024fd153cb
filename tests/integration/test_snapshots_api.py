"""Evidence snapshots end to end: an agent turn emitted through the real OpenTelemetry SDK
and its OTLP/HTTP exporter to a real `factledger serve` (embedded ClickHouse) fetches one
page and cites it and a page it never fetched; the query API shows the page's snapshot,
its content redacted, and the citations backed and unbacked."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind

from factledger.service_process import ServiceProcess

TOKEN = "snapshots-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PAGE = "https://docs.example.org/limits"
UNFETCHED = "https://docs.example.org/quotas"
SECRET = "sk-proj-Cx7Rq2Lm9Tz4Wv8Kp1Nb6Hd3"
PAGE_TEXT = f"Rate limits: 10 requests per second. Example key: {SECRET}"
REPLY = f"The limit is 10 requests per second.\n\nSources:\n- {PAGE}/\n- {UNFETCHED}"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {"FACTLEDGER_INGEST_TOKEN": TOKEN, "FACTLEDGER_API_OPEN": "1"}
    with ServiceProcess(tmp_path_factory.mktemp("snapshots"), env) as svc:
        yield svc


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _fetch_and_cite(url: str) -> str:
    """A GenAI agent turn: fetch PAGE (twice: the same document), answer citing it and
    UNFETCHED; returns the trace id."""
    provider = TracerProvider(resource=Resource({"service.name": "snapshot-agent"}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces", headers=AUTH))
    )
    tracer = provider.get_tracer("tests.snapshots")
    ask = [_text("user", "What is the API's rate limit? Cite your sources.")]
    tools = json.dumps([{"type": "function", "name": "fetch_url", "parameters": {}}])
    chat = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"}
    history = list(ask)
    try:
        with tracer.start_as_current_span(
            "invoke_agent researcher",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "researcher"},
        ) as root:
            for call_id in ("call_1", "call_2"):
                request = {
                    "role": "assistant",
                    "parts": [
                        {
                            "type": "tool_call",
                            "id": call_id,
                            "name": "fetch_url",
                            "arguments": {"url": PAGE},
                        }
                    ],
                }
                with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as span:
                    span.set_attributes(chat)
                    span.set_attribute("gen_ai.tool.definitions", tools)
                    span.set_attribute("gen_ai.input.messages", json.dumps(history))
                    span.set_attribute("gen_ai.output.messages", json.dumps([request]))
                tool = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "fetch_url",
                    "gen_ai.tool.call.id": call_id,
                    "gen_ai.tool.call.arguments": json.dumps({"url": PAGE}),
                    "gen_ai.tool.call.result": PAGE_TEXT,
                }
                with tracer.start_as_current_span("execute_tool fetch_url", attributes=tool):
                    pass
                response = {
                    "role": "tool",
                    "parts": [{"type": "tool_call_response", "id": call_id, "response": PAGE_TEXT}],
                }
                history += [request, response]
            with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as span:
                span.set_attributes(chat)
                span.set_attribute("gen_ai.tool.definitions", tools)
                span.set_attribute("gen_ai.input.messages", json.dumps(history))
                span.set_attribute(
                    "gen_ai.output.messages", json.dumps([_text("assistant", REPLY)])
                )
            trace_id = format(root.get_span_context().trace_id, "032x")
    finally:
        provider.shutdown()
    return trace_id


def _turn_of(url: str, trace_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        turns = httpx.get(f"{url}/api/v1/turns", params={"trace_id": trace_id}, timeout=10)
        for turn in turns.json()["turns"]:
            shown: dict[str, Any] = httpx.get(
                f"{url}/api/v1/turns/{turn['turn_id']}", timeout=10
            ).json()
            return shown
        time.sleep(0.2)
    raise AssertionError(f"no turn of trace {trace_id} within {timeout}s")


def test_a_fetched_and_cited_page_is_one_redacted_snapshot_backing_its_citation(
    service: ServiceProcess,
) -> None:
    turn = _turn_of(service.url, _fetch_and_cite(service.url))
    digest = hashlib.sha256(PAGE_TEXT.encode("utf-8")).hexdigest()

    (snapshot,) = turn["snapshots"]
    assert snapshot["hash"] == digest
    assert snapshot["url_or_path"] == PAGE
    assert (snapshot["tool"], snapshot["call_id"]) == ("fetch_url", "call_1")
    assert snapshot["size"] == len(PAGE_TEXT.encode("utf-8"))

    reply = turn["reply"]
    assert [(c["cited"], c["snapshot"]) for c in turn["citations"]] == [
        (f"{PAGE}/", digest),
        (UNFETCHED, None),
    ]
    assert all(reply[c["start"] : c["end"]] == c["cited"] for c in turn["citations"])
    assert "unfetched_citation" in {f["kind"] for f in turn["findings"]}

    shown = httpx.get(f"{service.url}/api/v1/snapshots/{digest}", timeout=10)
    assert shown.status_code == 200
    body = shown.json()
    assert SECRET not in shown.text
    assert body["content"].startswith("Rate limits: 10 requests per second.")
    assert "[REDACTED:openai_key]" in body["content"]
    assert (body["hash"], body["turn_id"]) == (digest, turn["turn_id"])


def test_a_snapshot_is_read_within_its_tenant_and_by_hash_only(service: ServiceProcess) -> None:
    missing = httpx.get(f"{service.url}/api/v1/snapshots/{'0' * 64}", timeout=10)
    assert missing.status_code == 404
    not_a_hash = httpx.get(f"{service.url}/api/v1/snapshots/not-a-hash", timeout=10)
    assert not_a_hash.status_code == 422
    turn = _turn_of(service.url, _fetch_and_cite(service.url))
    digest = turn["snapshots"][0]["hash"]
    other = httpx.get(
        f"{service.url}/api/v1/snapshots/{digest}", params={"tenant": "other"}, timeout=10
    )
    assert other.status_code == 404
