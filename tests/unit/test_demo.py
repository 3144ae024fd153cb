"""The demo's scripted scenarios, checked offline with the real validators."""

from __future__ import annotations

import json
from collections import Counter
from random import Random
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import NoOpTracer

from factledger import check
from factledger.demo import MODELS, SCENARIOS, Repo, Scenario, World, episodes, git_blob_sha, play
from factledger.processors.kinds import Kind
from factledger.replay import transcript_spans

SEEDS = range(5)


@pytest.mark.parametrize(
    "scenario",
    SCENARIOS,
    ids=[f"{s.agent} {s.name} -> {s.kind.value if s.kind else 'pass'}" for s in SCENARIOS],
)
def test_every_scenario_yields_its_intended_verdict(scenario: Scenario):
    for seed in SEEDS:
        world = World(Random(seed))
        transcript, _ = play(
            world, scenario, MODELS[seed % len(MODELS)], Random(seed), NoOpTracer(), "c"
        )
        result = check(transcript)
        if scenario.kind is None:
            assert result.outcome.value == "pass", (seed, result.verdict.kinds)
        else:
            assert scenario.kind.value in result.verdict.kinds, (seed, result.verdict.kinds)


def test_scenarios_cover_every_finding_kind_both_agents_and_clean_turns():
    kinds = {s.kind for s in SCENARIOS if s.kind is not None}
    assert kinds == set(Kind) - {Kind.VALIDATOR_ERROR}
    assert {s.agent for s in SCENARIOS} == {"coder", "support"}
    for agent in ("coder", "support"):
        assert any(s.agent == agent and s.kind is None for s in SCENARIOS)
        assert any(s.agent == agent and s.kind is not None for s in SCENARIOS)
    assert len({m.name for m in MODELS}) >= 3
    assert len({m.hallucination_rate for m in MODELS}) == len(MODELS)


def test_the_stream_is_mostly_clean_and_every_turn_checks_as_scripted():
    stream = list(episodes(400, seed=7))
    clean = [e for e in stream if e.scenario.kind is None]
    assert 0.6 <= len(clean) / len(stream) <= 0.72
    assert {e.model.name for e in stream} == {m.name for m in MODELS}
    assert len({e.scenario.kind for e in stream}) == len(
        Kind
    )  # every kind but validator_error, and clean (None)
    for e in stream:
        verdict = check(e.transcript).verdict
        if e.scenario.kind is None:
            assert verdict.outcome.value == "pass", (e.index, e.scenario.name, verdict.kinds)
        else:
            assert e.scenario.kind.value in verdict.kinds, (e.index, e.scenario.name)


def test_the_stream_is_deterministic_given_the_seed():
    def digest(seed: int) -> list[Any]:
        return [(e.scenario.name, e.model.name, e.transcript) for e in episodes(60, seed)]

    assert digest(3) == digest(3)
    assert digest(3) != digest(4)


def test_the_repo_computes_real_git_hashes():
    # git hash-object of "hello" (no newline)
    assert git_blob_sha("hello") == "b6fc4c620b67d95f953a5c1c1230aaab5db5a1b0"
    repo = Repo({"a.txt": "a"})
    pushed = repo.put_file("b.txt", "b", "add b")
    assert repo.list_commits(limit=1) == [{"sha": pushed["commit"], "message": "add b"}]
    assert len(pushed["commit"]) == 40
    assert pushed["commit"] != repo.commits[0]["sha"]
    assert repo.list_files(".") == ["a.txt", "b.txt"]


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        (
            "gh_put_file",
            {"path": "x", "content": "y", "message": "m", "branch": "release/1.0"},
            "Error: push rejected: branch release/1.0 is protected",
        ),
        ("gh_put_file", {"path": "x", "message": "m"}, "Error: bad arguments:"),
        (
            "send_email",
            {"to": "x@partner.example", "subject": "s", "body": "b"},
            "Error: recipient rejected",
        ),
        ("shell_exec", {"command": "ls"}, "Error: unknown tool 'shell_exec'"),
        ("fetch_url", {"url": "https://nowhere.example/"}, "Error: 404 Not Found"),
    ],
    ids=[
        "a protected branch rejects the push",
        "a missing argument is an error answer",
        "an outside recipient is rejected",
        "an unregistered tool is an error answer",
        "an unknown page is a 404",
    ],
)
def test_tool_failures_are_answers_marked_as_errors(name, arguments, text):
    outcome = World(Random(0)).call(name, arguments)
    assert outcome.error
    assert outcome.text.startswith(text)


def test_live_spans_match_what_replay_emits_for_the_same_transcript():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    for scenario in SCENARIOS:
        exporter.clear()
        transcript, count = play(World(Random(1)), scenario, MODELS[0], Random(1), tracer, "c")
        live = _shape(exporter.get_finished_spans())
        assert len(live) == count
        exporter.clear()
        transcript_spans(transcript, tracer)
        assert _shape(exporter.get_finished_spans()) == live, scenario.name
    provider.shutdown()


def _shape(spans: tuple[ReadableSpan, ...]) -> list[tuple[str, dict[str, Any]]]:
    """Span names and GenAI content attributes, in start order, without the agent's ids."""
    ignored = {"gen_ai.agent.name", "gen_ai.conversation.id", "gen_ai.provider.name"}
    out = []
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        attributes = {k: v for k, v in (span.attributes or {}).items() if k not in ignored}
        name = span.name.split(" ")[0] if span.name.startswith("invoke_agent") else span.name
        out.append((name, attributes))
    return out


def test_a_tool_result_in_the_transcript_is_what_the_tool_returned():
    world = World(Random(2))
    push = next(s for s in SCENARIOS if s.name == "push")
    transcript, _ = play(world, push, MODELS[1], Random(2), NoOpTracer(), "c")
    result = json.loads(transcript["messages"][3]["content"])
    assert result["commit"] == world.repo.commits[-1]["sha"]
    counts = Counter(m["role"] for m in transcript["messages"])
    assert counts == {"system": 1, "user": 1, "assistant": 2, "tool": 1}
