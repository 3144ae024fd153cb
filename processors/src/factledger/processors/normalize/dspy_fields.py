"""DSPy's adapter prompts, read as the conversation they carry.

DSPy does not send a conversation: its adapters (ChatAdapter, JSONAdapter) write a
signature's fields into the prompt. The system message names them (`Your input fields
are:\n1. `question` (str): ...\nYour output fields are:\n1. `answer` ...`); a user
message holds the input fields, each after its marker (`[[ ## question ## ]]\n...`),
closed by the instruction to answer (`\n\nRespond with the corresponding output fields`
or `a JSON object`); the model answers with the output fields in the same markers
(ChatAdapter) or as a JSON object (JSONAdapter), ending with `[[ ## completed ## ]]`.
A `dspy.History` input adds earlier requests as user and assistant messages of that shape.

`dspy.ReAct` adds an input field `trajectory`: its steps so far, as markers
(`[[ ## tool_name_0 ## ]]`, `tool_args_0`, `observation_0`, `thought_0`) or, in a
history's earlier request, as the JSON of the same keys; and it asks for the step's
`next_thought`, `next_tool_name`, `next_tool_args` (its own `finish` tool ends the loop).
The extraction after the loop answers with the signature's outputs, after the
`reasoning` that ChainOfThought adds.

Read so: a user message is its input fields' values (the request), followed by the
trajectory's steps as tool calls and their results; a step's answer is its thought with
the call it chose; any other answer is its output fields' values (`reasoning` left out).
The tools ReAct lists in its instructions (`(1) git_push, whose description is
<desc>...</desc>. It takes arguments {'repo': {'type': 'string'}, ...}.`, the arguments
a Python literal of JSON-schema properties) are the tools the call offers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..model import ToolDefinition
from .base import ChatMessage, ToolCallPart
from .values import arguments_text, as_text, is_mapping, load_json

INPUT_FIELDS = "Your input fields are:"
OUTPUT_FIELDS = "Your output fields are:"
TRAJECTORY = "trajectory"
"""ReAct's input field of the steps so far."""
REASONING = "reasoning"
"""ChainOfThought's output field before the signature's own."""
_STEP_FIELDS = ("next_thought", "next_tool_name", "next_tool_args")
_MARKER = re.compile(r"^\[\[ ## (\w+) ## \]\][ \t]*$", re.M)
_FIELD_LIST = re.compile(r"^\d+\. `(\w+)`", re.M)
_STEP = re.compile(r"^(thought|tool_name|tool_args|observation)_(\d+)$")
_CLOSINGS = ("\n\nRespond with the corresponding output fields", "\n\nRespond with a JSON object")
_COMPLETED = "completed"
_MAX_CHARS = 500_000
"""Longer message text is kept as it is, not parsed."""
_TOOL = re.compile(
    r"^[ \t]*\(\d+\) (\w+)(?:, whose description is <desc>(.*?)</desc>)?\. "
    r"It takes arguments (\{.*\})\.[ \t]*$",
    re.M,
)
_MAX_ARGUMENTS_CHARS = 20_000
"""Longer argument literals are not evaluated (the tool is kept without parameters)."""


def is_adapter_prompt(messages: Sequence[ChatMessage]) -> bool:
    """Whether an LLM call's input is a DSPy adapter's prompt (its system message lists
    the signature's input and output fields)."""
    return any(
        m.role == "system" and INPUT_FIELDS in m.text and OUTPUT_FIELDS in m.text for m in messages
    )


def read_call(
    inputs: Sequence[ChatMessage], outputs: Sequence[ChatMessage]
) -> tuple[tuple[ChatMessage, ...], tuple[ChatMessage, ...]]:
    """The input and output messages of a DSPy adapter's LLM call as the conversation
    they carry (see the module docstring)."""
    system = next((m.text for m in inputs if m.role == "system"), "")
    fields = _declared(system, INPUT_FIELDS, OUTPUT_FIELDS)
    read: list[ChatMessage] = []
    for message in inputs:
        if message.role == "user":
            read.extend(_request(message, fields))
        elif message.role == "assistant":
            read.extend(_answer(message))
        else:
            read.append(message)
    return tuple(read), tuple(m for o in outputs for m in _answer(o))


def offered_tools(inputs: Sequence[ChatMessage]) -> tuple[ToolDefinition, ...] | None:
    """The tools a ReAct prompt lists in its system message; None when it lists none."""
    system = next((m.text for m in inputs if m.role == "system"), "")
    if len(system) > _MAX_CHARS:
        return None
    tools = [
        ToolDefinition(name=name, parameters=_parameters(arguments), description=description)
        for name, description, arguments in _TOOL.findall(system)
    ]
    return tuple(tools) or None


