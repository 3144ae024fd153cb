"""The git tool as an MCP server: the `mcp` SDK's `MCPServer` (FastMCP before mcp 2) with
a `git_push` tool, run as a child process by the MCP set-ups: over stdio, or with
`--http PORT` over streamable HTTP on loopback (at `/mcp`).

It exports its own spans (the SDK's server spans, one per request) with the standard
OTLP/HTTP exporter, configured by the environment the client starts it with, and
OpenInference's MCP instrumentation, which its docs say to install on both sides: the
server's spans continue the client's trace.

How a push fails: `ToolError` ("a tool failure you anticipated") becomes a result flagged
`isError: true` with its message for the model to read; a returned error object is an
ordinary result. Any other exception is a crash the SDK hides: the model reads only
"Error executing tool git_push", without the reason.
"""

from __future__ import annotations

import sys
from typing import Any

from tests.conformance.setups import _common


def main() -> None:
    provider = _common.tracer_provider()
    from openinference.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)

    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("git")

    @server.tool()
    def git_push(repo: str, branch: str) -> dict[str, Any]:
        """Push a branch of a repository to its remote.

        Args:
            repo: The repository, as owner/name.
            branch: The branch to push.
        """
        if _common.failure_mode(repo) == "type":
            raise ToolError(_common.FAILURE_TEXT)
        return _common.push(repo, branch)

    try:
        if sys.argv[1:2] == ["--http"]:
            server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
        else:
            server.run()
    finally:
        provider.force_flush()


if __name__ == "__main__":
    main()
