"""What verdict export costs, and how soon a verdict reaches the backend.

Two parts:

1. CPU per verdict, in this process: `--verdicts` turns of the ingest benchmark's shape
   (one in ten a reject) are judged once by the service's `TurnJudge`; then, per verdict,
   timed apart: the record built from the stored rows (`export.records`), its append to
   a real outbox lane on disk (encoding and the write; the lane is not drained), and the
   OTel encoding the `otel` target sends (events, the SDK's OTLP protobuf encoder and
   serialization, batches of the default size). Process CPU time, best of `--repeat`.

2. Delivery under load: the ingest benchmark (`benchmarks.ingest`) runs twice on the
   same offered load, once without export and once with `[export.otel]` pointed at an
   OTLP/HTTP logs receiver on loopback (`factledger.logs_sink`, in this process). It
   prints the ingest figures side by side, the CPU seconds of the service's export
   thread per verdict, and the delivery lag of the verdict events: from the time the
   turn was judged (the event's timestamp; storing its rows comes after) to the event's
   arrival at the receiver, p50/p99.

    python -m benchmarks.export [--verdicts N] [--repeat N] [--duration S] [--rate SPANS_PER_S]
                                [--quick] [--cpu-only]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import ReadableLogRecord
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from benchmarks import ingest
from factledger.collector import otlp
from factledger.collector.export import codec
from factledger.collector.export.base import Delivered, VerdictRecord
from factledger.collector.export.lane import Lane, LaneLimits
from factledger.collector.export.otel_events import evaluation_events
from factledger.collector.export.records import DEFAULT_DASHBOARD_URL, verdict_records
from factledger.collector.judge.turn_judge import Judged, TurnJudge
from factledger.collector.metrics import Metrics
from factledger.logs_sink import Event, LogsSink
from factledger.processors.runner import default_runner

CPU_TARGET_US = 100.0
"""Export on the judging path (record + append) should cost well under judging a turn."""
DEFAULT_VERDICTS = 2_000
QUICK_VERDICTS = 500
BATCH = LaneLimits().batch_size


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Idle:
    """A target never called: the lane is only appended to."""

    name = "bench"

    def deliver(self, records: Sequence[VerdictRecord], timeout_seconds: float) -> Delivered:
        raise AssertionError("not drained")

    def shutdown(self) -> None:
        pass


# --- part 1: CPU per verdict -----------------------------------------------------------------


def judged_turns(count: int) -> Judged:
    """`count` turns of the ingest benchmark's shape, judged as the service judges them."""
    factory = ingest.TurnFactory(ingest.PROTOBUF, os.urandom(8), first=1)
    clock = _Clock()
    judge = TurnJudge(default_runner(), grace_seconds=1.0, max_wait_seconds=60.0, clock=clock)
    per_request = 50
    for _ in range(0, count, per_request):
        body = factory.body(per_request)
        judge.judge(list(otlp.decode_request(body, ingest.PROTOBUF.content_type).spans))
    clock.now = 100.0
    return judge.judge([], flush=True)


@dataclass(frozen=True)
class CpuFigures:
    verdicts: int
    findings: int
    record_us: float
    append_us: float
    encode_us: float
    events: int


