"""The framework-neutral loop policy over plain transcripts: one decision per attempt."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from factledger.guards import GuardExhausted, GuardPolicy, nudges_in
from factledger.guards.policy import as_sent
from factledger.guards.telemetry import record
from factledger.processors.guard_activity import EVALUATION_EVENT
from factledger.processors.model import Turn
from factledger.processors.verification.base import (
    Subject,
    SubjectKind,
    Verification,
    VerificationOutcome,
)

REAL = hashlib.sha1(b"acme/shop@main").hexdigest()
FAKE = hashlib.sha1(b"fabricated:acme/shop@main").hexdigest()
FAILURE = "push rejected: the remote has commits you do not have; nothing was pushed"
USER = "Push branch main of acme/shop."


def _transcript(*replies: str, result: str | None = None, user: str = USER) -> dict[str, Any]:
    """A push and its result, then each reply in turn, a nudge between two replies."""
    pushed = result if result is not None else json.dumps({"ok": True, "commit": REAL})
    call = {"name": "git_push", "arguments": json.dumps({"repo": "acme/shop", "branch": "main"})}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": user},
        {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": call}]},
        {"role": "tool", "tool_call_id": "c1", "content": pushed},
    ]
    policy = GuardPolicy()
    for reply in replies[:-1]:
        messages.append({"role": "assistant", "content": reply})
        nudge = policy.decide({"messages": messages}).nudge
        assert nudge is not None
        messages.append({"role": "user", "content": nudge})
    messages.append({"role": "assistant", "content": replies[-1]})
    return {"messages": messages}


FABRICATED = f"Pushed main to acme/shop. The new head is commit {FAKE}."
CORRECT = f"Pushed main to acme/shop: commit {REAL[:12]}."
CLAIMED = "I pushed main to acme/shop successfully."
ERROR_RESULT = json.dumps({"ok": False, "error": FAILURE})


@pytest.mark.parametrize(
    ("transcript", "action", "footnote"),
    [
        pytest.param(_transcript(CORRECT), "pass", None, id="clean-reply-passes-untouched"),
        pytest.param(_transcript(FABRICATED), "nudge", None, id="fabricated-sha-is-nudged"),
        pytest.param(
            _transcript(FABRICATED, CORRECT), "pass", None, id="corrected-after-nudge-passes"
        ),
        pytest.param(
            _transcript(FABRICATED, FABRICATED), "nudge", None, id="second-attempt-nudged-again"
        ),
        pytest.param(
            _transcript(FABRICATED, FABRICATED, FABRICATED),
            "annotate",
            "after a self-correction attempt",
            id="exhausted-gets-escalated-footnote",
        ),
        pytest.param(
            _transcript(CORRECT.replace(REAL[:12], FAKE[:12]), user=f"{USER} Its base is {FAKE}."),
            "annotate",
            "was quoted from your message",
            id="user-quoted-sha-gets-echo-footnote",
        ),
    ],
)
def test_decision(transcript: dict[str, Any], action: str, footnote: str | None) -> None:
    decision = GuardPolicy(max_nudges=2).decide(transcript)
    assert decision.action == action
    if footnote is None:
        assert decision.reply == transcript["messages"][-1]["content"]
    else:
        assert footnote in decision.reply
    assert (decision.nudge is not None) == (action == "nudge")


def test_nudges_are_counted_from_the_transcript() -> None:
    assert nudges_in(_transcript(FABRICATED)) == 0
    assert nudges_in(_transcript(FABRICATED, FABRICATED)) == 1
    assert nudges_in(_transcript(FABRICATED, FABRICATED, FABRICATED)) == 2


def test_the_nudge_of_a_failed_push_names_the_call_and_its_error() -> None:
    decision = GuardPolicy().decide(_transcript(CLAIMED, result=ERROR_RESULT))
    assert decision.action == "nudge"
    assert decision.nudge is not None
    assert "`git_push` failed" in decision.nudge
    assert FAILURE in decision.nudge


def test_exhausted_raises_when_set_to_raise() -> None:
    decision = GuardPolicy(max_nudges=1, on_exhausted="raise").decide(
        _transcript(FABRICATED, FABRICATED)
    )
    assert decision.action == "raise"
    with pytest.raises(GuardExhausted, match="fabricated_identifier"):
        raise decision.error()


def test_no_nudges_allowed_gives_the_first_footnote() -> None:
    decision = GuardPolicy(max_nudges=0).decide(_transcript(FABRICATED))
    assert decision.action == "annotate"
    assert "does not back" in decision.reply


def test_a_wrapped_nudge_reads_as_sent() -> None:
    nudge = GuardPolicy().decide(_transcript(FABRICATED)).nudge
    assert nudge is not None
    assert as_sent(f"Validation feedback:\n{nudge}") == nudge
    assert as_sent("plain text") == "plain text"


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ValueError, match="max_nudges"):
        GuardPolicy(max_nudges=-1)
    with pytest.raises(ValueError, match="on_exhausted"):
        GuardPolicy(on_exhausted="ignore")  # type: ignore[arg-type]


def test_each_decision_is_recorded_on_the_current_span() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test")
    policy = GuardPolicy()
    with tracer.start_as_current_span("agent run"):
        record(policy.decide(_transcript(FABRICATED)))
        record(policy.decide(_transcript(FABRICATED, CORRECT)))
    [span] = exporter.get_finished_spans()
    assert span.attributes is not None
    assert span.attributes["factledger.guard.checks"] == 2
    assert span.attributes["factledger.guard.nudges"] == 1
    assert span.attributes["factledger.guard.outcome"] == "pass"
    assert span.attributes["factledger.guard.action"] == "pass"
    events = [e for e in span.events if e.name == EVALUATION_EVENT]
    labels = [e.attributes["gen_ai.evaluation.score.label"] for e in events if e.attributes]
    assert labels == ["reject", "pass"]


def test_without_a_recording_span_a_decision_gets_a_span_of_its_own() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    record(GuardPolicy().decide(_transcript(FABRICATED)), tracer=provider.get_tracer("test"))
    own = [s for s in exporter.get_finished_spans() if s.name == "factledger.guard"]
    assert len(own) == 1
    assert own[0].attributes is not None
    assert own[0].attributes["factledger.guard.action"] == "nudge"


class _SourceHasEveryCommit:
    """A source of truth that knows every commit the reply names (a pushed commit the
    trace did not show): it refutes the suspicion, so the guard has nothing to nudge."""

    name = "git"

    def verify(self, subject: Subject, turn: Turn, timeout: float) -> Verification | None:
        if subject.kind is not SubjectKind.COMMIT:
            return None
        return Verification(subject, VerificationOutcome.REFUTED, "git:acme/shop")


def test_verifiers_settle_names_before_the_decision() -> None:
    assert GuardPolicy().decide(_transcript(FABRICATED)).action == "nudge"
    decision = GuardPolicy(verifiers=[_SourceHasEveryCommit()]).decide(_transcript(FABRICATED))
    assert decision.action == "pass"
    assert decision.result.verifications[0].source == "git:acme/shop"
