"""OpenInference (Arize Phoenix) spans, chosen by `openinference.span.kind`.

- LLM: `llm.input_messages.N.message.*` / `llm.output_messages.N.message.*` (`role`,
  `content`, `contents.K.message_content.text`, `tool_calls.M.tool_call.{id,
  function.name, function.arguments}`, `tool_call_id`, `name`; AutoGen AgentChat's tool
  results as `function.K` JSON beside the message); without them, the messages inside
  `input.value` / `output.value`. Tools from `llm.tools.N.tool.json_schema`.
- TOOL: `tool.name`, `input.value` (arguments), `output.value` (result); the call id from
  `tool_call.id`, `tool.id` or, where a framework adds GenAI attributes, `gen_ai.tool.call.id`.
  The LangChain instrumentation dumps the tool's `ToolMessage` into `output.value`
  (`{"type": "tool", "data": {"content", "status", "tool_call_id"}}` or flat): its content
  is the result, `"status": "error"` the failure, `tool_call_id` the call id. The
  smolagents instrumentation writes a tool's bound call as `input.value`
  (`{"args": [...], "sanitize_inputs_outputs": ..., "kwargs": {...}}`): the kwargs, with
  positional values named after the tool's inputs (`tool.parameters`), are the arguments.
  A tool that raised has no `output.value`: its exception event's message is the result.
- AGENT, and a CHAIN that is a trace's root: an agent run named by `agent.name` or the span
  (a smolagents run span, `{Agent class}.run`, by the class). Spans that only wrap a run
  (`AgentInvocation.wrapper`): the OpenAI Agents instrumentations' trace span (AGENT,
  without the `graph.node.id` its agent spans carry; "Agent workflow" unless the trace
  was named; the JavaScript SDK's processor adds a CHAIN of the same name under it),
  the Google ADK instrumentation's CHAIN root for a `Runner` invocation (`invocation
  [{app name}]`), and a root named after a framework's default ("LangGraph").
- smolagents: its memory, in roles of its own (`tool-call`, `tool-response`) and with the
  request after a `New task:` line, is read in the OpenAI shape (`_smolagents_memory`);
  a run span's tools are `smolagents.tools_names` and `smolagents.managed_agents.N.name`.
- LlamaIndex: a tool's `output.value` is its `ToolOutput` (`{"blocks" | "content",
  "tool_name", "raw_input", "raw_output", "is_error"}`): the raw output is the result (the
  blocks' text when there is none), `is_error` the failure. An LLM span that records no
  messages is a method around the call (`_prepare_chat_with_tools`, the outer span of a
  streamed `astream_chat`), not a call. An agent workflow's run (`FunctionAgent.run`,
  `AgentWorkflow.run`: a CHAIN root whose input is the workflow's state and whose output
  is its `StopEvent` cut short) wraps the agents' steps; each `run_agent_step` span is the
  step of the agent its event names (`current_agent_name='...'`).
- Haystack: the instrumentation writes a component's bound inputs and its result as JSON
  whose objects are their reprs. A generator's flattened messages keep only text and
  role, so its messages, calls (with their ids), results and errors are read from the
  `ChatMessage` reprs of `input.value` (`messages`) and `output.value` (`replies`), and
  its tools from the `Tool` reprs (`tools`) (`haystack_messages`). The tools run in no
  component: no span records a call. A component's span is named for its class
  (`Agent.run`, `Pipeline.run`): a Haystack Agent has no name. A run span's request and
  reply are its messages' (`messages`, `last_message`, also under a pipeline
  component's name), and its result's `messages` the whole conversation: a turn is read
  from it when no generator span recorded the calls (a generator class imported after
  `instrument()` is not traced).

- BeeAI: a tool message keeps its call id beside its content
  (`contents.K.message.tool_call_id`); a `RequirementAgent` sends the request inside its
  task prompt (`... Your task: {request}`), read as the request.
- A span that records an event of a run rather than a run (the event's `metadata.path`
  and `metadata.trace.run_id`, no `metadata.class_name`: BeeAI's `error`, `retry` and
  `final_answer` children, of their run's kind) normalizes to None.

- DSPy: an LLM call's prompt is its adapter's fields, read by `dspy_fields` (the input
  fields as the request, ReAct's trajectory as calls and results, the output fields as the
  answer, the tools ReAct lists as the offer); a tool span is `{tool}.__call__` (or
  `.acall`) without `tool.name`; a module's root span `{Module class}.forward` names the
  program by its class, its `{"input_args": {...}}` input is its one text field.

Other kinds (RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR, inner CHAINs) say
nothing about a turn and normalize to None. `session.id` is the conversation id.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..model import ToolDefinition
from ..spans import SpanRecord
from . import dspy_fields
from .base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    NormalizedSpan,
    ToolCallPart,
    ToolExecution,
)
from .haystack_messages import haystack_messages, haystack_tools
from .messages import (
    content_text,
    langchain_tool_message,
    last_text,
    read_messages,
    reply_text,
    request_text,
    tool_result,
)
from .values import (
    arguments_text,
    as_text,
    conversation_id,
    exception_message,
    first,
    load_json,
    string,
    tool_definitions,
    unflatten,
)

SPAN_KIND = "openinference.span.kind"


def detects(span: SpanRecord) -> bool:
    """Whether the span declares an OpenInference span kind."""
    return SPAN_KIND in span.attributes


def normalize_openinference(span: SpanRecord) -> NormalizedSpan | None:
    """The span as an LLM step, tool execution or agent run, by its declared kind."""
    if _is_event_record(span):
        return None
    kind = string(span.attributes, SPAN_KIND).upper()
    if kind == "LLM":
        if span.scope_name == LLAMA_INDEX_SCOPE and not _records_messages(span.attributes):
            return None
        return _llm(span)
    if kind == "TOOL":
        return _tool(span)
    if kind == "CHAIN" and span.parent_span_id and span.scope_name == LLAMA_INDEX_SCOPE:
        return _llama_index_agent_step(span)
    if kind == "AGENT" or (kind == "CHAIN" and not span.parent_span_id):
        return _agent(span)
    return None


def _llm(span: SpanRecord) -> LlmStep:
    attributes = span.attributes
    raw_input, raw_output = attributes.get("input.value"), attributes.get("output.value")
    # Haystack's messages are whole only in their reprs (see `haystack_messages`).
    inputs = haystack_messages(raw_input, "messages")
    if not inputs:
        inputs = _messages(attributes, "llm.input_messages", "user")
    if not inputs and raw_input is not None:
        inputs = read_messages(raw_input, "user")
    if span.scope_name == SMOLAGENTS_SCOPE or any(m.role in _SMOL_ROLES for m in inputs):
        inputs = _smolagents_memory(inputs)
    if span.scope_name == BEEAI_SCOPE:
        inputs = tuple(_beeai_task_request(m) for m in inputs)
    outputs = haystack_messages(raw_output, "replies")
    if not outputs:
        outputs = _messages(attributes, "llm.output_messages", "assistant")
    if not outputs and raw_output is not None:
        outputs = read_messages(raw_output, "assistant")
    tools = _tools(attributes) or haystack_tools(raw_input, "tools")
    if dspy_fields.is_adapter_prompt(inputs):
        tools = tools or dspy_fields.offered_tools(inputs)
        inputs, outputs = dspy_fields.read_call(inputs, outputs)
    return LlmStep(
        span_id=span.span_id,
        input_messages=inputs,
        output_messages=outputs,
        model=string(attributes, "llm.model_name"),
        provider=string(attributes, "llm.provider", "llm.system"),
        tools=tools,
        conversation_id=conversation_id(attributes),
        agent_name=string(attributes, "agent.name"),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _messages(
    attributes: Mapping[str, Any], prefix: str, default_role: str
) -> tuple[ChatMessage, ...]:
    plain = []
    for item in unflatten(attributes, prefix):
        message = item.get("message") if isinstance(item, Mapping) else None
        results = _function_results(item.get("function")) if isinstance(item, Mapping) else []
        if results:
            plain.extend(results)
        elif isinstance(message, Mapping):
            plain.append(_plain_message(message, default_role))
    return read_messages(plain, default_role)


def _function_results(value: Any) -> list[dict[str, Any]]:
    """The AutoGen AgentChat instrumentation's `FunctionExecutionResultMessage`: beside
    `message.role` "function", one JSON `{name, content, call_id, is_error}` per result
    under `N.function.K`. Each is a tool message answering its call."""
    out = []
    for entry in value if isinstance(value, list) else ():
        result = load_json(entry)
        if isinstance(result, Mapping) and "content" in result:
            out.append(
                {
                    "role": "tool",
                    "content": result.get("content"),
                    "tool_call_id": result.get("call_id"),
                    "is_error": result.get("is_error") is True,
                }
            )
    return out


def _plain_message(message: Mapping[str, Any], default_role: str) -> dict[str, Any]:
    """An OpenInference message tree in the OpenAI chat shape `read_messages` knows."""
    calls = []
    raw_calls = message.get("tool_calls")
    for item in raw_calls if isinstance(raw_calls, list) else ():
        call = item.get("tool_call") if isinstance(item, Mapping) else None
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        function = function if isinstance(function, Mapping) else {}
        calls.append(
            {
                "id": call.get("id"),
                "function": {
                    "name": function.get("name"),
                    "arguments": function.get("arguments"),
                },
            }
        )
    contents = message.get("contents")
    return {
        "role": message.get("role") or default_role,
        "content": message.get("content") if contents is None else contents,
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id") or _content_call_id(contents),
        "name": message.get("name"),
    }


def _content_call_id(contents: Any) -> str | None:
    """The call id a tool message keeps beside its result's content rather than on itself
    (the BeeAI instrumentation writes `contents.K.message.tool_call_id` next to
    `contents.K.message_content.text`): the first one its contents hold."""
    for item in contents if isinstance(contents, list) else ():
        inner = item.get("message") if isinstance(item, Mapping) else None
        call_id = inner.get("tool_call_id") if isinstance(inner, Mapping) else None
        if isinstance(call_id, str) and call_id:
            return call_id
    return None


def _tools(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...] | None:
    schemas = [
        item["tool"].get("json_schema")
        for item in unflatten(attributes, "llm.tools")
        if isinstance(item, Mapping) and isinstance(item.get("tool"), Mapping)
    ]
    return tool_definitions(schemas) if schemas else None


def _tool(span: SpanRecord) -> ToolExecution:
    attributes = span.attributes
    output = attributes.get("output.value")
    message_call_id, result, result_error = langchain_tool_message(output)
    if result is None:
        result, result_error = _llama_index_tool_output(output)
    if result is None:
        result, result_error = tool_result(output)
    if result is None and span.is_error:
        result = exception_message(span)
    arguments = first(
        attributes, "input.value", "tool_call.function.arguments", "gen_ai.tool.call.arguments"
    )
    return ToolExecution(
        span_id=span.span_id,
        name=string(attributes, "tool.name", "tool_call.function.name") or _tool_span_name(span),
        call_id=string(attributes, "tool_call.id", "tool.id", "gen_ai.tool.call.id")
        or message_call_id,
        arguments=arguments_text(
            _bound_call_arguments(arguments, attributes.get("tool.parameters"))
        ),
        result=result,
        error=span.is_error or result_error,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


DSPY_SCOPE = "openinference.instrumentation.dspy"
_DSPY_TOOL_METHODS = (".__call__", ".acall")


def _tool_span_name(span: SpanRecord) -> str:
    """The tool a span without `tool.name` ran: its name, less the method the DSPy
    instrumentation names it by (`{tool name}.__call__`, `.acall`)."""
    if span.scope_name == DSPY_SCOPE:
        for method in _DSPY_TOOL_METHODS:
            if span.name.endswith(method):
                return span.name[: -len(method)]
    return span.name


_BOUND_CALL_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def _bound_call_arguments(value: Any, parameters: Any) -> Any:
    """A smolagents `Tool.__call__(*args, sanitize_inputs_outputs, **kwargs)` binding as
    the call's arguments: a lone mapping argument, else the kwargs with the positional
    values named by the tool's inputs in order. Any other value as given."""
    parsed = load_json(value)
    if not isinstance(parsed, Mapping) or "kwargs" not in parsed or set(parsed) - _BOUND_CALL_KEYS:
        return value
    args, kwargs = parsed.get("args") or [], parsed.get("kwargs") or {}
    if not isinstance(kwargs, Mapping) or not isinstance(args, list):
        return value
    if len(args) == 1 and isinstance(args[0], Mapping) and not kwargs:
        return args[0]
    names = list(inputs) if isinstance(inputs := load_json(parameters), Mapping) else []
    if len(args) > len(names):
        return value
    return {**dict(zip(names, args, strict=False)), **kwargs}


