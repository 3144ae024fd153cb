"""Semantic Kernel: its conformance set-ups.

Semantic Kernel offers a kernel function to the model under its plugin-qualified name
(`Git-git_push`: plugin, hyphen, function; a function always belongs to a plugin), and
the model calls it by that name: the checks take that name for the push. Its prompts and
completions come from the OTel log records SK writes, joined to their chat spans.
"""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="semantic-kernel.native",
        framework="Semantic Kernel (ChatCompletionAgent with a kernel function)",
        instrumentation=(
            "SK's own model and agent diagnostics (spans; prompts and completions as OTel logs)"
        ),
        program="semantic_kernel_agent",
        env="semantic-kernel",
        packages=("semantic-kernel",),
        agent="release_engineer",
        # SK has no tool-error type: a raised exception becomes the function's error
        # result for the model, a returned error object its value.
        failures=("err-raise", "err-object"),
        extra_env={"SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE": "true"},
    ),
)
