"""Mastra (Node.js): its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _mastra(api: str = "chat", stream: bool = False) -> SetUp:
    call = "Agent.stream" if stream else "Agent.generate"
    how = "Responses API" if api == "responses" else "Chat Completions"
    extra_env = {"CONFORMANCE_API": api}
    if stream:
        extra_env["CONFORMANCE_STREAM"] = "1"
    parts = ("mastra", "stream" if stream else "", "responses" if api == "responses" else "")
    return SetUp(
        id=".".join(part for part in parts if part) + ".otel",
        framework=f"Mastra (Node.js, {call}, {how}; a supervisor with a sub-agent)",
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
        extra_env=extra_env,
    )


SETUPS: tuple[SetUp, ...] = (
    _mastra(),
    _mastra(stream=True),
    _mastra("responses"),
)
