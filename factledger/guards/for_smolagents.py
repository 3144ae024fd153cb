"""The guard as a smolagents final-answer check: a rejected final answer fails the check
with the nudge, which smolagents hands back to the model as the step's error, and the
agent takes another step.

    from factledger.guards.for_smolagents import guard
    agent = guard(ToolCallingAgent(tools=[git_push], model=model))
    answer = agent.run("Push branch main of acme/shop.")      # checked

`final_answer_checks` take the answer, the agent's memory and the agent, and can only
accept or fail; so the guard also registers a `FinalAnswerStep` step callback, which
smolagents calls before the run returns that step's output, to put the footnote on the
accepted answer (or, with `on_exhausted="raise"`, to raise smolagents' `AgentError`).
The turn is read from the memory since the run's task: each action step's tool calls
with its observations (a step's error as the failed call's result) and the nudges sent.
A CodeAgent's calls are those its code makes to the agent's tools (read from the code
with `ast`), their results the step's printed observations. Each nudge costs the agent
a step: `max_steps` must leave room for them.
Both `run()` and `run(stream=True)` go through the same steps.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Sequence
from typing import Any, TypeVar, Unpack

from smolagents.agents import MultiStepAgent
from smolagents.memory import ActionStep, FinalAnswerStep, TaskStep, ToolCall
from smolagents.utils import AgentError

from factledger.guards import telemetry
from factledger.guards.policy import (
    Decision,
    GuardOptions,
    GuardPolicy,
    as_sent,
    marked,
)

AgentT = TypeVar("AgentT", bound=MultiStepAgent)

CHECK_NAME = "factledger_guard"


def guard(
    agent: AgentT,
    *,
    policy: GuardPolicy | None = None,
    **options: Unpack[GuardOptions],
) -> AgentT:
    """Add the guard to `agent`'s final-answer checks and step callbacks; return it."""
    chosen = policy or GuardPolicy(**options)
    # The decision on the answer the check accepted, for the step callback that follows
    # it in the same run (an agent runs one task at a time: its memory is one).
    accepted: dict[str, Decision] = {}

    def factledger_guard(final_answer: Any, memory: Any, agent: Any = None) -> bool:
        accepted.clear()
        if not isinstance(final_answer, str):
            return True
        tools = getattr(agent, "tools", None) or {}
        decision = chosen.decide(transcript_of(memory.steps, final_answer, tools))
        telemetry.record(decision)
        if decision.action == "nudge":
            raise ValueError(decision.nudge)
        accepted["decision"] = decision
        return True

    def footnote(step: FinalAnswerStep, agent: Any = None) -> None:
        decision = accepted.pop("decision", None)
        if decision is None:
            return
        if decision.action == "raise":
            raise AgentError(str(decision.error()), agent.logger if agent else _Quiet())
        step.output = decision.reply

    factledger_guard.__name__ = CHECK_NAME
    agent.final_answer_checks.append(factledger_guard)
    agent.step_callbacks.register(FinalAnswerStep, footnote)
    return agent


def transcript_of(steps: Sequence[Any], answer: str, tools: Collection[str] = ()) -> dict[str, Any]:
    """The agent's memory steps as an OpenAI-style transcript ending in `answer`;
    `tools` names the agent's tools, whose calls a CodeAgent's code makes."""
    messages: list[dict[str, Any]] = []
    for step in steps:
        if isinstance(step, TaskStep):
            messages.append({"role": "user", "content": step.task})
        elif isinstance(step, ActionStep):
            messages.extend(_action_messages(step, tools))
    messages.append({"role": "assistant", "content": answer})
    return {"messages": messages}


def _action_messages(step: ActionStep, tools: Collection[str]) -> list[dict[str, Any]]:
    error = str(step.error) if step.error is not None else ""
    nudged = marked(error)
    calls = [
        call
        for c in step.tool_calls or []
        if c.name != "final_answer"
        for call in (_code_calls(c, step.step_number, tools) if c.name == CODE_TOOL else [c])
    ]
    out: list[dict[str, Any]] = []
    if calls:
        out.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": _arguments(call.arguments)},
                    }
                    for call in calls
                ],
            }
        )
        # smolagents keeps one observation text per step, for all of its calls.
        failed = bool(error) and not nudged
        result = error if failed else str(step.observations or "")
        out.extend(
            {"role": "tool", "tool_call_id": call.id, "content": result, "is_error": failed}
            for call in calls
        )
    elif step.model_output and not step.is_final_answer and not nudged:
        out.append({"role": "assistant", "content": str(step.model_output)})
    if nudged:
        out.append({"role": "user", "content": as_sent(error)})
    return out


CODE_TOOL = "python_interpreter"
"""The one call a CodeAgent's step records: its code, as the call's arguments."""


def _code_calls(call: Any, step: int, tools: Collection[str]) -> list[Any]:
    """The calls of the agent's tools that a CodeAgent's code makes, each with its
    literal keyword arguments (the code as one call when it does not parse)."""
    code = call.arguments if isinstance(call.arguments, str) else ""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return [call]
    found: list[Any] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in tools or node.func.id == "final_answer":
            continue
        arguments = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                continue
            try:
                arguments[keyword.arg] = ast.literal_eval(keyword.value)
            except ValueError:
                continue
        found.append(ToolCall(node.func.id, arguments, f"{call.id}-{len(found)}-{step}"))
    # Code that calls no tool (a `final_answer(...)` step) backs nothing: its output
    # echoes the answer itself.
    return found


def _arguments(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    try:
        return json.dumps(arguments, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(arguments)


class _Quiet:
    """A logger for an `AgentError` raised without its agent (smolagents logs each)."""

    def log_error(self, message: str) -> None:
        return
