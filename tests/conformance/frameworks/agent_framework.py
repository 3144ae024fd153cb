"""Microsoft Agent Framework: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="agent-framework.native",
        framework="Microsoft Agent Framework (OpenAI Responses client, an AgentSession;"
        " the engineer as the lead's tool, Agent.as_tool)",
        instrumentation="its own OpenTelemetry spans (enable_instrumentation)",
        program="agent_framework_agent",
        env="agent-framework",
        packages=("agent-framework-core", "agent-framework-openai"),
        agent="release_engineer",
        # A tool that raises, its documented error type (`ToolExecutionException`) or
        # not, becomes an error result the model reads; a returned error object is a result.
        failures=("err-raise", "err-type", "err-object"),
        team_agent="release_lead",
    ),
)
