"""TurnAssembler: when calls that each form their own trace are joined into one turn.

A later call joins an earlier one only within one tenant and service, close in time, and
on evidence that it continues that very call (its input carries the earlier call's
output, or tool results answering its calls, or the same conversation id and request).
Alike content is no such evidence, and a trace with an agent span is a turn of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from factledger.processors.assembly.assembler import AssembledTurn, TurnAssembler
from factledger.processors.assembly.joins import JOIN_SLACK_SECONDS
from factledger.processors.normalize.base import (
    AgentInvocation,
    ChatMessage,
    LlmStep,
    NormalizedSpan,
    ToolCallPart,
)
from factledger.processors.spans import SpanRecord

SERVICE = "support-agent"
OTHER_SERVICE = "billing-agent"
SECOND_NS = 1_000_000_000
CALL_ID = "call_Kud0j0DxWSmLzv9W5m6qVqXn"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def carried(span: SpanRecord) -> NormalizedSpan | None:
    value = span.attributes.get("value")
    assert value is None or isinstance(value, LlmStep | AgentInvocation)
    return value


@dataclass(frozen=True)
class Sent:
    """One span as some service sent it."""

    trace: str
    value: NormalizedSpan
    service: str = SERVICE
    tenant: str = "default"
    parent: str = ""

    def record(self) -> SpanRecord:
        return SpanRecord(
            trace_id=self.trace * 32,
            span_id=self.value.span_id,
            name="span",
            parent_span_id=self.parent,
            start_time_unix_nano=self.value.start_time_unix_nano,
            end_time_unix_nano=self.value.end_time_unix_nano,
            attributes={"value": self.value},
            resource_attributes={"service.name": self.service},
            tenant=self.tenant,
        )


def system(text: str) -> ChatMessage:
    return ChatMessage("system", text)


def user(text: str) -> ChatMessage:
    return ChatMessage("user", text)


def says(text: str) -> ChatMessage:
    return ChatMessage("assistant", text)


def asks(name: str, call_id: str = CALL_ID) -> ChatMessage:
    return ChatMessage("assistant", tool_calls=(ToolCallPart(call_id, name, "{}"),))


def result(text: str, call_id: str = CALL_ID) -> ChatMessage:
    return ChatMessage("tool", text, tool_call_id=call_id)


def call(
    span_id: str,
    inputs: Sequence[ChatMessage],
    output: ChatMessage | None,
    *,
    at: float = 100.0,
    conversation_id: str = "",
) -> LlmStep:
    """An LLM call that starts `at` seconds and lasts one second."""
    return LlmStep(
        span_id,
        input_messages=tuple(inputs),
        output_messages=() if output is None else (output,),
        start_time_unix_nano=int(at * SECOND_NS),
        end_time_unix_nano=int((at + 1) * SECOND_NS),
        conversation_id=conversation_id,
    )


OPENING = (system("You are Acme's support agent."), user("What is the status of order W42?"))
LOOKUP = asks("get_order")
FOUND = result('{"status": "shipped"}')
ANSWER = says("Order W42 has shipped.")
HISTORY = (*OPENING, LOOKUP, FOUND)
FIRST = call("s1", OPENING, LOOKUP)
SECOND = call("s2", HISTORY, ANSWER, at=103)


def later(seconds: float) -> LlmStep:
    """SECOND, starting `seconds` after FIRST ended."""
    return call("s2", HISTORY, ANSWER, at=101 + seconds)


def assembler(clock: FakeClock | None = None) -> TurnAssembler:
    return TurnAssembler(clock or FakeClock(), normalizer=carried)


def turns_of(spans: Sequence[Sent]) -> list[tuple[str, ...]]:
    asm = assembler()
    for sent in spans:
        asm.add(sent.record())
    return sorted(t.span_ids for t in asm.flush_all())


JOINED = [("s1", "s2")]
APART = [("s1",), ("s2",)]
WINDOW = 60.0 + JOIN_SLACK_SECONDS  # the default maximum wait plus the slack


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        pytest.param([Sent("a", FIRST), Sent("b", SECOND)], JOINED, id="continuation-joins"),
        pytest.param(
            [Sent("a", FIRST), Sent("b", SECOND, service=OTHER_SERVICE)],
            APART,
            id="same-history-in-another-service-stays-apart",
        ),
        pytest.param(
            [Sent("a", FIRST), Sent("b", SECOND, tenant="globex")],
            APART,
            id="same-history-of-another-tenant-stays-apart",
        ),
        pytest.param(
            [Sent("a", FIRST), Sent("b", later(WINDOW - 10))],
            JOINED,
            id="continuation-after-a-long-tool-run-joins",
        ),
        pytest.param(
            [Sent("a", FIRST), Sent("b", later(WINDOW + 10))],
            APART,
            id="call-past-the-join-window-is-a-new-request",
        ),
        pytest.param(
            [Sent("b", later(WINDOW + 10)), Sent("a", FIRST)],
            APART,
            id="earlier-call-arriving-late-past-the-window-stays-apart",
        ),
        pytest.param(
            [Sent("a", call("s1", HISTORY, None)), Sent("b", SECOND)],
            APART,
            id="equal-history-without-the-earlier-output-is-no-evidence",
        ),
        pytest.param(
            [
                Sent("a", call("s1", OPENING, asks("get_order", call_id=""))),
                Sent(
                    "b",
                    call(
                        "s2",
                        (*OPENING, asks("cancel_order", call_id=""), result("ok", call_id="")),
                        says("Cancelled."),
                        at=103,
                    ),
                ),
            ],
            APART,
            id="id-less-call-of-another-tool-is-no-evidence",
        ),
        pytest.param(
            [
                Sent("a", call("s1", OPENING, asks("get_order", call_id=""))),
                Sent(
                    "b",
                    call(
                        "s2",
                        (*OPENING, asks("get_order", call_id=""), result("shipped", call_id="")),
                        ANSWER,
                        at=103,
                    ),
                ),
            ],
            JOINED,
            id="id-less-call-carried-on-joins",
        ),
        pytest.param(
            [
                Sent("a", call("s1", OPENING, LOOKUP, conversation_id="conv-7")),
                Sent("b", call("s2", HISTORY, ANSWER, at=103, conversation_id="conv-7")),
            ],
            JOINED,
            id="same-conversation-and-request-joins",
        ),
        pytest.param(
            [
                Sent("a", call("s1", OPENING, LOOKUP, conversation_id="conv-7")),
                Sent(
                    "b",
                    call("s2", HISTORY, ANSWER, at=103, conversation_id="conv-7"),
                    service=OTHER_SERVICE,
                ),
            ],
            APART,
            id="same-conversation-id-in-another-service-stays-apart",
        ),
        pytest.param(
            [
                Sent("a", call("s1", OPENING, LOOKUP, conversation_id="conv-7")),
                Sent("b", call("s2", HISTORY, ANSWER, at=3_700, conversation_id="conv-7")),
            ],
            APART,
            id="same-conversation-and-request-an-hour-later-stays-apart",
        ),
        pytest.param(
            [Sent("a", FIRST), Sent("b", call("s2", (FOUND,), ANSWER, at=103))],
            JOINED,
            id="results-answering-its-calls-join",
        ),
        pytest.param(
            [
                Sent("a", FIRST),
                Sent("b", call("s2", (FOUND,), ANSWER, at=103), service=OTHER_SERVICE),
            ],
            APART,
            id="results-for-the-same-call-id-in-another-service-stay-apart",
        ),
        pytest.param(
            [Sent("a", FIRST), Sent("b", call("s2", (FOUND,), ANSWER, at=3_700))],
            APART,
            id="results-for-the-same-call-id-an-hour-later-stay-apart",
        ),
    ],
)
def test_per_call_traces_join_only_on_evidence_within_one_service_and_window(spans, expected):
    assert turns_of(spans) == expected


def test_calls_without_span_times_join_only_when_they_arrive_close_together():
    clock = FakeClock()
    asm = assembler(clock)
    timeless = [LlmStep("s1", OPENING, (LOOKUP,)), LlmStep("s2", HISTORY, (ANSWER,))]
    asm.add(Sent("a", timeless[0]).record())
    clock.now = 30.0
    asm.add(Sent("b", timeless[1]).record())
    assert asm.open_count == 1
    clock.now = 4_000.0
    asm.add(Sent("c", LlmStep("s3", HISTORY, (says("Shipped."),))).record())
    assert asm.open_count == 2


# --- alike content from unrelated sessions ------------------------------------------------------

# Two sessions sent the same words and got the same words back (tool calls without ids,
# as Gemini writes them): nothing says which later call continues which earlier one.
SAME_CALL = asks("get_order", call_id="")
SAME_HISTORY = (*OPENING, SAME_CALL, result('{"status": "shipped"}', call_id=""))
SESSIONS = {
    "a1": Sent("a", call("a1", OPENING, SAME_CALL)),
    "b1": Sent("b", call("b1", OPENING, SAME_CALL, at=100.5)),
    "a2": Sent("c", call("a2", SAME_HISTORY, ANSWER, at=103)),
    "b2": Sent("d", call("b2", SAME_HISTORY, ANSWER, at=103.5)),
}


@pytest.mark.parametrize(
    "order",
    [("a1", "b1", "a2", "b2"), ("a1", "a2", "b1", "b2"), ("b2", "a2", "b1", "a1")],
    ids=["interleaved", "one-session-after-the-other", "last-calls-first"],
)
def test_identical_content_from_two_sessions_never_shares_a_turn(order):
    turns = turns_of([SESSIONS[name] for name in order])
    assert sorted(s for t in turns for s in t) == sorted(SESSIONS)
    assert all(len({span_id[0] for span_id in t}) == 1 for t in turns), turns


# --- a trace with an agent span is a turn of its own -----------------------------------------

AGENT_SPAN = AgentInvocation(
    "g2", "support", start_time_unix_nano=102 * SECOND_NS, end_time_unix_nano=105 * SECOND_NS
)
AGENT_RUN = (Sent("b", SECOND, parent="g2"), Sent("b", AGENT_SPAN))


def summary(turns: Sequence[AssembledTurn]) -> list[tuple[tuple[str, ...], int]]:
    return sorted((t.span_ids, t.version) for t in turns)


@pytest.mark.parametrize("agent_first", [False, True], ids=["agent-span-last", "agent-span-first"])
def test_agent_run_matching_an_agentless_call_is_judged_on_its_own(agent_first):
    # The agent-less call waits for its tool results; the agent run is done and must not
    # wait with it (nor ever become part of its turn).
    asm = assembler()
    asm.add(Sent("a", FIRST).record())
    for sent in reversed(AGENT_RUN) if agent_first else AGENT_RUN:
        asm.add(sent.record())
    assert summary(asm.due(2.0)) == [(("g2", "s2"), 1)]
    assert summary(asm.flush_all()) == [(("s1",), 1)]


def test_agentless_call_continuing_an_agent_run_does_not_join_it():
    # The agent run ended on a tool call; a call of another trace carries it on and
    # waits for tools itself. The agent run is judged at once, alone.
    asm = assembler()
    asm.add(Sent("b", call("s2", OPENING, LOOKUP, at=102), parent="g2").record())
    asm.add(Sent("b", AGENT_SPAN).record())
    tracking = asks("get_tracking", call_id="call_3c1Bq7xVn9PzLmW2")
    asm.add(Sent("c", call("s3", HISTORY, tracking, at=106)).record())
    assert summary(asm.due(2.0)) == [(("g2", "s2"), 1)]
    assert summary(asm.flush_all()) == [(("s3",), 1)]


def test_agent_span_after_the_verdict_takes_its_trace_out_of_the_joined_turn():
    clock = FakeClock()
    asm = assembler(clock)
    asm.add(Sent("a", FIRST).record())
    asm.add(AGENT_RUN[0].record())  # its call arrives first and continues FIRST
    assert summary(asm.due(2.0)) == [(("s1", "s2"), 1)]
    clock.now = 5.0
    asm.add(AGENT_RUN[1].record())
    assert summary(asm.due(7.0)) == [(("g2", "s2"), 1)]
    assert summary(asm.flush_all()) == [(("s1",), 2)]  # waits for its tools again


def test_same_run_sent_by_four_services_gives_four_turns_each_of_one_service():
    # An evaluation prompt sent to four agents: the same messages, even the same call id.
    services = ("support-agent", "billing-agent", "returns-agent", "shipping-agent")
    asm = assembler()
    for i, service in enumerate(services):
        first = call(f"{i}1", OPENING, LOOKUP, at=100 + i)
        second = call(f"{i}2", HISTORY, ANSWER, at=103 + i)
        asm.add(Sent(f"{i}", first, service=service).record())
        asm.add(Sent(f"{i + 4}", second, service=service).record())
    turns = asm.flush_all()
    assert sorted((t.service, t.span_ids) for t in turns) == sorted(
        (service, (f"{i}1", f"{i}2")) for i, service in enumerate(services)
    )
