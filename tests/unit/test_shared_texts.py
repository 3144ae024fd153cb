"""Long attribute texts that spans repeat, and the names of attributes, spans and scopes, are
decoded to one object (`collector.shared_texts`), whatever the request and its encoding,
and what is kept for that stays bounded."""

from __future__ import annotations

import base64
import json
import pickle
import threading

from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from factledger.collector import otlp
from factledger.collector.shared_texts import MAX_CHARS, MIN_CHARS, SharedTexts
from factledger.processors.spans import SpanRecord

INSTRUCTIONS = "You are the support agent of Northwind. " * 30
TOOLS = json.dumps([{"type": "function", "name": f"tool_{i}", "parameters": {}} for i in range(20)])


def _requests(calls: int) -> tuple[bytes, bytes]:
    """The protobuf and OTLP/JSON bodies of `calls` LLM calls, each carrying the agent's
    instructions and tool definitions, as the OTel SDK's exporter encodes them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("factledger.tests")
    for step in range(calls):
        with tracer.start_as_current_span(f"chat {step}") as span:
            span.set_attribute("gen_ai.system_instructions", INSTRUCTIONS)
            span.set_attribute("gen_ai.tool.definitions", TOOLS)
            span.set_attribute("gen_ai.output.messages", f"answer {step} " * 40)
    provider.shutdown()
    request = encode_spans(exporter.get_finished_spans())
    document = MessageToDict(request)
    for resource_spans in document["resourceSpans"]:
        for scope_spans in resource_spans["scopeSpans"]:
            for span in scope_spans["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return request.SerializeToString(), json.dumps(document).encode()


def _decoded(body: bytes, content_type: str) -> tuple[SpanRecord, ...]:
    return otlp.decode_request(body, content_type).spans


def test_spans_of_two_requests_share_their_repeated_texts_in_either_encoding() -> None:
    proto, as_json = _requests(2)
    spans = [
        *_decoded(proto, otlp.PROTOBUF),
        *_decoded(proto, otlp.PROTOBUF),
        *_decoded(as_json, otlp.JSON),
    ]
    assert len(spans) == 6
    for key in ("gen_ai.system_instructions", "gen_ai.tool.definitions"):
        first = spans[0].attributes[key]
        assert all(s.attributes[key] == first for s in spans)
        assert all(s.attributes[key] is first for s in spans)
    # Texts that differ stay apart, and each is what its span sent.
    answers = [s.attributes["gen_ai.output.messages"] for s in spans]
    assert answers == [f"answer {i} " * 40 for i in (0, 1)] * 3


def test_attribute_keys_and_span_and_scope_names_are_one_object_in_either_encoding() -> None:
    proto, as_json = _requests(2)
    spans = [
        *_decoded(proto, otlp.PROTOBUF),
        *_decoded(proto, otlp.PROTOBUF),
        *_decoded(as_json, otlp.JSON),
    ]
    first = spans[0]
    for span in spans[1:]:
        assert span.scope_name is first.scope_name == "factledger.tests"
        for key in first.attributes:
            (own,) = [k for k in span.attributes if k == key]
            assert own is key
    assert spans[0].name is spans[2].name is spans[4].name == "chat 0"
    # An invented name is the sender's to choose and stays exactly what it sent.
    assert [s.name for s in spans] == ["chat 0", "chat 1"] * 3


def test_a_chunk_pickled_to_a_worker_carries_a_repeated_text_once() -> None:
    proto, _ = _requests(20)
    spans = _decoded(proto, otlp.PROTOBUF)
    size = len(pickle.dumps(tuple(spans), protocol=pickle.HIGHEST_PROTOCOL))
    repeated = len(INSTRUCTIONS) + len(TOOLS)
    assert size < 2 * repeated + 20 * 1_000  # once, with each span's own few hundred bytes
    copies = pickle.loads(pickle.dumps(tuple(spans), protocol=pickle.HIGHEST_PROTOCOL))
    assert copies == tuple(spans)


def test_short_and_very_long_texts_are_left_as_they_are() -> None:
    shared = SharedTexts()
    short = "x" * (MIN_CHARS - 1)
    huge = "y" * (MAX_CHARS + 1)
    assert shared(short) == short and shared(huge) == huge
    assert len(shared) == 0


def test_what_is_kept_is_bounded_and_the_oldest_goes_first() -> None:
    shared = SharedTexts(max_texts=3)
    texts = [f"{i:04d}" + "z" * MIN_CHARS for i in range(5)]
    first = shared(texts[0])
    for text in texts[1:]:
        shared(text)
    assert len(shared) == 3
    again = "0000" + "z" * MIN_CHARS  # equal to the first, another object
    assert shared(again) is again  # the first is no longer kept
    assert shared(texts[4]) is texts[4]  # the latest still is
    assert first == again


def test_threads_decoding_at_once_get_equal_texts_and_a_bounded_store() -> None:
    shared = SharedTexts(max_texts=50)
    texts = [f"{i:03d}" + "w" * MIN_CHARS for i in range(200)]
    wrong: list[str] = []

    def decode(offset: int) -> None:
        for step in range(2_000):
            text = texts[(offset + step) % len(texts)]
            if shared(text) != text:
                wrong.append(text)

    threads = [threading.Thread(target=decode, args=(k * 37,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
    assert len(shared) <= 50