OPENAI_AGENTS_SCOPES = frozenset(
    {
        "openinference.instrumentation.openai_agents",
        "@arizeai/openinference-instrumentation-openai-agents",
    }
)
"""OpenInference's instrumentations of the OpenAI Agents SDK, for Python and for Node.js:
both name their trace's span for the trace (its `workflowName`), not for an agent."""
GOOGLE_ADK_SCOPE = "openinference.instrumentation.google_adk"
CREWAI_SCOPE = "openinference.instrumentation.crewai"
HAYSTACK_SCOPE = "openinference.instrumentation.haystack"
_DEFAULT_RUN_NAMES = frozenset({"Agent workflow", "LangGraph"})
"""Root span names that name a framework's run, not an agent: the OpenAI Agents SDK's
default trace name and LangGraph's default graph name."""


def _agent(span: SpanRecord) -> AgentInvocation:
    attributes = span.attributes
    raw_input = attributes.get("input.value")
    raw_output = attributes.get("output.value")
    if _llama_index_workflow_run(span):
        raw_input = raw_output = None  # the workflow's state and a cut-short repr: no text
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=string(attributes, "agent.name") or _agent_span_name(span),
        conversation_id=conversation_id(attributes),
        model=string(attributes, "llm.model_name"),
        input_text=_run_text(
            None if raw_input is None else _module_input(span, raw_input), "messages", "user"
        ),
        output_text=_run_text(raw_output, "last_message", "assistant"),
        tools=_tools(attributes) or _smolagents_tools(attributes),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        wrapper=_wraps_run(span),
        messages=haystack_messages(raw_output, "messages"),
    )


