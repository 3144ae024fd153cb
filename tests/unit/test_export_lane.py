"""The verdict outbox (collector.export.lane, collector.export.outbox): accepted records
survive a restart, leave in order, back off, give up, and every drop has a reason."""

from __future__ import annotations

import stat
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from factledger.collector.export import codec
from factledger.collector.export.backoff import Backoff
from factledger.collector.export.base import (
    Delivered,
    ExportedFinding,
    TargetRefused,
    TargetUnavailable,
    VerdictRecord,
)
from factledger.collector.export.lane import DROPPED, RETRIED, SENT, Lane, LaneLimits
from factledger.collector.export.outbox import Outbox
from factledger.collector.metrics import Metrics
from tests.unit.span_turns import FakeClock

Outcome = Exception | None


class ScriptedTarget:
    """A target answering from `script` (None: take the batch), then taking everything."""

    def __init__(self, *script: Outcome, name: str = "fake") -> None:
        self.name = name
        self.script = list(script)
        self.batches: list[list[VerdictRecord]] = []
        self.closed = 0

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        outcome = self.script.pop(0) if self.script else None
        if outcome is not None:
            raise outcome
        self.batches.append(list(records))
        return Delivered(len(records))

    def shutdown(self) -> None:
        self.closed += 1

    @property
    def delivered(self) -> list[str]:
        return [r.turn_id for batch in self.batches for r in batch]


def record(turn_id: str, version: int = 1) -> VerdictRecord:
    return VerdictRecord(
        tenant="default",
        turn_id=turn_id,
        version=version,
        cause="judged",
        verdict="reject",
        trace_id="0af7651916cd43dd8448eb211c80319c",
        span_id="b7ad6b7169203331",
        response_id=None,
        service_name="shop",
        agent_name="support",
        model="gpt-4o",
        findings=(ExportedFinding("fabricated_identifier", "reject", "9d22a7c", "no such", 1),),
        turn_url=f"http://127.0.0.1:8501/turns?turn_id={turn_id}",
        judged_at_ms=1_700_000_000_000,
    )


def append(lane: Lane, clock: FakeClock, *turn_ids: str) -> list[bool]:
    return [lane.append(record(t), codec.encode(record(t), clock.now), clock.now) for t in turn_ids]


def lane_of(
    target: ScriptedTarget,
    directory: Path,
    metrics: Metrics,
    clock: FakeClock,
    **limits: object,
) -> Lane:
    return Lane(target, directory, LaneLimits(**limits), metrics, clock=clock)  # type: ignore[arg-type]


@pytest.fixture
def clock() -> FakeClock:
    clock = FakeClock()
    clock.now = 1_000.0
    return clock


def test_records_are_delivered_in_order_and_released(tmp_path: Path, clock: FakeClock) -> None:
    metrics, target = Metrics(), ScriptedTarget()
    lane = lane_of(target, tmp_path / "fake", metrics, clock, batch_size=2)
    assert append(lane, clock, "a", "b", "c") == [True, True, True]
    assert lane.step() == 0.0
    assert lane.step() == 0.0
    assert lane.step() is None  # nothing left
    assert [len(b) for b in target.batches] == [2, 1]
    assert target.delivered == ["a", "b", "c"]
    assert metrics.value(SENT, target="fake") == 3
    lane.close()
    again = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock)
    assert again.pending == 0  # delivered means released: nothing comes back


def test_accepted_records_survive_a_restart(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    lane = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock)
    append(lane, clock, "a", "b")
    lane.close()  # no delivery: the process stops here
    target = ScriptedTarget()
    restarted = lane_of(target, tmp_path / "fake", metrics, clock)
    assert restarted.pending == 2
    assert restarted.step() == 0.0
    assert target.delivered == ["a", "b"]
    assert target.batches[0][0] == record("a")  # the same record, field for field


def test_segment_files_are_private(tmp_path: Path, clock: FakeClock) -> None:
    lane = lane_of(ScriptedTarget(), tmp_path / "fake", Metrics(), clock)
    append(lane, clock, "a")
    assert stat.S_IMODE((tmp_path / "fake").stat().st_mode) == 0o700
    (segment,) = (tmp_path / "fake").glob("segment-*")
    assert stat.S_IMODE(segment.stat().st_mode) == 0o600


def test_backs_off_exponentially_and_honours_retry_after(tmp_path: Path, clock: FakeClock) -> None:
    down = TargetUnavailable("503")
    target = ScriptedTarget(down, down, down, TargetUnavailable("429", 7.0), down)
    metrics = Metrics()
    backoff = Backoff(initial_seconds=1.0, max_seconds=5.0)
    lane = lane_of(target, tmp_path / "fake", metrics, clock, backoff=backoff)
    append(lane, clock, "a")
    delays = [lane.step() for _ in range(5)]
    assert delays == [1.0, 2.0, 4.0, 5.0, 5.0]  # Retry-After 7 is capped at max_seconds
    assert metrics.value(RETRIED, target="fake") == 5
    assert lane.step() == 0.0
    assert target.delivered == ["a"]  # nothing lost meanwhile
    append(lane, clock, "b")
    target.script = [down]
    assert lane.step() == 1.0  # a success resets the back-off


