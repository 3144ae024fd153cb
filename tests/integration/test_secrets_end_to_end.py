"""No secret is stored, served or logged, end to end: agent turns emitted through the real
OpenTelemetry SDK and its OTLP/HTTP exporter to a real `factledger serve` carry a shape of
every family of the secret corpus (tests/unit/secret_corpus.py) where agents put them: the
user's message, a tool's arguments, its result as it is and as a JSON body string, the
next LLM call's input messages (which hold that result two and three JSON encodings deep),
a span attribute and a span event, the reply, a fetched document (an evidence snapshot)
and cited URLs whose query string holds a credential: the fetched one and one never
fetched (an `unfetched_citation` finding the links source checks, so the URL reaches
`findings`, `verifications` and the citations); and an OTLP log record carries one in its
body. Once everything is stored, judged and verified, no secret's distinctive part is in
any table of the store, any answer of the query API or the service's log (access log
included: query strings hold them too, percent-encoded), and the write-ahead log, which
holds raw requests until they are stored, soon holds nothing (docs/redaction.md).

The same run with redaction switched off finds the secrets in each of those places, so
the search cannot pass for want of looking.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any
from urllib.parse import urlsplit

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import SpanKind, Tracer

from factledger.collector.ingest.wal import WriteAheadLog
from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import log_request
from tests.integration.stored_text import stored_tables
from tests.unit.secret_corpus import SHAPES, SecretShape

JSON = {"Content-Type": "application/json"}


def _sample() -> tuple[SecretShape, ...]:
    """The first shape of every family, and every URL whose query string holds the secret
    (they become citations)."""
    families: dict[str, SecretShape] = {}
    for shape in SHAPES:
        families.setdefault(shape.family, shape)
    queries = tuple(s for s in SHAPES if _query(s) and s not in families.values())
    return (*families.values(), *queries)


def _query(shape: SecretShape) -> str:
    """The query string of a shape that is an http(s) URL with its secret there, else ''."""
    if not shape.text.startswith(("http://", "https://")):
        return ""
    query = urlsplit(shape.text).query
    return query if any(part in query for part in shape.secret) else ""


SAMPLE = _sample()


# --- the sites the agent reads and cites ----------------------------------------------------


@contextmanager
def _site() -> Iterator[str]:
    """A loopback web site where every page exists (the links source asks it)."""

    class Page(BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_HEAD

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _settings(directory: Path, site: str, *, redaction: bool) -> tuple[dict[str, str], Path]:
    """The service's environment and settings file: links checked on the loopback site,
    redaction as the built-in rules have it or switched off."""
    port = urlsplit(site).port
    config = directory / "factledger.toml"
    config.write_text(
        "[verification]\n[verification.links]\n"
        f'allow_hosts = ["127.0.0.1"]\nallow_private = true\nallowed_ports = [{port}]\n'
        'resolver_canary = ""\ncache_ttl_seconds = 0\nper_host_per_second = 1000\n',
        encoding="utf-8",
    )
    env = {"FACTLEDGER_API_OPEN": "1", "FACTLEDGER_WAL_SEGMENT_SECONDS": "2"}
    if not redaction:
        off = directory / "redaction.toml"
        off.write_text("[redaction]\nenabled = false\n", encoding="utf-8")
        env["FACTLEDGER_REDACTION"] = str(off)
        # Segments open for the whole run: the raw requests are still there to be found,
        # so the write-ahead log's search below is not vacuous.
        env["FACTLEDGER_WAL_SEGMENT_SECONDS"] = "3600"
    return env, config


# --- the agent ------------------------------------------------------------------------------


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}


def _agent_turn(tracer: Tracer, index: int, shape: SecretShape, site: str) -> tuple[str, str]:
    """One turn carrying `shape` everywhere agents put secrets; its trace id and the id of
    its first chat span (a log record names it)."""
    query = f"?{_query(shape)}" if _query(shape) else ""
    page, unfetched = f"{site}/docs/{index}{query}", f"{site}/cited/{index}{query}"
    calls = [
        ("run_shell", {"command": f"cat .env # {shape.text}"}, shape.text),
        (
            "http_get",
            {"url": f"{site}/status"},
            json.dumps({"status": 200, "body": json.dumps({"output": shape.text})}),
        ),
        ("fetch_url", {"url": page}, f"Setup guide {index}.\n\n{shape.text}\n"),
    ]
    tools = json.dumps([{"type": "function", "name": c[0], "parameters": {}} for c in calls])
    history = [_text("user", f"Deploy with this: {shape.text}")]
    chat_ids: list[str] = []

    def chat(output: list[dict[str, Any]]) -> None:
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT) as span:
            span.set_attributes({"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"})
            span.set_attribute("gen_ai.tool.definitions", tools)
            span.set_attribute("gen_ai.input.messages", json.dumps(history))
            span.set_attribute("gen_ai.output.messages", json.dumps(output))
            chat_ids.append(format(span.get_span_context().span_id, "016x"))

    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "deployer"}
    with tracer.start_as_current_span("invoke_agent deployer", attributes=agent) as root:
        root.set_attribute("app.config.dump", shape.text)
        root.add_event("config.read", {"content": shape.text})
        for number, (name, arguments, result) in enumerate(calls, 1):
            call_id = f"call_{index}_{number}"
            request = {"role": "assistant", "parts": [_call(call_id, name, arguments)]}
            chat([request])
            tool = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.arguments": json.dumps(arguments),
                "gen_ai.tool.call.result": result,
            }
            with tracer.start_as_current_span(f"execute_tool {name}", attributes=tool):
                pass
            response = {"type": "tool_call_response", "id": call_id, "response": result}
            history += [request, {"role": "tool", "parts": [response]}]
        chat(
            [
                _text(
                    "assistant", f"Deployed with {shape.text}.\n\nSources:\n- {page}\n- {unfetched}"
                )
            ]
        )
    return format(root.get_span_context().trace_id, "032x"), chat_ids[0]


def _send(url: str, site: str) -> None:
    """Every sampled turn through the SDK's exporter, then a log record per turn with the
    secret in its body, naming the turn's first chat span."""
    provider = TracerProvider(resource=Resource({"service.name": "deploy-agent"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=f"{url}/v1/traces")))
    try:
        named = [
            _agent_turn(provider.get_tracer("tests.secrets"), index, shape, site)
            for index, shape in enumerate(SAMPLE)
        ]
    finally:
        provider.shutdown()
    for (trace_id, span_id), shape in zip(named, SAMPLE, strict=True):
        body = log_request(trace_id, span_id, [("gen_ai.user.message", {"content": shape.text})])
        sent = httpx.post(f"{url}/v1/logs", headers=JSON, content=body, timeout=30)
        assert sent.status_code == 200 and "rejected" not in sent.text, sent.text


