"""Tools of an MCP server: its conformance set-ups (the client an agent framework)."""

from __future__ import annotations

from ..registry import SetUp


def _openai_agents(transport: str) -> SetUp:
    client = "MCPServerStdio" if transport == "stdio" else "MCPServerStreamableHttp"
    where = "over stdio" if transport == "stdio" else "over streamable HTTP, a process of its own"
    return SetUp(
        id=f"mcp-{transport}.openai-agents.openinference",
        framework=f"MCP server tool (mcp MCPServer {where}) called by the OpenAI Agents SDK"
        f" ({client})",
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
        extra_env={"CONFORMANCE_MCP_TRANSPORT": transport},
    )


SETUPS: tuple[SetUp, ...] = (_openai_agents("stdio"), _openai_agents("http"))
