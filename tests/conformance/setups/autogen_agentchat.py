"""AutoGen AgentChat: an `AssistantAgent` named `release_engineer` with a `git_push` tool,
on `OpenAIChatCompletionClient` pointed at the scripted LLM.

`CONFORMANCE_INSTRUMENTATION` picks the instrumentation:
- `native`: AutoGen's own OpenTelemetry spans (`invoke_agent`, `execute_tool`, emitted
  through the global tracer provider) with OpenLLMetry's OpenAI instrumentation for the
  model calls, as AutoGen's tracing guide sets it up;
- `openinference`: OpenInference's `AutogenAgentChatInstrumentor`, as its README shows.

A tool that raises becomes a `FunctionExecutionResult` with `is_error=True`; a returned
error object is the tool's value. AutoGen has no tool-error type of its own. The agent
reflects on its tool use (`reflect_on_tool_use=True`), so its reply is the model's text
and not the tool's output. The second request of a conversation is a second `run` of the
same agent, which keeps its model context. The team: a lead `release_lead` whose only tool
is the worker `release_engineer` as an `AgentTool`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from tests.conformance.setups import _common

SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Ask release_engineer to do every push."
MODEL_INFO = {
    "vision": False,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of `repo` to its remote and report the new head commit."""
    return _common.push(repo, branch)


def _client(clients: list[Any], parallel_tool_calls: bool | None = None) -> Any:
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    options: dict[str, Any] = {}
    if parallel_tool_calls is not None:
        options["parallel_tool_calls"] = parallel_tool_calls
    client = OpenAIChatCompletionClient(
        model="fake-gpt",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key=os.environ["OPENAI_API_KEY"],
        model_info=MODEL_INFO,
        **options,
    )
    clients.append(client)
    return client


def _engineer(clients: list[Any]) -> Any:
    from autogen_agentchat.agents import AssistantAgent

    return AssistantAgent(
        name="release_engineer",
        description="Pushes branches of repositories with git_push.",
        model_client=_client(clients),
        tools=[git_push],
        system_message=SYSTEM,
        reflect_on_tool_use=True,
    )


def _lead(clients: list[Any]) -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.tools import AgentTool

    return AssistantAgent(
        name="release_lead",
        model_client=_client(clients, parallel_tool_calls=False),
        tools=[AgentTool(agent=_engineer(clients), return_value_as_last_message=True)],
        system_message=LEAD_SYSTEM,
        reflect_on_tool_use=True,
    )


def _instrument(provider: Any) -> tuple[str, ...]:
    """Install the chosen instrumentation; the distributions whose versions count."""
    instrumentation = os.environ.get("CONFORMANCE_INSTRUMENTATION", "native")
    if instrumentation == "openinference":
        from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor

        AutogenAgentChatInstrumentor().instrument(tracer_provider=provider)
        return ("openinference-instrumentation-autogen-agentchat",)
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument()
    return ("opentelemetry-instrumentation-openai",)


def main() -> None:
    provider = _common.tracer_provider()
    instrumentation = _instrument(provider)

    async def converse(case: str, messages: list[str]) -> None:
        clients: list[Any] = []
        agent = _lead(clients) if case.startswith("team-") else _engineer(clients)
        try:
            for text in messages:
                await agent.run(task=text)
        finally:
            for client in clients:
                await client.close()

    def conversation(case: str, messages: list[str]) -> None:
        asyncio.run(converse(case, messages))

    _common.run(
        conversation,
        packages=("autogen-agentchat", "autogen-ext", *instrumentation, "opentelemetry-sdk"),
        flush=provider.force_flush,
        supported={"err-type": False},
    )


if __name__ == "__main__":
    main()
