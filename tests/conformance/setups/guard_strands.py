"""A Strands agent with FactLedger's guard as a hook provider
(`factledger.guards.for_strands.FactLedgerGuard`), Strands' `OpenAIModel` on the scripted
LLM (Chat Completions), with Strands' own spans (its tracer on the global provider).

Modes (`GUARD_STREAM`): not streamed (`agent(text)`, the model called with
`stream=False`); `streamed`: `agent.stream_async(text)` with the model's answers
streamed, the run's result read from the last event's `result`; `async`:
`await agent.invoke_async(text)`, not streamed. The tool is the Strands set-up's
`git_push`: a failing push returns Strands' own `ToolResult` with `"status": "error"`.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from strands import Agent
from strands.agent import AgentResult
from strands.models.openai import OpenAIModel

from factledger.guards.for_strands import FactLedgerGuard
from tests.conformance.setups import _guarding
from tests.conformance.setups.strands_agent import PROMPT, git_push


def main() -> None:
    mode = _guarding.stream_mode()
    model = OpenAIModel(
        client_args={
            "base_url": os.environ["OPENAI_BASE_URL"],
            "api_key": os.environ["OPENAI_API_KEY"],
        },
        model_id="fake-gpt",
        stream=mode == "streamed",
    )

    def conversation(case: str, text: str) -> str:
        agent = Agent(
            name="release_engineer",
            model=model,
            system_prompt=PROMPT,
            tools=[git_push],
            hooks=[FactLedgerGuard(**_guarding.options(case))] if _guarding.guarded() else [],
            callback_handler=None,
        )
        if mode == "streamed":
            result = asyncio.run(streamed(agent, text))
        elif mode == "async":
            result = asyncio.run(agent.invoke_async(text))
        else:
            result = agent(text)
        return str(result).rstrip("\n")

    async def streamed(agent: Agent, text: str) -> AgentResult:
        last: Any = None
        async for event in agent.stream_async(text):
            if "result" in event:
                last = event["result"]
        assert isinstance(last, AgentResult)
        return last

    _guarding.run_guarded(conversation, packages=("strands-agents", "opentelemetry-sdk"))


if __name__ == "__main__":
    main()
