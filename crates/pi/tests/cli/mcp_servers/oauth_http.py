"""A Streamable HTTP MCP server written with the official Python SDK (`mcp` 2.x) that requires
an OAuth bearer token: the SDK answers 401 with its `WWW-Authenticate` challenge and serves the
protected-resource metadata (RFC 9728); each token is checked by asking the authorization
server (RFC 7662 introspection), which also says which resource it was issued for.

Usage: python oauth_http.py PORT AUTHORIZATION_SERVER_URL
"""

import asyncio
import json
import sys
import urllib.parse
import urllib.request
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

PORT = int(sys.argv[1])
ISSUER = sys.argv[2].rstrip("/")
RESOURCE = f"http://127.0.0.1:{PORT}/mcp"


def introspect(token: str) -> dict:
    body = urllib.parse.urlencode({"token": token}).encode()
    with urllib.request.urlopen(f"{ISSUER}/mcp/introspect", data=body, timeout=10) as answer:
        return json.load(answer)


class IntrospectingVerifier:
    async def verify_token(self, token: str) -> AccessToken | None:
        data = await asyncio.to_thread(introspect, token)
        if not data.get("active"):
            return None
        return AccessToken(
            token=token,
            client_id=data["client_id"],
            scopes=data.get("scope", "").split(),
            expires_at=data.get("exp"),
            resource=data.get("aud"),
        )


server = MCPServer(
    "py-oauth",
    instructions="Python SDK server behind OAuth.",
    token_verifier=IntrospectingVerifier(),
    auth=AuthSettings(
        issuer_url=ISSUER,
        resource_server_url=RESOURCE,
        required_scopes=["mcp:tools"],
        validate_token_resource=True,
    ),
)


@server.tool(description="Multiply two numbers.")
def multiply(a: float, b: float) -> float:
    return a * b


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=PORT)
