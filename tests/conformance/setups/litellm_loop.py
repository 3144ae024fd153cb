"""A hand-written tool loop on `litellm.completion`, traced by LiteLLM's own OpenTelemetry
callback (`litellm.callbacks = ["otel"]`), as LiteLLM's docs show.

The callback builds its exporter from the environment: `OTEL_EXPORTER_OTLP_PROTOCOL`
(before LiteLLM's own `OTEL_EXPORTER`) and `OTEL_EXPORTER_OTLP_ENDPOINT` (before
`OTEL_ENDPOINT`), so the harness's standard variables send the spans over OTLP/HTTP.

The loop is the one of LiteLLM's function-calling docs: the model's message is appended
as it came, then one `{"tool_call_id", "role": "tool", "name", "content"}` message per
call, whose content is what the function returned (JSON text). A failing push is the
tool's returned error object; the docs' loop catches no exception.
"""

from __future__ import annotations

import json
import os
from typing import Any

from tests.conformance.setups import _common

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "git_push",
            "description": "Push a branch of a repository to its remote.",
            "parameters": {
                "type": "object",
                "properties": {
                    "repo": {"type": "string", "description": "owner/name"},
                    "branch": {"type": "string"},
                },
                "required": ["repo", "branch"],
            },
        },
    }
]
SYSTEM = "You are a release engineer. Use git_push to push branches."
PACKAGES = ("litellm", "opentelemetry-sdk")


def git_push(repo: str, branch: str) -> str:
    """Push `branch` of `repo`: the result (or the error object) as JSON text."""
    return json.dumps(_common.push(repo, branch))


def turn(litellm: Any, api_base: str, messages: list[Any]) -> None:
    """Call the model until it answers without tool calls, running each call it asks."""
    available = {"git_push": git_push}
    for _ in range(5):
        response = litellm.completion(
            model="openai/fake-gpt", api_base=api_base, messages=messages, tools=TOOLS
        )
        message = response.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            function = available[call.function.name]
            output = function(**json.loads(call.function.arguments))
            messages.append(
                {
                    "tool_call_id": call.id,
                    "role": "tool",
                    "name": call.function.name,
                    "content": output,
                }
            )


def main() -> None:
    import litellm
    from litellm.litellm_core_utils.thread_pool_executor import executor
    from opentelemetry import trace

    litellm.callbacks = ["otel"]
    api_base = os.environ["OPENAI_BASE_URL"]

    def conversation(case: str, texts: list[str]) -> None:
        messages: list[Any] = [{"role": "system", "content": SYSTEM}]
        for text in texts:
            messages.append({"role": "user", "content": text})
            turn(litellm, api_base, messages)

    def flush() -> None:
        # LiteLLM logs each call on its own thread pool after returning it: the spans
        # exist only once those tasks are done.
        executor.shutdown(wait=True)
        provider = trace.get_tracer_provider()
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None:
            force_flush()

    _common.run(conversation, packages=PACKAGES, flush=flush)


if __name__ == "__main__":
    main()
