"""What the in-loop guard did, counted by the service: turns whose spans carry the guard's
decisions, written by the adapters' own recorder (`factledger.guards.telemetry.record`)
with the real OTel SDK, exported over OTLP/HTTP to the service on a loopback port (real
chDB), and read back through the query API per model and agent and per turn."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import httpx
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.integration.guarded_turns import (
    CORRECT,
    FABRICATED,
    FAKE,
    FOOTNOTE,
    RAISE,
    USER,
    decisions,
    send_turn,
)


def _judged(url: str, traces: Sequence[str]) -> dict[str, dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        page = httpx.get(f"{url}/api/v1/turns", params={"limit": 100}).json()
        found = {t["trace_id"]: t for t in page["turns"] if t["trace_id"] in traces}
        if len(found) == len(traces):
            return found
        time.sleep(0.1)
    raise AssertionError("the turns were not judged in time")


def test_guard_counts_per_model_and_agent_and_per_turn(served: str) -> None:
    provider = TracerProvider(resource=Resource({"service.name": "release-bot"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{served}/v1/traces")))
    tracer = provider.get_tracer("tests")
    echo_user = f"{USER} It sits on top of commit {FAKE}."
    try:
        traces = {
            "corrected": send_turn(
                tracer, "release", "gpt-4o", decisions(FOOTNOTE, [FABRICATED, CORRECT])
            ),
            "refused": send_turn(
                tracer,
                "release",
                "gpt-4o",
                decisions(FOOTNOTE, [FABRICATED] * 3),
                per_step=True,
            ),
            "passed": send_turn(tracer, "release", "gpt-4o", decisions(FOOTNOTE, [CORRECT])),
            "footnoted": send_turn(
                tracer, "release", "gpt-4o-mini", decisions(FOOTNOTE, [FABRICATED], echo_user)
            ),
            "raised": send_turn(
                tracer, "release", "gpt-4o-mini", decisions(RAISE, [FABRICATED] * 3)
            ),
            "unguarded": send_turn(tracer, "release", "gpt-4o-mini", []),
        }
    finally:
        provider.shutdown()
    turns = _judged(served, list(traces.values()))

    summary = httpx.get(f"{served}/api/v1/stats/guard").json()
    assert summary["groups"] == [
        {"model": "gpt-4o", "agent": "release", "turns": 3, "checks": 6, "nudges": 3,
         "passed": 1, "footnoted": 0, "corrected": 1, "refused": 1},
        {"model": "gpt-4o-mini", "agent": "release", "turns": 2, "checks": 4, "nudges": 2,
         "passed": 0, "footnoted": 1, "corrected": 0, "refused": 1},
    ]  # fmt: skip
    assert summary["total"] == {"turns": 5, "checks": 10, "nudges": 5, "passed": 1,
                                "footnoted": 1, "corrected": 1, "refused": 2}  # fmt: skip

    def guard_of(case: str) -> dict[str, Any]:
        turn_id = turns[traces[case]]["turn_id"]
        guard: dict[str, Any] = httpx.get(f"{served}/api/v1/turns/{turn_id}").json()["guard"]
        return guard

    assert guard_of("corrected") == {
        "checks": 2, "nudges": 1, "outcome": "pass", "action": "pass", "result": "corrected"
    }  # fmt: skip
    assert guard_of("refused") == {
        "checks": 3, "nudges": 2, "outcome": "reject", "action": "annotate", "result": "refused"
    }  # fmt: skip
    assert guard_of("raised")["result"] == "refused"
    assert guard_of("footnoted")["result"] == "footnoted"
    assert guard_of("unguarded") == {
        "checks": 0, "nudges": 0, "outcome": "", "action": "", "result": "unguarded"
    }  # fmt: skip

    # The usual filters: another service has none, a window before the turns has none.
    other = httpx.get(f"{served}/api/v1/stats/guard", params={"service": "other"}).json()
    assert other == {"groups": [], "total": dict.fromkeys(summary["total"], 0)}
    before = httpx.get(
        f"{served}/api/v1/stats/guard",
        params={"since": "2020-01-01T00:00:00Z", "until": "2020-01-02T00:00:00Z"},
    ).json()
    assert before["groups"] == []
    assert (
        httpx.get(f"{served}/api/v1/stats/guard", params={"service": "release-bot"}).json()
        == summary
    )
