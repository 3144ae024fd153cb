"""The CPU each span of the ingest benchmark's load costs, stage by stage, on one core.

Any service that stores every span and validates every turn must at least read each span
out of its OTLP body, parse the JSON messages it carries, store it and run the validator
suite on its turn. This script measures those four stages in the cheapest form found
here, then the stages the product adds to them (the secret check before storage, turn
assembly with normalization, row shaping), and says how many spans per second two cores
could take if they did nothing else. HTTP, the write-ahead log, the hand-over between
processes, the load generator and the engine's background merges are not counted, so
every rate it prints is an upper bound.

    python -m benchmarks.cpu_floor [--repeat N] [--turns N]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from benchmarks.ingest import PROTOBUF, STORED_TARGET, TurnFactory
from factledger.collector import rows
from factledger.collector.otlp import decode_request
from factledger.collector.redaction import Redactor
from factledger.collector.store import Store, StoreConfig
from factledger.processors.assembly.assembler import TurnAssembler
from factledger.processors.model import Turn
from factledger.processors.normalize import json_text
from factledger.processors.runner import default_runner
from factledger.processors.spans import SpanRecord

CORES = 2
TURNS_PER_REQUEST = 50
SPANS_PER_TURN = 4
INSERT_BATCH = 5_000
"""Rows per insert: the batch size at which chDB reached its best rate here."""


def _python_value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_python_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _python_value(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def read_spans(body: bytes) -> list[dict[str, Any]]:
    """The least a reader does: every span's ids, name, times, status and attributes as
    Python values, and nothing else (no checks, no records, no resource or events)."""
    request = ExportTraceServiceRequest.FromString(body)
    return [
        {
            "trace_id": span.trace_id,
            "span_id": span.span_id,
            "parent_span_id": span.parent_span_id,
            "name": span.name,
            "kind": span.kind,
            "start": span.start_time_unix_nano,
            "end": span.end_time_unix_nano,
            "status": span.status.code,
            "attributes": {kv.key: _python_value(kv.value) for kv in span.attributes},
        }
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def parse_messages(spans: Sequence[dict[str, Any]]) -> int:
    """Every attribute that holds JSON (messages, tools, arguments, results) parsed as the
    product parses it (msgspec, with json.loads's answers: about a third of json.loads's
    time on these attributes)."""
    parsed = 0
    for span in spans:
        for value in span["attributes"].values():
            if isinstance(value, str) and value[:1] in ("[", "{"):
                json_text.loads(value)
                parsed += 1
    return parsed


ANY_DESIGN = "any design"
PRODUCT = "the product"

_STAGES = (
    ("read", "read each span (protobuf, attributes as Python values)", ANY_DESIGN),
    ("parse", "parse the JSON it carries (msgspec)", ANY_DESIGN),
    ("store", f"store it (chDB insert, {INSERT_BATCH:,}-row batches)", ANY_DESIGN),
    ("validate", "validate its turn (the validator suite, per span)", ANY_DESIGN),
    ("redact", "check it for secrets before storage (Redactor.span)", PRODUCT),
    ("decode", "decode into SpanRecords (beyond the minimal read)", PRODUCT),
    ("shape", "shape its row (rows.span_row)", PRODUCT),
    ("assemble", "assemble turns (normalize, group, build)", PRODUCT),
)


@dataclass
class Stage:
    """One stage's best time over the runs, in CPU µs per span."""

    label: str
    needed_by: str
    best_us: float = float("inf")

    def record(self, seconds: float, spans: int) -> None:
        self.best_us = min(self.best_us, seconds * 1e6 / spans)


def _timed(run: Callable[[], Any]) -> tuple[Any, float]:
    """`run()` and the CPU seconds it took, with the cyclic collector off (as in the judge
    worker, which raises its threshold) so one stage does not pay for another's garbage."""
    gc.collect()
    gc.disable()
    try:
        # Every thread of the process (the engine's included), as the scheduler counts it:
        # getrusage's figure is sampled at clock ticks and rounds short stages to zero.
        started = time.process_time()
        result = run()
        return result, time.process_time() - started
    finally:
        gc.enable()


