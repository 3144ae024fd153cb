"""Strands Agents: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _strands(variant: str, conventions: str, extra_env: dict[str, str]) -> SetUp:
    return SetUp(
        id=".".join(part for part in ("strands", "native", variant) if part),
        framework="Strands Agents Agent (team: agents as tools)",
        instrumentation=f"Strands' own OpenTelemetry spans (StrandsTelemetry, {conventions})",
        program="strands_agent",
        env="strands",
        packages=("strands-agents",),
        agent="release_engineer",
        # A raised exception becomes a tool result with status "error"; a tool may also
        # return that ToolResult itself. Strands has no tool-error type to raise.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
        extra_env=extra_env,
    )


SETUPS: tuple[SetUp, ...] = (
    # What a new user gets: the GenAI conventions of v1.36, messages as span events.
    _strands("", "legacy GenAI events", {}),
    # The opt-in Strands documents for the current conventions (messages as attributes).
    _strands(
        "latest",
        "gen_ai_latest_experimental",
        {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"},
    ),
)
