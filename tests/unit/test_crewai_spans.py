"""CrewAI as its instrumentations really record it.

The attributes are literal from runs of CrewAI 1.15.30 with
`openinference-instrumentation-crewai` 1.1.21 and `openinference-instrumentation-openai`
0.1.66 (a hierarchical crew whose manager `release_lead` delegates the task to
`release_engineer`), and with `opentelemetry-instrumentation-crewai` and -openai 0.62.4 (a
crew whose tool raised), trimmed to the attributes the reading uses, read through the real
normalizer, a `TurnAssembler` and the default validators.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from factledger.processors.normalize.messages import read_messages
from factledger.processors.spans import SpanRecord

from .span_turns import only_turn, record

USER = "Push branch main of acme/team-clean."
COMMIT = "a523f6f6ebb28186c7ebef5466b89d08b6770c63"
DELEGATE = "delegate_work_to_coworker"

HIERARCHICAL_CREW: list[tuple[str, str, str, int, int, str, dict[str, Any]]] = [
    (
        "Crew_b39f7f2d-9c4b-4bc1-a4ae-386f3c7374f0.kickoff",
        "211e21da2de852ea",
        "",
        0,
        246707,
        "openinference.instrumentation.crewai",
        {
            "crew_key": "33580b257ef7a015aab840cf441c16f6",
            "crew_id": "b39f7f2d-9c4b-4bc1-a4ae-386f3c7374f0",
            "openinference.span.kind": "CHAIN",
        },
    ),
    (
        "release_lead._execute_core",
        "82f8a9e1d1100028",
        "211e21da2de852ea",
        58483,
        234038,
        "openinference.instrumentation.crewai",
        {
            "task_key": "863b0d9c5c161637249c88df2d508c9a",
            "task_id": "88def87e-3849-4950-98d3-9bef53a2ea39",
            "graph.node.id": "release_lead",
            "crew_key": "33580b257ef7a015aab840cf441c16f6",
            "crew_id": "b39f7f2d-9c4b-4bc1-a4ae-386f3c7374f0",
            "openinference.span.kind": "AGENT",
        },
    ),
    (
        "ChatCompletion",
        "6a064fade1bfafde",
        "82f8a9e1d1100028",
        96415,
        99849,
        "openinference.instrumentation.openai",
        {
            "llm.system": "openai",
            "llm.tools.0.tool.json_schema": '{"type": "function", "function": {"name": '
            '"delegate_work_to_coworker", "description": "Delegate '
            "a specific task to one of the following coworkers: "
            "release_engineer\\nThe input to this tool should be "
            "the coworker, the task you want them to do, and ALL "
            "necessary context to execute the task, they know "
            "nothing about the task, so share absolutely everything "
            "you know, don't reference things but instead explain "
            'them.", "strict": true, "parameters": {"properties": '
            '{"task": {"description": "The task to delegate", '
            '"type": "string"}, "context": {"description": "The '
            'context for the task", "type": "string"}, "coworker": '
            '{"description": "The role/name of the coworker to '
            'delegate to", "type": "string"}}, "required": ["task", '
            '"context", "coworker"], "type": "object", '
            '"additionalProperties": false}}}',
            "llm.tools.1.tool.json_schema": '{"type": "function", "function": {"name": '
            '"ask_question_to_coworker", "description": "Ask a '
            "specific question to one of the following coworkers: "
            "release_engineer\\nThe input to this tool should be "
            "the coworker, the question you have for them, and ALL "
            "necessary context to ask the question properly, they "
            "know nothing about the question, so share absolutely "
            "everything you know, don't reference things but "
            'instead explain them.", "strict": true, "parameters": '
            '{"properties": {"question": {"description": "The '
            'question to ask", "type": "string"}, "context": '
            '{"description": "The context for the question", '
            '"type": "string"}, "coworker": {"description": "The '
            'role/name of the coworker to ask", "type": "string"}}, '
            '"required": ["question", "context", "coworker"], '
            '"type": "object", "additionalProperties": false}}}',
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You are release_lead. You lead releases; your "
            "release engineer does every push.\n"
            "Your personal goal is: Get branches pushed by "
            "your release engineer and report the new head "
            "commit.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "\n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.",
            "llm.model_name": "fake-gpt",
            "llm.token_count.total": 59,
            "llm.token_count.prompt": 42,
            "llm.token_count.completion": 17,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000007",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": DELEGATE,
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"task": '
            '"\\nCurrent '
            "Task: Push "
            "branch main "
            "of "
            "acme/team-clean.\\n\\nThis "
            "is the "
            "expected "
            "criteria "
            "for your "
            "final "
            "answer: "
            "What was "
            "pushed, "
            "with the "
            "new head "
            "commit.\\nyou "
            "MUST return "
            "the actual "
            "complete "
            "content as "
            "the final "
            "answer, not "
            "a "
            'summary.", '
            '"context": '
            '"\\nCurrent '
            "Task: Push "
            "branch main "
            "of "
            "acme/team-clean.\\n\\nThis "
            "is the "
            "expected "
            "criteria "
            "for your "
            "final "
            "answer: "
            "What was "
            "pushed, "
            "with the "
            "new head "
            "commit.\\nyou "
            "MUST return "
            "the actual "
            "complete "
            "content as "
            "the final "
            "answer, not "
            "a "
            'summary.", '
            '"coworker": '
            '"release_engineer"}',
            "llm.finish_reason": "tool_calls",
            "openinference.span.kind": "LLM",
        },
    ),
    (
        "Delegate work to coworker.run",
        "1ee9d9aff58eb495",
        "82f8a9e1d1100028",
        102088,
        206675,
        "openinference.instrumentation.crewai",
        {
            "input.value": '{"task": "\\nCurrent Task: Push branch main of '
            "acme/team-clean.\\n\\nThis is the expected criteria for your final "
            "answer: What was pushed, with the new head commit.\\nyou MUST return "
            'the actual complete content as the final answer, not a summary.", '
            '"context": "\\nCurrent Task: Push branch main of '
            "acme/team-clean.\\n\\nThis is the expected criteria for your final "
            "answer: What was pushed, with the new head commit.\\nyou MUST return "
            'the actual complete content as the final answer, not a summary.", '
            '"coworker": "release_engineer"}',
            "tool.name": "Delegate work to coworker",
            "output.value": "Pushed main to acme/team-clean: commit "
            "a523f6f6ebb28186c7ebef5466b89d08b6770c63.",
            "openinference.span.kind": "TOOL",
        },
    ),
    (
        "ChatCompletion",
        "b5b1adee41e0f1a3",
        "1ee9d9aff58eb495",
        117009,
        120799,
        "openinference.instrumentation.openai",
        {
            "llm.system": "openai",
            "llm.tools.0.tool.json_schema": '{"type": "function", "function": {"name": "git_push", '
            '"description": "Push `branch` of `repo` to its remote '
            'and report the new head commit.", "strict": true, '
            '"parameters": {"properties": {"repo": {"type": '
            '"string"}, "branch": {"type": "string"}}, "required": '
            '["repo", "branch"], "type": "object", '
            '"additionalProperties": false}}}',
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You are release_engineer. You run releases "
            "with git_push.\n"
            "Your personal goal is: Push branches of "
            "repositories and report the new head commit.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "\n"
            "Current Task: \n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: Your best answer to your coworker "
            "asking you this, accounting for the context "
            "shared.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.\n"
            "\n"
            "This is the context you're working with:\n"
            "\n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.",
            "llm.model_name": "fake-gpt",
            "llm.token_count.total": 59,
            "llm.token_count.prompt": 42,
            "llm.token_count.completion": 17,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_00000009",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"repo": '
            '"acme/team-clean", '
            '"branch": '
            '"main"}',
            "llm.finish_reason": "tool_calls",
            "openinference.span.kind": "LLM",
        },
    ),
    (
        "git_push.run",
        "918076514cbef1ed",
        "1ee9d9aff58eb495",
        123181,
        124317,
        "openinference.instrumentation.crewai",
        {
            "input.value": '{"repo": "acme/team-clean", "branch": "main"}',
            "tool.name": "git_push",
            "output.value": '{"ok": true, "repo": "acme/team-clean", "branch": "main", "commit": '
            '"a523f6f6ebb28186c7ebef5466b89d08b6770c63"}',
            "openinference.span.kind": "TOOL",
        },
    ),
    (
        "ChatCompletion",
        "f714d4e248726bbe",
        "1ee9d9aff58eb495",
        130852,
        187377,
        "openinference.instrumentation.openai",
        {
            "llm.system": "openai",
            "llm.tools.0.tool.json_schema": '{"type": "function", "function": {"name": "git_push", '
            '"description": "Push `branch` of `repo` to its remote '
            'and report the new head commit.", "strict": true, '
            '"parameters": {"properties": {"repo": {"type": '
            '"string"}, "branch": {"type": "string"}}, "required": '
            '["repo", "branch"], "type": "object", '
            '"additionalProperties": false}}}',
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You are release_engineer. You run releases "
            "with git_push.\n"
            "Your personal goal is: Push branches of "
            "repositories and report the new head commit.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "\n"
            "Current Task: \n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: Your best answer to your coworker "
            "asking you this, accounting for the context "
            "shared.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.\n"
            "\n"
            "This is the context you're working with:\n"
            "\n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.",
            "llm.input_messages.2.message.role": "assistant",
            "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_00000009",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "git_push",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"repo": '
            '"acme/team-clean", '
            '"branch": '
            '"main"}',
            "llm.input_messages.3.message.role": "tool",
            "llm.input_messages.3.message.tool_call_id": "call_00000009",
            "llm.input_messages.3.message.content": "{'ok': True, 'repo': 'acme/team-clean', "
            "'branch': 'main', 'commit': "
            "'a523f6f6ebb28186c7ebef5466b89d08b6770c63'}",
            "llm.input_messages.3.message.name": "git_push",
            "llm.model_name": "fake-gpt",
            "llm.token_count.total": 59,
            "llm.token_count.prompt": 42,
            "llm.token_count.completion": 17,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Pushed main to acme/team-clean: commit "
            "a523f6f6ebb28186c7ebef5466b89d08b6770c63.",
            "llm.finish_reason": "stop",
            "openinference.span.kind": "LLM",
        },
    ),
    (
        "ChatCompletion",
        "1bd96fa570db5e27",
        "82f8a9e1d1100028",
        217754,
        221873,
        "openinference.instrumentation.openai",
        {
            "llm.system": "openai",
            "llm.tools.0.tool.json_schema": '{"type": "function", "function": {"name": '
            '"delegate_work_to_coworker", "description": "Delegate '
            "a specific task to one of the following coworkers: "
            "release_engineer\\nThe input to this tool should be "
            "the coworker, the task you want them to do, and ALL "
            "necessary context to execute the task, they know "
            "nothing about the task, so share absolutely everything "
            "you know, don't reference things but instead explain "
            'them.", "strict": true, "parameters": {"properties": '
            '{"task": {"description": "The task to delegate", '
            '"type": "string"}, "context": {"description": "The '
            'context for the task", "type": "string"}, "coworker": '
            '{"description": "The role/name of the coworker to '
            'delegate to", "type": "string"}}, "required": ["task", '
            '"context", "coworker"], "type": "object", '
            '"additionalProperties": false}}}',
            "llm.tools.1.tool.json_schema": '{"type": "function", "function": {"name": '
            '"ask_question_to_coworker", "description": "Ask a '
            "specific question to one of the following coworkers: "
            "release_engineer\\nThe input to this tool should be "
            "the coworker, the question you have for them, and ALL "
            "necessary context to ask the question properly, they "
            "know nothing about the question, so share absolutely "
            "everything you know, don't reference things but "
            'instead explain them.", "strict": true, "parameters": '
            '{"properties": {"question": {"description": "The '
            'question to ask", "type": "string"}, "context": '
            '{"description": "The context for the question", '
            '"type": "string"}, "coworker": {"description": "The '
            'role/name of the coworker to ask", "type": "string"}}, '
            '"required": ["question", "context", "coworker"], '
            '"type": "object", "additionalProperties": false}}}',
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You are release_lead. You lead releases; your "
            "release engineer does every push.\n"
            "Your personal goal is: Get branches pushed by "
            "your release engineer and report the new head "
            "commit.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "\n"
            "Current Task: Push branch main of "
            "acme/team-clean.\n"
            "\n"
            "This is the expected criteria for your final "
            "answer: What was pushed, with the new head "
            "commit.\n"
            "you MUST return the actual complete content as "
            "the final answer, not a summary.",
            "llm.input_messages.2.message.role": "assistant",
            "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_00000007",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": DELEGATE,
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": '{"task": '
            '"\\nCurrent '
            "Task: Push "
            "branch main "
            "of "
            "acme/team-clean.\\n\\nThis "
            "is the "
            "expected "
            "criteria for "
            "your final "
            "answer: What "
            "was pushed, "
            "with the new "
            "head "
            "commit.\\nyou "
            "MUST return "
            "the actual "
            "complete "
            "content as "
            "the final "
            "answer, not "
            'a summary.", '
            '"context": '
            '"\\nCurrent '
            "Task: Push "
            "branch main "
            "of "
            "acme/team-clean.\\n\\nThis "
            "is the "
            "expected "
            "criteria for "
            "your final "
            "answer: What "
            "was pushed, "
            "with the new "
            "head "
            "commit.\\nyou "
            "MUST return "
            "the actual "
            "complete "
            "content as "
            "the final "
            "answer, not "
            'a summary.", '
            '"coworker": '
            '"release_engineer"}',
            "llm.input_messages.3.message.role": "tool",
            "llm.input_messages.3.message.tool_call_id": "call_00000007",
            "llm.input_messages.3.message.content": "Pushed main to acme/team-clean: commit "
            "a523f6f6ebb28186c7ebef5466b89d08b6770c63.",
            "llm.input_messages.3.message.name": "delegate_work_to_coworker",
            "llm.model_name": "fake-gpt",
            "llm.token_count.total": 59,
            "llm.token_count.prompt": 42,
            "llm.token_count.completion": 17,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": "Pushed main to acme/team-clean: commit "
            "a523f6f6ebb2.",
            "llm.finish_reason": "stop",
            "openinference.span.kind": "LLM",
        },
    ),
]
"""(name, span id, parent, start µs, end µs, scope, attributes) of each span."""


def hierarchical_crew() -> list[SpanRecord]:
    return [
        record(
            span_id,
            name,
            attributes,
            parent=parent,
            start=start * 1_000,
            end=end * 1_000,
            status=1,
            scope=scope,
        )
        for name, span_id, parent, start, end, scope, attributes in HIERARCHICAL_CREW
    ]


def test_hierarchical_crew_is_the_managers_turn_with_the_workers_push() -> None:
    turn, verdict = only_turn(hierarchical_crew())
    assert turn.user_message == USER
    assert turn.agent == "release_lead"
    assert turn.reply == "Pushed main to acme/team-clean: commit a523f6f6ebb2."
    names = [c.name for c in turn.tool_calls]
    # The delegation tool's span is named as CrewAI names the tool ("Delegate work to
    # coworker"), the model's call as it was offered (`delegate_work_to_coworker`).
    assert names == ["delegate_work_to_coworker", "git_push"]
    delegate, push = turn.tool_calls
    assert delegate.span_id == "1ee9d9aff58eb495" and COMMIT in str(delegate.result)
    assert not push.error and COMMIT in str(push.result)
    assert verdict.outcome.value == "pass", verdict.findings


@pytest.mark.parametrize(
    ("prompt", "request_text"),
    [
        pytest.param("\nCurrent Task: Now push branch dev.", "Now push branch dev.", id="native"),
        pytest.param(
            "\nCurrent Task: Push it.\n\nThis is the expected criteria for your final answer: "
            "What was pushed.\nyou MUST return the actual complete content as the final "
            "answer, not a summary.",
            "Push it.",
            id="expected-output",
        ),
        pytest.param(
            "\nCurrent Task: \nCurrent Task: Push it.\n\nThis is the expected criteria for "
            "your final answer: What was pushed.\nyou MUST return the actual complete content"
            " as the final answer, not a summary.\n\nThis is the expected criteria for your "
            "final answer: Your best answer to your coworker asking you this, accounting for "
            "the context shared.\nyou MUST return the actual complete content as the final "
            "answer, not a summary.\n\nThis is the context you're working with:\nPush it.",
            "Push it.",
            id="delegated",
        ),
        pytest.param(
            "\nCurrent Task: Push it.\n\nBegin! This is VERY important to you, use the tools "
            "available and give your best Final Answer, your job depends on it!\n\nThought:",
            "Push it.",
            id="react",
        ),
        pytest.param(
            "Current Task: is a heading I use.",
            "Current Task: is a heading I use.",
            id="not-crewai",
        ),
    ],
)
def test_crewai_task_prompt_is_read_as_its_request(prompt: str, request_text: str) -> None:
    (message,) = read_messages([{"role": "user", "content": prompt}])
    assert message.text == request_text


OL_CREWAI = "opentelemetry.instrumentation.crewai.instrumentation"
OL_OPENAI = "opentelemetry.instrumentation.openai.v1"
ERR_USER = "Push branch main of acme/err-raise."
ERR_PROMPT = (
    f"\nCurrent Task: {ERR_USER}\n\nThis is the expected criteria for your final answer: What "
    "was pushed, with the new head commit.\nyou MUST return the actual complete content as "
    "the final answer, not a summary."
)
ENGINEER_SYSTEM = (
    "You are release_engineer. You run releases with git_push.\nYour personal goal is: Push "
    "branches of repositories and report the new head commit."
)
GIT_PUSH_DEFINITION = json.dumps(
    [
        {
            "type": "function",
            "name": "git_push",
            "description": "Push `branch` of `repo` to its remote and report the new head commit.",
            "parameters": {
                "properties": {"repo": {"type": "string"}, "branch": {"type": "string"}},
                "required": ["repo", "branch"],
                "type": "object",
                "additionalProperties": False,
            },
        }
    ]
)
PUSH_CALL = {
    "role": "assistant",
    "parts": [
        {
            "type": "tool_call",
            "name": "git_push",
            "id": "call_00000004",
            "arguments": {"repo": "acme/err-raise", "branch": "main"},
        }
    ],
}


def _openllmetry_chat(
    span_id: str, start: int, end: int, history: list[Any], output: Any
) -> SpanRecord:
    finish = "tool_call" if output["parts"][0]["type"] == "tool_call" else "stop"
    inputs = [
        {"role": "system", "parts": [{"content": ENGINEER_SYSTEM, "type": "text"}]},
        {"role": "user", "parts": [{"content": ERR_PROMPT, "type": "text"}]},
        *history,
    ]
    return record(
        span_id,
        "openai.chat",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "fake-gpt",
            "gen_ai.is_streaming": False,
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.tool.definitions": GIT_PUSH_DEFINITION,
            "gen_ai.response.model": "fake-gpt",
            "gen_ai.response.finish_reasons": (finish,),
            "gen_ai.output.messages": json.dumps([{**output, "finish_reason": finish}]),
        },
        parent="d38d64bb214f83fc",
        start=start,
        end=end,
        scope=OL_OPENAI,
    )


def openllmetry_crew_failed_push() -> list[SpanRecord]:
    """opentelemetry-instrumentation-crewai 0.62.4 and -openai 0.62.4 on a crew whose tool
    raised: the crew's `crewai.workflow` span (an `invoke_agent` that names no agent, and
    no `traceloop.span.kind`), the task's span, the agent's span (`gen_ai.agent.name`),
    the model calls; no tool span. The failure is CrewAI's text in the tool message."""
    reply = "I pushed main to acme/err-raise successfully."
    return [
        record(
            "5553fc95d3d02690",
            "crewai.workflow",
            {
                "gen_ai.provider.name": "crewai",
                "gen_ai.operation.name": "invoke_agent",
                "crewai.crew.id": "90ba6cfb-791c-4ce7-a440-24751489a819",
                "crewai.crew.name": "crew",
                "crewai.crew.process": "Process.sequential",
                "crewai.crew.result": reply,
            },
            start=0,
            end=132_793_000,
            status=1,
            scope=OL_CREWAI,
        ),
        record(
            "51e26775063d1a52",
            f"{ERR_USER}.task",
            {
                "traceloop.span.kind": "task",
                "gen_ai.provider.name": "crewai",
                "gen_ai.operation.name": "invoke_agent",
                "crewai.task.agent": "release_engineer",
                "crewai.task.description": ERR_USER,
                "crewai.task.expected_output": "What was pushed, with the new head commit.",
                "traceloop.entity.output": reply,
            },
            parent="5553fc95d3d02690",
            start=34_848_000,
            end=127_993_000,
            status=1,
            scope=OL_CREWAI,
        ),
        record(
            "d38d64bb214f83fc",
            "release_engineer.agent",
            {
                "traceloop.span.kind": "agent",
                "gen_ai.provider.name": "crewai",
                "gen_ai.operation.name": "invoke_agent",
                "crewai.agent.role": "release_engineer",
                "crewai.agent.llm": "fake-gpt",
                "gen_ai.agent.name": "release_engineer",
                "gen_ai.agent.id": "4a38a95a-872b-4119-a0b4-efaf5f197afd",
                "gen_ai.request.model": "fake-gpt",
                "gen_ai.response.model": "fake-gpt",
            },
            parent="51e26775063d1a52",
            start=35_347_000,
            end=127_093_000,
            status=1,
            scope=OL_CREWAI,
        ),
        _openllmetry_chat("aed0857fc553390a", 47_087_000, 59_768_000, [], PUSH_CALL),
        _openllmetry_chat(
            "345f729cbc6812b3",
            71_218_000,
            118_352_000,
            [
                PUSH_CALL,
                {
                    "role": "tool",
                    "parts": [
                        {
                            "type": "tool_call_response",
                            "id": "call_00000004",
                            "response": "Error executing tool: push rejected: the remote has "
                            "commits you do not have",
                        }
                    ],
                },
            ],
            {"role": "assistant", "parts": [{"content": reply, "type": "text"}]},
        ),
    ]


def test_openllmetry_crew_turn_is_the_agents_with_the_failed_push() -> None:
    turn, verdict = only_turn(openllmetry_crew_failed_push())
    assert turn.agent == "release_engineer"
    assert turn.user_message == ERR_USER
    (push,) = turn.tool_calls
    assert push.name == "git_push" and "push rejected" in str(push.result)
    assert verdict.outcome.value == "reject"
    assert "error_reported_as_success" in {f.kind.value for f in verdict.findings}
