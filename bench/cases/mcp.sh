# MCP cases of bench/run (sourced by it; uses its reset_case, start_mock, measure and $agent).
#
#   mcp-start  `pi -p hello` with three stdio MCP servers configured whose tools are declared
#              directly (so the first request waits for all three to connect and list their
#              tools): the time from start to the answer of the first request. The server is
#              @modelcontextprotocol/server-everything from npm, found through
#              PI_MCP_EVERYTHING_SERVER (scripts/test-deps exports it).

mcp_servers_json() { # node script count
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
node, script, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
servers = {f"srv{i}": {"command": node, "args": [script, "stdio"], "exposure": "direct"} for i in range(1, count + 1)}
print(json.dumps({"mcpServers": servers}, indent=2))
PY
}

case_mcp-start() {
  reset_case mcp-start "pi -p hello with 3 stdio MCP servers (direct tools)"
  local script="${PI_MCP_EVERYTHING_SERVER:-}" node
  node="$(command -v node || true)"
  if [ -z "$script" ] || [ ! -f "$script" ] || [ -z "$node" ]; then
    meta title "$TITLE"
    meta note "skipped: node or PI_MCP_EVERYTHING_SERVER (server-everything's dist/index.js) is missing"
    echo "  mcp-start: skipped (node or PI_MCP_EVERYTHING_SERVER missing)" >&2
    return 0
  fi
  start_mock "$bench/scenarios/echo.json"
  mcp_servers_json "$node" "$script" 3 > "$agent/mcp.json"
  ARGS="-p hello"; EXPECT="echo: hello"
  measure
  rm -f "$agent/mcp.json"
}
