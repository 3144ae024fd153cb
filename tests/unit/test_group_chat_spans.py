"""Group chats in spans: who speaks in a turn's conversation decides whether a closing
promise is a hand-over (the next speaker picks it up) or a stall.

The spans are literal attribute sets in the shapes the instrumentations write: AutoGen
AgentChat's own `invoke_agent` spans (scope `autogen-core`) with OpenLLMetry's GenAI
`openai.chat` spans, and OpenInference AGENT and LLM spans with
`llm.input_messages.N.message.name`. Each runs through a `TurnAssembler` and the default
validators to the verdict.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.processors.model import Turn, Verdict
from factledger.processors.spans import SpanRecord

from .span_turns import judged, only_turn, record

TASK = "Compare last week's ridership on lines 4 and 7."
HAND_OVER = "Let me gather the ridership data, one moment."
OPENAI = "opentelemetry.instrumentation.openai.v1"
AUTOGEN = "autogen-core"
OPENINFERENCE = "openinference.instrumentation.openai"


def _named(role: str, name: str, content: str) -> dict[str, Any]:
    return {"role": role, "name": name, "parts": [{"type": "text", "content": content}]}


def _chat(
    span_id: str, parent: str, start: int, inputs: list[dict[str, Any]], reply: str
) -> SpanRecord:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "fake-gpt",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": reply}],
                    "finish_reason": "stop",
                }
            ]
        ),
        "gen_ai.response.finish_reasons": ("stop",),
    }
    return record(
        span_id,
        "openai.chat",
        attributes,
        parent=parent,
        start=start,
        end=start + 900,
        scope=OPENAI,
    )


def _invoke(span_id: str, agent: str, team: str, start: int) -> SpanRecord:
    """The `invoke_agent` span AutoGen's group chat container opens around one speaker's
    turn (`_chat_agent_container.py`); its agent id is `{agent}_{team}/{team}`."""
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.system": "autogen",
        "gen_ai.agent.name": agent,
        "gen_ai.agent.id": f"{agent}_{team}/{team}",
    }
    return record(
        span_id,
        f"invoke_agent {agent}",
        attributes,
        parent="a0a0a0a0a0a0a0a0",
        start=start,
        end=start + 1_000,
        scope=AUTOGEN,
    )


def _runtime_root() -> SpanRecord:
    return record(
        "a0a0a0a0a0a0a0a0",
        "autogen create group_topic",
        {"messaging.operation": "create"},
        start=0,
        end=10_000,
        scope=AUTOGEN,
    )


def autogen_round_robin() -> list[SpanRecord]:
    """A RoundRobinGroupChat of `planner` and `data_analyst`: the planner opens, the
    analyst answers that it will gather the data (and the team goes on to its next
    speaker). The analyst's model sees the task and the planner's words as named user
    messages, as AutoGen's OpenAI client sends a message's source."""
    team = "6f1d2c"
    plan = "Plan: data_analyst pulls the weekly counts for both lines, then I compare."
    return [
        _runtime_root(),
        _invoke("b1b1b1b1b1b1b1b1", "planner", team, 1_000),
        _chat("c1c1c1c1c1c1c1c1", "b1b1b1b1b1b1b1b1", 1_050, [_named("user", "user", TASK)], plan),
        _invoke("b2b2b2b2b2b2b2b2", "data_analyst", team, 3_000),
        _chat(
            "c2c2c2c2c2c2c2c2",
            "b2b2b2b2b2b2b2b2",
            3_050,
            [_named("user", "user", TASK), _named("user", "planner", plan)],
            HAND_OVER,
        ),
    ]


def autogen_single_agent() -> list[SpanRecord]:
    """One AssistantAgent run alone: the task is a named user message, no one else speaks."""
    return [
        _runtime_root(),
        _invoke("b2b2b2b2b2b2b2b2", "data_analyst", "", 3_000),
        _chat(
            "c2c2c2c2c2c2c2c2", "b2b2b2b2b2b2b2b2", 3_050, [_named("user", "user", TASK)], HAND_OVER
        ),
    ]


def _oi_agent(span_id: str, agent: str) -> SpanRecord:
    return record(
        span_id,
        agent,
        {"openinference.span.kind": "AGENT", "agent.name": agent},
        start=0,
        end=10_000,
        scope=OPENINFERENCE,
    )


def _oi_llm(parent: str, messages: list[dict[str, Any]], reply: str) -> SpanRecord:
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "fake-gpt",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": reply,
    }
    for i, m in enumerate(messages):
        for key, value in m.items():
            if key == "tool_calls":
                for j, call in enumerate(value):
                    prefix = f"llm.input_messages.{i}.message.tool_calls.{j}.tool_call"
                    attributes[f"{prefix}.id"] = call["id"]
                    attributes[f"{prefix}.function.name"] = call["name"]
                    attributes[f"{prefix}.function.arguments"] = "{}"
            else:
                attributes[f"llm.input_messages.{i}.message.{key}"] = value
    return record(
        "d1d1d1d1d1d1d1d1",
        "ChatCompletion",
        attributes,
        parent=parent,
        start=1_000,
        end=2_000,
        scope=OPENINFERENCE,
    )


def openinference_named_group() -> list[SpanRecord]:
    """A group chat's `writer` whose model is sent the human's and the `critic`'s words
    under their names (`message.name`)."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "name": "editor", "content": TASK},
        {"role": "user", "name": "critic", "content": "We need the raw counts before writing."},
    ]
    return [
        _oi_agent("e1e1e1e1e1e1e1e1", "writer"),
        _oi_llm("e1e1e1e1e1e1e1e1", messages, HAND_OVER),
    ]


