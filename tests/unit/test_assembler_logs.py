"""TurnAssembler: GenAI content written as log records joins the span it names, whichever
arrives first (real GenAI normalizer, fake clock)."""

from __future__ import annotations

import json

import pytest

from factledger.collector.otlp_logs import log_span
from factledger.processors.assembly.assembler import AssembledTurn, TurnAssembler
from factledger.processors.spans import SpanRecord

TRACE = "1" * 32
CHAT = "c" * 16
T0 = 1_700_000_000_000_000_000


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def chat_span(span_id: str = CHAT, trace: str = TRACE) -> SpanRecord:
    """A GenAI chat span as Semantic Kernel writes it: no content of its own."""
    return SpanRecord(
        trace_id=trace,
        span_id=span_id,
        name="chat gpt-test",
        kind=3,
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 1_000,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-test",
        },
        resource_attributes={"service.name": "sk-app"},
    )


def log(event: str, body: object, *, at: int = 10, span_id: str = CHAT) -> SpanRecord:
    return log_span(
        trace_id=TRACE,
        span_id=span_id,
        time_unix_nano=T0 + at,
        event_name="",
        severity_number=9,
        severity_text="INFO",
        attributes={"event.name": event, "gen_ai.system": "openai"},
        body=json.dumps(body),
        resource={"service.name": "sk-app"},
        scope=("semantic_kernel", ""),
        tenant="default",
    )


def user_log(text: str = "Push my branch.") -> SpanRecord:
    return log("gen_ai.user.message", {"role": "user", "content": text}, at=10)


