"""The guard inside each framework's own loop, against the scripted LLM.

Every adapter of factledger.guards runs in its framework's virtualenv (a set-up program
`setups/guard_*.py`) over the same cases: a fabricated commit is nudged once and the
framework's run result is the corrected reply; a model that repeats it gets the escalated
footnote after `max_nudges` nudges (or the framework's error, when set to raise); a
failed push reported as done is nudged with the failed call and its error; a clean reply
is untouched with no extra model call; a commit quoted from the user gets the echo
footnote. A set-up whose virtualenv is missing fails under CI=true and is skipped
otherwise (`make conformance-envs` builds it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from .fake_llm import Exchange, FakeLlm
from .guards import (
    NUDGE_MARKER,
    GuardRun,
    GuardSetUp,
    corrected,
    fabricated,
    run_guard_setup,
)
from .setups._common import FAILURE_TEXT, fabricated_sha
from .setups._guarding import MAX_NUDGES

GUARD_SETUPS = [
    GuardSetUp("guard-pydantic-ai", "pydantic-ai", "guard_pydantic_ai",
               exhausted_error="UnexpectedModelBehavior"),
    GuardSetUp("guard-pydantic-ai-events", "pydantic-ai", "guard_pydantic_ai",
               exhausted_error="UnexpectedModelBehavior", streams=True,
               extra_env={"GUARD_STREAM": "events"}),
    GuardSetUp("guard-pydantic-ai-run-stream", "pydantic-ai", "guard_pydantic_ai",
               exhausted_error="UnexpectedModelBehavior", streams=True, retries=False,
               extra_env={"GUARD_STREAM": "run_stream"}),
    GuardSetUp("guard-openai-agents", "openai-agents-openinference", "guard_openai_agents",
               exhausted_error="OutputGuardrailTripwireTriggered"),
    GuardSetUp("guard-openai-agents-streamed", "openai-agents-openinference",
               "guard_openai_agents", exhausted_error="OutputGuardrailTripwireTriggered",
               streams=True, extra_env={"GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-openai-agents-session", "openai-agents-openinference",
               "guard_openai_agents", exhausted_error="OutputGuardrailTripwireTriggered",
               extra_env={"GUARD_SESSION": "1"}),
    GuardSetUp("guard-smolagents-toolcalling", "smolagents", "guard_smolagents",
               exhausted_error="AgentError", extra_env={"CONFORMANCE_AGENT": "toolcalling"}),
    GuardSetUp("guard-smolagents-toolcalling-streamed", "smolagents", "guard_smolagents",
               exhausted_error="AgentError", streams=True,
               extra_env={"CONFORMANCE_AGENT": "toolcalling", "GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-smolagents-code", "smolagents", "guard_smolagents",
               exhausted_error="AgentError", extra_env={"CONFORMANCE_AGENT": "code"}),
    GuardSetUp("guard-langchain", "langchain", "guard_langchain",
               exhausted_error="OutputParserException"),
    GuardSetUp("guard-langchain-streamed", "langchain", "guard_langchain",
               exhausted_error="OutputParserException", streams=True,
               extra_env={"GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-langgraph-node", "langchain", "guard_langchain",
               exhausted_error="OutputParserException", extra_env={"GUARD_GRAPH": "1"}),
    GuardSetUp("guard-langgraph-node-streamed", "langchain", "guard_langchain",
               exhausted_error="OutputParserException", streams=True,
               extra_env={"GUARD_GRAPH": "1", "GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-strands", "strands", "guard_strands",
               exhausted_error="EventLoopException"),
    GuardSetUp("guard-strands-async", "strands", "guard_strands",
               exhausted_error="EventLoopException", extra_env={"GUARD_STREAM": "async"}),
    GuardSetUp("guard-strands-streamed", "strands", "guard_strands",
               exhausted_error="EventLoopException", streams=True,
               extra_env={"GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-google-adk", "google-adk", "guard_google_adk",
               exhausted_error="RuntimeError"),
    GuardSetUp("guard-google-adk-streamed", "google-adk", "guard_google_adk",
               exhausted_error="RuntimeError", streams=True,
               extra_env={"GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-google-adk-agent", "google-adk", "guard_google_adk",
               exhausted_error="RuntimeError", extra_env={"GUARD_HOOK": "agent"}),
    GuardSetUp("guard-crewai", "crewai", "guard_crewai", exhausted_error="Exception"),
    GuardSetUp("guard-crewai-streamed", "crewai", "guard_crewai", exhausted_error="Exception",
               streams=True, extra_env={"GUARD_STREAM": "streamed"}),
    GuardSetUp("guard-crewai-async", "crewai", "guard_crewai", exhausted_error="Exception",
               extra_env={"GUARD_STREAM": "async"}),
    GuardSetUp("guard-crewai-reused-agent", "crewai", "guard_crewai",
               exhausted_error="Exception", extra_env={"GUARD_AGENT": "reused"}),
    GuardSetUp("guard-crewai-agent-kickoff", "crewai", "guard_crewai",
               exhausted_error="ValueError", extra_env={"GUARD_AGENT": "kickoff"}),
]  # fmt: skip

FIRST_FOOTNOTE = "this turn's tool trace does not back"
ESCALATED = "after a self-correction attempt"
ECHO = "was quoted from your message"


class GuardRuns:
    """Each guard set-up run once, the first time a test asks for it."""

    def __init__(self, llm: FakeLlm) -> None:
        self.llm = llm
        self.runs: dict[str, GuardRun | Exception] = {}

    def of(self, setup: GuardSetUp) -> GuardRun:
        if not setup.interpreter.exists():
            message = f"{setup.interpreter} is missing: `make conformance-envs` builds it"
            if os.environ.get("CI") == "true":
                pytest.fail(message)
            pytest.skip(message)
        if setup.id not in self.runs:
            try:
                self.runs[setup.id] = run_guard_setup(setup, self.llm)
            except Exception as error:  # every test of the set-up reports it
                self.runs[setup.id] = error
        run = self.runs[setup.id]
        if isinstance(run, Exception):
            raise run
        return run


@pytest.fixture(scope="module")
def guard_runs(fake_llm: FakeLlm) -> Iterator[GuardRuns]:
    yield GuardRuns(fake_llm)


SETUPS = [pytest.param(s, id=s.id) for s in GUARD_SETUPS]


def _output(run: GuardRun, case: str) -> str:
    assert case not in run.errors, f"{run.setup.id} {case}: {run.errors[case]}\n{run.output}"
    return run.outputs[case]


def _nudges_sent(exchanges: list[Exchange]) -> int:
    """The most nudges any request of the case carried: the nudges the model was sent."""
    return max(
        (sum(NUDGE_MARKER in m.text for m in e.request.messages) for e in exchanges), default=0
    )


def _nudge_texts(exchanges: list[Exchange]) -> list[str]:
    return [m.text for e in exchanges for m in e.request.messages if NUDGE_MARKER in m.text]


@pytest.mark.parametrize("setup", SETUPS)
def test_a_fabricated_commit_is_nudged_once_and_the_run_result_is_corrected(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-fab"
    output, exchanges = _output(run, case), run.exchanges[case]
    if setup.retries:
        assert output == corrected(case)
        assert _nudges_sent(exchanges) == 1
        assert fabricated_sha(f"acme/{case}", "main") in _nudge_texts(exchanges)[0]
        assert len(exchanges) == 3  # the push, the fabrication, the correction
    else:
        assert output.startswith(fabricated(case)) and FIRST_FOOTNOTE in output
        assert len(exchanges) == 2
    assert all(e.stream == setup.streams for e in exchanges)


@pytest.mark.parametrize("setup", SETUPS)
def test_a_repeated_fabrication_gets_the_escalated_footnote_after_max_nudges(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-fab-stuck"
    output, exchanges = _output(run, case), run.exchanges[case]
    assert output.startswith(fabricated(case))
    nudges = MAX_NUDGES if setup.retries else 0
    assert (ESCALATED if nudges else FIRST_FOOTNOTE) in output
    assert _nudges_sent(exchanges) == nudges
    assert len(exchanges) == 2 + nudges


@pytest.mark.parametrize("setup", SETUPS)
def test_set_to_raise_a_repeated_fabrication_raises_the_frameworks_error(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-raise-fab-stuck"
    error = run.errors.get(case, "")
    assert error.startswith(f"{setup.exhausted_error}:"), run.outputs.get(case)
    assert "still rejected (fabricated_identifier)" in error
    assert len(run.exchanges[case]) == 2 + (MAX_NUDGES if setup.retries else 0)


@pytest.mark.parametrize("setup", SETUPS)
def test_a_failed_push_reported_as_done_is_nudged_with_the_call_and_its_error(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-err-object"
    output, exchanges = _output(run, case), run.exchanges[case]
    if setup.retries:
        [nudge] = dict.fromkeys(_nudge_texts(exchanges))
        assert "The call `git_push` failed" in nudge
        assert FAILURE_TEXT in nudge
        assert output == f"The push of main to acme/{case} did not go through: {FAILURE_TEXT}"
    else:
        assert output.startswith("I pushed main") and FIRST_FOOTNOTE in output


@pytest.mark.parametrize("setup", SETUPS)
def test_a_clean_reply_is_untouched_with_no_extra_model_call(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-clean"
    assert _output(run, case) == corrected(case)
    assert _nudges_sent(run.exchanges[case]) == 0
    assert len(run.exchanges[case]) == 2  # the push and the answer


@pytest.mark.parametrize("setup", SETUPS)
def test_a_commit_quoted_from_the_user_gets_the_echo_footnote_and_no_nudge(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    case = "guard-echo"
    output = _output(run, case)
    assert output.startswith(f"Pushed main to acme/{case} on top of commit")
    assert ECHO in output
    assert _nudges_sent(run.exchanges[case]) == 0
    assert len(run.exchanges[case]) == 2


@pytest.mark.parametrize("setup", SETUPS)
def test_each_check_and_nudge_is_recorded_on_the_frameworks_spans(
    guard_runs: GuardRuns, setup: GuardSetUp
) -> None:
    run = guard_runs.of(setup)
    checks = 2 if setup.retries else 1
    fab = _recorded(run.guard["guard-fab"])
    assert fab["factledger.guard.checks"] == checks
    assert fab["factledger.guard.nudges"] == checks - 1
    assert fab["labels"] == (["reject", "pass"] if setup.retries else ["reject"])
    clean = _recorded(run.guard["guard-clean"])
    assert clean["factledger.guard.checks"] == 1
    assert clean["labels"] == ["pass"]


def _recorded(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """The guard's counts summed over a case's spans (one span per run, or one per step
    where the framework checks inside each step's span) and its evaluations in order."""
    totals: dict[str, Any] = {"factledger.guard.checks": 0, "factledger.guard.nudges": 0}
    for span in spans:
        for name in totals:
            totals[name] += span["attributes"].get(name, 0)
    totals["labels"] = [e["gen_ai.evaluation.score.label"] for s in spans for e in s["evaluations"]]
    return totals
