"""The OpenAI Agents SDK calling the git tool of an MCP server (`setups/mcp_git_server`),
which it starts over stdio with `MCPServerStdio` and hands to the agent as one of its
`mcp_servers`, as the SDK's MCP docs show.

Instrumented with OpenInference: `OpenAIAgentsInstrumentor` for the SDK's runs and
`MCPInstrumentor` for MCP, which carries the trace context in each request's `_meta` to
the server. The server is started with this process's environment, so it exports its
own spans to the same place. The two messages of a conversation share one
`SQLiteSession`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
ROOT = Path(__file__).resolve().parents[3]


def main() -> None:
    provider = _common.tracer_provider()
    from openinference.instrumentation.mcp import MCPInstrumentor
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    MCPInstrumentor().instrument(tracer_provider=provider)

    from agents import Agent, Runner, SQLiteSession
    from agents.mcp import MCPServerStdio

    loop = asyncio.new_event_loop()
    server = MCPServerStdio(
        name="git",
        params={
            "command": sys.executable,
            "args": ["-m", "tests.conformance.setups.mcp_git_server"],
            "env": dict(os.environ),
            "cwd": str(ROOT),
        },
        cache_tools_list=True,
    )
    loop.run_until_complete(server.connect())
    agent = Agent(
        name="release_engineer",
        instructions=INSTRUCTIONS,
        model="fake-gpt",
        mcp_servers=[server],
    )

    def conversation(case: str, messages: list[str]) -> None:
        session = SQLiteSession(f"conformance-{case}")

        async def talk() -> None:
            for text in messages:
                await Runner.run(agent, text, session=session)

        loop.run_until_complete(talk())

    def flush() -> Any:
        from agents import flush_traces

        # The server flushes its spans as it exits, when its stdin closes.
        loop.run_until_complete(server.cleanup())
        flush_traces()
        return provider.force_flush()

    packages = [
        "openai-agents",
        "mcp",
        "openinference-instrumentation-openai-agents",
        "openinference-instrumentation-mcp",
        "opentelemetry-sdk",
    ]
    _common.run(conversation, packages=packages, flush=flush, supported={"err-raise": False})


if __name__ == "__main__":
    main()
