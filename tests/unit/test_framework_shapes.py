"""Span shapes that real instrumentations emit, read through the real normalizer.

Each table holds span attributes literally as the named library writes them (the comment
above a case names the library and the attribute it fills). Where the verdict depends on
the reading, the spans also go through a `TurnAssembler` (fake clock) and the default
validators.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from factledger.processors.normalize.base import ChatMessage, ToolExecution
from factledger.processors.normalize.dispatch import normalize
from factledger.processors.normalize.messages import read_messages
from factledger.processors.spans import SpanRecord

from .span_turns import only_turn, record


def tool_execution(attributes: Mapping[str, Any], name: str = "tool") -> ToolExecution:
    value = normalize(record("e457b5a2e4d86bd1", name, attributes))
    assert isinstance(value, ToolExecution), value
    return value


# --- 1. LangChain tool messages -----------------------------------------------------------

PUSH_CALL = "call_Pq7XkT2mB9vR4sLw"
PUSH_ARGS = '{"branch": "feature/login"}'
REJECTED = "push rejected: feature/login is behind origin (non-fast-forward)"


def tool_message_fields(status: str) -> dict[str, Any]:
    """A LangChain `ToolMessage`'s fields as `model_dump` gives them."""
    return {
        "content": REJECTED if status == "error" else "pushed 3 commits",
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "tool",
        "name": "git_push",
        "id": "run-8c1d2f",
        "tool_call_id": PUSH_CALL,
        "artifact": None,
        "status": status,
    }


def lc_tool_message(status: str) -> dict[str, Any]:
    """The same message as `langchain_core.load.dumpd` serializes it."""
    kwargs = tool_message_fields(status)
    del kwargs["type"]
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", "ToolMessage"],
        "kwargs": kwargs,
    }


LANGCHAIN_TOOL_CASES = [
    # openinference-instrumentation-langchain: TOOL span, `output.value` is the returned
    # ToolMessage as `message_to_dict` writes it ({"type", "data"}).
    pytest.param(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "git_push",
            "input.value": "{'branch': 'feature/login'}",
            "output.value": json.dumps({"type": "tool", "data": tool_message_fields("error")}),
            "output.mime_type": "application/json",
        },
        id="openinference-tool-message-to-dict",
    ),
    # openinference-instrumentation-langchain: `output.value` as the message's model_dump.
    pytest.param(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "git_push",
            "input.value": "{'branch': 'feature/login'}",
            "output.value": json.dumps(tool_message_fields("error")),
            "output.mime_type": "application/json",
        },
        id="openinference-tool-message-model-dump",
    ),
    # opentelemetry-instrumentation-langchain (OpenLLMetry): `traceloop.entity.output` is
    # json.dumps({"output": output, "kwargs": kwargs}), the ToolMessage lc-serialized.
    pytest.param(
        {
            "traceloop.span.kind": "tool",
            "traceloop.entity.name": "git_push",
            "traceloop.entity.path": "tools",
            "traceloop.entity.input": json.dumps(
                {
                    "input_str": "{'branch': 'feature/login'}",
                    "tags": ["seq:step:1"],
                    "metadata": {"langgraph_node": "tools"},
                    "inputs": {"branch": "feature/login"},
                    "kwargs": {"name": "git_push"},
                }
            ),
            "traceloop.entity.output": json.dumps(
                {"output": lc_tool_message("error"), "kwargs": {"name": "git_push"}}
            ),
        },
        id="openllmetry-tool-output-lc-serialized",
    ),
]


@pytest.mark.parametrize("attributes", LANGCHAIN_TOOL_CASES)
def test_langchain_tool_message_is_the_result_and_its_status_the_failure(attributes):
    execution = tool_execution(attributes, name="git_push")
    assert execution.name == "git_push"
    assert execution.call_id == PUSH_CALL
    assert execution.result == REJECTED
    assert execution.error is True


