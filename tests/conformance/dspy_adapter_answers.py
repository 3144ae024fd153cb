"""The scripted LLM's answers to DSPy's adapters, which ask for fields, not tool calls.

`dspy.ReAct` offers no tools through the API: its system prompt lists them
(`(1) git_push, whose description is <desc>...</desc>. It takes arguments {...}.`), the
user message holds the input fields in DSPy's markers (`[[ ## question ## ]]`, the
`[[ ## trajectory ## ]]` of earlier steps as `tool_name_N` / `tool_args_N` /
`observation_N`; a `dspy.History` adds earlier requests as user/assistant messages of the
same shape), and the answer must fill the output fields the system prompt names
(`next_thought`, `next_tool_name`, `next_tool_args` for a step; `reasoning`, `answer` for
the final extraction), in the same markers or, for DSPy's JSONAdapter, as a JSON object.

Such a request (`fake_llm` asks `is_dspy_request`) is read back into the policy's
`Request` (the tools it lists, the trajectory's steps as calls and results), the policy
decides as for any framework, and the decision is written in the fields: a call as
`next_tool_name` and its arguments, an answer as the `finish` tool (a step) or the
`answer` field (the extraction).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .policy import Answer, Message, Request, decide

_MARKER = re.compile(r"^\[\[ ## (\w+) ## \]\]\s*$", re.M)
_OUTPUT_FIELDS = re.compile(r"Your output fields are:\n(.*?)\nAll interactions", re.S)
_FIELD = re.compile(r"^\d+\. `(\w+)`", re.M)
_TOOL = re.compile(
    r"^\s*\(\d+\) (\w+)(?:, whose description is <desc>.*?</desc>)?\. "
    r"It takes arguments (\{.*\})\.\s*$",
    re.M,
)
_STEP = re.compile(r"^(tool_name|tool_args|observation)_(\d+)$")
_INSTRUCTION = "\n\nRespond with "
"""How DSPy's closing instruction after the last input field opens."""
FINISH = "finish"
"""ReAct's own tool that ends the trajectory."""


def is_dspy_request(body: Mapping[str, Any]) -> bool:
    """Whether a Chat Completions body is a DSPy adapter's (its system prompt names the
    output fields it wants)."""
    system = _system_text(body)
    return "Your output fields are:" in system and "[[ ## " in system


def answer(body: Mapping[str, Any]) -> tuple[Request, Answer, str]:
    """The request as the policy reads it, its decision, and that decision as the text
    DSPy's adapter parses."""
    system = _system_text(body)
    wanted = _output_fields(system)
    tools = {name: schema for name, schema in _tools(system).items() if name != FINISH}
    request = Request(str(body.get("model", "")), _messages(body), tools)
    decision = decide(request)
    fields = _fields(wanted, decision)
    if isinstance(body.get("response_format"), Mapping):
        # The JSONAdapter's object: the arguments as an object, not as JSON text.
        parsed = {k: json.loads(v) if k == "next_tool_args" else v for k, v in fields.items()}
        return request, decision, json.dumps(parsed)
    text = "\n\n".join(f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items())
    return request, decision, text + "\n\n[[ ## completed ## ]]"


def _fields(wanted: Sequence[str], decision: Answer) -> dict[str, str]:
    call = decision.call
    values = {
        "next_thought": f"I will call {call.name}." if call else "I can answer now.",
        "next_tool_name": call.name if call else FINISH,
        "next_tool_args": json.dumps(dict(call.arguments) if call else {}),
        "reasoning": "The trajectory holds what the tools returned.",
        "answer": decision.text,
    }
    return {name: values.get(name, decision.text) for name in wanted}


def _system_text(body: Mapping[str, Any]) -> str:
    for message in body.get("messages") or []:
        if isinstance(message, Mapping) and message.get("role") == "system":
            return _text(message.get("content"))
    return ""


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return content if isinstance(content, str) else ""


def _output_fields(system: str) -> list[str]:
    found = _OUTPUT_FIELDS.search(system)
    return _FIELD.findall(found.group(1)) if found else []


def _tools(system: str) -> dict[str, Mapping[str, Any]]:
    tools: dict[str, Mapping[str, Any]] = {}
    for name, arguments in _TOOL.findall(system):
        try:
            properties = ast.literal_eval(arguments)
        except (ValueError, SyntaxError):
            properties = {}
        properties = properties if isinstance(properties, dict) else {}
        tools[name] = {"type": "object", "properties": properties, "required": list(properties)}
    return tools


def _messages(body: Mapping[str, Any]) -> tuple[Message, ...]:
    """The conversation in the policy's shape: each user message's question, then the
    steps of its trajectory as calls and results, then an assistant's answer field."""
    out: list[Message] = []
    for index, message in enumerate(body.get("messages") or []):
        if not isinstance(message, Mapping):
            continue
        role, fields = str(message.get("role")), _parse(_text(message.get("content")))
        if role == "system":
            out.append(Message("system", _text(message.get("content"))))
        elif role == "user":
            out.append(Message("user", fields.get("question", "")))
            out.extend(_steps(fields, f"dspy-{index}"))
        elif role == "assistant" and fields.get("answer"):
            out.append(Message("assistant", fields["answer"]))
    return tuple(out)


def _steps(fields: Mapping[str, str], prefix: str) -> list[Message]:
    """The trajectory's steps: its step markers, else (an earlier request of a
    `dspy.History`) the trajectory's JSON of the same keys."""
    entries: Mapping[str, Any] = {k: v for k, v in fields.items() if _STEP.match(k)}
    if not entries:
        try:
            parsed = json.loads(fields.get("trajectory") or "{}")
        except ValueError:
            parsed = {}
        entries = parsed if isinstance(parsed, dict) else {}
    steps: dict[int, dict[str, str]] = {}
    for name, value in entries.items():
        matched = _STEP.match(name)
        if matched:
            text = value if isinstance(value, str) else json.dumps(value)
            steps.setdefault(int(matched.group(2)), {})[matched.group(1)] = text
    out = []
    for number, step in sorted(steps.items()):
        name = step.get("tool_name", "")
        if not name or name == FINISH:
            continue
        call_id = f"{prefix}-{number}"
        out.append(Message("assistant", calls=((call_id, name),)))
        out.append(Message("tool", step.get("observation", ""), answers=call_id))
    return out


def _parse(text: str) -> dict[str, str]:
    """Every `[[ ## name ## ]]` field of a message (a trajectory's steps among them), by
    name, each value up to the next marker."""
    text = text.split(_INSTRUCTION, 1)[0]
    markers = list(_MARKER.finditer(text))
    fields: dict[str, str] = {}
    for marker, after in zip(markers, [*markers[1:], None], strict=False):
        end = after.start() if after else len(text)
        fields[marker.group(1)] = text[marker.end() : end].strip()
    return fields
