"""One behavioural suite over the three runners of the judging core: the in-agent span
processor, the service's pipeline judging in its own thread, and the pipeline judging in a
judge worker process. Each takes the same real OpenTelemetry SDK spans and must give the
same verdicts, versions and drop reasons; the service's are read back from its store
(embedded ClickHouse) and its /metrics counters."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from factledger.collector import otlp
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.judge.turn_judge import drop_count
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.store import Store
from factledger.processors.assembly.assembler import AssembledTurn
from factledger.processors.judging.drops import Drop
from factledger.processors.model import Verdict
from factledger.processors.runner import ValidationRunner, default_runner, default_validators
from factledger.processors.settings import ValidationSettings
from factledger.processors.span_processor import FactLedgerSpanProcessor, span_record_from_readable
from tests.integration.failing_judges import CrashingValidator, RaisingRunner
from tests.unit.sdk_turns import emit_agent_turn

GRACE = 30.0
"""Longer than any test: a turn is judged when a flush or the shutdown asks, never before."""
TENANT = "default"
PUSH_CLAIM = frozenset({"claim_without_tool", "fabricated_identifier"})
"""The findings of the turn `emit_agent_turn` emits."""


@dataclass(frozen=True)
class Seen:
    """A verdict as every runner can show it: which trace, which version, what was found."""

    trace_id: str
    version: int
    outcome: str
    kinds: frozenset[str]


class Runner(Protocol):
    """A runner of the judging core as this suite drives it."""

    def send(self, spans: Sequence[ReadableSpan]) -> None: ...

    def flush(self, *, judge_open_turns: bool) -> None: ...

    def shutdown(self) -> None: ...

    def judged(self) -> list[Seen]:
        """Every verdict given so far, each version once, in version order."""
        ...

    def drops(self) -> dict[str, int]:
        """What the core set aside, by reason name."""
        ...


class SpanProcessorRunner:
    """The span processor of the agent's own process, handed the SDK's ended spans."""

    def __init__(self, runner: ValidationRunner) -> None:
        self._seen: list[Seen] = []
        self._processor = FactLedgerSpanProcessor(
            self._deliver, runner, grace_seconds=GRACE, max_wait_seconds=4 * GRACE
        )

    def _deliver(self, assembled: AssembledTurn, verdict: Verdict) -> None:
        kinds = frozenset(str(kind) for kind in verdict.kinds)
        turn = assembled.turn
        self._seen.append(Seen(turn.trace_id, assembled.version, verdict.outcome, kinds))

    def send(self, spans: Sequence[ReadableSpan]) -> None:
        for span in spans:
            self._processor.on_end(span)

    def flush(self, *, judge_open_turns: bool) -> None:
        assert self._processor.force_flush(30_000, judge_open_turns=judge_open_turns)

    def shutdown(self) -> None:
        self._processor.shutdown()

    def judged(self) -> list[Seen]:
        return sorted(self._seen, key=lambda seen: (seen.trace_id, seen.version))

    def drops(self) -> dict[str, int]:
        return dict(self._processor.drops)


class PipelineRunner:
    """The service's pipeline, judging in its own thread or in a judge worker process;
    what it judged is read from the store, what it set aside from its counters."""

    def __init__(self, store: Store, wal: Path, runner: ValidationRunner, in_worker: bool) -> None:
        self._store = store
        self._metrics = Metrics()
        self._pipeline = Pipeline(
            store,
            WriteAheadLog(wal),
            runner,
            self._metrics,
            grace_seconds=GRACE,
            max_wait_seconds=4 * GRACE,
            judge_in_worker=in_worker,
        )
        self._pipeline.start()

    def send(self, spans: Sequence[ReadableSpan]) -> None:
        records = [span_record_from_readable(span, tenant=TENANT) for span in spans]
        self._pipeline.submit(otlp.JSON, TENANT, b"{}", records)

    def flush(self, *, judge_open_turns: bool) -> None:
        assert self._pipeline.force_flush(30, judge_open_turns=judge_open_turns)

    def shutdown(self) -> None:
        self._pipeline.shutdown(30)

    def judged(self) -> list[Seen]:
        turns, _ = self._store.list_turns(TENANT, limit=100)
        seen: list[Seen] = []
        for turn in turns:
            shown = self._store.get_turn(TENANT, turn["turn_id"])
            assert shown is not None
            seen.extend(
                Seen(turn["trace_id"], v["version"], v["verdict"], frozenset(v["kinds"]))
                for v in shown["versions"]
            )
        return sorted(seen, key=lambda s: (s.trace_id, s.version))

    def drops(self) -> dict[str, int]:
        found: dict[str, int] = {}
        for reason in Drop:
            if reason is Drop.CALLBACK_ERROR:
                continue  # the service has no callback; turn_failed owns their counter
            count = drop_count(reason)
            value = int(self._metrics.value(count.name, **dict(count.labels)))
            if value:
                found[reason.value] = value
        return found


MakeRunner = Callable[[ValidationRunner], Runner]


@pytest.fixture(params=["span-processor", "thread", "worker-process"])
def make_runner(
    request: pytest.FixtureRequest, store: Store, tmp_path: Path
) -> Iterator[MakeRunner]:
    made: list[Runner] = []

    def make(runner: ValidationRunner) -> Runner:
        if request.param == "span-processor":
            made.append(SpanProcessorRunner(runner))
        else:
            in_worker = request.param == "worker-process"
            made.append(PipelineRunner(store, tmp_path / "wal", runner, in_worker))
        return made[-1]

    yield make
    for runner in made:
        runner.shutdown()


def agent_turn() -> list[ReadableSpan]:
    """The ended SDK spans of one agent turn, in the order they ended (the agent's last)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "fixer-svc"}), shutdown_on_exit=False
    )
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    emit_agent_turn(provider.get_tracer("test"))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def trace_of(spans: Sequence[ReadableSpan]) -> str:
    context = spans[0].context
    assert context is not None
    return format(context.trace_id, "032x")


