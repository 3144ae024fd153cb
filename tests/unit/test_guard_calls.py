"""A tool call that only carried a guard's nudge (Google ADK's guard hands its nudge to the
model as the answer of a call of its own) is no call of the agent: no turn holds it, so
it is neither an unregistered call nor a tool result that backs what it quotes."""

from __future__ import annotations

import json

import pytest

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.guard import check
from factledger.processors.model import ToolCall
from factledger.processors.nudges import GUARD_TOOL, build_nudge, is_guard_call
from factledger.processors.runner import default_runner

FAB = "9eda4ae4bf58cca02f2d97b379c4ffb0d59b1ce3"
REAL = "a504d935e85252bce9296c9c69ccf525e157e31d"


def _transcript(reply: str, *, nudged: bool = True) -> dict[str, object]:
    arguments = json.dumps({"repo": "acme/shop", "branch": "main"})
    push = {
        "id": "c1",
        "type": "function",
        "function": {"name": "git_push", "arguments": arguments},
    }
    messages: list[dict[str, object]] = [
        {"role": "user", "content": "Push branch main of acme/shop."},
        {"role": "assistant", "content": "", "tool_calls": [push]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"ok": True, "commit": REAL})},
    ]
    if nudged:
        carried = json.dumps({"nudge": "..."})
        guard = {
            "id": "g1",
            "type": "function",
            "function": {"name": GUARD_TOOL, "arguments": carried},
        }
        messages += [
            {
                "role": "assistant",
                "content": f"Pushed main. The new head is {FAB}.",
                "tool_calls": [guard],
            },
            {"role": "tool", "tool_call_id": "g1", "content": json.dumps({"result": _nudge()})},
        ]
    messages.append({"role": "assistant", "content": reply})
    tools = [{"type": "function", "function": {"name": "git_push", "parameters": {}}}]
    return {"messages": messages, "tools": tools}


def _nudge() -> str:
    turn = turn_from_transcript(_transcript(f"Pushed main. The new head is {FAB}.", nudged=False))
    nudge = build_nudge(default_runner().validate(turn).findings)
    assert nudge is not None and FAB in nudge
    return nudge


@pytest.mark.parametrize(
    "call",
    [
        ToolCall(GUARD_TOOL, result="anything at all"),
        ToolCall("reflect", result=_nudge()),
        ToolCall("reflect", result="  \n" + _nudge()),
        ToolCall("reflect", result=json.dumps({"result": _nudge()})),
        ToolCall("reflect", result=json.dumps({"output": "[FRAMEWORK SELF-CORRECTION] try again"})),
    ],
    ids=["by-name", "answer-is-a-nudge", "after-blank-lines", "json-wrapped", "another-framework"],
)
def test_a_call_that_carries_a_nudge_is_the_guards(call: ToolCall) -> None:
    assert is_guard_call(call)


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("git_push", result=json.dumps({"ok": True, "commit": REAL})),
        ToolCall("read_log", result=f"the log says: {_nudge()}"),  # quoted, not carried
        ToolCall("read_log", result=json.dumps({"result": _nudge(), "lines": 3})),
        ToolCall("read_log", result="{not json"),
        ToolCall("read_log", result=None),
    ],
    ids=["a-push", "quoted-mid-text", "json-with-more", "broken-json", "no-result"],
)
def test_a_call_of_the_agent_is_not(call: ToolCall) -> None:
    assert not is_guard_call(call)


def test_a_nudged_turn_holds_only_the_agents_calls() -> None:
    turn = turn_from_transcript(_transcript(f"Pushed main: commit {REAL[:12]}."))
    assert [c.name for c in turn.tool_calls] == ["git_push"]
    assert check(turn).ok  # corrected: no unregistered call of the guard's tool


def test_the_nudge_does_not_back_the_fabrication_it_names() -> None:
    result = check(turn_from_transcript(_transcript(f"Pushed main. The new head is {FAB}.")))
    assert [f.kind.value for f in result.verdict.findings] == ["fabricated_identifier"]
    assert result.verdict.findings[0].token == FAB
