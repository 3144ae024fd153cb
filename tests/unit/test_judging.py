"""TurnJudge: stored spans in, turn and finding rows and metric counts out, on a fake clock;
its results survive pickling (they cross from the worker process)."""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import pytest

from factledger.collector import otlp
from factledger.collector.judge.turn_judge import Count, Judged, TurnJudge, drop_count
from factledger.collector.rows import FINDING_COLUMNS, TURN_COLUMNS
from factledger.processors.judging.drops import Drop
from factledger.processors.model import Turn, Verdict
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord
from tests.integration.otlp_turns import turn_request

GRACE = 2.0


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _spans(indexes: Sequence[int], model: str = "gpt-4o") -> list[SpanRecord]:
    spans: list[SpanRecord] = []
    for index in indexes:
        body, _ = turn_request(index, hallucinate=index % 2 == 0, model=model)
        spans.extend(otlp.decode_request(body, otlp.JSON).spans)
    return spans


def _judge(clock: FakeClock) -> TurnJudge:
    return TurnJudge(default_runner(), grace_seconds=GRACE, max_wait_seconds=60, clock=clock)


def _counts(judged: Judged) -> dict[tuple[str, tuple[tuple[str, str], ...]], int]:
    return {(c.name, c.labels): c.amount for c in judged.counts}


def _verdicts(judged: Judged) -> dict[str, str]:
    trace, verdict = TURN_COLUMNS.index("TraceId"), TURN_COLUMNS.index("Verdict")
    return {row[trace]: row[verdict] for row in judged.turn_rows}


@pytest.mark.parametrize(
    ("flush", "advance", "judged_now"),
    [
        pytest.param(False, 0.0, False, id="within-the-grace-period-nothing-is-judged"),
        pytest.param(False, GRACE + 0.1, True, id="after-the-grace-period-due-turns-are-judged"),
        pytest.param(True, 0.0, True, id="a-flush-judges-open-turns-at-once"),
    ],
)
def test_turns_are_judged_when_due_or_flushed(
    flush: bool, advance: float, judged_now: bool
) -> None:
    clock = FakeClock()
    judge = _judge(clock)
    spans = _spans([1, 2, 3])
    taken = judge.judge(spans)
    assert (taken.assembled, taken.turn_rows, taken.open_turns) == (len(spans), [], 3)
    clock.now += advance
    judged = judge.judge([], flush=flush)
    assert judged.flushed is flush
    if not judged_now:
        assert judged.empty and judged.open_turns == 3
        return
    assert judged.open_turns == 0
    assert _verdicts(judged) == {
        f"{1:032x}": "pass",
        f"{2:032x}": "reject",
        f"{3:032x}": "pass",
    }
    assert all(len(row) == len(TURN_COLUMNS) for row in judged.turn_rows)
    assert judged.finding_rows and all(len(r) == len(FINDING_COLUMNS) for r in judged.finding_rows)
    counts = _counts(judged)
    validated = "factledger_turns_validated_total"
    assert counts[(validated, (("verdict", "pass"), ("model", "gpt-4o")))] == 2
    assert counts[(validated, (("verdict", "reject"), ("model", "gpt-4o")))] == 1
    assert sum(n for (name, _), n in counts.items() if name == "factledger_findings_total") == len(
        judged.finding_rows
    )


def test_a_resent_span_is_counted_as_an_assembly_drop() -> None:
    judge = _judge(FakeClock())
    spans = _spans([7])
    judge.judge(spans)
    again = judge.judge(spans[:1])
    assert again.assembled == 1
    assert _counts(again) == {("factledger_assembly_drops_total", (("reason", "duplicate"),)): 1}


def test_model_labels_are_bounded() -> None:
    judge = _judge(FakeClock())
    spans = [s for i in range(1, 203) for s in _spans([2 * i - 1], model=f"model-{i}")]
    judged = judge.judge(spans, flush=True)
    models = {dict(c.labels)["model"] for c in judged.counts if "model" in dict(c.labels)}
    assert len(models) == 201 and "other" in models


