"""Mastra (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="mastra.otel",
        framework="Mastra (Node.js, Agent.generate; a supervisor with a sub-agent)",
        instrumentation="its OpenTelemetry exporter (@mastra/otel-exporter)",
        program="mastra",
        env="node",
        runtime="node",
        packages=("@mastra/core", "@mastra/observability", "@mastra/otel-exporter", "node"),
        agent="release_engineer",
        # Mastra has no tool-error type: whatever a tool's `execute` throws is the call's
        # error, handed to the model (err-raise covers it).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
    ),
)
