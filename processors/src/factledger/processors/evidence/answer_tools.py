"""Terminal answer tools: calls that deliver the reply instead of acting.

Some agent loops end by calling a tool whose input is the answer. smolagents' agents end
with `final_answer` (its `FinalAnswerTool`, a name the framework reserves): a
`ToolCallingAgent` requests it like any tool, a `CodeAgent` calls it from the code it
wrote. Pydantic AI's output tools (`final_result`) take the structured answer. Such a call
is the reply itself: its result is the answer echoed back, so it is no evidence for the
reply, and calling it is no action, so it does not count as having called a tool. It is
marked `answer` (see `model.ToolCall`).

A call is an answer call when its tool is `final_answer`, or when it is a call of the
turn's last step and its result, or its arguments, are the reply.

A turn whose last step handed its answer to `final_answer` is answered by that tool, not
by the text of the step (a `CodeAgent`'s last output is the code that called it): the
reply is what the agent span says the run returned, else the answer the tool was given.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from factledger.processors.model import ToolCall
from factledger.processors.normalize.base import AgentInvocation, LlmStep, ToolExecution

ANSWER_TOOLS = frozenset({"final_answer"})
"""Tools that always end the run with the answer as their input (smolagents)."""

_ANSWER_ARGUMENTS = ("answer", "final_answer", "result", "output")


def is_answer_tool(name: str) -> bool:
    return name in ANSWER_TOOLS


def delivered_answer(
    final: LlmStep, executions: Sequence[ToolExecution], agent: AgentInvocation | None
) -> str | None:
    """The reply of a turn whose last step handed the answer to an answer tool (requested
    in its output, or run after it started, as a `CodeAgent`'s code does); None when it
    did not."""
    requested = [
        p.arguments
        for m in final.output_messages
        if m.role == "assistant"
        for p in m.tool_calls
        if is_answer_tool(p.name)
    ]
    ran = [e for e in executions if is_answer_tool(e.name) and _ran_after(e, final)]
    if not requested and not ran:
        return None
    if agent is not None and agent.output_text.strip():
        return agent.output_text
    for arguments in (*requested, *(e.arguments for e in ran)):
        text = _answer_argument(arguments)
        if text:
            return text
    return next((e.result for e in ran if e.result), "")


def with_answer_calls(
    calls: Iterable[ToolCall], reply: str, last_step: int
) -> tuple[ToolCall, ...]:
    """`calls` with the answer calls among them marked `answer`. `last_step` is
    the index of the turn's last step (the one before the reply); -1 marks by name only."""
    return tuple(
        replace(c, answer=True) if _is_answer_call(c, reply, last_step) else c for c in calls
    )


def _is_answer_call(call: ToolCall, reply: str, last_step: int) -> bool:
    if call.origin != "structured":
        return False
    if is_answer_tool(call.name):
        return True
    if call.step != last_step or last_step < 0 or not reply.strip():
        return False
    if call.result is not None and _same_text(call.result, reply):
        return True
    return _arguments_are(call, reply)


def _ran_after(execution: ToolExecution, step: LlmStep) -> bool:
    if not execution.start_time_unix_nano or not step.start_time_unix_nano:
        return True  # when it ran is unknown: a turn's answer tool runs once, at its end
    return execution.start_time_unix_nano >= step.start_time_unix_nano


def _answer_argument(arguments: str) -> str:
    try:
        parsed = json.loads(arguments) if arguments.strip() else None
    except (ValueError, RecursionError):
        return arguments
    if isinstance(parsed, Mapping):
        for key in _ANSWER_ARGUMENTS:
            value = parsed.get(key)
            if value is not None and value != "":
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return ""
    if isinstance(parsed, str):
        return parsed
    return "" if parsed is None else json.dumps(parsed, ensure_ascii=False)


def _same_text(a: str, b: str) -> bool:
    # Equal but for whitespace: the first words are compared before the whole texts are
    # split, as they differ for nearly every result and reply (a JSON record, a sentence).
    if a.split(None, 1)[:1] == b.split(None, 1)[:1] and a.split() == b.split():
        return True
    right = _json(b)  # mostly a reply in prose: then `a` need not be parsed at all
    return right is not None and _json(a) == right


def _arguments_are(call: ToolCall, reply: str) -> bool:
    """The reply is the call's arguments (a structured answer) or its one text argument."""
    if not call.arguments:
        return False
    if _json(reply) == dict(call.arguments):
        return True
    values = list(call.arguments.values())
    return len(values) == 1 and isinstance(values[0], str) and _same_text(values[0], reply)


def _json(text: str) -> Any:
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return None