def test_a_result_survives_pickling() -> None:
    judge = _judge(FakeClock())
    judged = judge.judge(_spans([4]), flush=True)
    assert judged.turn_rows and judged.counts
    assert pickle.loads(pickle.dumps(judged)) == judged
    assert Count("x") == Count("x", 1, ())


def test_a_trace_that_no_reader_understands_is_counted_and_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Spans of an instrumentation FactLedger cannot read (only its own attributes) give
    no turn: after the maximum wait the trace is counted by service and scope, and the
    service is named in one warning, however many such traces follow."""
    clock = FakeClock()
    judge = _judge(clock)
    unreadable = [
        SpanRecord(
            trace_id=f"{n:032x}",
            span_id=f"{n:016x}",
            name="haystack.pipeline.run",
            attributes={"haystack.pipeline.input_data": "{}"},
            resource_attributes={"service.name": "rag-app"},
            scope_name="haystack",
        )
        for n in (1, 2)
    ]
    readable_later = _spans([3])
    first = readable_later[0]
    opener = SpanRecord(
        trace_id=first.trace_id,
        span_id="f" * 16,
        name="haystack.component.run",
        resource_attributes={"service.name": "rag-app"},
        scope_name="haystack",
    )
    judge.judge([*unreadable, opener])
    judge.judge(readable_later)
    clock.now = 61
    with caplog.at_level("WARNING", logger="factledger.judging"):
        counted = judge.judge([]).counts
        clock.now = 200
        judge.judge(
            [
                SpanRecord(
                    trace_id="9" * 32,
                    span_id="9" * 16,
                    name="x",
                    resource_attributes={"service.name": "rag-app"},
                    scope_name="haystack",
                )
            ]
        )
        clock.now = 300
        again = judge.judge([]).counts
    labels = (("service", "rag-app"), ("scope", "haystack"))
    assert Count("factledger_traces_without_turn_total", 2, labels) in counted
    assert Count("factledger_traces_without_turn_total", 1, labels) in again
    warnings = [r for r in caplog.records if "produced no turn" in r.getMessage()]
    assert len(warnings) == 1 and "rag-app" in warnings[0].getMessage()


@pytest.mark.parametrize(
    ("reason", "counter"),
    [
        pytest.param(
            Drop.DUPLICATE,
            Count("factledger_assembly_drops_total", 2, (("reason", "duplicate"),)),
            id="the-assembler's-reasons-are-assembly-drops",
        ),
        pytest.param(
            Drop.ASSEMBLY_ERROR,
            Count("factledger_spans_dropped_total", 2, (("reason", "assembly_error"),)),
            id="a-span-the-assembler-raised-on-is-a-dropped-span",
        ),
        pytest.param(
            Drop.TURN_FAILED,
            Count("factledger_turns_failed_total", 2),
            id="a-turn-that-failed-is-a-failed-turn",
        ),
    ],
)
def test_drop_reasons_keep_their_public_counters(reason: Drop, counter: Count) -> None:
    assert drop_count(reason, 2) == counter


class _UnshapeableFirst:
    """The default verdicts, but the first one holds a finding that is no `Finding`."""

    def __init__(self) -> None:
        self.validated = 0

    def validate(self, turn: Turn) -> Verdict:
        self.validated += 1
        verdict = default_runner().validate(turn)
        if self.validated > 1:
            return verdict
        return Verdict(verdict.outcome, (None,), verdict.validators)  # type: ignore[arg-type]


def test_a_turn_that_cannot_be_shaped_into_rows_is_counted_as_failed() -> None:
    """A verdict the rows cannot hold costs its turn alone, counted as the core counts a
    turn it could not judge."""
    judge = TurnJudge(
        _UnshapeableFirst(), grace_seconds=GRACE, max_wait_seconds=60, clock=FakeClock()
    )
    judged = judge.judge(_spans([1, 3]), flush=True)
    assert len(judged.turn_rows) == 1
    assert ("factledger_turns_failed_total", ()) in _counts(judged)
