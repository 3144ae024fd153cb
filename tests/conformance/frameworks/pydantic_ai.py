"""Pydantic AI: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="pydantic-ai.native",
        framework="Pydantic AI",
        instrumentation="native OpenTelemetry spans (Agent.instrument_all)",
        program="pydantic_ai_agent",
        env="pydantic-ai",
        packages=("pydantic-ai-slim",),
        agent="release_engineer",
        # A plain exception raised by a tool ends the run (`run_sync` raises it): the model
        # never sees it and no reply exists. Its tool-error type is `ToolFailed`.
        failures=("err-type", "err-object"),
        team_agent="release_lead",
    ),
)
