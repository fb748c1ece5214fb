"""A Streamable HTTP MCP server written with the official Python SDK (`mcp` 2.x), for the
session tests: `add` adds two numbers, `unlock` registers a new tool `secret` and tells the
client with `notifications/tools/list_changed`, so the client must list the tools again.

Usage: python streamable_http.py PORT
"""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("py-http", instructions="Python SDK test server.")


@server.tool(description="Add two numbers.")
def add(a: float, b: float) -> float:
    return a + b


def secret() -> str:
    """Tell the secret (only there after unlock)."""
    return "the secret is 42"


@server.tool(description="Make the secret tool available.")
async def unlock(ctx: Context) -> str:
    server.add_tool(secret, name="secret", description="Tell the secret.")
    await ctx.session.send_tool_list_changed()
    return "unlocked"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