def test_a_flush_judges_open_turns_and_an_ordinary_one_waits_for_the_grace(
    make_runner: MakeRunner,
) -> None:
    runner = make_runner(default_runner())
    spans = agent_turn()
    runner.send(spans)
    runner.flush(judge_open_turns=False)
    assert runner.judged() == []
    runner.flush(judge_open_turns=True)
    assert runner.judged() == [Seen(trace_of(spans), 1, "reject", PUSH_CLAIM)]
    assert runner.drops() == {}


def test_resent_spans_are_ignored_and_counted_as_duplicates(make_runner: MakeRunner) -> None:
    runner = make_runner(default_runner())
    spans = agent_turn()
    runner.send(spans)
    runner.send(spans)
    runner.flush(judge_open_turns=True)
    runner.send(spans[:1])  # after the verdict too: no second version
    runner.flush(judge_open_turns=True)
    assert runner.judged() == [Seen(trace_of(spans), 1, "reject", PUSH_CLAIM)]
    assert runner.drops() == {Drop.DUPLICATE.value: len(spans) + 1}


def test_a_late_span_gives_the_turn_a_second_version(make_runner: MakeRunner) -> None:
    runner = make_runner(default_runner())
    *calls, agent = agent_turn()
    runner.send(calls)
    runner.flush(judge_open_turns=True)
    runner.send([agent])
    runner.flush(judge_open_turns=True)
    trace = trace_of(calls)
    assert runner.judged() == [
        Seen(trace, 1, "reject", PUSH_CLAIM),
        Seen(trace, 2, "reject", PUSH_CLAIM),
    ]
    assert runner.drops() == {}


def test_a_crashing_validator_gives_a_validator_error_and_the_other_findings_stand(
    make_runner: MakeRunner,
) -> None:
    suite = [*default_validators(ValidationSettings()), CrashingValidator()]
    runner = make_runner(ValidationRunner(suite))
    spans = agent_turn()
    runner.send(spans)
    runner.flush(judge_open_turns=True)
    assert runner.judged() == [Seen(trace_of(spans), 1, "reject", PUSH_CLAIM | {"validator_error"})]
    assert runner.drops() == {}


def test_a_runner_that_raises_costs_the_turn_and_is_counted_as_turn_failed(
    make_runner: MakeRunner,
) -> None:
    runner = make_runner(RaisingRunner(default_validators(ValidationSettings())))
    runner.send(agent_turn())
    runner.flush(judge_open_turns=True)
    assert runner.judged() == []
    assert runner.drops() == {Drop.TURN_FAILED.value: 1}


def test_shutdown_judges_open_turns_once_and_is_idempotent(make_runner: MakeRunner) -> None:
    runner = make_runner(default_runner())
    spans = agent_turn()
    runner.send(spans)
    runner.shutdown()
    runner.shutdown()
    assert runner.judged() == [Seen(trace_of(spans), 1, "reject", PUSH_CLAIM)]
    assert runner.drops() == {}
