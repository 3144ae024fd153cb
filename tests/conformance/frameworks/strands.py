"""Strands Agents: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="strands.native",
        framework="Strands Agents Agent (team: agents as tools)",
        instrumentation="Strands' own OpenTelemetry spans (StrandsTelemetry, legacy GenAI)",
        program="strands_agent",
        env="strands",
        packages=("strands-agents",),
        agent="release_engineer",
        # A raised exception becomes a tool result with status "error"; a tool may also
        # return that ToolResult itself. Strands has no tool-error type to raise.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
    ),
)
