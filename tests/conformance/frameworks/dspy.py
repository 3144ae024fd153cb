"""DSPy: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp


def _dspy(adapter: str, label: str) -> SetUp:
    return SetUp(
        id=f"dspy-react-{adapter}.openinference",
        framework=f"DSPy ReAct ({label}; conversation: dspy.History)",
        instrumentation="OpenInference (openinference-instrumentation-dspy)",
        program="dspy_react",
        env="dspy",
        packages=("dspy", "openinference-instrumentation-dspy"),
        # A DSPy program has no name of its own: its module's class names it.
        agent="ReAct",
        # DSPy has no tool-error type: ReAct hands an exception's text to the model as the
        # step's observation ("Execution error in git_push: ...").
        failures=("err-raise", "err-object"),
        extra_env={"CONFORMANCE_ADAPTER": adapter},
    )


SETUPS: tuple[SetUp, ...] = (
    _dspy("chat", "ChatAdapter, the default: fields in [[ ## name ## ]] markers"),
    _dspy("json", "JSONAdapter: fields as one JSON object"),
)