def _run_text(value: Any, key: str, role: str) -> str:
    """What a run span's input asked (`role` "user") or its output answered
    ("assistant"): from Haystack's message reprs under `key` where it holds them (the
    text of the last message of `role` among them, "" when none has any), else as
    `request_text` / `reply_text` read it."""
    if value is None:
        return ""
    messages = haystack_messages(value, key)
    if messages:
        return last_text(messages, role)
    return request_text(value) if role == "user" else reply_text(value)


def _agent_span_name(span: SpanRecord) -> str:
    # The Haystack instrumentation names a component's span for its class and method
    # (`Agent.run`, `Pipeline.run_async`): a Haystack Agent has no name of its own.
    if span.scope_name == HAYSTACK_SCOPE:
        return ""
    # openinference-instrumentation-smolagents names the run span `{Agent class}.run`.
    if "smolagents.max_steps" in span.attributes and span.name.endswith(".run"):
        return span.name[: -len(".run")]
    # The DSPy instrumentation names a module's span `{Module class}.forward` (`.aforward`):
    # a DSPy program has no other name.
    if span.scope_name == DSPY_SCOPE:
        for method in _DSPY_MODULE_METHODS:
            if span.name.endswith(method):
                return span.name[: -len(method)]
    # The AutoGen AgentChat and CrewAI instrumentations name it `{agent}.{method}`
    # (`release_engineer.on_messages_stream`, `release_engineer._execute_core`), with the
    # agent's own name as its graph node.
    node = string(span.attributes, "graph.node.id")
    if node and span.name.startswith(f"{node}."):
        return node
    return span.name


