"""LlamaIndex: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="llama-index.openinference",
        framework="LlamaIndex FunctionAgent (team: AgentWorkflow handoff)",
        instrumentation="OpenInference (openinference-instrumentation-llama-index)",
        program="llama_index_agent",
        env="llama-index",
        packages=("llama-index-core", "openinference-instrumentation-llama-index"),
        agent="release_engineer",
        # LlamaIndex documents no tool-error type: a tool raises, and the agent hands the
        # exception's text to the model as an error result (ToolOutput.is_error).
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
    ),
)