def test_an_unclassified_error_is_retried(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    lane = lane_of(ScriptedTarget(RuntimeError("boom")), tmp_path / "fake", metrics, clock)
    append(lane, clock, "a")
    assert lane.step() == 1.0
    assert (metrics.value(RETRIED, target="fake"), lane.pending) == (1, 1)
    assert lane.step() == 0.0
    assert metrics.value(SENT, target="fake") == 1


def test_a_refused_batch_is_dropped_with_its_reason(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    target = ScriptedTarget(TargetRefused("401"))
    lane = lane_of(target, tmp_path / "fake", metrics, clock)
    append(lane, clock, "a", "b")
    assert lane.step() == 0.0
    assert lane.pending == 0
    assert metrics.value(DROPPED, target="fake", reason="refused") == 2
    append(lane, clock, "c")
    lane.step()
    assert target.delivered == ["c"]


def test_records_past_the_give_up_time_are_dropped(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    down = TargetUnavailable("down")
    target = ScriptedTarget(down, down)
    lane = lane_of(target, tmp_path / "fake", metrics, clock, give_up_seconds=3600.0)
    append(lane, clock, "old")
    assert lane.step() == 1.0
    clock.now += 1800
    append(lane, clock, "young")
    assert lane.lag_seconds() == 1800
    assert lane.step() == 2.0
    clock.now += 1800  # "old" has waited its hour
    assert lane.step() == 0.0
    assert metrics.value(DROPPED, target="fake", reason="gave_up") == 1
    assert lane.step() == 0.0
    assert target.delivered == ["young"]


def test_give_up_counts_from_acceptance_across_a_restart(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    lane = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock, give_up_seconds=60.0)
    append(lane, clock, "a")
    lane.close()
    clock.now += 61
    target = ScriptedTarget()
    restarted = lane_of(target, tmp_path / "fake", metrics, clock, give_up_seconds=60.0)
    restarted.step()
    assert target.delivered == []
    assert metrics.value(DROPPED, target="fake", reason="gave_up") == 1


@pytest.mark.parametrize(
    ("limits", "accepted"),
    [
        pytest.param({"max_records": 2}, [True, True, False], id="records"),
        pytest.param({"max_bytes": 1024}, [True, True, False], id="bytes"),
    ],
)
def test_a_full_outbox_counts_the_drop(
    tmp_path: Path, clock: FakeClock, limits: dict[str, int], accepted: list[bool]
) -> None:
    assert 341 < len(codec.encode(record("a"), clock.now)) < 512  # two fit in 1024, not three
    metrics = Metrics()
    lane = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock, **limits)
    assert append(lane, clock, "a", "b", "c") == accepted
    assert metrics.value(DROPPED, target="fake", reason="outbox_full") == 1
    lane.step()
    assert append(lane, clock, "d") == [True]  # room again once delivered


def test_an_unreadable_stored_record_is_counted(tmp_path: Path, clock: FakeClock) -> None:
    metrics = Metrics()
    lane = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock)
    lane.append(record("a"), b"not a record", clock.now)
    lane.close()
    restarted = lane_of(ScriptedTarget(), tmp_path / "fake", metrics, clock)
    assert restarted.pending == 0
    assert metrics.value(DROPPED, target="fake", reason="unreadable") == 1


def test_bytes_that_are_no_record_are_dropped_not_sent(tmp_path: Path, clock: FakeClock) -> None:
    metrics, target = Metrics(), ScriptedTarget()
    lane = lane_of(target, tmp_path / "fake", metrics, clock)
    append(lane, clock, "a")
    lane.append(record("b"), b"not a record", clock.now)
    append(lane, clock, "c")
    while lane.step() is not None:
        pass
    assert target.delivered == ["a", "c"]
    assert metrics.value(DROPPED, target="fake", reason="unreadable") == 1


def test_the_outbox_delivers_on_its_threads_to_every_target(tmp_path: Path) -> None:
    first, second = ScriptedTarget(name="one"), ScriptedTarget(TargetUnavailable("x"), name="two")
    metrics = Metrics()
    limits = LaneLimits(backoff=Backoff(initial_seconds=0.05))
    outbox = Outbox([first, second], tmp_path / "export", limits, metrics)
    outbox.shutdown()  # before start: harmless, and only once
    outbox = Outbox([first, second], tmp_path / "export", limits, metrics)
    outbox.append([record("a"), record("b")])  # before start: one batch of both
    outbox.start()
    assert outbox.force_flush(10.0)
    assert first.delivered == second.delivered == ["a", "b"]
    statuses = {s.target: s for s in outbox.status()}
    assert (statuses["two"].sent, statuses["two"].retried, statuses["two"].pending) == (2, 2, 0)
    outbox.shutdown()
    outbox.shutdown()
    assert first.closed == 2  # once per outbox, the second shutdown a no-op
    text = metrics.render(outbox.metric_families())
    assert 'factledger_export_sent_total{target="one"} 2' in text
    assert 'factledger_export_pending{target="two"} 0.0' in text


def test_shutdown_wakes_a_lane_waiting_out_a_back_off(tmp_path: Path) -> None:
    down = TargetUnavailable("down", retry_after_seconds=30.0)
    target = ScriptedTarget(down)
    outbox = Outbox([target], tmp_path / "export", LaneLimits(), Metrics())
    outbox.start()
    outbox.append([record("a")])
    assert not outbox.force_flush(0.3)
    started = time.monotonic()
    outbox.shutdown(timeout=5.0)
    assert time.monotonic() - started < 2.0
    restarted = Outbox([ScriptedTarget()], tmp_path / "export", LaneLimits(), Metrics())
    assert restarted.status()[0].pending == 1  # still on disk for the next start
