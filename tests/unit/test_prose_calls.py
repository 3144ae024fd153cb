"""prose_calls: tool calls the model wrote out as JSON text (they never ran)."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.evidence.prose_calls import find_prose_calls, parse_arguments
from factledger.processors.model import ToolCall


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        ('{"name": "deploy", "arguments": {"env": "prod"}}', "deploy", {"env": "prod"}),
        (
            'Calling {"name": "deploy", "arguments": "{\\"env\\": \\"prod\\"}"} now',
            "deploy",
            {"env": "prod"},
        ),
        ('{"tool": "search", "input": {"q": "cats"}}', "search", {"q": "cats"}),
        ('{"tool_name": "search", "args": {"q": "cats"}}', "search", {"q": "cats"}),
        (
            '{"recipient_name": "functions.search", "parameters": {"q": "c"}}',
            "functions.search",
            {"q": "c"},
        ),
        ('{"function": "search", "parameters": {"q": "cats"}}', "search", {"q": "cats"}),
        ('{"function": {"name": "search", "arguments": {"q": "cats"}}}', "search", {"q": "cats"}),
        (
            '```json\n{\n  "name": "search",\n  "tool_input": {"q": "cats"}\n}\n```',
            "search",
            {"q": "cats"},
        ),
        ('{"name": "ping", "arguments": {}}', "ping", {}),
        ('{"name": "ping", "arguments": "not json"}', "ping", {}),
    ],
    ids=[
        "name-arguments-object",
        "arguments-as-json-string-in-sentence",
        "tool-input",
        "tool_name-args",
        "recipient_name-parameters",
        "function-string-parameters",
        "nested-function-object",
        "fenced-code-block-tool_input",
        "empty-arguments",
        "unparseable-arguments-string",
    ],
)
def test_json_written_call_becomes_a_prose_tool_call(text, name, arguments):
    (found,) = find_prose_calls(text, step=2)
    assert found.name == name
    assert dict(found.arguments) == arguments
    assert found.origin == "prose"
    assert found.step == 2
    assert found.result is None
    assert found.arguments_text


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Bob", "age": 3}',
        '{"name": "Bob"}',
        '{"tool": "hammer", "weight": 2}',
        '{"id": 1, "name": "x", "arguments": {}}',
        '{"name": 3, "arguments": {}}',
        '{"name": "", "arguments": {}}',
        '{"name": "deploy", "arguments": {"env": ',
        "no json here at all",
        '["name", "arguments"]',
    ],
    ids=[
        "person-record-without-arguments-key",
        "name-only",
        "tool-without-arguments-key",
        "first-key-is-not-a-tool-key",
        "non-string-name",
        "empty-name",
        "truncated-json",
        "plain-prose",
        "json-array-of-strings",
    ],
)
def test_json_that_is_not_a_call_is_ignored(text):
    assert find_prose_calls(text) == ()


def test_several_calls_in_order_and_nested_objects_not_double_counted():
    text = (
        'First {"name": "a", "arguments": {"inner": {"name": "b", "arguments": {}}}} '
        'then {"name": "c", "arguments": {}} and a broken {"name": "d", "arguments": } '
        'and finally {"tool": "e", "input": {}}'
    )
    assert [c.name for c in find_prose_calls(text)] == ["a", "c", "e"]


def test_array_of_calls_yields_each_call():
    text = '[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": 1}}]'
    assert [(c.name, dict(c.arguments)) for c in find_prose_calls(text)] == [
        ("a", {}),
        ("b", {"x": 1}),
    ]


def test_at_most_twenty_calls_are_read():
    text = " ".join(f'{{"name": "t{i}", "arguments": {{}}}}' for i in range(30))
    calls = find_prose_calls(text)
    assert len(calls) == 20
    assert calls[-1].name == "t19"


def test_arguments_text_falls_back_to_the_raw_object():
    raw = '{"name": "ping", "arguments": ""}'
    (found,) = find_prose_calls(f"run {raw}.")
    assert found.arguments_text == raw
    assert found == ToolCall(name="ping", arguments={}, arguments_text=raw, origin="prose")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"a": 1}, ({"a": 1}, '{"a": 1}')),
        ('{"a": 1}', ({"a": 1}, '{"a": 1}')),
        ("", ({}, "")),
        ("   ", ({}, "   ")),
        ("[1, 2]", ({}, "[1, 2]")),
        ("{oops", ({}, "{oops")),
        (None, ({}, "")),
        ([1, "ü"], ({}, '[1, "ü"]')),
        (7, ({}, "7")),
    ],
    ids=[
        "mapping",
        "json-object-string",
        "empty-string",
        "blank-string",
        "json-array-string-is-not-arguments",
        "invalid-json-string-kept-as-text",
        "none",
        "list-dumped-without-ascii-escapes",
        "number",
    ],
)
def test_parse_arguments(value: Any, expected: tuple[dict[str, Any], str]):
    arguments, text = parse_arguments(value)
    assert (dict(arguments), text) == expected