def _best_us(repeat: int, count: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best / count * 1e6


def measure_cpu(verdicts: int, repeat: int) -> CpuFigures:
    judged = judged_turns(verdicts)
    turns, findings, replies = judged.turn_rows, judged.finding_rows, judged.replies
    records = verdict_records(turns, findings, replies, DEFAULT_DASHBOARD_URL)
    record_us = _best_us(
        repeat,
        len(turns),
        lambda: verdict_records(turns, findings, replies, DEFAULT_DASHBOARD_URL),
    )
    with tempfile.TemporaryDirectory(prefix="factledger-export-bench-") as tmp:
        limits = LaneLimits(max_records=len(records) * repeat + 1, max_bytes=1 << 34)
        lane = Lane(_Idle(), Path(tmp) / "bench", limits, Metrics())

        def append() -> None:
            now = time.time()
            for record in records:
                lane.append(record, codec.encode(record, now), now)

        append_us = _best_us(repeat, len(records), append)
        lane.close()
    resource = Resource.create({"service.name": "factledger"})
    scope = InstrumentationScope("factledger.export")

    def encode() -> None:
        for start in range(0, len(records), BATCH):
            batch = [
                ReadableLogRecord(event, resource, scope)
                for record in records[start : start + BATCH]
                for event in evaluation_events(record)
            ]
            encode_logs(batch).SerializeToString()

    encode_us = _best_us(repeat, len(records), encode)
    events = sum(len(evaluation_events(r)) for r in records)
    return CpuFigures(len(records), len(findings), record_us, append_us, encode_us, events)


def cpu_report(figures: CpuFigures) -> list[str]:
    on_path = figures.record_us + figures.append_us
    return [
        f"CPU per verdict ({figures.verdicts:,} verdicts, {figures.findings:,} findings, "
        f"{figures.events:,} OTel events; best of the repeats, process CPU time)",
        ingest._row("figure", "µs/verdict", "target"),
        ingest._row("record from the stored rows", f"{figures.record_us:,.1f}"),
        ingest._row("outbox append (encode + write)", f"{figures.append_us:,.1f}"),
        ingest._row(
            "  on the judging path, together",
            f"{on_path:,.1f}",
            f"< {CPU_TARGET_US:g}",
            on_path < CPU_TARGET_US,
        ),
        ingest._row("OTel events + OTLP encoding (delivery thread)", f"{figures.encode_us:,.1f}"),
    ]


# --- part 2: delivery under load -------------------------------------------------------------


def _settings_file(directory: Path, endpoint: str) -> Path:
    path = directory / "export-bench.toml"
    path.write_text(
        f'[export]\nbackoff_initial_seconds = 0.2\n[export.otel]\nendpoint = "{endpoint}"\n'
    )
    return path


def export_threads(run: ingest.Run) -> float:
    return sum(seconds for name, seconds in run.threads if name.startswith("export-"))


def lags(events: Sequence[Event]) -> list[float]:
    """Seconds from each verdict event's timestamp (the turn judged) to its arrival."""
    return sorted(
        max(0.0, e.received_at - e.time_unix_nano / 1e9)
        for e in events
        if e.attributes.get("gen_ai.evaluation.name") == "factledger.verdict"
    )


def _ingest_figures(run: ingest.Run) -> dict[str, str]:
    s = run.senders
    acked = sum(r.acked_spans for r in s)
    window = max(max(r.last_ack for r in s) - min(r.first_send for r in s), 1e-9)
    judged = None if run.judged_at is None else run.judged_at - run.t0
    latency = run.latency
    return {
        "acknowledged spans/s": f"{acked / window:,.0f}",
        "all turns judged after": "timed out" if judged is None else f"{judged:.1f} s",
        "turns judged": f"{run.timeline[-1].validated:,.0f}",
        "verdict latency p50": f"{statistics.median(latency):.2f} s" if latency else "-",
        "verdict latency p99": f"{ingest.percentile(latency, 0.99):.2f} s" if latency else "-",
        "service CPU": f"{run.timeline[-1].cpu_seconds - run.timeline[0].cpu_seconds:.1f} s",
        "peak RSS": f"{run.peak_rss_kib / 1024:,.0f} MiB",
    }


def load_report(off: ingest.Run, on: ingest.Run, events: Sequence[Event]) -> list[str]:
    o = on.options
    without, with_export = _ingest_figures(off), _ingest_figures(on)
    out = [
        f"Under load: {o.senders} senders, {o.turns_per_request} turns per request, "
        f"{o.duration:g} s, {f'offering {o.rate:,.0f} spans/s' if o.rate else 'flat out'}",
        f"{'figure':<44}{'export off':>16}{'export on':>16}",
    ]
    for key in without:
        out.append(f"{key:<44}{without[key]:>16}{with_export[key]:>16}")
    verdicts = float(on.timeline[-1].validated)
    delivered = lags(events)
    thread_cpu = export_threads(on)
    out.append("")
    out.append(
        f"{'verdict events delivered / turns judged':<44}{len(delivered):>16,} / {verdicts:,.0f}"
    )
    if verdicts:
        out.append(f"{'export thread CPU per verdict':<44}{thread_cpu / verdicts * 1e6:>14,.0f} µs")
    if delivered:
        out.append(
            f"{'delivery lag p50 (judged -> receiver)':<44}{statistics.median(delivered):>14.3f} s"
        )
        out.append(f"{'delivery lag p99':<44}{ingest.percentile(delivered, 0.99):>14.3f} s")
    return out


def measure_load(options: ingest.Options) -> tuple[ingest.Run, ingest.Run, list[Event]]:
    off = ingest.measure(options)
    sink = LogsSink()
    try:
        with tempfile.TemporaryDirectory(prefix="factledger-export-bench-") as tmp:
            config = _settings_file(Path(tmp), sink.url)
            on = ingest.measure(options, {"FACTLEDGER_CONFIG": str(config)})
            # The last verdicts may still be on their way when the service stops:
            # only what arrived counts, and the count is printed.
            return off, on, sink.received()
    finally:
        sink.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--verdicts", type=int, default=DEFAULT_VERDICTS, help="part 1 (2000)")
    parser.add_argument("--repeat", type=int, default=5, help="part 1 repeats (5)")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds of load (20)")
    parser.add_argument(
        "--rate", type=float, default=4000.0, help="spans/s offered in part 2 (4000)"
    )
    parser.add_argument("--quick", action="store_true", help="500 verdicts, 5 s of load")
    parser.add_argument("--cpu-only", action="store_true", help="part 1 alone")
    args = parser.parse_args(argv)
    verdicts = QUICK_VERDICTS if args.quick else args.verdicts
    duration = 5.0 if args.quick else args.duration
    if not (50 <= verdicts <= 1_000_000 and 1 <= args.repeat <= 100 and 0 < duration <= 3600):
        parser.error("--verdicts in 50..1000000, --repeat in 1..100, --duration in (0, 3600]")
    print(f"FactLedger export benchmark: {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print("\n".join(cpu_report(measure_cpu(verdicts, args.repeat))))
    if args.cpu_only:
        return 0
    options = ingest.Options(duration, 2, 50, False, 200, args.rate)
    print()
    print("\n".join(load_report(*measure_load(options))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