@pytest.mark.parametrize(
    "output",
    [
        json.dumps({"type": "tool", "data": tool_message_fields("success")}),
        json.dumps(tool_message_fields("success")),
    ],
    ids=["message-to-dict", "model-dump"],
)
def test_langchain_tool_message_with_success_status_is_a_success(output):
    execution = tool_execution({"openinference.span.kind": "TOOL", "output.value": output})
    assert (execution.result, execution.error) == ("pushed 3 commits", False)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "tool", "data": tool_message_fields("error")},
        lc_tool_message("error"),
        tool_message_fields("error"),
    ],
    ids=["message-to-dict", "lc-serialized", "model-dump"],
)
def test_langchain_tool_message_in_llm_input_keeps_its_error_status(message):
    # openinference-instrumentation-langchain falls back on `input.value`, the chat
    # model's {"messages": [[...]]} with each message dumped as the run recorded it.
    messages = read_messages({"messages": [[message]]})
    assert messages == (
        ChatMessage(role="tool", text=REJECTED, tool_call_id=PUSH_CALL, is_error=True),
    )


def openinference_langgraph(status: str) -> list[SpanRecord]:
    """A LangGraph ReAct run as openinference-instrumentation-langchain records it: the
    graph's root CHAIN, an LLM call that asks for git_push, the TOOL span whose
    ToolMessage has `status`, the answer."""
    message = tool_message_fields(status)
    ask = "Push my branch feature/login."
    reply = "Pushed feature/login to origin."
    return [
        record(
            "a0c1e5f7b9d2e4f6",
            "LangGraph",
            {
                "openinference.span.kind": "CHAIN",
                "input.value": json.dumps({"messages": [["user", ask]]}),
                "output.value": json.dumps(
                    {"messages": [{"type": "ai", "content": reply, "tool_calls": []}]}
                ),
            },
            start=1_000,
            end=9_000,
        ),
        record(
            "b1d2e3f4a5b6c7d8",
            "ChatOpenAI",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-2024-08-06",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": ask,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": PUSH_CALL,
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": (
                    PUSH_ARGS
                ),
            },
            parent="a0c1e5f7b9d2e4f6",
            start=2_000,
            end=3_000,
        ),
        record(
            "c2e3f4a5b6c7d8e9",
            "git_push",
            {
                "openinference.span.kind": "TOOL",
                "tool.name": "git_push",
                "input.value": "{'branch': 'feature/login'}",
                "output.value": json.dumps({"type": "tool", "data": message}),
            },
            parent="a0c1e5f7b9d2e4f6",
            start=4_000,
            end=5_000,
        ),
        record(
            "d3f4a5b6c7d8e9f0",
            "ChatOpenAI",
            {
                "openinference.span.kind": "LLM",
                "llm.model_name": "gpt-4o-2024-08-06",
                "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": ask,
                "llm.input_messages.1.message.role": "assistant",
                "llm.input_messages.1.message.tool_calls.0.tool_call.id": PUSH_CALL,
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.name": "git_push",
                "llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments": (
                    PUSH_ARGS
                ),
                # The instrumentation keeps a ToolMessage's content and id, not its status.
                "llm.input_messages.2.message.role": "tool",
                "llm.input_messages.2.message.content": message["content"],
                "llm.input_messages.2.message.tool_call_id": PUSH_CALL,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": reply,
            },
            parent="a0c1e5f7b9d2e4f6",
            start=6_000,
            end=8_000,
        ),
    ]


def test_langgraph_push_whose_tool_message_says_error_is_reported_as_success():
    turn, verdict = only_turn(openinference_langgraph("error"))
    (push,) = turn.tool_calls
    assert (push.call_id, push.result, push.error) == (PUSH_CALL, REJECTED, True)
    assert verdict.outcome == "reject"
    assert "error_reported_as_success" in verdict.kinds


def test_langgraph_push_whose_tool_message_succeeded_passes():
    turn, verdict = only_turn(openinference_langgraph("success"))
    assert [(c.result, c.error) for c in turn.tool_calls] == [("pushed 3 commits", False)]
    assert verdict.outcome == "pass", verdict.findings


# --- 2. A failure inside a wrapper ----------------------------------------------------------