_DSPY_MODULE_METHODS = (".forward", ".aforward")


def _module_input(span: SpanRecord, raw_input: Any) -> Any:
    """A DSPy module's call as its `input.value` binds it (`{"input_args": {field: value}}`
    for `forward(**input_args)`): the request is its one text field other than a history
    (`dspy.History`, written as its repr `messages=[...]`), else the fields as given."""
    if span.scope_name != DSPY_SCOPE:
        return raw_input
    bound = load_json(raw_input)
    fields = bound.get("input_args") if isinstance(bound, Mapping) else None
    if not isinstance(fields, Mapping):
        return raw_input
    texts = [
        v for v in fields.values() if isinstance(v, str) and v and not v.startswith("messages=")
    ]
    return texts[0] if len(texts) == 1 else fields


def _wraps_run(span: SpanRecord) -> bool:
    if span.scope_name in OPENAI_AGENTS_SCOPES and "graph.node.id" not in span.attributes:
        return True  # the SDK trace's span; each agent's own span has its graph node
    if span.scope_name == GOOGLE_ADK_SCOPE and span.attributes.get(SPAN_KIND) == "CHAIN":
        return True  # the Runner's `invocation [{app}]`; the AGENT span inside names the agent
    if (
        span.scope_name == CREWAI_SCOPE
        and span.name.endswith(".kickoff")
        and "crew_key" in span.attributes
    ):
        return True  # a crew's kickoff (CHAIN); the task's AGENT span inside names the agent
    if _llama_index_workflow_run(span):
        return True  # the workflow's run; its `run_agent_step` spans name the agents
    return not span.parent_span_id and span.name in _DEFAULT_RUN_NAMES


