"""A Haystack `Agent` with a tool, traced as `CONFORMANCE_INSTRUMENTATION` says:
- `openinference`: OpenInference's `HaystackInstrumentor().instrument(tracer_provider=...)`,
  as its README shows;
- `haystack`: Haystack's own tracer, `OpenTelemetryTracer` (the `opentelemetry-haystack`
  integration since Haystack 3) on the global SDK provider, enabled with
  `tracing.enable_tracing(...)`, with content tracing on by the set-up's environment
  (`HAYSTACK_CONTENT_TRACING_ENABLED=true`, read when `haystack.tracing` is imported), as
  Haystack's tracing docs show.

The model is `OpenAIChatGenerator` on the scripted LLM: its key is Haystack's default
`Secret.from_env_var("OPENAI_API_KEY")`, its base URL `api_base_url`. A failing push
raises (with `raise_on_tool_invocation_failure=False`, the default, the Agent hands the
error's text to the model as an error result) or returns the error object. Haystack
names no agent: an `Agent` has no name. The team is an Agent whose tool is another
Agent (`AgentTool`, Haystack's agent-as-a-tool), named `release_engineer`.

Haystack is imported before `instrument()`, as a module's imports come first: the
instrumentation wraps the component classes registered by then (and a pipeline's
components when it runs them), so a generator class imported later has no spans.

A conversation is the Agent's message history: each run is given the messages the
previous run returned (less the system prompt, which the Agent adds to every run), with
the next user message after them.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.tools import AgentTool, tool

from tests.conformance.setups import _common

SYSTEM = "You are a release engineer. Use git_push to push branches."
LEAD_SYSTEM = "You lead releases. Hand push requests to release_engineer."


@tool
def git_push(
    repo: Annotated[str, "The repository, as owner/name"],
    branch: Annotated[str, "The branch to push"],
) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote."""
    return _common.push(repo, branch)


def _instrument(provider: Any) -> tuple[str, ...]:
    """Install the instrumentation `CONFORMANCE_INSTRUMENTATION` names; its distributions."""
    if os.environ.get("CONFORMANCE_INSTRUMENTATION", "openinference") == "haystack":
        from haystack import tracing
        from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer
        from opentelemetry import trace

        # The docs' `tracing.enable_tracing(OpenTelemetryTracer(trace.get_tracer(...)))`:
        # the tracer comes from the global provider `tracer_provider()` installed.
        tracing.enable_tracing(OpenTelemetryTracer(trace.get_tracer("release_agent")))
        return ("opentelemetry-haystack",)
    from openinference.instrumentation.haystack import HaystackInstrumentor

    HaystackInstrumentor().instrument(tracer_provider=provider)
    return ("openinference-instrumentation-haystack",)


def main() -> None:
    provider = _common.tracer_provider()
    instrumentation = _instrument(provider)

    def generator() -> OpenAIChatGenerator:
        return OpenAIChatGenerator(model="fake-gpt", api_base_url=os.environ["OPENAI_BASE_URL"])

    def build(case: str) -> Agent:
        engineer = Agent(chat_generator=generator(), tools=[git_push], system_prompt=SYSTEM)
        if not case.startswith("team-"):
            return engineer
        delegate = AgentTool(
            agent=engineer,
            name="release_engineer",
            description="A release engineer who pushes branches of repositories.",
        )
        return Agent(chat_generator=generator(), tools=[delegate], system_prompt=LEAD_SYSTEM)

    def conversation(case: str, messages: list[str]) -> None:
        agent = build(case)
        history: list[ChatMessage] = []
        for text in messages:
            result = agent.run(messages=[*history, ChatMessage.from_user(text)])
            history = [m for m in result["messages"] if not m.is_from(ChatRole.SYSTEM)]

    _common.run(
        conversation,
        packages=("haystack-ai", *instrumentation, "opentelemetry-sdk"),
        flush=provider.force_flush,
        # Haystack documents no tool-error type of its own: a tool raises, and the Agent
        # hands the error to the model as an error result.
        supported={"err-type": False},
    )


if __name__ == "__main__":
    main()
