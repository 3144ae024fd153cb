"""The OpenAI Agents SDK calling the git tool of an MCP server (`setups/mcp_git_server`),
handed to the agent as one of its `mcp_servers`, as the SDK's MCP docs show. With
`CONFORMANCE_MCP_TRANSPORT=stdio` (the default) the SDK starts the server itself
(`MCPServerStdio`); with `http` the server runs as a process of its own, serving
streamable HTTP on the loopback port the harness reserved (`CONFORMANCE_FREE_PORT`), and
the SDK connects to it (`MCPServerStreamableHttp`).

Instrumented with OpenInference: `OpenAIAgentsInstrumentor` for the SDK's runs and
`MCPInstrumentor` for MCP, which carries the trace context in each request's `_meta` to
the server. The server is started with this process's environment, so it exports its
own spans to the same place. The two messages of a conversation share one
`SQLiteSession`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conformance.setups import _common

INSTRUCTIONS = "You are a release engineer. Use git_push to push branches."
ROOT = Path(__file__).resolve().parents[3]
SERVER_MODULE = "tests.conformance.setups.mcp_git_server"


def _wait_for(port: int, seconds: float = 30.0) -> None:
    """Until the server accepts connections on `port`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main() -> None:
    provider = _common.tracer_provider()
    from openinference.instrumentation.mcp import MCPInstrumentor
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    MCPInstrumentor().instrument(tracer_provider=provider)

    from agents import Agent, Runner, SQLiteSession

    loop = asyncio.new_event_loop()
    transport = os.environ.get("CONFORMANCE_MCP_TRANSPORT", "stdio")
    process: subprocess.Popen[bytes] | None = None
    if transport == "http":
        from agents.mcp import MCPServerStreamableHttp

        port = int(os.environ["CONFORMANCE_FREE_PORT"])  # reserved by the harness
        process = subprocess.Popen(
            [sys.executable, "-m", SERVER_MODULE, "--http", str(port)], cwd=ROOT
        )
        _wait_for(port)
        server: Any = MCPServerStreamableHttp(
            name="git", params={"url": f"http://127.0.0.1:{port}/mcp"}, cache_tools_list=True
        )
    else:
        from agents.mcp import MCPServerStdio

        server = MCPServerStdio(
            name="git",
            params={
                "command": sys.executable,
                "args": ["-m", SERVER_MODULE],
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

        # The server flushes its spans as it exits: when its stdin closes, or, serving
        # HTTP, when it is asked to stop.
        loop.run_until_complete(server.cleanup())
        if process is not None:
            # Ctrl-C, as a developer stops it: uvicorn shuts down and raises the signal
            # again, which Python turns into KeyboardInterrupt, so the server's exporter
            # still flushes (after SIGTERM, raised again, the process dies unflushed).
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
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
