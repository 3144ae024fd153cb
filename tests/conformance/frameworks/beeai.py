"""BeeAI Framework: its conformance set-up."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="beeai-requirement.openinference",
        framework="BeeAI Framework RequirementAgent (team: HandoffTool)",
        instrumentation="OpenInference (openinference-instrumentation-beeai)",
        program="beeai_agent",
        env="beeai",
        packages=("beeai-framework", "openinference-instrumentation-beeai"),
        agent="release_engineer",
        team_agent="release_lead",
        # BeeAI reaches the model through LiteLLM, which fetches its model price map from
        # the network at import unless told to use the copy it ships.
        extra_env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    ),
)