# --- records of events ---------------------------------------------------------------------

_EVENT_PATH = "metadata.path"
_EVENT_RUN = "metadata.trace.run_id"
_RUN_CLASS = "metadata.class_name"


def _is_event_record(span: SpanRecord) -> bool:
    """A span that records an event a run emitted, not a run: it carries the event's own
    metadata (`metadata.path`, the emitter's path ending in the event's name, and
    `metadata.trace.run_id`, the run it belongs to) and no `metadata.class_name` of a
    running instance. The BeeAI instrumentation writes each event of a run other than its
    start and success as such a child of the run's span, of the run's own kind and named
    after the event: a tool's `error` and `retry` (TOOL), a model's `error` (LLM), an
    agent's `final_answer` (AGENT). The run's span holds what the event changed (a failed
    tool's span is failed, with the error as its output): the record is no call of a tool
    named `error`, and no agent."""
    attributes = span.attributes
    return _EVENT_PATH in attributes and _EVENT_RUN in attributes and _RUN_CLASS not in attributes


# --- BeeAI ----------------------------------------------------------------------------------

BEEAI_SCOPE = "openinference.instrumentation.beeai"
_BEEAI_TASK = "Your task: "
"""Where a `RequirementAgent`'s task prompt (`RequirementAgentTaskPrompt`) puts the
request: after the context and the expected output's criteria, when given, at its end."""


def _beeai_task_request(message: ChatMessage) -> ChatMessage:
    """A `RequirementAgent` sends the user's request inside its task prompt (`[This is the
    context relevant to the task:\n...\n\n][This is the expected criteria for your
    output:\n...\n\n]Your task: {prompt}`): the request is the prompt. A task handed on to
    another agent (a `HandoffTool`) is wrapped again, so the opening is taken off as often
    as it comes."""
    if message.role != "user":
        return message
    text = message.text
    while True:
        at = text.find(_BEEAI_TASK)
        if at < 0 or (at > 0 and text[at - 1] != "\n"):
            break
        text = text[at + len(_BEEAI_TASK) :]
    return message if text == message.text else replace(message, text=text)


# --- smolagents' memory -------------------------------------------------------------------

SMOLAGENTS_SCOPE = "openinference.instrumentation.smolagents"
_SMOL_ROLES = frozenset({"tool-call", "tool-response"})
_SMOL_TASK = "New task:\n"
_SMOL_CALLS = "Calling tools:\n"
_SMOL_CALL_ID = re.compile(r"\ACall id: *(\S+)\n")
_SMOL_OBSERVATION = "Observation:\n"
_SMOL_ERROR = "Error:\n"
_CODE_EXECUTION = "python_interpreter"
_MAX_LITERAL_CHARS = 200_000
"""Longer `Calling tools:` text is kept as text, not parsed."""