# --- what the service keeps and shows -------------------------------------------------------


def _judged_and_verified(url: str, timeout: float = 60) -> list[dict[str, Any]]:
    """Every sampled turn as `/api/v1/turns/{id}` shows it, once each is judged, holds
    its log record and has its citation checked."""
    deadline = time.monotonic() + timeout
    shown: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        listed = httpx.get(
            f"{url}/api/v1/turns", params={"verdict": ["reject", "flag", "pass"], "limit": 500}
        ).json()["turns"]
        shown = [httpx.get(f"{url}/api/v1/turns/{t['turn_id']}").json() for t in listed]
        if len(shown) == len(SAMPLE) and all(_settled(turn) for turn in shown):
            return shown
        time.sleep(0.3)
    raise AssertionError(f"{len(shown)} of {len(SAMPLE)} turns settled in {timeout}s")


def _settled(turn: dict[str, Any]) -> bool:
    links = [v for v in turn["verifications"] if v["source"] == "link"]
    logged = any(span.get("name") == "gen_ai.user.message" for span in turn["spans"])
    return bool(links and turn["snapshots"] and turn["citations"] and logged)


def _answers(url: str, turns: list[dict[str, Any]]) -> dict[str, str]:
    """Every query API answer about the turns, as text by path."""
    paths = [
        "/api/v1/turns?verdict=reject&verdict=flag&verdict=pass&limit=500",
        "/api/v1/review-queue?limit=500",
        "/api/v1/review-queue/groups",
        "/api/v1/verifications/summary",
        "/api/v1/reviews",
        *(f"/api/v1/turns/{turn['turn_id']}" for turn in turns),
        *(f"/api/v1/snapshots/{s['hash']}" for turn in turns for s in turn["snapshots"]),
    ]
    answers: dict[str, str] = {}
    for path in paths:
        answer = httpx.get(f"{url}{path}", timeout=30)
        assert answer.status_code == 200, (path, answer.text)
        answers[f"GET {path}"] = answer.text
    return answers


