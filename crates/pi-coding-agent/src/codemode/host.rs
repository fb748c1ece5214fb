//! The session as codemode's host: the tools a script may call (the registry's reachable
//! tools, `codemode` excepted), each nested call through the run's tool pipeline, the ranking
//! `tool_search` uses, namespaces from the MCP servers, and the store kept as `codemode-store`
//! entries on the session's branch.

use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent::{AgentTool, Exposure, NestedPipeline, ToolEntry, ToolRegistry, ToolSource};
use pi_codemode::{CodemodeHost, ModelKind, Namespace, ScriptTool, ToolDeclaration, ToolOutcome, TOOL_NAME};
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::mcp::McpRuntime;
use crate::session::agent_session::Inner;
use crate::session::AgentSession;

/// The shape every MCP tool resolves to in a script (its `CallToolResult`).
pub fn call_tool_result_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "content": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"enum": ["text", "image", "audio", "resource", "resource_link"]},
                "text": {"type": "string"},
                "data": {"type": "string"},
                "mimeType": {"type": "string"}
            }, "required": ["type"]}},
            "structuredContent": {},
            "isError": {"type": "boolean"}
        },
        "required": ["content"]
    })
}

/// What the built-in tools with a structured result resolve to in a script.
fn builtin_output_schema(name: &str) -> Option<Value> {
    match name {
        "bash" => Some(json!({
            "type": "object",
            "properties": {
                "output": {"type": "string"},
                "truncated": {"type": "boolean"},
                "full_output_path": {"type": "string"},
                "exit_code": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "wall_time_seconds": {"type": "number"}
            },
            "required": ["output", "truncated", "exit_code", "wall_time_seconds"]
        })),
        "read" => Some(json!({
            "anyOf": [
                {"type": "string"},
                {"type": "object", "properties": {
                    "data": {"type": "string"},
                    "mimeType": {"type": "string"},
                    "note": {"type": "string"},
                    "type": {"const": "image"}
                }, "required": ["data", "mimeType", "note", "type"]}
            ]
        })),
        _ => None,
    }
}

/// What scripts know about a registered tool.
pub fn declaration_of(entry: &ToolEntry) -> ToolDeclaration {
    let mut description = entry.tool.description().trim().to_string();
    let bullets: Vec<String> = entry
        .meta
        .guidelines
        .iter()
        .map(|g| g.trim())
        .filter(|g| !g.is_empty())
        .map(|g| format!("- {g}"))
        .collect();
    if !bullets.is_empty() {
        description = format!("{description}\n\n{}", bullets.join("\n"));
    }
    ToolDeclaration {
        name: entry.tool.name().to_string(),
        description,
        input_schema: entry.tool.parameters(),
        output_schema: match &entry.meta.source {
            ToolSource::Mcp(_) => Some(call_tool_result_schema()),
            ToolSource::Builtin => builtin_output_schema(entry.tool.name()),
            _ => None,
        },
    }
}

/// Whether a script may call this entry: active direct tools, and codemode and deferred ones.
pub fn is_callable(entry: &ToolEntry) -> bool {
    entry.tool.name() != TOOL_NAME
        && match entry.meta.exposure {
            Exposure::Direct => entry.active,
            Exposure::Codemode | Exposure::Deferred => true,
            Exposure::ModelOnly | Exposure::Hidden => false,
        }
}

/// The reference for scripts that the codemode description points at.
pub fn models_docs_path(docs: &crate::config::paths::DocsPaths) -> String {
    docs.docs.join("codemode.md").display().to_string()
}

/// A model as scripts see it: the catalogue entry, with `type` on the built-in ones as pi 1.6
/// gives it (models.json entries carry none).
fn model_info(model: &pi_ai::Model) -> Value {
    let mut value = serde_json::to_value(model).unwrap_or(Value::Null);
    let builtin = pi_ai::models::get_model(&model.provider, &model.id).is_some();
    if let (true, Some(map)) = (builtin, value.as_object_mut()) {
        map.insert("type".into(), Value::String("chat".into()));
    }
    value
}

pub struct SessionHost {
    pub registry: Arc<ToolRegistry>,
    pub(crate) session: Weak<Inner>,
    pub mcp: Option<Arc<McpRuntime>>,
    /// The pipeline of the run that called codemode (`None` outside a run: calls run bare).
    pub pipeline: Option<Arc<NestedPipeline>>,
}

impl SessionHost {
    fn namespace_of(&self, entry: &ToolEntry) -> Option<Namespace> {
        let ToolSource::Mcp(server) = &entry.meta.source else {
            return None;
        };
        let found = self
            .mcp
            .as_ref()
            .and_then(|m| m.servers().into_iter().find(|s| s.name() == server));
        Some(Namespace {
            name: pi_mcp::mcp_namespace(server),
            aliases: vec![server.clone()],
            description: found
                .as_ref()
                .and_then(|s| s.entry.config.description.clone())
                .and_then(|d| d.lines().next().map(|l| l.trim().to_string())),
            instructions: found.and_then(|s| s.instructions()),
        })
    }

    fn entries(&self) -> Vec<ToolEntry> {
        self.registry.entries().into_iter().filter(is_callable).collect()
    }
}

