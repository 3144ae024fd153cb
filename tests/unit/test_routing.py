"""Routing spans to judge workers: a trace never splits, a conversation of per-call traces
meets in one worker, and routing by trace id alone would split it. How many workers is
a setting."""

from __future__ import annotations

import pytest

from factledger.collector.judge.routing import Router, route_key, worker_for
from factledger.collector.settings import ServiceSettings
from factledger.processors.errors import ConfigError
from factledger.processors.normalize.values import CONVERSATION_KEYS
from factledger.processors.spans import SpanRecord

WORKERS = 2


def span(
    trace: int, index: int = 0, *, conversation: str = "", key: str = "gen_ai.conversation.id"
) -> SpanRecord:
    attributes = {key: conversation} if conversation else {}
    return SpanRecord(
        trace_id=f"{trace:032x}",
        span_id=f"{trace:08x}{index:08x}",
        name=f"span {index}",
        attributes=attributes,
    )


class ByTraceOnly(Router):
    """What routing by trace id alone would do (the Collector's default `traceID` key)."""

    def key_of(self, tenant: str, trace_id: str, spans: object) -> str:
        return route_key(tenant, "", trace_id)


def _workers_of(parts: list[list[SpanRecord]]) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for worker, part in enumerate(parts):
        for each in part:
            found.setdefault(each.trace_id, set()).add(worker)
    return found


# Per-call traces 1..8 of one conversation: their trace ids alone lead to both workers.
PER_CALL_TRACES = range(1, 9)


def test_per_call_traces_of_one_conversation_meet_in_one_worker() -> None:
    router = Router(WORKERS)
    batches = [[span(trace, conversation="conv-7")] for trace in PER_CALL_TRACES]
    workers = set()
    for batch in batches:
        parts, left_out = router.route(batch)
        assert left_out == 0
        workers |= {w for ws in _workers_of(parts).values() for w in ws}
    assert len(workers) == 1


def test_routing_by_trace_id_alone_would_split_that_conversation() -> None:
    router = ByTraceOnly(WORKERS)
    workers = set()
    for trace in PER_CALL_TRACES:
        parts, _ = router.route([span(trace, conversation="conv-7")])
        workers |= {w for ws in _workers_of(parts).values() for w in ws}
    assert workers == {0, 1}


@pytest.mark.parametrize("key", CONVERSATION_KEYS)
def test_every_conversation_attribute_the_normalizers_read_routes(key: str) -> None:
    router = Router(WORKERS)
    by_key = {
        next(i for i, part in enumerate(router.route([s])[0]) if part)
        for s in (span(trace, conversation="conv-7", key=key) for trace in PER_CALL_TRACES)
    }
    assert by_key == {worker_for(route_key("default", "conv-7", ""), WORKERS)}


def test_a_trace_whose_agent_span_alone_carries_the_id_stays_whole() -> None:
    """The agent span carries the conversation id, its LLM and tool spans do not; the
    trace goes where the id says, children included, also those that come later."""
    router = Router(WORKERS)
    trace = next(t for t in range(1, 100) if _by_trace(t) != _by_conversation("conv-3"))
    first = [span(trace, 1), span(trace, 2), span(trace, 0, conversation="conv-3")]
    parts, _ = router.route(first)
    assert _workers_of(parts) == {f"{trace:032x}": {_by_conversation("conv-3")}}
    late, _ = router.route([span(trace, 3)])  # a late tool span, no conversation id
    assert _workers_of(late) == {f"{trace:032x}": {_by_conversation("conv-3")}}


def test_a_trace_first_seen_without_an_id_keeps_its_trace_route() -> None:
    """Decided once per trace: an id that comes in a later batch does not move the trace
    (its first spans are already in the other worker)."""
    router = Router(WORKERS)
    trace = next(t for t in range(1, 100) if _by_trace(t) != _by_conversation("conv-3"))
    router.route([span(trace, 1)])
    parts, _ = router.route([span(trace, 0, conversation="conv-3")])
    assert _workers_of(parts) == {f"{trace:032x}": {_by_trace(trace)}}


def test_the_same_conversation_id_in_two_tenants_is_two_keys() -> None:
    assert route_key("acme", "conv-7", "") != route_key("globex", "conv-7", "")
    assert route_key("acme", "", "ab") != route_key("acme", "ab", "")


def test_traces_routed_to_another_worker_are_left_out_of_a_read_back_for_one() -> None:
    """Recovery after one worker restarts: traces the other worker holds are left to it,
    traces not routed yet are routed wherever they go."""
    router = Router(WORKERS)
    held = {t: _by_trace(t) for t in range(1, 7)}
    for trace in held:
        router.route([span(trace)])
    unknown = 50
    read_back = [span(t, 1) for t in held] + [span(unknown, 1)]
    parts, left_out = router.route(read_back, only={0})
    routed = _workers_of(parts)
    assert left_out == sum(1 for worker in held.values() if worker != 0)
    assert routed == {
        **{f"{t:032x}": {0} for t, worker in held.items() if worker == 0},
        f"{unknown:032x}": {_by_trace(unknown)},
    }


def test_routes_are_remembered_up_to_the_bound() -> None:
    router = Router(WORKERS, max_traces=2)
    for trace in (1, 2, 3):
        router.route([span(trace, conversation=f"conv-{trace}")])
    assert len(router) == 2
    # Trace 1 is forgotten: a late span without its conversation id goes by trace id.
    parts, _ = router.route([span(1, 5)])
    assert _workers_of(parts) == {f"{1:032x}": {_by_trace(1)}}


def test_one_worker_takes_everything() -> None:
    parts, left_out = Router(1).route([span(t, conversation=f"c{t}") for t in range(5)])
    assert left_out == 0 and len(parts) == 1 and len(parts[0]) == 5


def test_the_hash_is_the_same_in_every_process() -> None:
    """Not Python's `hash` (salted per process): a fixed function of the key."""
    assert worker_for("c\x00default\x00conv-1", 1_000_003) == 885_913


def _by_trace(trace: int) -> int:
    return worker_for(route_key("default", "", f"{trace:032x}"), WORKERS)


def _by_conversation(conversation: str) -> int:
    return worker_for(route_key("default", conversation, ""), WORKERS)


@pytest.mark.parametrize(("raw", "workers"), [(None, 1), ("", 1), ("2", 2), ("64", 64)], ids=str)
def test_the_number_of_judge_workers_is_a_setting(raw: str | None, workers: int) -> None:
    env = {"FACTLEDGER_API_OPEN": "1"}
    if raw is not None:
        env["FACTLEDGER_JUDGE_WORKERS"] = raw
    assert ServiceSettings.from_env(env).judge_workers == workers


@pytest.mark.parametrize("raw", ["0", "-1", "two", "65"])
def test_a_bad_number_of_judge_workers_stops_start_up_naming_it(raw: str) -> None:
    with pytest.raises(ConfigError, match="FACTLEDGER_JUDGE_WORKERS"):
        ServiceSettings.from_env({"FACTLEDGER_API_OPEN": "1", "FACTLEDGER_JUDGE_WORKERS": raw})
