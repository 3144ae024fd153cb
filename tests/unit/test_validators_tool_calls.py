"""Phantom tools (class 4) and plan/call drift and invented inputs (class 4b)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.transcripts import Call, chat, kinds_of, tool

PUT_FILE = tool("gh_put_file", required=("repo", "path", "content"))
SEARCH = tool("search_flights", required=("origin", "destination", "date"))
WEATHER = tool(
    "get_weather",
    required=("city",),
    units={"type": "string", "enum": ["metric", "imperial"]},
    days={"type": "integer", "default": 3},
)


def prose_chat(text: str, tools: list[Any]) -> dict[str, Any]:
    return chat(text, tools=tools)


UNREGISTERED = [
    pytest.param(
        chat("", calls=[Call("local_exec", {"cmd": "ls"})], tools=["read_file"]),
        id="local-exec",
    ),
    pytest.param(
        chat("", calls=[Call("publish_article", {"id": "a1"})], tools=[]), id="no-tools-offered"
    ),
    pytest.param(
        prose_chat('{"name": "publish_article", "arguments": {"article_id": "a-17"}}', ["draft"]),
        id="call-written-as-prose",
    ),
    pytest.param(
        prose_chat(
            'I will call <tool_call>{"name": "delete_repo", "arguments": {}}</tool_call>', ["read"]
        ),
        id="prose-tag-form",
    ),
    pytest.param(
        chat(
            "",
            calls=[Call("CustomDashboardsApi.get_shareable_api_tokens", {"user_id": "1"})],
            tools=["get_api_tokens"],
        ),
        id="when2call-phantom",
    ),
]
NOT_UNREGISTERED = [
    pytest.param(chat("ok", calls=[Call("read_file", {"path": "a"})]), id="offered"),
    pytest.param(
        chat("ok", calls=[Call("functions.read_file", {"path": "a"})], tools=["read_file"]),
        id="namespace-prefix",
    ),
    pytest.param(
        {
            "model": "m",
            "messages": [
                {"role": "user", "content": "x"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "1",
                            "type": "function",
                            "function": {"name": "anything", "arguments": "{}"},
                        }
                    ],
                },
            ],
        },
        id="offered-tools-unknown",
    ),
    pytest.param(
        prose_chat('Config: {"name": "Bob", "age": 3}', ["read"]), id="json-without-arguments"
    ),
    pytest.param(
        prose_chat('{"name": "read", "arguments": {"path": "x"}}', ["read"]),
        id="prose-call-to-offered-tool",
    ),
]


@pytest.mark.parametrize("transcript", UNREGISTERED)
def test_unregistered_tool_call(transcript: dict[str, Any]) -> None:
    assert "unregistered_tool_call" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", NOT_UNREGISTERED)
def test_registered_or_unknown_is_clean(transcript: dict[str, Any]) -> None:
    assert "unregistered_tool_call" not in kinds_of(transcript)


MISSING = [
    pytest.param(
        chat("", calls=[Call("gh_put_file", {"repo": "a/b", "path": "x.py"})], tools=[PUT_FILE]),
        id="required-content-absent",
    ),
    pytest.param(
        chat(
            "",
            calls=[
                Call(
                    "write_file",
                    {"path": "notes.md", "content": ""},
                    text='I will write notes.md with content: "# Notes\\n- item"',
                )
            ],
            tools=[tool("write_file", required=("path",), content={"type": "string"})],
        ),
        id="plan-had-content-call-sent-it-empty",
    ),
    pytest.param(
        chat(
            "",
            calls=[Call("gh_put_file", {"repo": "a/b", "path": "x.py", "content": None})],
            tools=[PUT_FILE],
        ),
        id="required-content-null",
    ),
    pytest.param(
        chat(
            "",
            calls=[
                Call(
                    "write_file",
                    {"path": "notes.md"},
                    text='I will write notes.md with content: "# Notes\\n- item"',
                )
            ],
            tools=[tool("write_file", required=("path",), content={"type": "string"})],
        ),
        id="plan-had-content",
    ),
    pytest.param(
        chat("", calls=[Call("search_flights", {"origin": "BER"})], tools=[SEARCH]),
        id="two-required-missing",
    ),
]
NOT_MISSING = [
    pytest.param(
        chat(
            "",
            calls=[Call("gh_put_file", {"repo": "a/b", "path": "x.py", "content": "x"})],
            tools=[PUT_FILE],
        ),
        id="complete",
    ),
    pytest.param(
        chat(
            "",
            calls=[Call("get_weather", {"city": "Berlin"})],
            tools=[WEATHER],
            user="Weather in Berlin?",
        ),
        id="optional-with-default-absent",
    ),
    pytest.param(
        chat(
            "",
            calls=[Call("write_file", {"path": "a.md", "content": "x"}, text="content: x")],
            tools=[tool("write_file", required=("path",), content={"type": "string"})],
        ),
        id="plan-value-passed",
    ),
    pytest.param(
        chat("", calls=[Call("unknown_tool", {})], tools=[PUT_FILE]),
        id="unregistered-not-double-reported",
    ),
    pytest.param(
        chat(
            "",
            calls=[Call("gh_put_file", {"repo": "a/b", "path": "x.py", "content": ""})],
            tools=[PUT_FILE],
        ),
        id="required-content-given-empty-is-a-value",
    ),
    pytest.param(
        chat(
            "",
            user="Clear the filter tags on the dashboard.",
            calls=[Call("set_filter", {"dashboard": "ops", "tags": []})],
            tools=[tool("set_filter", required=("dashboard", "tags"))],
        ),
        id="required-list-given-empty-is-a-value",
    ),
]


@pytest.mark.parametrize("transcript", MISSING)
def test_missing_tool_arguments(transcript: dict[str, Any]) -> None:
    assert "missing_tool_arguments" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", NOT_MISSING)
def test_arguments_complete(transcript: dict[str, Any]) -> None:
    assert "missing_tool_arguments" not in kinds_of(transcript)


UNGROUNDED = [
    pytest.param(
        chat(
            "",
            user="Find me a flight to Paris.",
            calls=[
                Call(
                    "search_flights",
                    {"origin": "JFK", "destination": "Paris", "date": "2026-12-03"},
                )
            ],
            tools=[SEARCH],
        ),
        id="invented-origin-and-date",
    ),
    pytest.param(
        chat(
            "",
            user="Email my manager the report.",
            calls=[Call("send_email", {"to": "j.smith@corp.com"})],
        ),
        id="invented-email",
    ),
    pytest.param(
        chat("", user="Show my order.", calls=[Call("get_order", {"order_id": "#W7777777"})]),
        id="invented-order-id",
    ),
    pytest.param(
        chat(
            "",
            user="Buy tickets for the concert.",
            calls=[Call("buy_tickets", {"number_of_tickets": 4})],
        ),
        id="invented-count",
    ),
    pytest.param(
        chat(
            "",
            user="Are there movies at Century 20?",
            calls=[Call("find_movies", {"location": "San Jose, CA"})],
        ),
        id="when2call-held-out-location",
    ),
]
GROUNDED = [
    pytest.param(
        chat(
            "",
            user="Weather in Los Angeles please",
            calls=[Call("get_weather", {"city": "Los Angeles, CA", "units": "metric"})],
            tools=[WEATHER],
        ),
        id="city-with-state-and-enum",
    ),
    pytest.param(
        chat(
            "",
            user="A flight from NYC to Paris on the 20th of July 2023.",
            calls=[
                Call(
                    "search_flights",
                    {"origin": "NYC", "destination": "paris", "date": "2023-07-20"},
                )
            ],
            tools=[SEARCH],
        ),
        id="date-in-words-and-case",
    ),
    pytest.param(
        chat(
            "",
            user="Weather tomorrow in Berlin?",
            calls=[Call("get_weather", {"city": "Berlin", "date": "2026-11-30"})],
        ),
        id="relative-date",
    ),
    pytest.param(
        chat(
            "",
            user="Return the kettle.",
            calls=[
                Call(
                    "get_order",
                    {},
                    result='{"items": [{"item_id": "4602305039", "price": 153.25}]}',
                ),
                Call("return_items", {"item_ids": ["4602305039"], "expression": "153.25 - 20"}),
            ],
        ),
        id="from-earlier-tool-result-and-arithmetic",
    ),
    pytest.param(
        chat(
            "",
            user="My order id is 9502126 and zip 32286.",
            calls=[Call("get_order", {"order_id": "#W9502126", "zip": "32286"})],
        ),
        id="system-spelling-and-number",
    ),
    pytest.param(
        chat(
            "",
            user="Hotel in Berkeley, any area.",
            calls=[Call("find_hotel", {"city": "Berkeley", "area": "dontcare", "rooms": 1})],
        ),
        id="placeholder-and-small-number",
    ),
]


@pytest.mark.parametrize("transcript", UNGROUNDED)
def test_ungrounded_tool_argument(transcript: dict[str, Any]) -> None:
    assert "ungrounded_tool_argument" in kinds_of(transcript)


@pytest.mark.parametrize("transcript", GROUNDED)
def test_grounded_arguments(transcript: dict[str, Any]) -> None:
    assert "ungrounded_tool_argument" not in kinds_of(transcript)