#[async_trait]
impl CodemodeHost for SessionHost {
    fn callable_tools(&self) -> Vec<ScriptTool> {
        self.entries()
            .iter()
            .map(|entry| ScriptTool {
                declaration: declaration_of(entry),
                namespace: self.namespace_of(entry),
            })
            .collect()
    }

    async fn call_tool(&self, call_id: String, name: &str, args: Value, cancel: CancellationToken) -> ToolOutcome {
        let Some(entry) = self.registry.get(name).filter(is_callable) else {
            return ToolOutcome {
                text: format!("Tool {name} not found"),
                is_error: true,
                ..Default::default()
            };
        };
        let tool: Arc<dyn AgentTool> = Arc::clone(&entry.tool);
        let call = pi_agent::nested_call(call_id.clone(), name, args);
        let (result, is_error) = match &self.pipeline {
            Some(pipeline) => {
                let outcome = pipeline.run(tool, call, &cancel, Arc::new(|_| {})).await;
                (outcome.result, outcome.is_error)
            }
            None => {
                let validated = pi_agent::validate_tool_arguments(
                    name,
                    &tool.parameters(),
                    &tool.prepare_arguments(call.arguments),
                );
                match validated {
                    Err(message) => (pi_agent::ToolOutput::text(message), true),
                    Ok(args) => match tool.execute(&call_id, args, cancel, Arc::new(|_| {})).await {
                        Ok(output) => {
                            let failed = output.is_error;
                            (output, failed)
                        }
                        Err(e) => (pi_agent::ToolOutput::text(e.message), true),
                    },
                }
            }
        };
        let image = result
            .structured_content
            .as_ref()
            .filter(|s| s.get("type").and_then(Value::as_str) == Some("image"))
            .cloned();
        ToolOutcome {
            text: pi_ai::join_text(&result.content),
            structured: result.structured_content,
            image,
            is_error,
            call_id: Some(call_id),
        }
    }

    fn search_tools(&self, tools: &[ScriptTool], query: &str, limit: usize) -> Vec<String> {
        let entries: Vec<ToolEntry> = self
            .entries()
            .into_iter()
            .filter(|e| tools.iter().any(|t| t.declaration.name == e.tool.name()))
            .collect();
        crate::mcp::tool_search::rank(&entries, query, limit)
    }

    fn load_store(&self) -> Map<String, Value> {
        let Some(inner) = self.session.upgrade() else {
            return Map::new();
        };
        AgentSession { inner }.with_store(|store| {
            let mut values = Map::new();
            for entry in store.get_branch(None) {
                let pi_session::EntryKind::Custom {
                    custom_type,
                    data: Some(data),
                    ..
                } = &entry.kind
                else {
                    continue;
                };
                if custom_type != pi_codemode::STORE_ENTRY_TYPE {
                    continue;
                }
                let (Some(set), Some(delete)) = (
                    data.get("set").and_then(Value::as_object),
                    data.get("delete").and_then(Value::as_array),
                ) else {
                    continue;
                };
                for key in delete.iter().filter_map(Value::as_str) {
                    values.remove(key);
                }
                for (key, value) in set {
                    values.insert(key.clone(), value.clone());
                }
            }
            values
        })
    }

    fn models_of_type(&self, kind: ModelKind, provider: Option<&str>, available: bool) -> Vec<Value> {
        let Some(inner) = self.session.upgrade() else {
            return Vec::new();
        };
        let registry = inner.registry.lock().unwrap_or_else(|e| e.into_inner());
        // Image and classifier models come from pi-ai's catalogue of them, as 1.6 lists them.
        let task_kind = match kind {
            ModelKind::Chat => None,
            ModelKind::Image => Some(pi_ai::task_models::TaskKind::Image),
            ModelKind::Classifier => Some(pi_ai::task_models::TaskKind::Classifier),
        };
        if let Some(task_kind) = task_kind {
            return pi_ai::task_models::task_models_of(task_kind, provider)
                .filter(|m| !available || registry.has_configured_auth(&m.as_model()))
                .map(|m| registry.task_model(m).json)
                .collect();
        }
        registry
            .all()
            .iter()
            .filter(|m| provider.is_none_or(|p| m.provider == p))
            .filter(|m| !available || registry.has_configured_auth(m))
            .map(model_info)
            .collect()
    }

    fn models_docs(&self) -> Option<String> {
        let inner = self.session.upgrade()?;
        Some(models_docs_path(&inner.docs))
    }

    async fn run_model(&self, call: pi_codemode::ModelCall, cancel: CancellationToken) -> Value {
        let Some(inner) = self.session.upgrade() else {
            return json!({"stopReason": "error", "errorMessage": "The session is gone"});
        };
        let registry = Arc::clone(&inner.registry);
        drop(inner);
        super::model_calls::run(registry, call, cancel).await
    }

    fn save_store(&self, set: Map<String, Value>, delete: Vec<String>) {
        let Some(inner) = self.session.upgrade() else {
            return;
        };
        let data = json!({"set": set, "delete": delete});
        // A store that cannot be written is lost for later scripts, never for this one's result.
        let _ =
            AgentSession { inner }.with_store(|store| store.append_custom(pi_codemode::STORE_ENTRY_TYPE, Some(data)));
    }
}