def openai_agents_llm_span(tool_output: str) -> SpanRecord:
    """The final model call of an OpenAI Agents SDK run, as
    openinference-instrumentation-openai-agents writes a Responses call: the SDK hands the
    tool's dict back to the model as its `str()`, which lands in the tool message's
    `llm.input_messages.N.message.content`."""
    return record(
        "f1e2d3c4b5a69788",
        "response",
        {
            "openinference.span.kind": "LLM",
            "llm.system": "openai",
            "llm.model_name": "gpt-4.1-2025-04-14",
            "llm.input_messages.0.message.role": "system",
            "llm.input_messages.0.message.content": "You push branches for the user.",
            "llm.input_messages.1.message.role": "user",
            "llm.input_messages.1.message.content": "Push feature/login.",
            "llm.input_messages.2.message.role": "assistant",
            "llm.input_messages.2.message.tool_calls.0.tool_call.id": PUSH_CALL,
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "git_push",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": PUSH_ARGS,
            "llm.input_messages.3.message.role": "tool",
            "llm.input_messages.3.message.tool_call_id": PUSH_CALL,
            "llm.input_messages.3.message.content": tool_output,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.type": "text",
            "llm.output_messages.0.message.contents.0.message_content.text": (
                "Done: feature/login has been pushed to origin."
            ),
        },
        scope="openinference.instrumentation.openai_agents",
    )


@pytest.mark.parametrize(
    ("tool_output", "outcome"),
    [
        ("{'result': {'ok': False, 'error': 'push rejected'}}", "reject"),
        ("{'ok': False, 'error': 'push rejected'}", "reject"),
        ("{'result': {'ok': True, 'error': None, 'errors': []}}", "pass"),
    ],
    ids=["failure-one-level-down", "python-literal-failure", "success-with-empty-error-keys"],
)
def test_failure_inside_a_python_literal_wrapper_is_a_failed_call(tool_output, outcome):
    turn, verdict = only_turn([openai_agents_llm_span(tool_output)])
    assert [c.name for c in turn.tool_calls] == ["git_push"]
    assert verdict.outcome == outcome, verdict.findings
    if outcome == "reject":
        assert verdict.kinds == ("error_reported_as_success",)


# --- 3. OpenLLMetry's OpenAI Agents SDK instrumentation ---------------------------------------

AGENTS_CALL = "call_Xs4mHq8TzR1vN6Lp"
AGENTS_ITEM = "fc_68db9d00d258819d987f4b9b63189e76"
AGENTS_TOOL_ERROR = "An error occurred while running the tool. Please try again."
GIT_TOOL = [
    {
        "type": "function",
        "function": {
            "name": "git_push",
            "description": "Push a branch to origin.",
            "parameters": {"type": "object", "properties": {"branch": {"type": "string"}}},
        },
    }
]


