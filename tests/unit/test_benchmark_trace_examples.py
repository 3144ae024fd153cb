"""benchmarks.trace_examples: the checks and the report, on one small span written here
(the real example files are the benchmark's input, not the tests')."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchmarks import trace_example_spans as spans
from benchmarks import trace_example_turns as turns
from benchmarks.trace_examples import check_all, check_file, example_files, main, report
from factledger.processors.runner import default_runner

ASK = "Where is order W42?"
REPLY = "Order W42 has shipped."
FOUND = '{"status": "shipped"}'


def _messages(*messages: dict[str, object]) -> str:
    return json.dumps(list(messages))


# One OTel GenAI chat span in the flat-attribute layout: the model looked the order up and
# answers from the result.
CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.response.model": "gpt-4o-2024-08-06",
    "gen_ai.input.messages": _messages(
        {"role": "user", "parts": [{"type": "text", "content": ASK}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "c1", "name": "get_order", "arguments": {"id": "W42"}}
            ],
        },
        {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": FOUND}]},
    ),
    "gen_ai.output.messages": _messages(
        {"role": "assistant", "parts": [{"type": "text", "content": REPLY}]}
    ),
}
SPANS = spans.Expected(
    conventions={"genai": 1},
    kinds=("llm",),
    models=("gpt-4o-2024-08-06",),
    user=ASK,
    calls=(("c1", "get_order", {"id": "W42"}),),
    tool_messages=(("c1", FOUND),),
    replies=(REPLY,),
)
TURNS = turns.Expected(
    turns=((ASK, REPLY),),
    model="gpt-4o-2024-08-06",
    # One span: the call and its result are in its own input, no tool span has them.
    calls=(turns.Call("get_order", "c1", {"id": "W42"}, FOUND, from_tool_span=False),),
    steps=("",),
)


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "order_chat.json"
    path.write_text(json.dumps(CHAT), encoding="utf-8")
    return path


def test_a_file_that_says_what_was_read_by_hand_matches(chat_file):
    result = check_file(chat_file, SPANS, TURNS, default_runner())
    assert result.ok, result
    assert (result.turns, result.findings) == (1, ())


@pytest.mark.parametrize(
    ("want_spans", "want_turns", "span_mismatches", "turn_mismatches"),
    [
        pytest.param(
            dataclasses.replace(SPANS, models=("gpt-4o",)),
            TURNS,
            ["models"],
            [],
            id="span-model",
        ),
        pytest.param(
            dataclasses.replace(SPANS, replies=("Order W42 is pending.",)),
            TURNS,
            ["replies", "final output message"],
            [],
            id="span-reply",
        ),
        pytest.param(
            SPANS,
            dataclasses.replace(TURNS, turns=((ASK, REPLY), (ASK, REPLY))),
            [],
            ["turns (request, reply)"],
            id="turn-count",
        ),
        pytest.param(
            SPANS,
            dataclasses.replace(TURNS, calls=()),
            [],
            ["final turn tool calls"],
            id="turn-calls",
        ),
        pytest.param(
            SPANS,
            dataclasses.replace(TURNS, findings=("unverified_identifier",)),
            [],
            ["finding kinds"],
            id="expected-finding-not-raised",
        ),
    ],
)
def test_each_differing_fact_is_a_named_mismatch(
    chat_file, want_spans, want_turns, span_mismatches, turn_mismatches
):
    result = check_file(chat_file, want_spans, want_turns, default_runner())
    assert [m.what for m in result.span_mismatches] == span_mismatches
    assert [m.what for m in result.turn_mismatches] == turn_mismatches
    assert not result.ok


def test_a_finding_on_a_presumed_clean_run_is_a_mismatch_and_is_listed(tmp_path):
    claim = "I have refunded order W42."
    output = _messages({"role": "assistant", "parts": [{"type": "text", "content": claim}]})
    path = tmp_path / "refund_claim.json"
    path.write_text(json.dumps({**CHAT, "gen_ai.output.messages": output}), encoding="utf-8")
    want_spans = dataclasses.replace(SPANS, replies=(claim,))
    want_turns = dataclasses.replace(TURNS, turns=((ASK, claim),))
    result = check_file(path, want_spans, want_turns, default_runner())
    assert [m.what for m in result.turn_mismatches] == ["finding kinds", "verdicts"]
    assert [f.kind.value for f in result.findings] == ["claim_without_tool"]
    lines = report([result], unmatched=[], full=False)
    assert any(
        line.startswith("  finding claim_without_tool (reject): 'refunded'") for line in lines
    )
    assert lines[-1].endswith("1 turns, 1 findings")


def test_a_file_that_cannot_be_read_is_its_own_error(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{broken", encoding="utf-8")
    result = check_file(broken, SPANS, TURNS, default_runner())
    assert "not readable as JSON" in result.error
    assert not result.ok


def test_a_file_without_expectations_fails_naming_where_to_add_them(chat_file):
    (result,) = check_all([chat_file], default_runner())
    assert "no hand-read expectations" in result.error
    assert "trace_example_spans/turns" in result.error


def test_report_shows_what_came_out_beside_what_was_expected(chat_file):
    result = check_file(
        chat_file, dataclasses.replace(SPANS, models=("gpt-4o",)), TURNS, default_runner()
    )
    lines = report([result], unmatched=["gone.json"], full=False)
    assert "  spans: models" in lines
    assert "    got:  ('gpt-4o-2024-08-06',)" in lines
    assert "    want: ('gpt-4o',)" in lines
    assert "gone.json: expected, but no such file" in lines
    assert lines[-1].startswith("1 files: 0 match")


def test_only_the_two_example_layouts_are_listed(tmp_path):
    for name in ("openinference/a.json", "langfuse_framework_traces/b.trace.json", "x/c.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}", encoding="utf-8")
    (tmp_path / "langfuse_framework_traces" / "LICENSE").write_text("", encoding="utf-8")
    assert [p.name for p in example_files(tmp_path)] == ["b.trace.json", "a.json"]


def test_no_example_files_at_all_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FACTLEDGER_DATASETS", str(tmp_path))
    assert main([]) == 2
    assert "no example traces under" in capsys.readouterr().err


def test_every_hand_read_file_has_span_and_turn_expectations():
    assert set(spans.EXPECTED) == set(turns.EXPECTED)