class Floor:
    """Runs every stage on fresh turns and keeps each stage's best time."""

    def __init__(self, store: Store, turns: int) -> None:
        self.store = store
        self.requests = max(1, turns // TURNS_PER_REQUEST)
        self.factory = TurnFactory(PROTOBUF, b"cpufloor", first=1)
        self.redactor = Redactor.default()
        self.runner = default_runner()
        self.stages = {key: Stage(label, needed_by) for key, label, needed_by in _STAGES}

    def reset(self) -> None:
        """Forget the times so far (after a warm-up run)."""
        for stage in self.stages.values():
            stage.best_us = float("inf")

    def run_once(self) -> None:
        """Every stage once, on turns no earlier run has seen."""
        bodies = [self.factory.body(TURNS_PER_REQUEST) for _ in range(self.requests)]
        spans = self.requests * TURNS_PER_REQUEST * SPANS_PER_TURN
        stages = self.stages

        minimal, read_seconds = _timed(lambda: [read_spans(body) for body in bodies])
        stages["read"].record(read_seconds, spans)
        _, seconds = _timed(lambda: [parse_messages(batch) for batch in minimal])
        stages["parse"].record(seconds, spans)

        records, seconds = _timed(lambda: _decode(bodies))
        stages["decode"].record(max(0.0, seconds - read_seconds), spans)
        stored, seconds = _timed(lambda: [self.redactor.span(span) for span in records])
        stages["redact"].record(seconds, spans)
        ingested_ms = int(time.time() * 1000)
        span_rows, seconds = _timed(lambda: [rows.span_row(s, ingested_ms) for s in stored])
        stages["shape"].record(seconds, spans)
        _, seconds = _timed(lambda: self._insert(span_rows))
        stages["store"].record(seconds, spans)

        turns, seconds = _timed(lambda: _assemble(records))
        stages["assemble"].record(seconds, spans)
        if len(turns) * SPANS_PER_TURN != spans:
            raise SystemExit(f"assembled {len(turns)} turns from {spans} spans: expected 1 per 4")
        _, seconds = _timed(lambda: [self.runner.validate(turn) for turn in turns])
        stages["validate"].record(seconds, spans)

    def _insert(self, span_rows: Sequence[Sequence[Any]]) -> None:
        for start in range(0, len(span_rows), INSERT_BATCH):
            self.store.insert_spans(span_rows[start : start + INSERT_BATCH])


def _decode(bodies: Sequence[bytes]) -> list[SpanRecord]:
    return [span for body in bodies for span in decode_request(body, PROTOBUF.content_type).spans]


def _assemble(records: Sequence[SpanRecord]) -> list[Turn]:
    assembler = TurnAssembler(clock=lambda: 0.0)
    for record in records:
        assembler.add(record)
    return [assembled.turn for assembled in assembler.flush_all()]


def report(floor: Floor) -> list[str]:
    """The table with running sums as rates on two cores, then the target beside them."""
    lines = [f"{'stage':<58} {'needed by':<12} {'µs/span':>8} {'sum':>7} {'spans/s, 2 cores':>17}"]
    total = 0.0
    needed_by_any = 0.0
    for stage in floor.stages.values():  # the stages any design needs come first
        total += stage.best_us
        if stage.needed_by == ANY_DESIGN:
            needed_by_any = total
        lines.append(
            f"{stage.label:<58} {stage.needed_by:<12} {stage.best_us:8.1f} {total:7.1f}"
            f" {_rate(total):17,.0f}"
        )
    budget_us = _budget_us()
    lines += [
        "",
        f"target: {STORED_TARGET:,.0f} spans/s on {CORES} cores, so {budget_us:.0f} µs of CPU"
        " per span for everything",
        f"stages any design needs: {needed_by_any:.1f} µs per span, so at most"
        f" {_rate(needed_by_any):,.0f} spans/s   {_verdict(needed_by_any)}",
        f"with the product's own stages: {total:.1f} µs per span, so at most"
        f" {_rate(total):,.0f} spans/s   {_verdict(total)}",
        "(not counted: HTTP, the write-ahead log, the hand-over between processes, the load"
        " generator, the engine's merges)",
    ]
    return lines


def _budget_us() -> float:
    return CORES * 1e6 / STORED_TARGET


def _rate(us_per_span: float) -> float:
    return CORES * 1e6 / us_per_span


def _verdict(us_per_span: float) -> str:
    return "within the target" if us_per_span <= _budget_us() else "below the target"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs; each stage's best counts")
    parser.add_argument("--turns", type=int, default=2_000, help="turns per run (4 spans each)")
    options = parser.parse_args(argv)
    if options.repeat < 1 or options.turns < TURNS_PER_REQUEST:
        parser.error(f"--repeat must be at least 1 and --turns at least {TURNS_PER_REQUEST}")
    with tempfile.TemporaryDirectory(prefix="factledger-floor-") as data:
        store = Store.open(StoreConfig(dsn=f"chdb://{data}/store"))
        try:
            floor = Floor(store, options.turns)
            print("warm-up run (the engine's first inserts, compiled rules)", flush=True)
            floor.run_once()
            floor.reset()
            for run in range(options.repeat):
                floor.run_once()
                print(f"run {run + 1}/{options.repeat} done", flush=True)
        finally:
            store.close()
    print("\n".join(report(floor)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
