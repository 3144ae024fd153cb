"""Haystack: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="haystack.openinference",
        framework="Haystack Agent (team: an Agent used as a tool, AgentTool)",
        instrumentation="OpenInference (openinference-instrumentation-haystack)",
        program="haystack_agent",
        env="haystack",
        packages=("haystack-ai", "openinference-instrumentation-haystack"),
        # A Haystack Agent has no name: its span is the component's `Agent.run`.
        agent="",
        # Haystack documents no tool-error type of its own: a tool raises (the Agent, with
        # `raise_on_tool_invocation_failure=False`, hands the error's text to the model
        # as an error result) or returns an error object.
        failures=("err-raise", "err-object"),
        team_agent="",
        extra_env={"CONFORMANCE_INSTRUMENTATION": "openinference"},
    ),
    SetUp(
        id="haystack.tracer",
        framework="Haystack Agent (team: an Agent used as a tool, AgentTool)",
        instrumentation="Haystack's own OpenTelemetryTracer (opentelemetry-haystack), "
        "content tracing on",
        program="haystack_agent",
        env="haystack",
        packages=("haystack-ai", "opentelemetry-haystack"),
        agent="",
        failures=("err-raise", "err-object"),
        team_agent="",
        extra_env={
            "CONFORMANCE_INSTRUMENTATION": "haystack",
            # Haystack records component inputs and outputs only with content tracing on.
            "HAYSTACK_CONTENT_TRACING_ENABLED": "true",
        },
    ),
)
