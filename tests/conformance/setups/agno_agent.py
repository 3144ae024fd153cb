"""An Agno agent instrumented by OpenInference
(`AgnoInstrumentor().instrument(tracer_provider=...)`), as its README shows.

The model is `OpenAIChat` on the scripted LLM. A conversation is one session: every
request runs with the same `session_id` on an agent with an `InMemoryDb` and
`add_history_to_context=True`, so the second request sees the first's messages and tool
calls. A failing push raises a plain exception (Agno hands its text to the model as the
tool's result), raises `RetryAgentRun` (Agno's documented way to pass a tool error to the
model) or returns the error object. The team is a `Team` led by `release_lead` with the
engineer as its only member, the leader delegating the task to its members.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.exceptions import RetryAgentRun
from agno.models.openai import OpenAIChat
from agno.team import Team
from agno.team.mode import TeamMode

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
LEAD_INSTRUCTIONS = "You lead releases. Ask release_engineer to push branches."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    if _common.failure_mode(repo) == "type":
        raise RetryAgentRun(_common.FAILURE_TEXT)
    return _common.push(repo, branch)


def main() -> None:
    from openinference.instrumentation.agno import AgnoInstrumentor

    provider = _common.tracer_provider()
    AgnoInstrumentor().instrument(tracer_provider=provider)

    def model() -> OpenAIChat:
        return OpenAIChat(
            id="fake-gpt",
            base_url=os.environ["OPENAI_BASE_URL"],
            api_key=os.environ["OPENAI_API_KEY"],
        )

    def build(case: str) -> Any:
        # Fresh agents and storage per conversation: a conversation's history is its own.
        engineer = Agent(
            name="release_engineer",
            role="Pushes branches of repositories.",
            model=model(),
            instructions=INSTRUCTIONS,
            tools=[git_push],
            db=InMemoryDb(),
            add_history_to_context=True,
            telemetry=False,
        )
        if not case.startswith("team-"):
            return engineer
        return Team(
            name="release_lead",
            members=[engineer],
            # The leader hands the task to its members (one here) and answers from
            # their reports.
            mode=TeamMode.broadcast,
            model=model(),
            instructions=LEAD_INSTRUCTIONS,
            db=InMemoryDb(),
            add_history_to_context=True,
            telemetry=False,
        )

    def conversation(case: str, messages: list[str]) -> None:
        agent = build(case)
        session_id = str(uuid.uuid4())
        for text in messages:
            agent.run(text, session_id=session_id)

    _common.run(
        conversation,
        packages=("agno", "openinference-instrumentation-agno", "opentelemetry-sdk"),
        flush=provider.force_flush,
    )


if __name__ == "__main__":
    main()
