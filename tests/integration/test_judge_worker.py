"""The judge worker process of a real service: killed while it holds open turns, it is
restarted, /readyz says so meanwhile, and the turns it held are still judged, once. And
the worker on its own: spans it cannot be handed are given back, their neighbours judged."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from pathlib import Path

import httpx

from factledger.collector import otlp
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.judge.turn_judge import Judged
from factledger.collector.judge.worker_process import JudgeWorker, WorkerConfig
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.rows import FINDING_COLUMNS, TURN_COLUMNS
from factledger.collector.store import Store
from factledger.processors.runner import ValidationRunner, default_runner, default_validators
from factledger.processors.settings import ValidationSettings
from factledger.processors.spans import SpanRecord
from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import turn_request
from tests.integration.stuck_validators import (
    MARKER,
    SLOW_MARKER,
    SlowValidator,
    StuckValidator,
)
from tests.integration.worker_process import judge_worker_pid, wait_until

HEADERS = {"Content-Type": "application/json"}
TURNS = 12
RESTARTS = "factledger_judge_worker_restarts_total"


def _metric(url: str, name: str) -> float:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    values = [
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and not line.startswith("#")
    ]
    return sum(values)


def test_a_killed_judge_worker_is_restarted_and_its_open_turns_judged(tmp_path: Path) -> None:
    # A grace period long enough that the worker still holds the turns when it is killed.
    env = {"FACTLEDGER_GRACE_SECONDS": "3", "FACTLEDGER_MAX_WAIT_SECONDS": "30"}
    with ServiceProcess(tmp_path / "data", env) as service:
        assert service.proc is not None
        first = judge_worker_pid(service.proc.pid)
        assert first is not None, "no judge worker process"
        with httpx.Client(timeout=10) as client:
            for index in range(1, TURNS + 1):
                body, _ = turn_request(index, hallucinate=index % 3 == 0)
                response = client.post(f"{service.url}/v1/traces", headers=HEADERS, content=body)
                assert response.status_code == 200
        wait_until(
            lambda: _metric(service.url, "factledger_open_turns") == TURNS,
            30,
            "the worker to hold every turn open",
        )
        assert _metric(service.url, "factledger_turns_validated_total") == 0

        os.kill(first, signal.SIGKILL)
        wait_until(
            lambda: httpx.get(f"{service.url}/readyz").status_code == 503,
            10,
            "/readyz to report the dead worker",
        )
        wait_until(
            lambda: httpx.get(f"{service.url}/readyz").status_code == 200,
            60,
            "the worker to be restarted",
        )
        second = judge_worker_pid(service.proc.pid)
        assert second is not None and second != first
        assert _metric(service.url, RESTARTS) == 1

        wait_until(
            lambda: _metric(service.url, "factledger_turns_validated_total") >= TURNS,
            60,
            "the recovered turns to be judged",
        )
        turns = httpx.get(f"{service.url}/api/v1/turns", params={"limit": 100}).json()["turns"]
        verdicts = {t["trace_id"]: t["verdict"] for t in turns}
        assert verdicts == {
            f"{index:032x}": "reject" if index % 3 == 0 else "pass" for index in range(1, TURNS + 1)
        }
        assert _metric(service.url, "factledger_turns_validated_total") == TURNS


def test_spans_that_do_not_pickle_are_returned_and_their_neighbours_judged() -> None:
    good = [
        s
        for i in (1, 2)
        for s in otlp.decode_request(turn_request(i, hallucinate=False)[0], otlp.JSON).spans
    ]
    bad = dataclasses.replace(good[0], attributes={**good[0].attributes, "x": lambda: None})
    worker = JudgeWorker(WorkerConfig(default_runner(), grace_seconds=60, max_wait_seconds=120))
    worker.start()
    try:
        # chunks of four: the first holds the span that cannot be pickled
        assert worker.send([bad, *good[1:]], chunk=4) == 4
        worker.request_flush()
        judged: list[Judged] = []
        deadline = time.monotonic() + 30
        while not any(j.flushed for j in judged) and time.monotonic() < deadline:
            judged.extend(worker.receive(0.1))
        assert worker.inflight == 0
        traces = {row[TURN_COLUMNS.index("TraceId")] for j in judged for row in j.turn_rows}
        assert traces == {f"{2:032x}"}
        assert worker.alive
    finally:
        worker.stop()
    assert not worker.alive


def _spans(index: int, user_text: str | None = None) -> list[SpanRecord]:
    body, _ = turn_request(index, hallucinate=True, user_text=user_text)
    return list(otlp.decode_request(body, otlp.JSON).spans)


def _suite(*, like_c_code: bool = False) -> ValidationRunner:
    return ValidationRunner(
        [*default_validators(ValidationSettings()), StuckValidator(like_c_code=like_c_code)]
    )


def test_a_validator_that_never_finishes_costs_its_turn_one_time_limit() -> None:
    config = WorkerConfig(_suite(), grace_seconds=60, max_wait_seconds=120, turn_seconds=0.5)
    worker = JudgeWorker(config)
    worker.start()
    try:
        worker.send([*_spans(1, f"{MARKER}: where is order #W0000001?"), *_spans(2)])
        worker.request_flush()
        judged: list[Judged] = []
        deadline = time.monotonic() + 30
        while not any(j.flushed for j in judged) and time.monotonic() < deadline:
            judged.extend(worker.receive(0.1))
    finally:
        worker.stop()
    turns = {row[TURN_COLUMNS.index("TraceId")]: row for j in judged for row in j.turn_rows}
    assert set(turns) == {f"{1:032x}", f"{2:032x}"}, "both turns are judged"
    findings = [row for j in judged for row in j.finding_rows]
    by_trace = {
        trace: {
            row[FINDING_COLUMNS.index("Kind")]
            for row in findings
            if row[FINDING_COLUMNS.index("TurnId")] == turns[trace][TURN_COLUMNS.index("TurnId")]
        }
        for trace in turns
    }
    # The stuck validator is recorded; the other validators' findings stand.
    assert by_trace[f"{1:032x}"] == {
        "validator_error",
        "claim_without_tool",
        "fabricated_identifier",
    }
    assert by_trace[f"{2:032x}"] == {"claim_without_tool", "fabricated_identifier"}
    messages = [row[FINDING_COLUMNS.index("Message")] for row in findings]
    assert any("stuck@1 raised TurnTimeLimit" in m for m in messages)


def _watched_pipeline(
    store: Store, tmp_path: Path, runner: ValidationRunner, metrics: Metrics
) -> Pipeline:
    """A started pipeline that takes a worker silent for 2 s for stuck."""
    pipeline = Pipeline(
        store,
        WriteAheadLog(tmp_path / "wal"),
        runner,
        metrics,
        grace_seconds=0.2,
        max_wait_seconds=5,
        hang_seconds=2,
    )
    pipeline.start()
    return pipeline


def test_a_worker_stuck_where_the_time_limit_cannot_reach_is_replaced_once(
    store: Store, tmp_path: Path
) -> None:
    metrics = Metrics()
    pipeline = _watched_pipeline(store, tmp_path, _suite(like_c_code=True), metrics)
    try:
        clean = _spans(1)
        pipeline.submit(otlp.JSON, "default", b"{}", clean)
        wait_until(lambda: store.list_turns("default")[1] == 1, 30, "the first turn's verdict")
        stuck = _spans(2, f"{MARKER}: where is order #W0000002?")
        pipeline.submit(otlp.JSON, "default", b"{}", stuck)
        # More than a pipe holds: the stuck worker cannot read it, so the service's send
        # blocks; the watch must not depend on the thread that sends.
        for index in range(3, 40):
            pipeline.submit(otlp.JSON, "default", b"{}", _spans(index))
        wait_until(
            lambda: metrics.value("factledger_judge_worker_hangs_total") >= 1,
            30,
            "the silent worker to be killed",
        )
        # The turn processor sees the death when it next looks: wait for it.
        wait_until(
            lambda: metrics.value("factledger_judge_worker_restarts_total") >= 1,
            30,
            "the killed worker to be restarted",
        )
        wait_until(lambda: pipeline.ready, 30, "a new worker")
        # The next worker recovers the stuck turn with the others, and stores it without
        # validating it again: every turn is judged, and no second worker hangs.
        wait_until(lambda: store.list_turns("default")[1] == 39, 60, "every turn's verdict")
        assert metrics.value("factledger_judge_worker_hangs_total") == 1
        (listed,), _ = store.list_turns("default", trace_id=f"{2:032x}")
        turn = store.get_turn("default", listed["turn_id"])
        assert turn is not None
        assert [(f["kind"], f["message"]) for f in turn["findings"]] == [
            (
                "validator_error",
                "validating this turn stopped the judge worker; it was not validated again",
            )
        ]
    finally:
        pipeline.shutdown(timeout=5)


def test_a_worker_slow_on_every_turn_of_a_batch_is_not_taken_for_stuck(
    store: Store, tmp_path: Path
) -> None:
    """Three turns of 1.2 s each answer in one batch, 3.6 s after it began: longer than
    the hang limit, but the worker starts a new turn every 1.2 s, so it is moving."""
    metrics = Metrics()
    pipeline = _watched_pipeline(
        store,
        tmp_path,
        ValidationRunner([*default_validators(ValidationSettings()), SlowValidator(1.2)]),
        metrics,
    )
    try:
        slow = [
            span
            for index in (1, 2, 3)
            for span in _spans(index, f"{SLOW_MARKER}: where is order #W000000{index}?")
        ]
        pipeline.submit(otlp.JSON, "default", b"{}", slow)
        wait_until(lambda: store.list_turns("default")[1] == 3, 60, "three verdicts")
        assert metrics.value("factledger_judge_worker_hangs_total") == 0
        assert metrics.value("factledger_judge_worker_restarts_total") == 0
    finally:
        pipeline.shutdown(timeout=5)
