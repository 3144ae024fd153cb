"""Cost of redaction before storage: microseconds per KiB of stored text.

Inputs: the ingest benchmark's spans, 2,000 distinct turns (`Redactor.span`, the
service's check per span), GenAI message JSON without secrets (the common case), the
same with a key, a password and a bearer token in it, and a megabyte of near misses per
rule family.

    python -m benchmarks.redaction
"""

from __future__ import annotations

import json
import time

from benchmarks.ingest import PROTOBUF, TurnFactory
from factledger.collector.otlp import decode_request
from factledger.collector.redaction import OPTIONAL_RULES, SECRET_RULES, Redactor

REPEATS = 2_000
SPAN_REQUESTS = 40
"""Requests of 50 turns (200 spans) each."""


def _messages(extra: str = "") -> str:
    turn = [
        {"role": "user", "parts": [{"type": "text", "content": "Where is order #W0001234?"}]},
        {
            "role": "tool",
            "parts": [
                {
                    "type": "tool_call_response",
                    "id": "call_1",
                    "response": json.dumps({"order_id": "#W0001234", "status": "shipped"}),
                }
            ],
        },
        {"role": "assistant", "parts": [{"type": "text", "content": "It shipped. " + extra}]},
    ]
    return json.dumps(turn * 8)


def _per_kib(redactor: Redactor, text: str) -> float:
    started = time.perf_counter()
    for _ in range(REPEATS):
        redactor.text(text)
    seconds = (time.perf_counter() - started) / REPEATS
    return seconds * 1e6 / (len(text) / 1024)


def _per_span(redactor: Redactor) -> float:
    """Distinct turns, as the service sees them: texts that repeat across turns (system
    instructions, tool definitions) are checked once, the rest every time."""
    factory = TurnFactory(PROTOBUF, b"redactio", first=1)
    spans = [
        span
        for _ in range(SPAN_REQUESTS)
        for span in decode_request(factory.body(50), PROTOBUF.content_type).spans
    ]
    started = time.perf_counter()
    for span in spans:
        redactor.span(span)
    return (time.perf_counter() - started) * 1e6 / len(spans)


def main() -> None:
    secrets = Redactor.default()
    print(f"ingest benchmark spans, Redactor.span: {_per_span(secrets):.1f} µs per span")
    everything = Redactor([*SECRET_RULES, *OPTIONAL_RULES.values()])
    clean = _messages()
    dirty = _messages(
        "key sk-proj-abcDEF1234567890abcdef1234, password: hunter22x, Bearer abcdefghijklmnop1"
    )
    print(
        f"text sizes: {len(clean) / 1024:.1f} KiB clean, {len(dirty) / 1024:.1f} KiB with secrets"
    )
    for name, redactor in (("secrets (default)", secrets), ("secrets+emails+phones", everything)):
        print(
            f"{name:>22}: {_per_kib(redactor, clean):5.1f} µs/KiB clean,"
            f" {_per_kib(redactor, dirty):5.1f} µs/KiB with secrets"
        )
    for unit in ("sk-", "-----BEGIN PRIVATE KEY-----", "bearer ", "password=", "a://b:", "x@y."):
        text = unit * (1_000_000 // len(unit))
        started = time.perf_counter()
        everything.text(text)
        print(f"1 MB of {unit!r:>30}: {time.perf_counter() - started:.3f} s")


if __name__ == "__main__":
    main()
