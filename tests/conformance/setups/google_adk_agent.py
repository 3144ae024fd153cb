"""A Google ADK `LlmAgent` on LiteLLM (ADK's documented route to an OpenAI-compatible
endpoint: `LiteLlm(model="openai/...")`, which reads `OPENAI_API_BASE`), run by an
`InMemoryRunner`.

`CONFORMANCE_INSTRUMENTATION` picks the tracing:
- `native`: ADK's own OpenTelemetry spans (`invoke_agent`, `call_llm`, `execute_tool`),
  exported by ADK's setup helper `maybe_set_otel_providers()`, which adds an OTLP/HTTP
  exporter from `OTEL_EXPORTER_OTLP_ENDPOINT` and the resource from `OTEL_SERVICE_NAME`;
- `openinference`: OpenInference's `GoogleADKInstrumentor` on the SDK's TracerProvider.

Tool failures, as ADK documents them: a tool returns an error dict; a raised exception
(the plain one, or ADK's `ToolExecutionError`) aborts the invocation unless a plugin or an
`on_tool_error_callback` turns it into a response, so the runner carries ADK's
`ReflectAndRetryToolPlugin`, which hands the error to the model as the tool's response.
A conversation of two messages is one ADK session. The team is a lead agent that uses the
worker as a tool (`AgentTool`).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from tests.conformance.setups import _common

INSTRUCTION = "You are a release engineer. Use git_push to push branches."
LEAD_INSTRUCTION = "You lead releases. Ask release_engineer to push branches."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    if _common.failure_mode(repo) == "type":
        from google.adk.errors.tool_execution_error import ToolErrorType, ToolExecutionError

        raise ToolExecutionError(_common.FAILURE_TEXT, ToolErrorType.BAD_GATEWAY)
    return _common.push(repo, branch)


def _agents(team: bool) -> Any:
    from google.adk.agents import LlmAgent
    from google.adk.models.lite_llm import LiteLlm
    from google.adk.tools.agent_tool import AgentTool

    model = LiteLlm(model="openai/fake-gpt")
    worker = LlmAgent(
        name="release_engineer",
        model=model,
        description="Pushes branches of repositories.",
        instruction=INSTRUCTION,
        tools=[git_push],
    )
    if not team:
        return worker
    return LlmAgent(
        name="release_lead",
        model=model,
        description="Leads releases.",
        instruction=LEAD_INSTRUCTION,
        tools=[AgentTool(agent=worker)],
    )


async def _conversation(case: str, messages: list[str]) -> None:
    from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
    from google.adk.runners import InMemoryRunner
    from google.genai import types

    runner = InMemoryRunner(
        agent=_agents(case.startswith("team-")),
        app_name="releases",
        plugins=[ReflectAndRetryToolPlugin(max_retries=1)],
    )
    session = await runner.session_service.create_session(
        app_name="releases", user_id="user", session_id=f"{case}-{uuid.uuid4().hex[:8]}"
    )
    for text in messages:
        message = types.Content(role="user", parts=[types.Part(text=text)])
        async for _ in runner.run_async(user_id="user", session_id=session.id, new_message=message):
            pass


def main() -> None:
    # LiteLLM otherwise fetches its model price list from the network at import.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from opentelemetry import trace

    instrumentation = os.environ.get("CONFORMANCE_INSTRUMENTATION", "native")
    packages = ["google-adk", "litellm", "opentelemetry-sdk"]
    if instrumentation == "openinference":
        from openinference.instrumentation.google_adk import GoogleADKInstrumentor

        provider = _common.tracer_provider()
        GoogleADKInstrumentor().instrument(tracer_provider=provider)
        packages.insert(1, "openinference-instrumentation-google-adk")
    else:
        from google.adk.telemetry.setup import maybe_set_otel_providers

        maybe_set_otel_providers()
        provider = trace.get_tracer_provider()

    _common.run(
        lambda case, messages: asyncio.run(_conversation(case, messages)),
        packages=packages,
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
