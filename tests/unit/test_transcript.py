"""turn_from_transcript: OpenAI-style chat → Turn."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factledger.processors.assembly.transcript import (
    CONTEXT_WINDOW,
    content_text,
    transcript_digest,
    turn_from_transcript,
)
from factledger.processors.errors import TranscriptError
from factledger.processors.evidence.outcomes import call_failed
from factledger.processors.model import Turn
from factledger.processors.nudges import NUDGE_MARKER

SHA = "3f9a1c2e7b4d5a6c8e9f0a1b2c3d4e5f6a7b8c9d"
NUDGE = f"{NUDGE_MARKER} — not a user message] Your previous reply names `{SHA}`."
FOREIGN_NUDGE = f"[FRAMEWORK SELF-CORRECTION] please verify `{SHA}`."


def user(text: Any) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: Any = None, *calls: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = list(calls)
    return message


def call(call_id: str, name: str, arguments: Any = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def tool(call_id: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **extra}


def turn_of(*messages: dict[str, Any], **top: Any) -> Turn:
    return turn_from_transcript({"messages": list(messages), **top})


# --- where the turn starts ---------------------------------------------------------------


def test_turn_starts_at_last_user_message():
    turn = turn_of(
        user("first question"),
        assistant("first answer"),
        user("second question"),
        assistant(None, call("c1", "search", '{"q": "x"}')),
        tool("c1", "found x"),
        assistant("final answer"),
    )
    assert turn.user_message == "second question"
    assert turn.reply == "final answer"
    assert [m.content for m in turn.context] == ["first question", "first answer"]
    assert [c.name for c in turn.tool_calls] == ["search"]
    assert turn.steps == ("",)


@pytest.mark.parametrize(
    "nudge", [NUDGE, "   \n" + NUDGE, FOREIGN_NUDGE], ids=["own-marker", "indented", "foreign"]
)
def test_framework_nudge_is_skipped_when_finding_turn_start(nudge):
    turn = turn_of(
        user("what is the latest commit?"),
        assistant(f"It is {SHA}."),
        user(nudge),
        assistant("I could not verify the commit."),
    )
    assert turn.user_message == "what is the latest commit?"
    assert turn.reply == "I could not verify the commit."
    # The flagged first reply is a step of the same turn, not conversation context.
    assert turn.steps == (f"It is {SHA}.",)
    assert turn.context == ()


def test_nudge_text_in_the_middle_of_a_user_message_is_a_real_user_turn():
    turn = turn_of(
        user("hello"),
        assistant("hi"),
        user(f"I saw this earlier: {NUDGE}"),
        assistant("ok"),
    )
    assert turn.user_message.startswith("I saw this earlier")
    assert turn.steps == ()


@pytest.mark.parametrize("nudge", [NUDGE, FOREIGN_NUDGE], ids=["own-marker", "foreign"])
def test_nudge_in_context_is_flagged_and_never_grounds(nudge):
    turn = turn_of(
        user("hello"),
        assistant("hi there"),
        user(nudge),
        assistant("Sorry, I cannot confirm that."),
        user("and now?"),
        assistant("done"),
    )
    flagged = [m for m in turn.context if m.is_framework_nudge]
    assert [m.content for m in flagged] == [nudge]
    assert all(not m.is_framework_nudge for m in turn.context if m.content != nudge)
    assert SHA not in turn.conversation_text
    assert SHA.lower() not in turn.conversation_lower
    assert "hello" in turn.conversation_text


def test_same_text_from_a_real_user_does_ground():
    turn = turn_of(
        user(f"the commit is {SHA}"),
        assistant("noted"),
        user("and now?"),
        assistant("done"),
    )
    assert SHA in turn.conversation_text


def test_without_user_message_everything_is_the_turn():
    turn = turn_of(
        {"role": "system", "content": "be terse"},
        assistant(None, call("c1", "ls")),
        tool("c1", "a.txt"),
        assistant("one file"),
    )
    assert turn.user_message == ""
    assert turn.context == ()
    assert turn.history_tool_calls == ()
    assert [c.result for c in turn.tool_calls] == ["a.txt"]
    assert turn.system_prompt == "be terse"


# --- context ---------------------------------------------------------------------------


@pytest.mark.parametrize("earlier", [3, CONTEXT_WINDOW, 25], ids=["short", "exact", "long"])
def test_context_keeps_at_most_the_last_ten_messages(earlier):
    history: list[dict[str, Any]] = [
        user(f"u{i}") if i % 2 == 0 else assistant(f"a{i}") for i in range(earlier)
    ]
    turn = turn_of(*history, user("now"), assistant("reply"))
    expected = [m["content"] for m in history][-CONTEXT_WINDOW:]
    assert CONTEXT_WINDOW == 10
    assert [m.content for m in turn.context] == expected
    assert len(turn.context) <= 10


def test_message_older_than_the_window_does_not_ground():
    history = [user(f"the sha is {SHA}")] + [
        assistant(f"a{i}") if i % 2 == 0 else user(f"u{i}") for i in range(CONTEXT_WINDOW)
    ]
    turn = turn_of(*history, user("now"), assistant("reply"))
    assert SHA not in turn.conversation_text


def test_context_drops_tool_system_and_empty_messages():
    turn = turn_of(
        {"role": "system", "content": "sys"},
        user("q1"),
        assistant(None, call("c1", "ls")),
        tool("c1", "a.txt"),
        assistant("a1"),
        user("q2"),
        assistant("r"),
    )
    assert [(m.role, m.content) for m in turn.context] == [
        ("user", "q1"),
        ("assistant", "a1"),
    ]
    assert turn.system_prompt == "sys"


# --- tool calls and results --------------------------------------------------------------


def test_earlier_tool_calls_land_in_history_with_results():
    turn = turn_of(
        user("list commits"),
        assistant(None, call("c1", "gh_list_commits", '{"repo": "a/b"}')),
        tool("c1", f'[{{"sha": "{SHA}"}}]'),
        assistant("here they are"),
        user("thanks, which is newest?"),
        assistant(f"{SHA} is newest"),
    )
    assert turn.tool_calls == ()
    assert len(turn.history_tool_calls) == 1
    hist = turn.history_tool_calls[0]
    assert (hist.name, hist.call_id, hist.arguments) == ("gh_list_commits", "c1", {"repo": "a/b"})
    assert hist.result is not None and SHA in hist.result
    assert SHA.lower() in turn.evidence_lower
    assert SHA not in turn.tool_results_text


@pytest.mark.parametrize(
    "raw",
    [
        "[{'id': 'c1', 'type': 'function', "
        "'function': {'name': 'search', 'arguments': '{\"q\": \"cats\"}'}}]",
        "[{'id': 'c1', 'function': {'name': 'search', 'arguments': {'q': 'cats'}}}]",
        json.dumps([call("c1", "search", '{"q": "cats"}')]),
    ],
    ids=["python-literal-string-args", "python-literal-dict-args", "json-string"],
)
def test_tool_calls_given_as_a_string_are_parsed(raw):
    turn = turn_of(
        user("search cats"),
        {"role": "assistant", "content": None, "tool_calls": raw},
        tool("c1", "3 cats"),
        assistant("found 3 cats"),
    )
    (only,) = turn.tool_calls
    assert (only.name, only.call_id, dict(only.arguments)) == ("search", "c1", {"q": "cats"})
    assert only.result == "3 cats"


@pytest.mark.parametrize("raw", [None, "None", "", []], ids=["null", "None-string", "empty", "[]"])
def test_absent_tool_calls_mean_no_calls(raw):
    turn = turn_of(user("q"), {"role": "assistant", "content": "a", "tool_calls": raw})
    assert turn.tool_calls == ()


def test_results_attach_by_tool_call_id_not_by_order():
    turn = turn_of(
        user("do both"),
        assistant(None, call("c_a", "alpha"), call("c_b", "beta"), call("c_c", "gamma")),
        tool("c_b", "beta-out"),
        tool("c_a", "alpha-out"),
        assistant("done"),
    )
    got = {c.name: c.result for c in turn.tool_calls}
    assert got == {"alpha": "alpha-out", "beta": "beta-out", "gamma": None}


def test_call_without_id_gets_a_positional_id():
    turn = turn_of(
        user("q"),
        assistant(None, {"function": {"name": "x", "arguments": "{}"}}),
        assistant("r"),
    )
    assert turn.tool_calls[0].call_id == "call_1_0"


@pytest.mark.parametrize(
    ("extra", "error"),
    [({"is_error": True}, True), ({"is_error": False}, False), ({}, False)],
    ids=["is_error-true-marks-call", "is_error-false", "no-mark"],
)
def test_is_error_marks_the_call(extra, error):
    turn = turn_of(
        user("push"),
        assistant(None, call("c1", "git_push")),
        tool("c1", "pushed 1 commit", **extra),
        assistant("pushed"),
    )
    assert turn.tool_calls[0].error is error
    assert call_failed(turn.tool_calls[0]) is error


def test_calls_and_steps_are_indexed_by_llm_step():
    turn = turn_of(
        user("go"),
        assistant("looking", call("c1", "a")),
        tool("c1", "ra"),
        assistant(None, call("c2", "b")),
        tool("c2", "rb"),
        assistant("all done"),
    )
    assert [(c.name, c.step) for c in turn.tool_calls] == [("a", 0), ("b", 1)]
    assert turn.steps == ("looking", "")


def test_arguments_keep_their_raw_text():
    turn = turn_of(
        user("go"),
        assistant(None, call("c1", "a", '{"k": 1}'), call("c2", "b", "not json")),
        assistant("r"),
    )
    first, second = turn.tool_calls
    assert (dict(first.arguments), first.arguments_text) == ({"k": 1}, '{"k": 1}')
    assert (dict(second.arguments), second.arguments_text) == ({}, "not json")


def test_prose_call_in_reply_becomes_a_prose_tool_call():
    reply = 'I will now run {"name": "deploy", "arguments": {"env": "prod"}}'
    turn = turn_of(user("deploy"), assistant("thinking"), assistant(reply))
    (prose,) = turn.tool_calls
    assert (prose.name, prose.origin, prose.step) == ("deploy", "prose", 1)
    assert dict(prose.arguments) == {"env": "prod"}
    assert turn.executed_calls == ()


# --- content ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "text"),
    [
        ("plain", "plain"),
        (None, ""),
        (
            [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, "b"],
            "a\nb",
        ),
        ([{"type": "tool_result", "content": "c"}], "c"),
        ({"k": "v"}, '{"k": "v"}'),
        (3, "3"),
    ],
    ids=["string", "none", "parts-list-joined", "content-key-part", "object-as-json", "number"],
)
def test_content_text(content, text):
    assert content_text(content) == text


def test_list_content_is_joined_in_the_reply():
    turn = turn_of(user("q"), assistant([{"type": "text", "text": "one"}, "two"]))
    assert turn.reply == "one\ntwo"


# --- tools --------------------------------------------------------------------------------

_SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "function", "function": {"name": "search", "parameters": _SCHEMA}},
        {"name": "search", "parameters": _SCHEMA},
        json.dumps({"type": "function", "function": {"name": "search", "parameters": _SCHEMA}}),
        json.dumps({"name": "search", "parameters": _SCHEMA}),
        {"name": "search", "input_schema": _SCHEMA},
    ],
    ids=["openai-shape", "plain-shape", "openai-json-string", "plain-json-string", "input_schema"],
)
def test_tool_definitions_in_every_shape(spec):
    turn = turn_of(user("q"), assistant("a"), tools=[spec])
    assert turn.tools is not None
    (t,) = turn.tools
    assert t.name == "search"
    assert t.required == ("q",)
    assert set(t.properties) == {"q"}
    assert turn.offered_tool_names == frozenset({"search"})


def test_omitted_tools_are_unknown_and_empty_tools_are_none_offered():
    unknown = turn_of(user("q"), assistant("a"))
    none_offered = turn_of(user("q"), assistant("a"), tools=[])
    assert unknown.tools is None
    assert unknown.offered_tool_names is None
    assert none_offered.tools == ()
    assert none_offered.offered_tool_names == frozenset()


# --- identity and metadata -----------------------------------------------------------------


def test_turn_id_is_a_stable_digest_unless_given():
    transcript = {"model": "m", "messages": [user("q"), assistant("a")]}
    same = {"messages": [user("q"), assistant("a")], "model": "m"}
    other = {"model": "m", "messages": [user("q"), assistant("b")]}
    assert turn_from_transcript(transcript).turn_id == transcript_digest(same)
    assert transcript_digest(transcript) != transcript_digest(other)
    given_id = turn_from_transcript(transcript, turn_id="t-1", conversation_id="conv")
    assert (given_id.turn_id, given_id.conversation_id, given_id.model) == ("t-1", "conv", "m")


def test_developer_role_counts_as_system_prompt():
    turn = turn_of(
        {"role": "developer", "content": "dev rules"},
        {"role": "system", "content": "sys rules"},
        user("q"),
        assistant("a"),
    )
    assert turn.system_prompt == "dev rules\nsys rules"
    assert "dev rules" in turn.conversation_text


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("transcript", "needle"),
    [
        ([], "JSON object"),
        ({}, "no 'messages'"),
        ({"messages": []}, "no 'messages'"),
        ({"messages": "hi"}, "no 'messages'"),
        ({"messages": [user("q")]}, "no assistant"),
        ({"messages": [user("q"), {"role": "robot", "content": "x"}]}, "messages[1]"),
        ({"messages": [user("q"), {"content": "x"}]}, "messages[1] has unknown role None"),
        ({"messages": [user("q"), "hello"]}, "messages[1] is not an object"),
        (
            {"messages": [user("q"), assistant(None, {"id": "c1", "function": {"arguments": ""}})]},
            "messages[1].tool_calls[0] has no function name",
        ),
        (
            {"messages": [user("q"), assistant(None, {"function": {"name": ""}})]},
            "messages[1].tool_calls[0] has no function name",
        ),
        (
            {"messages": [user("q"), {"role": "assistant", "tool_calls": [1]}]},
            "messages[1].tool_calls[0] is not an object",
        ),
        (
            {"messages": [user("q"), {"role": "assistant", "tool_calls": {"id": "x"}}]},
            "messages[1].tool_calls is not a list",
        ),
        (
            {"messages": [user("q"), {"role": "assistant", "tool_calls": "[{'id': "}]},
            "messages[1].tool_calls is unreadable",
        ),
        ({"messages": [user("q"), assistant("a")], "tools": {"name": "x"}}, "'tools'"),
        ({"messages": [user("q"), assistant("a")], "tools": ["{nope"]}, "tools[0]"),
        ({"messages": [user("q"), assistant("a")], "tools": [{"name": "x"}, 3]}, "tools[1]"),
        (
            {"messages": [user("q"), assistant("a")], "tools": [{"parameters": {}}]},
            "tools[0] has no name",
        ),
    ],
    ids=[
        "not-an-object",
        "missing-messages",
        "empty-messages",
        "messages-not-a-list",
        "no-assistant",
        "unknown-role-names-index",
        "missing-role-names-index",
        "message-not-an-object",
        "tool-call-without-name",
        "tool-call-with-empty-name",
        "tool-call-not-an-object",
        "tool-calls-not-a-list",
        "tool-calls-unreadable-literal",
        "tools-not-a-list",
        "tool-invalid-json-string",
        "tool-not-an-object",
        "tool-without-name",
    ],
)
def test_bad_shapes_raise_transcript_error_naming_the_place(transcript, needle):
    with pytest.raises(TranscriptError) as info:
        turn_from_transcript(transcript)
    assert needle in str(info.value)


def test_unhashable_python_literal_tool_calls_raise_transcript_error():
    with pytest.raises(TranscriptError, match=r"messages\[1\]\.tool_calls is unreadable"):
        turn_of(user("q"), {"role": "assistant", "content": "", "tool_calls": "{[1]: 2}"})


@pytest.mark.parametrize(
    ("raw", "arguments_text"),
    [
        ("[{'function': {'name': 'x', 'arguments': {(1, 2): 3}}}]", "{(1, 2): 3}"),
        ("[{'function': {'name': 'x', 'arguments': {'a': {1, 2}}}}]", "{'a': {1, 2}}"),
    ],
    ids=["tuple-key-in-arguments", "set-in-arguments"],
)
def test_python_literal_arguments_json_cannot_hold_keep_their_repr(raw, arguments_text):
    turn = turn_of(user("q"), {"role": "assistant", "content": "", "tool_calls": raw})
    (only,) = turn.tool_calls
    assert only.name == "x"
    assert only.arguments_text == arguments_text


_DEEP = "[" * 100_000


def test_deeply_nested_arguments_string_gives_empty_arguments():
    turn = turn_of(user("q"), assistant(None, call("c1", "x", _DEEP)))
    (only,) = turn.tool_calls
    assert (dict(only.arguments), only.arguments_text) == ({}, _DEEP)


def test_deeply_nested_prose_call_in_reply_is_skipped():
    turn = turn_of(user("q"), assistant('{"name": "x", "arguments": ' + _DEEP))
    assert turn.tool_calls == ()


# --- property: only TranscriptError ever escapes -------------------------------------------

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
_call_id = st.one_of(st.sampled_from(["c1", "c2"]), st.text(max_size=4), st.integers())
_arguments = st.one_of(
    st.dictionaries(st.sampled_from(["q", "id"]), _json, max_size=2).map(json.dumps),
    st.dictionaries(st.sampled_from(["q", "id"]), _json, max_size=2),
    st.text(max_size=20),
    _json,
)
_good_call = st.fixed_dictionaries(
    {
        "id": _call_id,
        "type": st.just("function"),
        "function": st.fixed_dictionaries(
            {"name": st.sampled_from(["search", "git_push"])}, optional={"arguments": _arguments}
        ),
    }
)
_odd_call = st.fixed_dictionaries(
    {},
    optional={
        "id": _call_id,
        "function": _json,
        "name": st.one_of(st.sampled_from(["search", ""]), _json),
        "arguments": _arguments,
    },
)
_tool_calls = st.one_of(
    st.lists(_good_call, max_size=3),
    st.lists(_good_call, max_size=3).map(repr),
    st.lists(st.one_of(_good_call, _odd_call, _json), max_size=3),
    st.text(max_size=30),
    _json,
)
_content = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [NUDGE, f"commit {SHA}", '{"name": "x", "arguments": {"a": 1}}', '{"error": "boom"}']
    ),
    st.lists(st.one_of(st.text(max_size=8), st.fixed_dictionaries({"text": _json})), max_size=3),
    _json,
)
_optional_fields = {
    "content": _content,
    "tool_calls": _tool_calls,
    "tool_call_id": st.one_of(st.sampled_from(["c1", "c2"]), _json),
    "name": _json,
    "is_error": _json,
}
_good_role = st.sampled_from(["system", "user", "assistant", "tool", "developer", "function"])
_good_message = st.fixed_dictionaries({"role": _good_role}, optional=_optional_fields)
_good_assistant = st.fixed_dictionaries({"role": st.just("assistant")}, optional=_optional_fields)
_any_message = st.one_of(
    _good_message,
    st.fixed_dictionaries({"role": st.one_of(st.just("bot"), _json)}, optional=_optional_fields),
    _json,
)
_ends_with_reply = st.tuples(st.lists(_good_message, max_size=7), _good_assistant).map(
    lambda t: [*t[0], t[1]]
)
_messages = st.one_of(
    st.lists(_good_message, min_size=1, max_size=8), st.lists(_any_message, max_size=8), _json
)
_tool_spec = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("function"), "function": st.fixed_dictionaries({"name": _json})},
        optional={"parameters": _json},
    ),
    st.fixed_dictionaries({}, optional={"name": _json, "parameters": _json, "function": _json}),
    st.text(max_size=20),
    _json,
)
_tools = st.one_of(st.lists(_tool_spec, max_size=3), _json)
_transcript = st.one_of(
    st.fixed_dictionaries(
        {"messages": _ends_with_reply}, optional={"tools": _tools, "model": _json}
    ),
    st.fixed_dictionaries({"messages": _messages}, optional={"tools": _tools, "model": _json}),
    _json,
)


@settings(
    max_examples=500,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(_transcript)
def test_random_transcripts_give_a_turn_or_transcript_error(transcript):
    try:
        turn = turn_from_transcript(transcript)
    except TranscriptError:
        return
    assert isinstance(turn, Turn)
    assert isinstance(turn.reply, str)
    assert len(turn.context) <= CONTEXT_WINDOW
    assert all(c.name for c in (*turn.tool_calls, *turn.history_tool_calls))
    assert turn_from_transcript(transcript).turn_id == turn.turn_id
