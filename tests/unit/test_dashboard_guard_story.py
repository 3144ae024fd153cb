"""What the dashboard says of the in-loop guard (`dashboard.guard_story`): the sentence of
each result, the attempts read from a turn's spans in either convention, the table rows."""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.dashboard.client import GuardSummary, TurnGuard
from factledger.dashboard.guard_story import Attempt, attempts, guard_sentence, table_rows
from factledger.processors.kinds import Kind
from factledger.processors.model import Finding
from factledger.processors.nudges import build_nudge

NUDGE = build_nudge([Finding(Kind.FABRICATED_IDENTIFIER, "in no tool result", token="fe49e1")])
assert NUDGE is not None
WRAPPED = (
    "Your previous response failed the application's validation (this is automated "
    f"feedback, not a message from the user):\n<retry_feedback>\n{NUDGE}\n</retry_feedback>"
)


def guard(result: str, nudges: int = 0, action: str = "pass") -> TurnGuard:
    return {"checks": nudges + 1, "nudges": nudges, "outcome": "", "action": action,
            "result": result}  # fmt: skip


@pytest.mark.parametrize(
    ("given", "says"),
    [
        pytest.param(None, None, id="a-service-without-guard-fields"),
        pytest.param(guard("unguarded"), None, id="unguarded"),
        pytest.param(guard("passed"), "The guard checked the reply; it passed untouched.",
                     id="passed"),
        pytest.param(guard("footnoted", action="annotate"),
                     "The guard footnoted the reply without a nudge.", id="footnoted"),
        pytest.param(guard("corrected", 1),
                     "The guard nudged once; the model corrected itself.", id="corrected-once"),
        pytest.param(guard("refused", 2, "annotate"),
                     "The guard nudged twice; the reply was still rejected and carries the "
                     "escalated footnote.", id="refused-footnote"),
        pytest.param(guard("refused", 3, "raise"),
                     "The guard nudged 3 times, the reply was still rejected; it stopped the "
                     "run.", id="refused-raise"),
    ],
)  # fmt: skip
def test_the_sentence_of_each_result(given: TurnGuard | None, says: str | None) -> None:
    assert guard_sentence(given) == says


def _genai_span(*messages: tuple[str, str]) -> dict[str, Any]:
    parts = [{"role": r, "parts": [{"type": "text", "content": t}]} for r, t in messages]
    return {"attributes": {"gen_ai.input.messages": json.dumps(parts)}}


def _openinference_span(*messages: tuple[str, str]) -> dict[str, Any]:
    attributes: dict[str, str] = {}
    for i, (role, text) in enumerate(messages):
        attributes[f"llm.input_messages.{i}.message.role"] = role
        attributes[f"llm.input_messages.{i}.message.contents.0.message_content.text"] = text
    return {"attributes": attributes}


# smolagents' own words for a failed final-answer check (memory.ActionStep.to_messages
# around agents.MultiStepAgent's AgentError), the guard's nudge inside them.
SMOLAGENTS_WRAPPED = (
    "Call id: call_2\nError:\nCheck factledger_guard failed with error: "
    f"{NUDGE}\nNow let's retry: take care not to repeat previous errors! If you have "
    "retried several times, try a completely different approach.\n"
)
CONVERSATION = (("user", "Push main."), ("assistant", "Pushed: commit fe49e1."), ("user", NUDGE))


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        pytest.param([_genai_span(*CONVERSATION)], [Attempt("Pushed: commit fe49e1.", NUDGE)],
                     id="genai-messages"),
        pytest.param(
            [_genai_span(("user", "Push main."), ("assistant", "Pushed: commit fe49e1."),
                         ("user", WRAPPED))],
            [Attempt("Pushed: commit fe49e1.", WRAPPED)],
            id="a-nudge-wrapped-by-the-framework",
        ),
        pytest.param(
            [_genai_span(("user", "Push main."), ("assistant", "Pushed: commit fe49e1."),
                         ("user", SMOLAGENTS_WRAPPED))],
            [Attempt("Pushed: commit fe49e1.", SMOLAGENTS_WRAPPED)],
            id="a-nudge-inside-a-failed-check-of-smolagents",
        ),
        pytest.param([_openinference_span(*CONVERSATION)],
                     [Attempt("Pushed: commit fe49e1.", NUDGE)], id="openinference-messages"),
        pytest.param(
            [_genai_span(*CONVERSATION[:2]),
             _genai_span(*CONVERSATION, ("assistant", "Still fe49e1."), ("user", NUDGE))],
            [Attempt("Pushed: commit fe49e1.", NUDGE), Attempt("Still fe49e1.", NUDGE)],
            id="the-span-that-saw-most-nudges",
        ),
        pytest.param([_genai_span(("user", "Push main."))], [], id="no-nudge"),
        pytest.param([{"attributes": {"gen_ai.input.messages": "not json"}}], [],
                     id="unreadable-messages"),
    ],
)  # fmt: skip
def test_attempts_from_the_spans(spans: list[dict[str, Any]], expected: list[Attempt]) -> None:
    assert attempts(spans) == expected


def test_table_rows_per_model_and_agent() -> None:
    summary: GuardSummary = {
        "groups": [{"model": "gpt-4o", "agent": "", "turns": 3, "checks": 6, "nudges": 3,
                    "passed": 1, "footnoted": 0, "corrected": 1, "refused": 1}],
        "total": {"turns": 3, "checks": 6, "nudges": 3, "passed": 1, "footnoted": 0,
                  "corrected": 1, "refused": 1},
    }  # fmt: skip
    assert table_rows(summary) == [
        {"model": "gpt-4o", "agent": "–", "guarded turns": 3, "nudges": 3, "corrected": 1,
         "refused": 1, "footnoted": 0}
    ]  # fmt: skip
