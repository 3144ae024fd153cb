"""traceloop-sdk decorators: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="traceloop-sdk.decorators",
        framework="OpenAI SDK, hand-written tool loop with traceloop-sdk decorators",
        instrumentation="traceloop-sdk (@workflow, @agent, @tool; OpenLLMetry OpenAI)",
        program="traceloop_decorators",
        env="traceloop-sdk",
        packages=("traceloop-sdk", "openai", "opentelemetry-instrumentation-openai"),
        agent="release_engineer",
        # Decorators have no tool-error type: the loop hands the exception's text over.
        failures=("err-raise", "err-object"),
        team_agent="release_lead",
    ),
)
