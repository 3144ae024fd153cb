"""What every guard set-up shares: the guard's options by case, the spans caught in
memory, and the result line.

A guard set-up runs one framework's agent with FactLedger's guard (factledger.guards) in
its framework's own virtualenv, against the scripted LLM, for each case of
`CONFORMANCE_CASES` (`{case: [user message]}`). The case's repository name is also what
the scripted LLM answers by (`policy.decide`): `guard-fab` fabricates a commit and
corrects it after a nudge, `guard-fab-stuck` repeats it, `guard-err-object` reports a
failed push as done, `guard-clean` quotes the real commit, `guard-echo` quotes the
user's. A case under `guard-raise-` runs the guard with `on_exhausted="raise"`.

The spans go to an in-memory exporter of the real SDK (no service needed); with
`OTEL_EXPORTER_OTLP_ENDPOINT` set they also go over OTLP/HTTP to that service (the
exporter configured by the environment alone, as a user's would be). The result line
holds, per case, the guard's attributes and evaluation events of every span that has
them. The line, printed last: `{"versions", "outputs": {case: final output}, "errors":
{case: "ErrorType: message"}, "guard": {case: [span record, ...]}}`.

For `benchmarks/guards.py`: `GUARD_BENCH=n` times n runs of each case instead (and the
guard's decisions inside them), `GUARD_OFF=1` runs the framework without the guard.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from factledger.guards.policy import GuardOptions
from tests.conformance.setups import _common

MAX_NUDGES = 2


def options(case: str) -> GuardOptions:
    """The guard's options for a case: `on_exhausted="raise"` under `guard-raise-`."""
    if case.startswith("guard-raise-"):
        return {"max_nudges": MAX_NUDGES, "on_exhausted": "raise"}
    return {"max_nudges": MAX_NUDGES, "on_exhausted": "footnote"}


def guarded() -> bool:
    """False when the benchmark runs the framework alone (`GUARD_OFF=1`)."""
    return os.environ.get("GUARD_OFF") != "1"


def run_guarded(
    conversation: Callable[[str, str], str],
    *,
    packages: Iterable[str],
    instrument: Callable[[Any], object] | None = None,
) -> None:
    """Run each case's one request (`conversation(case, text)` returns the framework's
    final output), with the spans caught in memory, and print the result line.
    `instrument(provider)` installs the framework's instrumentation, where the guard
    records on the spans it makes."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    if instrument is not None:
        instrument(provider)
    bench = int(os.environ.get("GUARD_BENCH", "0"))
    if bench:
        _bench(conversation, bench, packages)
        return
    outputs: dict[str, str] = {}
    errors: dict[str, str] = {}
    guarded: dict[str, list[dict[str, Any]]] = {}
    for case, messages in _common.cases().items():
        exporter.clear()
        try:
            outputs[case] = conversation(case, messages[0])
        except Exception as error:  # the case's result: the test says whether it was due
            errors[case] = f"{type(error).__name__}: {error}"
        provider.force_flush()
        guarded[case] = [_record(span) for span in exporter.get_finished_spans() if _has(span)]
    result = {
        "versions": _common.versions(packages),
        "outputs": outputs,
        "errors": errors,
        "guard": guarded,
    }
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


def _bench(conversation: Callable[[str, str], str], runs: int, packages: Iterable[str]) -> None:
    """Time `runs` runs of each case (after three to warm up), and the guard's decisions
    inside them; print `{"versions", "seconds": {case: [...]}, "decide": {case: [...]}}`."""
    import time

    from factledger.guards.policy import GuardPolicy

    decide = GuardPolicy.decide
    spent: list[float] = []

    def timed(self: GuardPolicy, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return decide(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    GuardPolicy.decide = timed  # type: ignore[method-assign]
    seconds: dict[str, list[float]] = {}
    decisions: dict[str, list[float]] = {}
    for case, messages in _common.cases().items():
        for _ in range(3):
            conversation(case, messages[0])
        spent.clear()
        seconds[case] = []
        for _ in range(runs):
            started = time.perf_counter()
            conversation(case, messages[0])
            seconds[case].append(time.perf_counter() - started)
        decisions[case] = list(spent)
    result = {"versions": _common.versions(packages), "seconds": seconds, "decide": decisions}
    sys.stdout.write("\n" + json.dumps(result) + "\n")
    sys.stdout.flush()


def stream_mode() -> str:
    """How a set-up that can stream runs: `""` (not streamed) or its own mode's name."""
    return os.environ.get("GUARD_STREAM", "")


def _has(span: Any) -> bool:
    return "factledger.guard.checks" in (span.attributes or {})


def _record(span: Any) -> dict[str, Any]:
    attributes: Mapping[str, Any] = span.attributes or {}
    return {
        "name": span.name,
        "attributes": {k: _plain(v) for k, v in attributes.items() if k.startswith("factledger.")},
        "evaluations": [
            {k: _plain(v) for k, v in (event.attributes or {}).items()}
            for event in span.events
            if event.name == "gen_ai.evaluation.result"
        ],
    }


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
