"""LiteLLM: a hand-written tool loop on `litellm.completion`, traced by its own
OpenTelemetry callback."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="litellm-loop.otel",
        framework="LiteLLM, hand-written tool loop (`litellm.completion`)",
        instrumentation='LiteLLM\'s OpenTelemetry callback (`litellm.callbacks = ["otel"]`)',
        program="litellm_loop",
        env="litellm",
        packages=("litellm", "opentelemetry-sdk"),
        agent="",
        # The loop of LiteLLM's function-calling docs hands the model what the function
        # returned and catches nothing: a failing push is its returned error object.
        failures=("err-object",),
        # LiteLLM fetches its model price map from the network at import unless told to
        # use the copy it ships.
        extra_env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    ),
)