def _smolagents_memory(messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
    """smolagents writes its memory into the model's input in roles of its own: the task as
    a user message `New task:\n{task}`, the calls of a step as a `tool-call` message
    `Calling tools:\n[{'id', 'type', 'function': {'name', 'arguments'}}, ...]` (a Python
    literal), their outcome as a `tool-response` message `Observation:\n{text}` or
    `[Call id: {id}\n]Error:\n{error}`. Read in the OpenAI shape: the task is the user's
    request, the calls an assistant message's tool calls, each outcome a tool message
    answering the call it names, else the first call of the step before it (an error
    failed). A `CodeAgent`'s `python_interpreter` call is the code of the assistant message
    before it being run, not a tool the model called (the tools the code calls have spans
    of their own): its outcome stays as a tool result that answers no call."""
    out: list[ChatMessage] = []
    waiting: list[str] = []
    executions: set[str] = set()
    for message in messages:
        if message.role == "user" and message.text.startswith(_SMOL_TASK):
            out.append(replace(message, text=message.text[len(_SMOL_TASK) :]))
        elif message.role == "tool-call":
            calls = _smolagents_calls(message.text)
            executions.update(c.call_id for c in calls if c.name == _CODE_EXECUTION)
            own = tuple(c for c in calls if c.name != _CODE_EXECUTION)
            waiting = [c.call_id for c in own]
            if own:
                out.append(ChatMessage(role="assistant", tool_calls=own))
            elif not calls:
                out.append(replace(message, role="assistant"))
        elif message.role == "tool-response":
            out.append(_smolagents_outcome(message.text, waiting, executions))
        else:
            out.append(message)
    return tuple(out)


def _smolagents_calls(text: str) -> tuple[ToolCallPart, ...]:
    if not text.startswith(_SMOL_CALLS) or len(text) > _MAX_LITERAL_CHARS:
        return ()
    try:
        listed = ast.literal_eval(text[len(_SMOL_CALLS) :].strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return ()
    calls = []
    for item in listed if isinstance(listed, list) else ():
        function = item.get("function") if isinstance(item, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            calls.append(
                ToolCallPart(
                    call_id=str(item.get("id") or ""),
                    name=function["name"],
                    arguments=arguments_text(function.get("arguments")),
                )
            )
    return tuple(calls)


def _smolagents_outcome(text: str, waiting: list[str], executions: set[str]) -> ChatMessage:
    named = _SMOL_CALL_ID.match(text)
    body = text[named.end() :] if named else text
    failed = body.startswith(_SMOL_ERROR)
    for header in (_SMOL_OBSERVATION, _SMOL_ERROR):
        if body.startswith(header):
            body = body[len(header) :]
            break
    call_id = named.group(1) if named else (waiting.pop(0) if waiting else "")
    if call_id in executions:
        call_id = ""
    return ChatMessage(role="tool", text=body, tool_call_id=call_id, is_error=failed)


def _smolagents_tools(attributes: Mapping[str, Any]) -> tuple[ToolDefinition, ...] | None:
    """A smolagents run span's tools and team members (called like tools), by name; None
    when it names none."""
    names = attributes.get("smolagents.tools_names")
    listed = [n for n in names if isinstance(n, str)] if isinstance(names, list | tuple) else []
    for member in unflatten(attributes, "smolagents.managed_agents"):
        if isinstance(member, Mapping) and isinstance(member.get("name"), str):
            listed.append(member["name"])
    return tuple(ToolDefinition(name=n) for n in dict.fromkeys(listed)) or None


# --- LlamaIndex ---------------------------------------------------------------------------

LLAMA_INDEX_SCOPE = "openinference.instrumentation.llama_index"
_LLM_MESSAGE_PREFIXES = ("llm.input_messages.", "llm.output_messages.", "llm.prompts")
_TOOL_OUTPUT_KEYS = frozenset({"tool_name", "raw_input", "raw_output", "is_error"})
_AGENT_STEP = ".run_agent_step"
_CURRENT_AGENT = re.compile(r"\bcurrent_agent_name='((?:[^'\\]|\\.)*)'\)\Z")
"""The agent a workflow event is for: the last field of LlamaIndex's `AgentSetup` repr."""


def _records_messages(attributes: Mapping[str, Any]) -> bool:
    return any(key.startswith(_LLM_MESSAGE_PREFIXES) for key in attributes)


def _llama_index_workflow_run(span: SpanRecord) -> bool:
    """A LlamaIndex workflow's run span (`{Workflow class}.run`, a CHAIN root)."""
    return (
        span.scope_name == LLAMA_INDEX_SCOPE
        and not span.parent_span_id
        and span.name.endswith(".run")
        and string(span.attributes, SPAN_KIND).upper() == "CHAIN"
    )


def _llama_index_agent_step(span: SpanRecord) -> AgentInvocation | None:
    """An agent workflow's `run_agent_step` as the step of the agent it runs: its input is
    `{"ctx": ..., "ev": "AgentSetup(input=[...], current_agent_name='...')"}`. Other
    steps (and a step whose event names no agent) say nothing about a turn."""
    if not span.name.endswith(_AGENT_STEP):
        return None
    bound = load_json(span.attributes.get("input.value"))
    event = bound.get("ev") if isinstance(bound, Mapping) else None
    named = _CURRENT_AGENT.search(event) if isinstance(event, str) else None
    if named is None:
        return None
    return AgentInvocation(
        span_id=span.span_id,
        agent_name=named.group(1),
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
    )


def _llama_index_tool_output(value: Any) -> tuple[str | None, bool]:
    """(result, error) of a LlamaIndex `ToolOutput` dump; (None, False) for anything else.
    The raw output is what the tool returned (the blocks hold its text for the model)."""
    parsed = load_json(value)
    if not isinstance(parsed, Mapping) or not set(parsed) >= _TOOL_OUTPUT_KEYS:
        return None, False
    raw = parsed.get("raw_output")
    if raw is not None:
        result = as_text(raw)
    else:
        result = content_text(parsed.get("blocks") or parsed.get("content") or "")
    return result, parsed.get("is_error") is True