def openllmetry_openai_agents(*, tool_status: int) -> list[SpanRecord]:
    """A run as opentelemetry-instrumentation-openai-agents records it: the root
    "Agent Workflow" span (traceloop.span.kind workflow), the agent span `{name}.agent`
    (gen_ai.agent.name), `openai.response` spans (gen_ai.input/output.messages: a
    function_call item from the input is a tool_call part whose id is the item's `fc_`
    id, its output a tool_call_response with the `call_` id) and the tool span
    `{tool}.tool` (gen_ai.tool.call.arguments / .result, no traceloop.entity.*)."""
    ask = {"role": "user", "parts": [{"type": "text", "content": "Push feature/login."}]}
    system = {"role": "system", "parts": [{"type": "text", "content": "You push branches."}]}
    scope = "opentelemetry.instrumentation.openai_agents"
    return [
        record(
            "0a1b2c3d4e5f6071",
            "Agent Workflow",
            {
                "traceloop.span.kind": "workflow",
                "gen_ai.provider.name": "openai",
                "traceloop.workflow.name": "Agent Workflow",
            },
            start=1_000,
            end=9_500,
            scope=scope,
        ),
        record(
            "1b2c3d4e5f607182",
            "Git assistant.agent",
            {
                "traceloop.span.kind": "agent",
                "gen_ai.agent.name": "Git assistant",
                "gen_ai.provider.name": "openai",
                "gen_ai.operation.name": "invoke_agent",
            },
            parent="0a1b2c3d4e5f6071",
            start=1_100,
            end=9_400,
            scope=scope,
        ),
        record(
            "2c3d4e5f60718293",
            "openai.response",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4.1",
                "gen_ai.response.model": "gpt-4.1-2025-04-14",
                "gen_ai.input.messages": json.dumps([system, ask]),
                "gen_ai.tool.definitions": json.dumps(GIT_TOOL),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {
                                    "type": "tool_call",
                                    "name": "git_push",
                                    "id": AGENTS_CALL,
                                    "arguments": {"branch": "feature/login"},
                                }
                            ],
                            "finish_reason": "tool_call",
                        }
                    ]
                ),
            },
            parent="1b2c3d4e5f607182",
            start=2_000,
            end=3_000,
            scope=scope,
        ),
        record(
            "3d4e5f6071829304",
            "git_push.tool",
            {
                "traceloop.span.kind": "tool",
                "gen_ai.tool.name": "git_push",
                "gen_ai.tool.type": "function",
                "gen_ai.provider.name": "openai",
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.call.arguments": '{"branch":"feature/login"}',
                "gen_ai.tool.call.result": AGENTS_TOOL_ERROR,
            },
            parent="1b2c3d4e5f607182",
            start=4_000,
            end=5_000,
            status=tool_status,
            scope=scope,
        ),
        record(
            "4e5f607182930415",
            "openai.response",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": "openai",
                "gen_ai.request.model": "gpt-4.1",
                "gen_ai.response.model": "gpt-4.1-2025-04-14",
                "gen_ai.input.messages": json.dumps(
                    [
                        system,
                        ask,
                        {
                            "role": "assistant",
                            "parts": [
                                {
                                    "type": "tool_call",
                                    "name": "git_push",
                                    "id": AGENTS_ITEM,
                                    "arguments": {"branch": "feature/login"},
                                }
                            ],
                        },
                        {
                            "role": "tool",
                            "parts": [
                                {
                                    "type": "tool_call_response",
                                    "id": AGENTS_CALL,
                                    "response": AGENTS_TOOL_ERROR,
                                }
                            ],
                        },
                    ]
                ),
                "gen_ai.tool.definitions": json.dumps(GIT_TOOL),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": "Pushed feature/login."}],
                            "finish_reason": "stop",
                        }
                    ]
                ),
            },
            parent="1b2c3d4e5f607182",
            start=6_000,
            end=9_000,
            scope=scope,
        ),
    ]


@pytest.mark.parametrize("tool_status", [0, 2], ids=["status-unset", "status-error"])
def test_openllmetry_openai_agents_failed_tool_is_one_failed_call(tool_status):
    turn, verdict = only_turn(openllmetry_openai_agents(tool_status=tool_status))
    (push,) = turn.tool_calls  # the fc_ item id and its call_ id are one call
    assert push.call_id == AGENTS_CALL
    assert push.arguments == {"branch": "feature/login"}
    assert push.result == AGENTS_TOOL_ERROR
    assert push.span_id == "3d4e5f6071829304"
    assert verdict.kinds == ("error_reported_as_success",), verdict.findings


def test_openllmetry_tool_span_reads_genai_arguments_and_result():
    # opentelemetry-instrumentation-openai-agents: traceloop.span.kind "tool" with only
    # gen_ai.tool.* attributes.
    execution = tool_execution(
        {
            "traceloop.span.kind": "tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.call.arguments": '{"city":"Tokyo"}',
            "gen_ai.tool.call.result": "The weather in Tokyo is sunny.",
        },
        name="get_weather.tool",
    )
    assert (execution.name, execution.arguments, execution.result, execution.error) == (
        "get_weather",
        '{"city":"Tokyo"}',
        "The weather in Tokyo is sunny.",
        False,
    )


def test_response_item_id_and_call_id_name_one_call():
    # opentelemetry-instrumentation-openai-agents, `gen_ai.input.messages`: a function_call
    # item becomes a tool_call part with the item's `fc_` id; its output keeps `call_`.
    messages = read_messages(
        [
            {"role": "user", "parts": [{"type": "text", "content": "Push."}]},
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": AGENTS_ITEM, "name": "git_push"}],
            },
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": AGENTS_CALL, "response": "ok"}],
            },
        ]
    )
    assert [p.call_id for m in messages for p in m.tool_calls] == [AGENTS_CALL]
    assert messages[-1].tool_call_id == AGENTS_CALL