def choice_log(text: str = "Pushed.") -> SpanRecord:
    return log(
        "gen_ai.choice",
        {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"},
        at=20,
    )


def make(clock: FakeClock) -> TurnAssembler:
    return TurnAssembler(clock, grace_seconds=1.0, max_wait_seconds=30.0)


def settle(asm: TurnAssembler, clock: FakeClock, seconds: float = 2.0) -> list[AssembledTurn]:
    clock.now += seconds
    return asm.due()


ORDERS = {
    "span first": ["span", "user", "choice"],
    "logs first": ["user", "choice", "span"],
    "between": ["user", "span", "choice"],
}


@pytest.mark.parametrize("order", list(ORDERS), ids=list(ORDERS))
def test_log_content_joins_its_span_in_either_order(order: str) -> None:
    clock = FakeClock()
    asm = make(clock)
    items = {"span": chat_span(), "user": user_log(), "choice": choice_log()}
    for name in ORDERS[order]:
        asm.add(items[name])
        clock.now += 0.1
    [turn] = settle(asm, clock)
    assert turn.turn.user_message == "Push my branch."
    assert turn.turn.reply == "Pushed."
    assert turn.version == 1
    # the log spans are among the spans the verdict judged
    assert set(turn.span_ids) == {CHAT, items["user"].span_id, items["choice"].span_id}
    assert not asm.drops


def test_a_late_log_reopens_a_judged_turn_and_gives_it_the_next_version() -> None:
    clock = FakeClock()
    asm = make(clock)
    asm.add(chat_span())
    asm.add(user_log())
    [first] = settle(asm, clock)
    assert (first.turn.user_message, first.turn.reply, first.version) == ("Push my branch.", "", 1)
    clock.now += 120  # minutes later
    asm.add(choice_log())
    [second] = settle(asm, clock)
    assert second.turn.turn_id == first.turn.turn_id
    assert second.version == 2
    assert second.turn.reply == "Pushed."


def test_a_resent_log_is_a_duplicate_and_changes_nothing() -> None:
    clock = FakeClock()
    asm = make(clock)
    asm.add(chat_span())
    asm.add(user_log())
    asm.add(choice_log())
    [turn] = settle(asm, clock)
    asm.add(choice_log())  # the same record sent again: the same log span id
    assert settle(asm, clock) == []
    assert asm.drops == {"duplicate": 1}
    assert turn.version == 1


def test_a_log_for_a_span_never_seen_does_not_hold_the_turn_and_is_counted() -> None:
    clock = FakeClock()
    asm = TurnAssembler(clock, grace_seconds=1.0, max_wait_seconds=30.0, max_completed_groups=0)
    asm.add(chat_span())
    asm.add(user_log())
    asm.add(choice_log())
    asm.add(log("gen_ai.user.message", {"content": "other"}, span_id="d" * 16))
    [turn] = settle(asm, clock)  # judged at the grace, not at the max wait
    assert turn.turn.reply == "Pushed."
    assert asm.drops == {"log_without_span": 1}


def test_logs_alone_wait_no_longer_than_the_max_wait() -> None:
    clock = FakeClock()
    asm = TurnAssembler(clock, grace_seconds=1.0, max_wait_seconds=30.0, max_completed_groups=0)
    asm.add(user_log())
    assert settle(asm, clock) == []
    assert asm.open_count == 1
    assert settle(asm, clock, 31) == []
    assert asm.open_count == 0
    assert asm.drops == {"log_without_span": 1}


def test_a_log_held_past_the_judging_of_its_group_still_joins_when_its_span_comes() -> None:
    clock = FakeClock()
    asm = make(clock)
    asm.add(user_log())
    asm.add(choice_log())
    settle(asm, clock, 31)  # the max wait: nothing to judge yet
    asm.add(chat_span())  # minutes late
    [turn] = settle(asm, clock)
    assert (turn.turn.user_message, turn.turn.reply) == ("Push my branch.", "Pushed.")


def test_held_logs_and_events_per_span_are_bounded() -> None:
    clock = FakeClock()
    asm = TurnAssembler(
        clock, grace_seconds=1.0, max_wait_seconds=30.0, max_held_logs=2, max_log_events=3
    )
    for i in range(3):
        asm.add(log("gen_ai.user.message", {"content": f"m{i}"}, at=i))
    assert asm.drops == {"held_logs_full": 1}
    asm.add(chat_span())
    for i in range(3, 5):
        asm.add(log("gen_ai.user.message", {"content": f"m{i}"}, at=i))
    assert asm.drops == {"held_logs_full": 1, "log_events_full": 1}
    [turn] = settle(asm, clock)
    assert turn.turn.user_message == "m3"


def test_a_log_of_an_unreadable_shape_costs_only_itself() -> None:
    clock = FakeClock()
    asm = make(clock)
    asm.add(chat_span())
    asm.add(user_log())
    asm.add(log("gen_ai.choice", ["not", "a", "message"], at=15))
    asm.add(log("gen_ai.choice", {"message": 42}, at=16))
    asm.add(choice_log())
    [turn] = settle(asm, clock)
    assert (turn.turn.user_message, turn.turn.reply) == ("Push my branch.", "Pushed.")


def _call_log(trace: str, span_id: str, event: str, body: object, at: int) -> SpanRecord:
    return log_span(
        trace_id=trace,
        span_id=span_id,
        time_unix_nano=T0 + at,
        event_name=event,
        severity_number=0,
        severity_text="",
        attributes={},
        body=body,
        resource={"service.name": "sk-app"},
        scope=("tests", ""),
        tenant="default",
    )


def test_per_call_traces_whose_content_came_as_logs_join_into_one_turn() -> None:
    """Each LLM call its own trace (no agent span), every message a log record: the second
    call answers the first's tool call, whichever way its logs and span arrive."""
    first, second = "a" * 32, "b" * 32
    ask = {"role": "user", "content": "Push branch main of acme/x."}
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "git_push", "arguments": "{}"}}
    ]
    clock = FakeClock()
    asm = make(clock)
    asm.add(chat_span("1" * 16, first))
    asm.add(_call_log(first, "1" * 16, "gen_ai.user.message", ask, 1))
    asm.add(
        _call_log(
            first,
            "1" * 16,
            "gen_ai.choice",
            {"message": {"role": "assistant", "tool_calls": calls}, "finish_reason": "tool_calls"},
            2,
        )
    )
    clock.now += 0.1
    for at, (event, body) in enumerate(
        [
            ("gen_ai.user.message", ask),
            ("gen_ai.assistant.message", {"role": "assistant", "tool_calls": calls}),
            ("gen_ai.tool.message", {"role": "tool", "content": "pushed", "id": "call_1"}),
            ("gen_ai.choice", {"message": {"role": "assistant", "content": "Pushed."}}),
        ]
    ):
        asm.add(_call_log(second, "2" * 16, event, body, 10 + at))
    later = chat_span("2" * 16, second)
    asm.add(
        SpanRecord(
            **{
                **later.__dict__,
                "start_time_unix_nano": T0 + 2_000,
                "end_time_unix_nano": T0 + 3_000,
            }
        )
    )
    [turn] = settle(asm, clock)
    assert (turn.turn.user_message, turn.turn.reply) == ("Push branch main of acme/x.", "Pushed.")
    assert [c.name for c in turn.turn.tool_calls] == ["git_push"]
