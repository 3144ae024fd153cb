"""DSPy: its conformance set-ups."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="dspy-react.openinference",
        framework="DSPy ReAct (ChatAdapter; conversation: dspy.History)",
        instrumentation="OpenInference (openinference-instrumentation-dspy)",
        program="dspy_react",
        env="dspy",
        packages=("dspy", "openinference-instrumentation-dspy"),
        # A DSPy program has no name of its own: its module's class names it.
        agent="ReAct",
        # DSPy has no tool-error type: ReAct hands an exception's text to the model as the
        # step's observation ("Execution error in git_push: ...").
        failures=("err-raise", "err-object"),
    ),
)
