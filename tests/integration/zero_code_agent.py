"""An agent program that sets up no telemetry of its own, as the OpenTelemetry docs'
zero-code path runs one: `opentelemetry-instrument python zero_code_agent.py`, with only
OTEL_EXPORTER_OTLP_ENDPOINT set. The distro configures the SDK (OTLP exporters, gRPC by
default) and flushes at exit. Prints the trace id of the turn it emitted.

Run with the checkout on PYTHONPATH (it emits `tests.unit.sdk_turns`' turn).
"""

from __future__ import annotations

from opentelemetry import trace

from tests.unit.sdk_turns import emit_agent_turn

if __name__ == "__main__":
    print(emit_agent_turn(trace.get_tracer("zero-code-agent")), flush=True)