# --- 4. smolagents: the final_answer tool carries the reply ----------------------------------

SMOL_SCOPE = "openinference.instrumentation.smolagents"
FINAL_ANSWER_PARAMETERS = json.dumps(
    {"answer": {"type": "any", "description": "The final answer to the problem"}}
)


def smol_run(name: str, task: str, output: str | None) -> SpanRecord:
    """openinference-instrumentation-smolagents' run span: `{Agent class}.run`, AGENT, the
    bound `run()` arguments as `input.value`, `smolagents.*` attributes, `str(output)`."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "AGENT",
        "input.value": json.dumps(
            {
                "task": task,
                "stream": False,
                "reset": True,
                "images": None,
                "additional_args": None,
                "max_steps": None,
            }
        ),
        "smolagents.task": task,
        "smolagents.max_steps": 20,
        "smolagents.tools_names": ("git_push", "web_search", "final_answer"),
        "llm.token_count.prompt": 812,
        "llm.token_count.completion": 64,
    }
    if output is not None:
        attributes["output.value"] = output
    return record("5a00000000000001", name, attributes, start=1_000, end=20_000, scope=SMOL_SCOPE)


def smol_step(number: int, start: int) -> SpanRecord:
    """The `Step N` CHAIN span each loop iteration gets."""
    return record(
        f"5b0000000000000{number}",
        f"Step {number}",
        {"openinference.span.kind": "CHAIN", "input.value": '{"memory_step": "ActionStep()"}'},
        parent="5a00000000000001",
        start=start,
        end=start + 4_000,
        scope=SMOL_SCOPE,
    )


def smol_llm(
    number: int, start: int, messages: Sequence[tuple[str, str]], **output: Any
) -> SpanRecord:
    """The model call of step `number`: `llm.input_messages` (smolagents' own roles, such
    as "tool-response"), `llm.output_messages.0` with `content` and/or `tool_calls`."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "gpt-4o",
        "input.mime_type": "application/json",
    }
    for i, (role, content) in enumerate(messages):
        attributes[f"llm.input_messages.{i}.message.role"] = role
        attributes[f"llm.input_messages.{i}.message.content"] = content
    attributes["llm.output_messages.0.message.role"] = "assistant"
    if "content" in output:
        attributes["llm.output_messages.0.message.content"] = output["content"]
    for k, (call_id, name, arguments) in enumerate(output.get("tool_calls", ())):
        prefix = f"llm.output_messages.0.message.tool_calls.{k}.tool_call"
        attributes[f"{prefix}.id"] = call_id
        attributes[f"{prefix}.function.name"] = name
        attributes[f"{prefix}.function.arguments"] = arguments
    return record(
        f"5c0000000000000{number}",
        "LiteLLMModel.generate",
        attributes,
        parent=f"5b0000000000000{number}",
        start=start + 100,
        end=start + 1_000,
        scope=SMOL_SCOPE,
    )


def smol_tool(
    span_id: str,
    cls: str,
    name: str,
    bound: Mapping[str, Any],
    *,
    step: int,
    start: int,
    output: str | None = None,
    parameters: str = "{}",
) -> SpanRecord:
    """A `Tool.__call__` span: named after the tool's class, `tool.name`, the bound call
    as `input.value`, `output.value` only for string/number/object tools (`final_answer`
    is typed "any", so it has none)."""
    attributes: dict[str, Any] = {
        "openinference.span.kind": "TOOL",
        "tool.name": name,
        "tool.parameters": parameters,
        "input.value": json.dumps(bound),
    }
    if output is not None:
        attributes["output.value"] = output
        attributes["output.mime_type"] = "text/plain"
    return record(
        span_id,
        cls,
        attributes,
        parent=f"5b0000000000000{step}",
        start=start,
        end=start + 500,
        scope=SMOL_SCOPE,
    )


SUMMARY_REPLY = "Summary of changes:\n- pushed feature/login to origin"


