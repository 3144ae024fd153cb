"""Tools of an MCP server: its conformance set-ups (the client an agent framework)."""

from __future__ import annotations

from ..registry import SetUp

SETUPS: tuple[SetUp, ...] = (
    SetUp(
        id="mcp.openai-agents.openinference",
        framework="MCP server tool (mcp MCPServer over stdio) called by the OpenAI Agents SDK"
        " (MCPServerStdio)",
        instrumentation="OpenInference (openinference-instrumentation-mcp,"
        " openinference-instrumentation-openai-agents) and the MCP SDK's own server spans",
        program="openai_agents_mcp",
        env="openai-agents-mcp",
        packages=(
            "mcp",
            "openai-agents",
            "openinference-instrumentation-mcp",
            "openinference-instrumentation-openai-agents",
        ),
        agent="release_engineer",
        # MCPServer hands the model a `ToolError`'s message in a result flagged `isError`;
        # any other exception is a crash whose reason it withholds ("Error executing tool
        # git_push"), so no reply can be judged against it. A returned error object is a
        # result.
        failures=("err-type", "err-object"),
    ),
)