def _write_ahead_log(data: Path) -> dict[str, bytes]:
    return {
        f"wal {path.name}": path.read_bytes()
        for path in sorted((data / "wal").glob("segment-*.wal"))
    }


def _wait_for_empty_log(data: Path, timeout: float = 60.0) -> None:
    """Until the write-ahead log holds no request: each segment is deleted once it is
    closed (2 s here) and all of it is stored, with no further traffic needed."""
    deadline = time.monotonic() + timeout
    while _write_ahead_log(data):
        assert time.monotonic() < deadline, (
            f"raw requests still on disk: {sorted(_write_ahead_log(data))}"
        )
        time.sleep(0.2)


def _observed(directory: Path, *, redaction: bool) -> dict[str, bytes]:
    """Every place a secret could end up after the run, as bytes by place."""
    data = directory / "service"
    with _site() as site:
        env, config = _settings(directory, site, redaction=redaction)
        with ServiceProcess(data, env, args=["--config", str(config)]) as service:
            _send(service.url, site)
            turns = _judged_and_verified(service.url)
            answers = _answers(service.url, turns)
            for shape in SAMPLE:  # the access log sees query strings
                httpx.get(f"{service.url}/api/v1/turns", params={"conversation_id": shape.text})
            if redaction:
                _wait_for_empty_log(data)
            wal = _write_ahead_log(data)
        log = service.log()
    tables = stored_tables(data)
    assert {"spans", "turns", "findings", "verifications", "snapshots", "turn_evidence"} <= set(
        tables
    )
    return {
        **{f"table {name}": text.encode() for name, text in tables.items()},
        **{place: text.encode() for place, text in answers.items()},
        "service log": log.encode(),
        **wal,
    }


def _leaks(places: dict[str, bytes]) -> list[str]:
    """Where each sampled shape's secret parts are found (as they are, or as the hex bytes
    attributes are stored in)."""
    return [
        f"{shape.family}: {shape.name}: {part!r} in {place}"
        for shape in SAMPLE
        for part in shape.secret
        for place, content in places.items()
        if part.encode() in content or part.encode().hex().encode() in content
    ]


def _kind(place: str) -> str:
    return place.split(" ", 1)[0] if not place.startswith("service") else place


# --- the tests ------------------------------------------------------------------------------


def test_no_secret_of_the_corpus_is_stored_served_or_logged(tmp_path: Path) -> None:
    assert {shape.family for shape in SAMPLE} == {shape.family for shape in SHAPES}
    places = _observed(tmp_path, redaction=True)
    # The write-ahead log deletes a raw request once its segment is closed and stored
    # (docs/redaction.md): nothing of it is left, and nothing would be replayed.
    assert not [place for place in places if place.startswith("wal ")]
    assert not list(WriteAheadLog(tmp_path / "service" / "wal").replay(include_released=True))
    leaks = _leaks(places)
    assert not leaks, "\n".join(leaks)


def test_with_redaction_off_every_place_searched_holds_the_secrets(tmp_path: Path) -> None:
    places = _observed(tmp_path, redaction=False)
    found = {leak.rsplit(" in ", 1)[1] for leak in _leaks(places)}
    searched = {"table", "GET", "service log", "wal"}
    assert {_kind(place) for place in found} == searched
    for table in ("spans", "turns", "findings", "verifications", "snapshots", "turn_evidence"):
        assert f"table {table}" in found
    assert any(place.startswith("GET /api/v1/snapshots/") for place in found)