def test_smolagents_tool_calling_agent_answer_is_not_a_tool_call():
    task = "Push feature/login."
    system = ("system", "You are an expert assistant who can solve any task using tool calls.")
    answer_call = ("call_Fa3kQ9wLm2Zx7Ty1", "final_answer", json.dumps({"answer": SUMMARY_REPLY}))
    spans = [
        smol_run("ToolCallingAgent.run", task, SUMMARY_REPLY),
        smol_step(1, 2_000),
        smol_llm(1, 2_000, [system, ("user", f"New task:\n{task}")], tool_calls=[answer_call]),
        smol_tool(
            "5d00000000000001",
            "FinalAnswerTool",
            "final_answer",
            {"args": [], "sanitize_inputs_outputs": True, "kwargs": {"answer": SUMMARY_REPLY}},
            step=1,
            start=3_500,
            parameters=FINAL_ANSWER_PARAMETERS,
        ),
    ]
    turn, verdict = only_turn(spans)
    assert turn.reply == SUMMARY_REPLY
    assert [(c.name, c.answer) for c in turn.tool_calls] == [("final_answer", True)]
    assert turn.executed_calls == ()
    assert "summary_without_action" in verdict.kinds
    assert "claim_without_tool" in verdict.kinds


def test_smolagents_final_answer_result_is_not_evidence_for_the_reply():
    # A final-answer tool typed "string" gets `output.value`: the answer echoed back.
    reply = "I looked it up: the open incident is OPS-4417."
    task = "Which incident is open?"
    spans = [
        smol_run("ToolCallingAgent.run", task, reply),
        smol_step(1, 2_000),
        smol_llm(
            1,
            2_000,
            [("user", f"New task:\n{task}")],
            tool_calls=[("call_Fa3kQ9wLm2Zx7Ty2", "final_answer", json.dumps({"answer": reply}))],
        ),
        smol_tool(
            "5d00000000000002",
            "FinalAnswerTool",
            "final_answer",
            {"args": [], "sanitize_inputs_outputs": True, "kwargs": {"answer": reply}},
            step=1,
            start=3_500,
            output=reply,
            parameters=FINAL_ANSWER_PARAMETERS,
        ),
    ]
    turn, verdict = only_turn(spans)
    assert turn.tool_results_text == ""
    assert "fabricated_identifier" in verdict.kinds


HTTPX_RESULTS = (
    "## Search Results\n\n[httpx 0.28.1 - PyPI](https://pypi.org/project/httpx/0.28.1/)\n"
    "Released: Dec 6, 2024"
)
HTTPX_ANSWER = "The latest httpx release is 0.28.1 (December 2024)."
HTTPX_CODE = (
    f'Thought: I have the release.\nCode:\n```py\nfinal_answer("{HTTPX_ANSWER}")\n```<end_code>'
)


def smolagents_code_agent(*, with_run_span: bool) -> list[SpanRecord]:
    """A CodeAgent run: the model writes code; the tools it calls get TOOL spans without
    call ids; the last code calls `final_answer` positionally."""
    task = "What is the latest release of httpx?"
    user = ("user", f"New task:\n{task}")
    search_code = (
        "Thought: I will search.\nCode:\n```py\n"
        'print(web_search(query="httpx latest release"))\n```<end_code>'
    )
    spans = [
        smol_step(1, 2_000),
        smol_llm(1, 2_000, [user], content=search_code),
        smol_tool(
            "5d00000000000003",
            "WebSearchTool",
            "web_search",
            {"args": [], "sanitize_inputs_outputs": False, "kwargs": {"query": "httpx latest"}},
            step=1,
            start=3_200,
            output=HTTPX_RESULTS,
            parameters=json.dumps({"query": {"type": "string", "description": "The query."}}),
        ),
        smol_step(2, 7_000),
        smol_llm(
            2,
            7_000,
            [
                user,
                ("assistant", search_code),
                ("tool-call", "Calling tools:\n[{'id': 'call_1', 'type': 'function'}]"),
                ("tool-response", f"Call id: call_1\nObservation:\n{HTTPX_RESULTS}"),
            ],
            content=HTTPX_CODE,
        ),
        smol_tool(
            "5d00000000000004",
            "FinalAnswerTool",
            "final_answer",
            {"args": [HTTPX_ANSWER], "sanitize_inputs_outputs": False, "kwargs": {}},
            step=2,
            start=8_200,
            parameters=FINAL_ANSWER_PARAMETERS,
        ),
    ]
    if with_run_span:
        spans.insert(0, smol_run("CodeAgent.run", task, HTTPX_ANSWER))
    return spans