def openinference_supervisor() -> list[SpanRecord]:
    """A supervisor that handed an earlier request to `research_expert` (a handoff tool;
    the expert's answer is in the history under its name) and now, with no call, promises
    to gather data: the expert answered its lead, it does not talk to the group."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Find the ridership report for line 4."},
        {
            "role": "assistant",
            "name": "supervisor",
            "tool_calls": [{"id": "call_h1", "name": "transfer_to_research_expert"}],
        },
        {"role": "tool", "tool_call_id": "call_h1", "content": "Transferred to research_expert"},
        {"role": "assistant", "name": "research_expert", "content": "The line 4 report is out."},
        {"role": "assistant", "name": "supervisor", "content": "The report is available."},
        {"role": "user", "content": TASK},
    ]
    return [
        _oi_agent("e1e1e1e1e1e1e1e1", "supervisor"),
        _oi_llm("e1e1e1e1e1e1e1e1", messages, HAND_OVER),
    ]


def _last(spans: list[SpanRecord]) -> tuple[Turn, Verdict]:
    turns = judged(spans)
    return turns[-1]


@pytest.mark.parametrize(
    ("spans", "agent", "participants", "kinds"),
    [
        (autogen_round_robin(), "data_analyst", ("data_analyst", "planner", "user"), ()),
        (autogen_single_agent(), "data_analyst", (), ("stall",)),
        (openinference_named_group(), "writer", ("writer", "editor", "critic"), ()),
        (openinference_supervisor(), "supervisor", (), ("stall",)),
    ],
    ids=[
        "autogen-group-chat-member-hands-over",
        "autogen-agent-alone-with-a-named-user-stalls",
        "openinference-named-speakers-make-a-group",
        "supervisor-whose-helper-was-reached-by-a-handoff-stalls",
    ],
)
def test_group_chat_promise_is_a_hand_over(spans, agent, participants, kinds) -> None:
    turn, verdict = _last(spans)
    assert turn.reply == HAND_OVER
    assert turn.agent == agent
    assert turn.participants == participants
    assert verdict.kinds == kinds


def test_each_group_chat_speaker_is_a_turn_of_its_own() -> None:
    turns = judged(autogen_round_robin())
    assert [t.agent for t, _ in turns] == ["planner", "data_analyst"]
    assert turns[0][0].participants == ("planner", "data_analyst", "user")
    assert only_turn(autogen_single_agent())[0].participants == ()
