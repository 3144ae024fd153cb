"""Semantic Kernel: its conformance set-ups.

Not yet among the families of `registry._all()`. Semantic Kernel offers a kernel
function to the model under its plugin-qualified name (`Git-git_push`: plugin, hyphen,
function; a function always belongs to a plugin), so the scripted LLM, which calls the
tool named `git_push`, treats it as another agent's tool and calls it with the request
text as arguments: the checks (which want a call named `git_push`) fail the `tool` field
of every case, and the pushes of made-up repositories succeed, so the failure cases'
verdicts and the clean cases' commits (in the reply) are off too. The turns, service,
agent, model and user message are right, read from the prompts and completions SK writes
as OTel log records; a scripted model that answers SK's name as `git_push` (tried, not
kept) made fab and the failure cases pass, leaving only `unregistered_tool_call` on the
clean ones (`git_push` was called, `Git-git_push` offered). Run it by hand with
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
