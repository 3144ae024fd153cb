"""Replay and demo through the real OTLP/HTTP exporter to a loopback sink.

The sink is a plain HTTP server that decodes what it receives with the OTLP protobuf
types; the end-to-end run through the FactLedger service is tested with the service.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from factledger.demo import run_demo
from factledger.replay import ExportError, replay


@dataclass
class Sink:
    url: str
    status: int = 200
    paths: list[str] = field(default_factory=list)
    spans: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def sink() -> Iterator[Sink]:
    state = Sink(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            with state.lock:
                state.paths.append(self.path)
                if state.status == 200:
                    state.spans.extend(_decoded(body))
            payload = ExportTraceServiceResponse().SerializeToString()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def _decoded(body: bytes) -> list[dict[str, Any]]:
    request = ExportTraceServiceRequest.FromString(body)
    out = []
    for resource_spans in request.resource_spans:
        resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                out.append(
                    {
                        "service": resource.get("service.name"),
                        "trace": span.trace_id.hex(),
                        "parent": span.parent_span_id.hex(),
                        "name": span.name,
                        "attributes": {a.key: a.value.string_value for a in span.attributes},
                    }
                )
    return out


def _cases(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "cases.jsonl"
    lines = ["// replayed by the test"]
    for i in range(count):
        transcript = {
            "model": "gpt-4o",
            "tools": [],
            "messages": [
                {"role": "user", "content": f"question {i}"},
                {"role": "assistant", "content": f"answer {i}"},
            ],
        }
        lines.append(
            json.dumps(
                {"id": f"case-{i}", "transcript": transcript, "expected": {"verdict": "pass"}}
            )
        )
    lines.append(
        json.dumps(
            {"id": "broken", "transcript": {"messages": []}, "expected": {"verdict": "pass"}}
        )
    )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_replay_sends_one_trace_per_record_to_the_traces_path(sink, tmp_path):
    report = replay(_cases(tmp_path, 120), sink.url, timeout=5.0)
    assert (report.records, report.spans, report.failed, report.skipped) == (120, 240, 0, 1)
    assert "broken" in report.errors[0]
    assert set(sink.paths) == {"/v1/traces"}
    roots = [s for s in sink.spans if not s["parent"]]
    assert len(roots) == 120
    assert len({s["trace"] for s in sink.spans}) == 120
    assert {s["service"] for s in sink.spans} == {"factledger-replay"}
    assert sorted(r["attributes"]["gen_ai.conversation.id"] for r in roots)[:2] == [
        "case-0",
        "case-1",
    ]


def test_demo_streams_its_turns_through_the_exporter(sink):
    started = time.monotonic()
    report = run_demo(sink.url, turns=30, seed=11, rate=200.0, progress=False)
    assert time.monotonic() - started >= 29 / 200
    assert report.turns == 30
    assert report.failed == 0
    assert report.spans == len(sink.spans)
    assert report.clean + sum(report.intended.values()) == 30
    roots = [s for s in sink.spans if not s["parent"]]
    assert len(roots) == 30
    assert {r["attributes"]["gen_ai.agent.name"] for r in roots} == {"coder", "support"}
    assert {s["service"] for s in sink.spans} == {"factledger-demo"}


def test_an_endpoint_that_refuses_everything_stops_the_replay(sink, tmp_path):
    sink.status = 401
    with pytest.raises(ExportError, match="accepted none"):
        replay(_cases(tmp_path, 5), sink.url, timeout=2.0, progress=False)
    assert len(sink.paths) == 1
