"""The guard's counts as the service reads them from a real framework's spans.

A guard set-up (`setups/_guarding.py`) runs in its framework's virtualenv against the
scripted LLM and also exports its spans over OTLP/HTTP to the conformance service; the
service rebuilds each case's turn with what the guard did, and the query API answers per
turn and per model and agent: a fabricated commit nudged once is `corrected`, a model
that repeats it is `refused`, a clean reply `passed`, a commit quoted from the user
`footnoted`. A set-up whose virtualenv is missing fails under CI=true.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import httpx
import pytest

from factledger.service_process import ServiceProcess

from .fake_llm import FakeLlm
from .guards import GuardSetUp, run_guard_setup
from .harness import settle, turns_of
from .test_guards import GUARD_SETUPS

EXPECTED: Mapping[str, tuple[str, int]] = {
    "guard-fab": ("corrected", 1),
    "guard-fab-stuck": ("refused", 2),
    "guard-err-object": ("corrected", 1),
    "guard-clean": ("passed", 0),
    "guard-echo": ("footnoted", 0),
}
"""Per case: what the turn came to under the guard, and the nudges it took."""

RAISED = {"guard-raise-fab-stuck": ("refused", 2)}
"""A guard set to raise: refused after its two nudges, where the span of the raise is
exported with the turn (Pydantic AI's agent span; smolagents' is not, so far)."""

SETUPS = {s.id: s for s in GUARD_SETUPS}
COUNTED = [
    pytest.param(SETUPS["guard-pydantic-ai"], {**EXPECTED, **RAISED}, id="pydantic-ai"),
    pytest.param(SETUPS["guard-smolagents-toolcalling"], EXPECTED, id="smolagents-toolcalling"),
    pytest.param(SETUPS["guard-langchain"], {**EXPECTED, **RAISED}, id="langchain"),
    pytest.param(SETUPS["guard-strands"], {**EXPECTED, **RAISED}, id="strands"),
    pytest.param(SETUPS["guard-google-adk"], {**EXPECTED, **RAISED}, id="google-adk"),
    pytest.param(SETUPS["guard-crewai"], {**EXPECTED, **RAISED}, id="crewai"),
    pytest.param(SETUPS["guard-langgraph-node"], {**EXPECTED, **RAISED}, id="langgraph-node"),
]


def _to_service(setup: GuardSetUp, url: str) -> GuardSetUp:
    """The set-up exporting to the service as well, under a service name of its own."""
    env = {
        **setup.extra_env,
        "OTEL_EXPORTER_OTLP_ENDPOINT": url,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        # The standard switch that puts message content on GenAI spans (Google ADK's
        # record none without it), as the framework's conformance set-up runs it.
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
    }
    return replace(setup, id=f"{setup.id}-counted", extra_env=env)


def _case_of(turn: Mapping[str, Any]) -> str:
    """The case a turn ran: the repository its push named (the user message of a retried
    turn may be the framework's wrapping of the nudge)."""
    for call in turn["tool_calls"]:
        arguments = call["arguments"]
        if isinstance(arguments, Mapping) and str(arguments.get("repo", "")).startswith("acme/"):
            return str(arguments["repo"]).removeprefix("acme/")
    return ""


@pytest.mark.parametrize(("setup", "expected"), COUNTED)
def test_the_service_counts_what_the_guard_did_in_each_case(
    service: ServiceProcess,
    fake_llm: FakeLlm,
    setup: GuardSetUp,
    expected: Mapping[str, tuple[str, int]],
) -> None:
    if not setup.interpreter.exists():
        message = f"{setup.interpreter} is missing: `make conformance-envs` builds it"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    counted = _to_service(setup, service.url)
    run = run_guard_setup(counted, fake_llm)
    settle(service.url)

    turns = {_case_of(t): t for t in turns_of(service.url, counted.id)}
    got = {case: (turns[case]["guard"]["result"], turns[case]["guard"]["nudges"])
           for case in expected if case in turns}  # fmt: skip
    assert got == dict(expected), run.output[-4000:]
    # And the service's own verdict on the reply the run kept: the corrected one passes,
    # a fabrication the model kept after the nudges is rejected (its nudges quote it,
    # and they are no user message that would make it the user's).
    verdicts = {case: turns[case]["verdict"] for case in ("guard-fab", "guard-fab-stuck")}
    assert verdicts == {"guard-fab": "pass", "guard-fab-stuck": "reject"}, verdicts

    summary = httpx.get(
        f"{service.url}/api/v1/stats/guard", params={"service": counted.id}, timeout=30
    ).json()
    results = [result for result, _ in expected.values()]
    assert summary["total"] == {
        "turns": len(expected),
        "checks": summary["total"]["checks"],
        "nudges": sum(nudges for _, nudges in expected.values()),
        **{r: results.count(r) for r in ("passed", "footnoted", "corrected", "refused")},
    }
    assert summary["total"]["checks"] == len(expected) + summary["total"]["nudges"]
    [group] = summary["groups"]  # one agent on one model
    assert {k: v for k, v in group.items() if k not in ("model", "agent")} == summary["total"]
