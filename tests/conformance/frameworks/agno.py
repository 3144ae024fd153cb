"""Agno: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="agno.openinference",
        framework="Agno Agent (team: a Team whose leader delegates to its members)",
        instrumentation="OpenInference (openinference-instrumentation-agno)",
        program="agno_agent",
        env="agno",
        packages=("agno", "openinference-instrumentation-agno"),
        agent="release_engineer",
        # A raised exception, Agno's RetryAgentRun and a returned error object all reach
        # the model as the tool's result.
        team_agent="release_lead",
    ),
)
