//! The resource tools (`list_mcp_resources`, `list_mcp_resource_templates`,
//! `read_mcp_resource`): registered once a server offering resources connects, they list and
//! read the resources of the connected servers; they wait for every server before running.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use base64::Engine;
use pi_agent::{AgentTool, ToolError, ToolOutput, ToolUpdateFn};
use pi_ai::Content;
use pi_mcp::{CallOptions, McpClient};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::server::{McpServer, Phase};
use super::McpRuntime;

pub const LIST_RESOURCES: &str = "list_mcp_resources";
pub const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
pub const READ_RESOURCE: &str = "read_mcp_resource";
pub const RESOURCE_TOOL_NAMES: [&str; 3] = [LIST_RESOURCES, LIST_TEMPLATES, READ_RESOURCE];

/// Pages followed when every server is listed at once.
const MAX_PAGES: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceTool {
    List,
    Templates,
    Read,
}

impl ResourceTool {
    pub const ALL: [ResourceTool; 3] = [ResourceTool::List, ResourceTool::Templates, ResourceTool::Read];

    fn name(self) -> &'static str {
        match self {
            ResourceTool::List => LIST_RESOURCES,
            ResourceTool::Templates => LIST_TEMPLATES,
            ResourceTool::Read => READ_RESOURCE,
        }
    }

    fn description(self) -> &'static str {
        match self {
            ResourceTool::List => {
                "List the resources (files, schemas, records and other data) that connected MCP servers \
                 share. Use it before searching elsewhere for data a server may hold."
            }
            ResourceTool::Templates => {
                "List the parameterised resource templates of connected MCP servers: URIs with \
                 placeholders that name data a server can produce on request."
            }
            ResourceTool::Read => {
                "Read one resource of an MCP server by the server's name and the resource's URI, as \
                 list_mcp_resources returned them."
            }
        }
    }

    fn parameters(self) -> Value {
        let cursor = json!({"type": "string", "description": "The nextCursor of an earlier call for the same server; leave it out for the first page."});
        match self {
            ResourceTool::List | ResourceTool::Templates => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "Name of one MCP server; leave it out to list every server."},
                    "cursor": cursor,
                },
                "additionalProperties": false,
            }),
            ResourceTool::Read => json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name as list_mcp_resources reported it."},
                    "uri": {"type": "string", "description": "The resource URI as list_mcp_resources reported it."},
                },
                "required": ["server", "uri"],
                "additionalProperties": false,
            }),
        }
    }
}

pub struct ResourceAgentTool {
    kind: ResourceTool,
    runtime: Weak<McpRuntime>,
}

impl ResourceAgentTool {
    pub fn new(kind: ResourceTool, runtime: &Arc<McpRuntime>) -> ResourceAgentTool {
        ResourceAgentTool {
            kind,
            runtime: Arc::downgrade(runtime),
        }
    }
}

/// MCP-App resources are for hosts that render them, not for the model.
fn is_app_resource(item: &Map<String, Value>) -> bool {
    let uri = item.get("uri").and_then(Value::as_str).unwrap_or("");
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
    uri.starts_with("ui://") || mime == "text/html;profile=mcp-app"
}

/// A listed resource or template for the model: the server first, `icons` and `_meta` dropped,
/// `name` falling back to the URI.
fn listed_item(server: &str, item: &Value, uri_key: &str) -> Option<Value> {
    let item = item.as_object()?;
    if is_app_resource(item) {
        return None;
    }
    let mut out = Map::new();
    out.insert("server".into(), json!(server));
    let uri = item.get(uri_key).and_then(Value::as_str).unwrap_or("");
    out.insert(uri_key.into(), json!(uri));
    let name = item
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or(uri);
    out.insert("name".into(), json!(name));
    for key in ["title", "description", "mimeType", "size"] {
        if let Some(value) = item.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), value.clone());
        }
    }
    Some(Value::Object(out))
}

fn connected(server: &McpServer) -> Option<Arc<McpClient>> {
    match server.phase() {
        Phase::Connected(c) if c.client.server_info().has_resources() => Some(Arc::clone(&c.client)),
        _ => None,
    }
}

/// One page of `method` from `client`: (items, nextCursor).
async fn page(
    client: &McpClient,
    method: &str,
    key: &str,
    cursor: Option<&str>,
    cancel: &CancellationToken,
) -> Result<(Vec<Value>, Option<String>), String> {
    let options = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let params = cursor.map(|c| json!({"cursor": c}));
    let result = match client.request(method, params, &options).await {
        Ok(result) => result,
        // A server without templates answers "method not found".
        Err(pi_mcp::McpError::Rpc { code: -32601, .. }) if method == "resources/templates/list" => {
            return Ok((Vec::new(), None))
        }
        Err(e) => return Err(e.to_string()),
    };
    let items = result.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
    let next = result
        .get("nextCursor")
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok((items, next))
}