def _parameters(arguments: str) -> dict[str, Any]:
    """DSPy's `Tool.args` (JSON-schema properties, written as a Python literal) as the
    parameters' schema; every argument without a default is required, as DSPy offers
    them in function calling."""
    if len(arguments) > _MAX_ARGUMENTS_CHARS:
        return {}
    try:
        properties = ast.literal_eval(arguments)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return {}
    if not isinstance(properties, dict):
        return {}
    required = [k for k, v in properties.items() if not (isinstance(v, dict) and "default" in v)]
    return {"type": "object", "properties": properties, "required": required}


def _declared(system: str, heading: str, next_heading: str) -> list[str]:
    start = system.find(heading)
    if start < 0:
        return []
    end = system.find(next_heading, start)
    return _FIELD_LIST.findall(system[start : end if end >= 0 else len(system)])


def _request(message: ChatMessage, input_fields: Sequence[str]) -> list[ChatMessage]:
    fields = _fields(message.text)
    if not fields:
        return [message]
    named = [k for k in fields if k in input_fields and k != TRAJECTORY] or [
        k for k in fields if k != TRAJECTORY and not _STEP.match(k)
    ]
    text = "\n\n".join(fields[k] for k in named if fields[k])
    steps = _steps(fields)
    return [ChatMessage(role="user", text=text, name=message.name), *steps]


def _steps(fields: Mapping[str, str]) -> list[ChatMessage]:
    """The trajectory's steps, each as a call and its result: from the step markers in
    the message, else from the trajectory's JSON."""
    entries: Mapping[str, Any] = {k: v for k, v in fields.items() if _STEP.match(k)}
    if not entries:
        parsed = load_json(fields.get(TRAJECTORY, ""))
        entries = parsed if is_mapping(parsed) else {}
    steps: dict[int, dict[str, Any]] = {}
    for key, value in entries.items():
        matched = _STEP.match(key) if isinstance(key, str) else None
        if matched:
            steps.setdefault(int(matched.group(2)), {})[matched.group(1)] = value
    out: list[ChatMessage] = []
    for _, step in sorted(steps.items()):
        name = step.get("tool_name")
        if not isinstance(name, str) or not name:
            continue
        call = ToolCallPart(call_id="", name=name, arguments=arguments_text(step.get("tool_args")))
        thought = step.get("thought")
        out.append(
            ChatMessage(
                role="assistant",
                text=thought if isinstance(thought, str) else "",
                tool_calls=(call,),
            )
        )
        if "observation" in step:
            out.append(ChatMessage(role="tool", text=as_text(step["observation"])))
    return out


def _answer(message: ChatMessage) -> list[ChatMessage]:
    fields = _fields(message.text) or _json_fields(message.text)
    fields = {k: v for k, v in fields.items() if k != _COMPLETED}
    if not fields or message.tool_calls:
        return [message]
    if "next_tool_name" in fields:
        name = fields["next_tool_name"]
        call = ToolCallPart(
            call_id="", name=name, arguments=arguments_text(fields.get("next_tool_args"))
        )
        return [
            ChatMessage(
                role="assistant",
                text=fields.get("next_thought", ""),
                tool_calls=(call,) if name else (),
                name=message.name,
            )
        ]
    said = [v for k, v in fields.items() if k != REASONING and k not in _STEP_FIELDS and v]
    return [ChatMessage(role="assistant", text="\n\n".join(said), name=message.name)]


def _fields(text: str) -> dict[str, str]:
    """Every `[[ ## name ## ]]` field of a message, by name, each value up to the next
    marker (the last up to the adapter's closing instruction). A trajectory's step markers
    come out as fields of their own."""
    if len(text) > _MAX_CHARS or "[[ ## " not in text:
        return {}
    for closing in _CLOSINGS:
        text = text.split(closing, 1)[0]
    markers = list(_MARKER.finditer(text))
    fields: dict[str, str] = {}
    for marker, after in zip(markers, [*markers[1:], None], strict=False):
        end = after.start() if after else len(text)
        fields.setdefault(marker.group(1), text[marker.end() : end].strip())
    return fields


def _json_fields(text: str) -> dict[str, str]:
    """A JSONAdapter answer: a JSON object of the output fields (values as text)."""
    if not text.lstrip().startswith("{") or len(text) > _MAX_CHARS:
        return {}
    parsed = load_json(text)
    if not is_mapping(parsed) or not all(isinstance(k, str) for k in parsed):
        return {}
    return {
        k: v if isinstance(v, str) else arguments_text(v) if k == "next_tool_args" else as_text(v)
        for k, v in parsed.items()
    }
