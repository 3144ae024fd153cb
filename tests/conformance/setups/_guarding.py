"""What every guard set-up shares: the guard's options by case, the spans caught in
memory, and the result line.

A guard set-up runs one framework's agent with FactLedger's guard (factledger.guards) in
its framework's own virtualenv, against the scripted LLM, for each case of
`CONFORMANCE_CASES` (`{case: [user message]}`). The case's repository name is also what
the scripted LLM answers by (`policy.decide`): `guard-fab` fabricates a commit and
corrects it after a nudge, `guard-fab-stuck` repeats it, `guard-err-object` reports a
failed push as done, `guard-clean` quotes the real commit, `guard-echo` quotes the
user's. A case under `guard-raise-` runs the guard with `on_exhausted="raise"`.

The spans go to an in-memory exporter of the real SDK (no service needed): the result
line holds, per case, the guard's attributes and evaluation events of every span that
has them. The line, printed last: `{"versions", "outputs": {case: final output},
"errors": {case: "ErrorType: message"}, "guard": {case: [span record, ...]}}`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from tests.conformance.setups import _common

MAX_NUDGES = 2


def options(case: str) -> dict[str, Any]:
    """The guard's options for a case: `on_exhausted="raise"` under `guard-raise-`."""
    raising = case.startswith("guard-raise-")
    return {"max_nudges": MAX_NUDGES, "on_exhausted": "raise" if raising else "footnote"}


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
    trace.set_tracer_provider(provider)
    if instrument is not None:
        instrument(provider)
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
