"""A Google ADK `LlmAgent` with FactLedger's guard (`factledger.guards.for_google_adk`),
on LiteLLM (`LiteLlm(model="openai/...")`, which reads `OPENAI_API_BASE`: the scripted
LLM), run by an `InMemoryRunner`, one session per case.

`GUARD_HOOK` picks where the guard sits: `plugin` (default: `FactLedgerGuard` among the
runner's plugins) or `agent` (`guard(agent)`: the agent's own model callbacks). Modes
(`GUARD_STREAM`): not streamed; `streamed`: `RunConfig(streaming_mode=SSE)` and the
events read through `held`, the final reply taken from the last final response; no
partial event of a rejected reply may come through (`GUARD_UNHELD=1` reads the runner's
events as they are, to see that check fail). ADK's own OpenTelemetry spans go to the
global provider; the guard records on the agent's `invoke_agent` span.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

# LiteLLM otherwise fetches its model price list from the network at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from google.adk.agents import LlmAgent
from google.adk.agents.run_config import RunConfig, StreamingMode
from google.adk.models.lite_llm import LiteLlm
from google.adk.runners import InMemoryRunner
from google.genai import types

from factledger.guards.for_google_adk import FactLedgerGuard, guard, held, is_nudge
from tests.conformance.setups import _common, _guarding

INSTRUCTION = "You are a release engineer. Use git_push to push branches."


def git_push(repo: str, branch: str) -> dict[str, Any]:
    """Push `branch` of the repository `repo` (owner/name) to its remote.

    Args:
        repo: The repository, as owner/name.
        branch: The branch to push.
    """
    return _common.push(repo, branch)


def main() -> None:
    streamed = _guarding.stream_mode() == "streamed"
    on_agent = os.environ.get("GUARD_HOOK", "plugin") == "agent"
    unheld = os.environ.get("GUARD_UNHELD") == "1"  # the check of `held`, failing first
    model = LiteLlm(model="openai/fake-gpt")
    config = RunConfig(streaming_mode=StreamingMode.SSE if streamed else StreamingMode.NONE)
    loop = asyncio.new_event_loop()

    async def run(case: str, text: str) -> str:
        agent = LlmAgent(
            name="release_engineer", model=model, instruction=INSTRUCTION, tools=[git_push]
        )
        plugins: list[Any] = []
        if _guarding.guarded():
            if on_agent:
                guard(agent, **_guarding.options(case))
            else:
                plugins.append(FactLedgerGuard(**_guarding.options(case)))
        runner = InMemoryRunner(agent=agent, app_name="releases", plugins=plugins)
        session = await runner.session_service.create_session(
            app_name="releases", user_id="user", session_id=f"{case}-{uuid.uuid4().hex[:8]}"
        )
        message = types.Content(role="user", parts=[types.Part(text=text)])
        events = runner.run_async(
            user_id="user", session_id=session.id, new_message=message, run_config=config
        )
        final = ""
        released: list[Any] = []  # partial events handed on since the last complete one
        async for event in held(events) if streamed and not unheld else events:
            if event.partial:
                released.append(event)
                continue
            if is_nudge(event) and released:
                raise AssertionError(f"{len(released)} partial events of a rejected reply")
            released.clear()
            if event.is_final_response() and event.content and event.content.parts:
                final = "".join(p.text or "" for p in event.content.parts if not p.thought)
        return final

    _guarding.run_guarded(
        lambda case, text: loop.run_until_complete(run(case, text)),
        packages=("google-adk", "litellm", "opentelemetry-sdk"),
    )


if __name__ == "__main__":
    main()
