"""A Strands agent with Strands' own OpenTelemetry spans (`StrandsTelemetry`), as its
observability guide shows: `StrandsTelemetry().setup_otlp_exporter()`, the exporter
configured by the standard OTLP environment variables. Without
`OTEL_SEMCONV_STABILITY_OPT_IN` (what a new user gets) Strands writes the legacy GenAI
conventions, messages as span events; the `latest` set-up opts in to the current ones.

The model is Strands' `OpenAIModel` on the scripted LLM. A conversation is one `Agent`
called once per request, so the second request sees the first's messages. A failing push
raises (Strands turns the exception into a tool result with status "error") or returns
Strands' own `ToolResult` with `"status": "error"`. The team is "agents as tools": the
lead's only tool is a `@tool` that asks the engineer agent.
"""

from __future__ import annotations

import os
from typing import Any

from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.telemetry import StrandsTelemetry

from tests.conformance.setups import _common

PROMPT = "You are a release engineer. Use git_push to push branches."
LEAD_PROMPT = "You lead releases. Ask release_engineer to push branches."


@tool
def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push a branch of a repository to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    if _common.failure_mode(repo) == "object":
        # Strands' ToolResult: a returned result that reports its own failure.
        return {"status": "error", "content": [{"text": _common.FAILURE_TEXT}]}
    return _common.push(repo, branch)


def model() -> OpenAIModel:
    return OpenAIModel(
        client_args={
            "base_url": os.environ["OPENAI_BASE_URL"],
            "api_key": os.environ["OPENAI_API_KEY"],
        },
        model_id="fake-gpt",
    )


def engineer() -> Agent:
    return Agent(
        name="release_engineer",
        model=model(),
        system_prompt=PROMPT,
        tools=[git_push],
        callback_handler=None,
    )


def lead() -> Agent:
    worker = engineer()

    @tool
    def release_engineer(request: str) -> str:
        """Ask the release engineer to push a branch.

        Args:
            request: What to push, in words.
        """
        return str(worker(request))

    return Agent(
        name="release_lead",
        model=model(),
        system_prompt=LEAD_PROMPT,
        tools=[release_engineer],
        callback_handler=None,
    )


def main() -> None:
    telemetry = StrandsTelemetry().setup_otlp_exporter()

    def conversation(case: str, messages: list[str]) -> None:
        # A fresh agent per conversation: its messages are the conversation's history.
        agent = lead() if case.startswith("team-") else engineer()
        for text in messages:
            agent(text)

    _common.run(
        conversation,
        packages=("strands-agents", "opentelemetry-sdk"),
        flush=telemetry.tracer_provider.force_flush,
    )


if __name__ == "__main__":
    main()
