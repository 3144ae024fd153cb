"""The frozen dataclasses that spell out their `__init__` (for mypyc, see
processors/normalize/base.py) take exactly their fields: the same names in the same order,
the same defaults, each stored as given. Runs against the compiled build when it is in use."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from factledger.processors.assembly.assembler import AssembledTurn
from factledger.processors.assembly.joins import CallTime, JoinKeys
from factledger.processors.assembly.turn_builder import TurnSpans
from factledger.processors.model import ToolDefinition, Turn
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    ToolCallPart,
    ToolExecution,
)

CLASSES = [
    ToolCallPart,
    ChatMessage,
    LlmStep,
    ToolExecution,
    AgentInvocation,
    JoinKeys,
    CallTime,
    TurnSpans,
    AssembledTurn,
]

_SAMPLES: dict[str, Any] = {
    "tool_calls": (ToolCallPart("call_1", "get_order"),),
    "input_messages": (ChatMessage("user", "hi"),),
    "messages": (ChatMessage("user", "hi"), ChatMessage("assistant", "hello")),
    "output_messages": (ChatMessage("assistant", "hello"),),
    "tools": (ToolDefinition("get_order"),),
    "result": "result",
    "extra": {"agent_id": "asst_1"},
    "lookups": (b"key",),
    "registrations": (b"key", b"other"),
    "identity": (b"other",),
    "steps": (LlmStep("s1"),),
    "agent": AgentInvocation("a2"),
    "inner_agents": (AgentInvocation("a3"),),
    "peer_agents": (AgentInvocation("a4"),),
    "earlier": (LlmStep("s0", response_id="resp_1"),),
    "turn": Turn(reply="done", user_message="do it"),
    "span_ids": ("a", "b"),
    "receive_lags_ns": (5, 7),
    "seen": 2.5,
}
"""A value unlike any default, by field name (annotations are text in Python, types once
compiled); text, numbers and flags by the type of the default."""
_OVERRIDES: dict[tuple[type, str], Any] = {
    (TurnSpans, "tools"): (ToolExecution("t1", "get_order"),),
}
_BY_DEFAULT: dict[type, Any] = {str: "given", int: 11, bool: True}


def _sample(cls: type, field: dataclasses.Field[Any]) -> Any:
    if (cls, field.name) in _OVERRIDES:
        return _OVERRIDES[(cls, field.name)]
    if field.name in _SAMPLES:
        return _SAMPLES[field.name]
    kind = type(field.default) if field.default is not dataclasses.MISSING else field.type
    kind = {"str": str, "int": int, "bool": bool}.get(kind, kind) if isinstance(kind, str) else kind
    assert kind in _BY_DEFAULT, f"{cls.__name__}.{field.name}: no sample"
    return _BY_DEFAULT[kind]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_field_is_stored_as_given_by_keyword_and_by_position(cls: type) -> None:
    fields = dataclasses.fields(cls)
    values = {f.name: _sample(cls, f) for f in fields}
    by_keyword = cls(**values)
    by_position = cls(*values.values())
    for name, value in values.items():
        assert getattr(by_keyword, name) == value, name
        assert getattr(by_position, name) == value, name
    assert by_keyword == by_position
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(by_keyword, fields[0].name, values[fields[0].name])


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_fields_left_out_take_the_declared_defaults(cls: type) -> None:
    fields = dataclasses.fields(cls)
    required = {
        f.name: _sample(cls, f)
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    made = cls(**required)
    for f in fields:
        if f.name in required:
            continue
        factory = f.default_factory
        expected = factory() if callable(factory) else f.default
        assert getattr(made, f.name) == expected, f.name
        assert type(getattr(made, f.name)) is type(expected), f.name


def test_a_default_factory_gives_each_instance_its_own_value() -> None:
    assert AgentInvocation("a").extra is not AgentInvocation("b").extra


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_replace_goes_through_the_explicit_init(cls: type) -> None:
    fields = dataclasses.fields(cls)
    made = cls(**{f.name: _sample(cls, f) for f in fields})
    assert dataclasses.replace(made) == made