@pytest.mark.parametrize("with_run_span", [True, False], ids=["with-run-span", "steps-only"])
def test_smolagents_code_agent_reply_is_the_answer_not_its_code(with_run_span):
    turn, verdict = only_turn(smolagents_code_agent(with_run_span=with_run_span))
    assert turn.reply == HTTPX_ANSWER
    assert turn.steps[-1] == HTTPX_CODE
    assert [(c.name, c.answer, dict(c.arguments)) for c in turn.tool_calls] == [
        ("web_search", False, {"query": "httpx latest"}),
        ("final_answer", True, {"answer": HTTPX_ANSWER}),
    ]
    assert verdict.outcome == "pass", verdict.findings


def test_smolagents_tool_binding_is_read_as_the_arguments():
    # openinference-instrumentation-smolagents: `input.value` is the bound
    # Tool.__call__(*args, sanitize_inputs_outputs=..., **kwargs).
    execution = tool_execution(
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "git_push",
            "tool.parameters": json.dumps({"branch": {"type": "string"}}),
            "input.value": json.dumps(
                {"args": ["feature/login"], "sanitize_inputs_outputs": True, "kwargs": {}}
            ),
            "output.value": "pushed 3 commits",
        },
        name="GitPushTool",
    )
    assert json.loads(execution.arguments) == {"branch": "feature/login"}


def test_pydantic_ai_output_tool_whose_arguments_are_the_reply_is_the_answer():
    # Pydantic AI (Logfire's GenAI spans): the run span `{agent} run` carries the output
    # as `final_result`; the model delivered it through the output tool `final_result`
    # (listed in `model_request_parameters.output_tools`), whose arguments are the reply.
    verdict_args = {"incident": "OPS-4417", "state": "open"}
    output_tool = {
        "name": "final_result",
        "parameters_json_schema": {
            "type": "object",
            "properties": {"incident": {"type": "string"}, "state": {"type": "string"}},
        },
    }
    ask = {"role": "user", "parts": [{"type": "text", "content": "Which incident is open?"}]}
    spans = [
        record(
            "6a00000000000001",
            "triage_agent run",
            {
                "model_name": "gpt-4o-mini",
                "agent_name": "triage_agent",
                "gen_ai.agent.name": "triage_agent",
                "logfire.msg": "triage_agent run",
                "final_result": json.dumps(verdict_args),
            },
            start=1_000,
            end=5_000,
        ),
        record(
            "6a00000000000002",
            "chat gpt-4o-mini",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "model_request_parameters": json.dumps(
                    {"function_tools": [], "output_mode": "tool", "output_tools": [output_tool]}
                ),
                "gen_ai.input.messages": json.dumps([ask]),
                "gen_ai.output.messages": json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [
                                {
                                    "type": "tool_call",
                                    "id": "call_ZuzwalMMtvv9BC6xlVe3fiBP",
                                    "name": "final_result",
                                    "arguments": verdict_args,
                                }
                            ],
                            "finish_reason": "tool_call",
                        }
                    ]
                ),
            },
            parent="6a00000000000001",
            start=2_000,
            end=4_000,
        ),
    ]
    turn, verdict = only_turn(spans)
    assert json.loads(turn.reply) == verdict_args
    assert [(c.name, c.answer) for c in turn.tool_calls] == [("final_result", True)]
    # Its input is the reply, judged as the reply: no argument finding on top.
    assert "fabricated_identifier" in verdict.kinds
    assert "ungrounded_tool_argument" not in verdict.kinds


# --- 5. The agent's own name, not the run's ---------------------------------------------------

OI_AGENTS_SCOPE = "openinference.instrumentation.openai_agents"