impl ResourceAgentTool {
    async fn list(&self, runtime: &McpRuntime, arguments: &Value, cancel: &CancellationToken) -> Result<Value, String> {
        let (method, key, uri_key) = match self.kind {
            ResourceTool::Templates => ("resources/templates/list", "resourceTemplates", "uriTemplate"),
            _ => ("resources/list", "resources", "uri"),
        };
        let server_name = arguments.get("server").and_then(Value::as_str);
        let cursor = arguments.get("cursor").and_then(Value::as_str);
        let servers = runtime.servers();
        if let Some(name) = server_name {
            let server = servers
                .iter()
                .find(|s| s.name() == name)
                .ok_or_else(|| format!("No MCP server named \"{name}\"."))?;
            let client = connected(server).ok_or_else(|| format!("MCP server \"{name}\" offers no resources."))?;
            let (items, next) = page(&client, method, key, cursor, cancel).await?;
            let listed: Vec<Value> = items.iter().filter_map(|i| listed_item(name, i, uri_key)).collect();
            let mut out = Map::new();
            out.insert("server".into(), json!(name));
            out.insert(key.into(), Value::Array(listed));
            if let Some(next) = next {
                out.insert("nextCursor".into(), json!(next));
            }
            return Ok(Value::Object(out));
        }
        let mut listed = Vec::new();
        let mut errors = Vec::new();
        for server in servers.iter().filter(|s| s.is_enabled()) {
            let Some(client) = connected(server) else { continue };
            let mut cursor: Option<String> = None;
            for _ in 0..MAX_PAGES {
                match page(&client, method, key, cursor.as_deref(), cancel).await {
                    Ok((items, next)) => {
                        listed.extend(items.iter().filter_map(|i| listed_item(server.name(), i, uri_key)));
                        match next {
                            Some(next) => cursor = Some(next),
                            None => break,
                        }
                    }
                    Err(error) => {
                        errors.push(json!({"server": server.name(), "error": error}));
                        break;
                    }
                }
            }
        }
        let mut out = Map::new();
        out.insert(key.into(), Value::Array(listed));
        if !errors.is_empty() {
            out.insert("errors".into(), Value::Array(errors));
        }
        Ok(Value::Object(out))
    }

    async fn read(
        &self,
        runtime: &McpRuntime,
        arguments: &Value,
        cancel: &CancellationToken,
    ) -> Result<ToolOutput, String> {
        let name = arguments.get("server").and_then(Value::as_str).unwrap_or("");
        let uri = arguments.get("uri").and_then(Value::as_str).unwrap_or("");
        let server = runtime
            .servers()
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("No MCP server named \"{name}\"."))?;
        let client = server.client_for_call(cancel).await?;
        let options = CallOptions {
            cancel: Some(cancel.clone()),
            ..CallOptions::default()
        };
        let result = client
            .request("resources/read", Some(json!({"uri": uri})), &options)
            .await
            .map_err(|e| e.to_string())?;
        let contents = result
            .get("contents")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut content = Vec::new();
        for item in &contents {
            let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
            if let Some(text) = item.get("text").and_then(Value::as_str) {
                content.push(Content::text(text));
            } else if let Some(blob) = item.get("blob").and_then(Value::as_str) {
                if mime.starts_with("image/") {
                    content.push(Content::image(blob, mime));
                    continue;
                }
                let data = base64::engine::general_purpose::STANDARD
                    .decode(blob)
                    .map_err(|e| format!("Invalid resource data for {uri}: {e}"))?;
                let shown_mime = if mime.is_empty() { "unknown type" } else { mime };
                let text = match pi_mcp::content::write_output_file(&std::env::temp_dir(), ".bin", &data) {
                    Ok(path) => format!(
                        "[Binary resource {uri} ({shown_mime}, {}) saved to {}]",
                        pi_mcp::content::format_size(data.len() as u64),
                        path.display()
                    ),
                    Err(e) => format!("[Binary resource {uri} ({shown_mime}) could not be saved: {e}]"),
                };
                content.push(Content::text(text));
            }
        }
        if content.is_empty() {
            content.push(Content::text(format!("Resource {uri} has no contents.")));
        }
        Ok(ToolOutput {
            content,
            details: Some(json!({"server": name, "uri": uri})),
            structured_content: Some(json!({"server": name, "uri": uri, "contents": contents})),
            ..Default::default()
        })
    }
}

#[async_trait]
impl AgentTool for ResourceAgentTool {
    fn name(&self) -> &str {
        self.kind.name()
    }

    fn description(&self) -> &str {
        self.kind.description()
    }

    fn parameters(&self) -> Value {
        self.kind.parameters()
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        let Some(runtime) = self.runtime.upgrade() else {
            return Err(ToolError::new("MCP is not running."));
        };
        tokio::select! {
            _ = runtime.wait_for_all() => {}
            _ = cancel.cancelled() => return Err(ToolError::new("MCP request aborted")),
        }
        match self.kind {
            ResourceTool::Read => self.read(&runtime, &arguments, &cancel).await.map_err(ToolError::new),
            _ => {
                let value = self.list(&runtime, &arguments, &cancel).await.map_err(ToolError::new)?;
                let text = serde_json::to_string(&value).unwrap_or_default();
                Ok(ToolOutput {
                    content: vec![Content::text(text)],
                    structured_content: Some(value),
                    ..Default::default()
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_items_name_their_server_and_drop_app_resources() {
        let item = json!({"uri": "file:///a.txt", "mimeType": "text/plain", "icons": [], "_meta": {}});
        assert_eq!(
            listed_item("docs", &item, "uri"),
            Some(json!({"server": "docs", "uri": "file:///a.txt", "name": "file:///a.txt", "mimeType": "text/plain"}))
        );
        assert_eq!(
            listed_item("docs", &json!({"uri": "ui://widget", "name": "w"}), "uri"),
            None
        );
        assert_eq!(
            listed_item(
                "docs",
                &json!({"uri": "x://1", "name": "w", "mimeType": "text/html;profile=mcp-app"}),
                "uri"
            ),
            None
        );
    }
}
