"""Semantic Kernel: its conformance set-ups.

Not yet among the families of `registry._all()`. Semantic Kernel offers a kernel
function to the model under its plugin-qualified name (`Git-git_push`: plugin, hyphen,
function; a function always belongs to a plugin), and the model calls it by that name, so
every turn's push is a call of `Git-git_push`, and the checks want a call named
`git_push`: the `tool` field fails in every case. Every other field passes (turns,
service, agent, model, user message, reply, verdict: the prompts and completions come
from the OTel log records SK writes); with a check that takes `Plugin-git_push` as
`git_push`, all five cases pass. Run it by hand with
`.venv/bin/pytest tests/conformance -k semantic` after adding `semantic_kernel` to the
families.
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