def openinference_openai_agents(*agents: str) -> list[SpanRecord]:
    """openinference-instrumentation-openai-agents: the SDK trace becomes a root AGENT span
    named after the trace ("Agent workflow" by default) with nothing but its kind; each
    agent run an AGENT span named after the agent with `graph.node.id`; each model call an
    LLM span under its agent. Several agents: hand-offs, the last one answers."""
    spans = [
        record(
            "7a00000000000001",
            "Agent workflow",
            {"openinference.span.kind": "AGENT"},
            start=1_000,
            end=10_000 * (len(agents) + 1),
            scope=OI_AGENTS_SCOPE,
        )
    ]
    for i, name in enumerate(agents, start=1):
        last = i == len(agents)
        output: dict[str, Any] = (
            {
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.contents.0.message_content.type": "text",
                "llm.output_messages.0.message.contents.0.message_content.text": "It is sunny.",
            }
            if last
            else {
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": f"call_handoff0000{i}",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": (
                    "transfer_to_" + agents[i].lower().replace(" ", "_")
                ),
            }
        )
        spans.append(
            record(
                f"7b0000000000000{i}",
                name,
                {"openinference.span.kind": "AGENT", "llm.system": "openai", "graph.node.id": name},
                parent="7a00000000000001",
                start=10_000 * i,
                end=10_000 * i + 9_000,
                scope=OI_AGENTS_SCOPE,
            )
        )
        spans.append(
            record(
                f"7c0000000000000{i}",
                "response",
                {
                    "openinference.span.kind": "LLM",
                    "llm.system": "openai",
                    "llm.model_name": "gpt-4.1-2025-04-14",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "Weather in Tokyo?",
                    **output,
                },
                parent=f"7b0000000000000{i}",
                start=10_000 * i + 1_000,
                end=10_000 * i + 8_000,
                scope=OI_AGENTS_SCOPE,
            )
        )
    return spans


def openinference_langgraph_nodes() -> list[SpanRecord]:
    """openinference-instrumentation-langchain on a `create_react_agent` graph: the root
    CHAIN is the graph, named "LangGraph" unless named; its "agent" node runs are AGENT
    spans (the instrumentation makes any run with "agent" in its name one)."""
    spans = openinference_langgraph("success")
    return [
        spans[0],
        record(
            "a1a1a1a1a1a1a1a1",
            "agent",
            {"openinference.span.kind": "AGENT", "input.value": "{}"},
            parent="a0c1e5f7b9d2e4f6",
            start=1_500,
            end=3_500,
        ),
        replace_parent(spans[1], "a1a1a1a1a1a1a1a1"),
        spans[2],
        record(
            "a2a2a2a2a2a2a2a2",
            "agent",
            {"openinference.span.kind": "AGENT", "input.value": "{}"},
            parent="a0c1e5f7b9d2e4f6",
            start=5_500,
            end=8_500,
        ),
        replace_parent(spans[3], "a2a2a2a2a2a2a2a2"),
    ]


def replace_parent(span: SpanRecord, parent: str) -> SpanRecord:
    return SpanRecord(
        trace_id=span.trace_id,
        span_id=span.span_id,
        name=span.name,
        parent_span_id=parent,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        attributes=span.attributes,
        scope_name=span.scope_name,
    )


@pytest.mark.parametrize(
    ("spans", "agent"),
    [
        pytest.param(openinference_openai_agents("Weather agent"), "Weather agent", id="oi-agents"),
        pytest.param(
            openinference_openai_agents("Triage", "Weather agent"),
            "Triage",
            id="oi-agents-handoff-the-agent-the-user-talked-to",
        ),
        pytest.param(
            openllmetry_openai_agents(tool_status=0), "Git assistant", id="openllmetry-agents"
        ),
        pytest.param(openinference_langgraph_nodes(), "agent", id="oi-langgraph-node"),
        pytest.param(
            smolagents_code_agent(with_run_span=True), "CodeAgent", id="smolagents-run-span"
        ),
    ],
)
def test_turn_agent_is_the_agents_own_name_not_the_runs(spans, agent):
    turn, _ = only_turn(spans)
    assert turn.agent == agent


def test_a_named_graph_root_names_the_agent():
    # The same LangGraph run with `create_react_agent(..., name="release_bot")`: the
    # graph's root span carries the agent's name.
    spans = openinference_langgraph_nodes()
    spans[0] = record(
        spans[0].span_id,
        "release_bot",
        spans[0].attributes,
        start=spans[0].start_time_unix_nano,
        end=spans[0].end_time_unix_nano,
    )
    turn, _ = only_turn(spans)
    assert turn.agent == "release_bot"
