//! pi 1.6's `builtin:codemode` in sessions: the `codemode` tool is registered (inactive
//! unless `--tools` names it) in every session while the built-in is on, MCP servers with
//! codemode exposure activate it, and while it is active the declared tools' descriptions say
//! how a script calls them.

pub mod host;
pub mod model_calls;
pub mod tool;

use std::sync::Arc;

use pi_agent::{AgentTool, Exposure, ToolMeta, ToolRegistry, ToolSource};

use crate::session::AgentSession;

pub use tool::CodemodeTool;

/// Register the codemode tool in `session` (active when `active`), unless one is registered
/// already (an extension's replacement keeps its place).
pub fn attach(session: &AgentSession, active: bool) {
    let registry = session.tool_registry();
    if registry.get(pi_codemode::TOOL_NAME).is_none() {
        let listed: Vec<pi_codemode::ListedTool> = Vec::new();
        let docs = host::models_docs_path(&session.inner.docs);
        let description = pi_codemode::describe(&listed, Some(pi_codemode::DEFAULT_INLINE_BUDGET), Some(&docs));
        let tool: Arc<dyn AgentTool> = Arc::new(CodemodeTool::new(
            description,
            registry,
            Arc::downgrade(&session.inner),
            Some(Arc::clone(session.services().mcp())),
        ));
        let meta = ToolMeta::of(tool.as_ref(), ToolSource::Codemode)
            .exposure(Exposure::ModelOnly)
            .default_active(false);
        registry.register(tool, meta);
    }
    if active {
        registry.activate(pi_codemode::TOOL_NAME);
    }
}

/// The `codemode.mode` and `codemode.inlineBudget` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodemodeSettings {
    /// `"only"`: the tools scripts can call are listed in the codemode description and not
    /// declared themselves.
    pub only: bool,
    /// Estimated tokens the listed declarations may take.
    pub inline_budget: usize,
}

impl Default for CodemodeSettings {
    fn default() -> Self {
        CodemodeSettings {
            only: false,
            inline_budget: pi_codemode::DEFAULT_INLINE_BUDGET,
        }
    }
}

impl CodemodeSettings {
    pub fn from_settings(settings: &crate::config::settings::SettingsManager) -> CodemodeSettings {
        let defaults = CodemodeSettings::default();
        CodemodeSettings {
            only: settings.get_nested("codemode", "mode").and_then(|v| v.as_str()) == Some("only"),
            inline_budget: settings
                .get_nested("codemode", "inlineBudget")
                .and_then(|v| v.as_f64())
                .filter(|n| *n >= 0.0)
                .map_or(defaults.inline_budget, |n| n as usize),
        }
    }
}

/// The declared tools as codemode presents them while it is declared: with `mode: "on"` each
/// tool a script can call says how (a line added to its description); with `"only"` those
/// tools are left out and listed, with their declarations, in the codemode description.
pub fn describe_for_scripts(
    registry: &ToolRegistry,
    declared: Vec<Arc<dyn AgentTool>>,
    settings: CodemodeSettings,
) -> Vec<Arc<dyn AgentTool>> {
    if !declared.iter().any(|t| t.name() == pi_codemode::TOOL_NAME) {
        return declared;
    }
    if settings.only {
        return only_codemode(registry, declared, settings.inline_budget);
    }
    declared
        .into_iter()
        .map(|tool| {
            let Some(entry) = registry.get(tool.name()).filter(host::is_callable) else {
                return tool;
            };
            let line = pi_codemode::script_call_line(&host::declaration_of(&entry));
            let described: Arc<dyn AgentTool> = Arc::new(Described {
                inner: tool,
                description: line,
            });
            described
        })
        .collect()
}

/// The system prompt's tool lines and rules while codemode is declared: with `"only"` the
/// tools a script calls are not declared, so their lines and guidelines leave the prompt too
/// (the codemode description carries them), as in pi 1.6.
pub fn prompt_entries_for_scripts(
    registry: &ToolRegistry,
    entries: Vec<pi_agent::PromptEntry>,
    settings: CodemodeSettings,
) -> Vec<pi_agent::PromptEntry> {
    if !settings.only || !entries.iter().any(|e| e.name == pi_codemode::TOOL_NAME) {
        return entries;
    }
    entries
        .into_iter()
        .filter(|e| registry.get(&e.name).filter(host::is_callable).is_none())
        .collect()
}

/// `codemode.mode: "only"`: the callable tools leave the declarations and the codemode
/// description lists them (deferred and MCP codemode tools stay unlisted, as in "on").
fn only_codemode(registry: &ToolRegistry, declared: Vec<Arc<dyn AgentTool>>, budget: usize) -> Vec<Arc<dyn AgentTool>> {
    let callable: Vec<pi_agent::ToolEntry> = registry.entries().into_iter().filter(host::is_callable).collect();
    let listed: Vec<pi_codemode::ListedTool> = callable
        .iter()
        .filter(|e| e.meta.exposure == Exposure::Direct)
        .map(|e| pi_codemode::ListedTool {
            declaration: host::declaration_of(e),
            namespace: match &e.meta.source {
                ToolSource::Mcp(server) => Some(pi_codemode::Namespace {
                    name: pi_mcp::mcp_namespace(server),
                    aliases: vec![server.clone()],
                    ..Default::default()
                }),
                _ => None,
            },
        })
        .collect();
    // Sessions take their docs from the same place (see `runtime.rs`).
    let docs = host::models_docs_path(&crate::config::paths::DocsPaths::installed());
    declared
        .into_iter()
        .filter(|tool| !callable.iter().any(|e| e.tool.name() == tool.name()))
        .map(|tool| {
            if tool.name() != pi_codemode::TOOL_NAME {
                return tool;
            }
            let described: Arc<dyn AgentTool> = Arc::new(Described {
                description: pi_codemode::describe(&listed, Some(budget), Some(&docs)),
                inner: tool,
            });
            described
        })
        .collect()
}

/// A declared tool whose description gained the codemode line; everything else is the tool's.
struct Described {
    inner: Arc<dyn AgentTool>,
    description: String,
}

#[async_trait::async_trait]
impl AgentTool for Described {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn label(&self) -> &str {
        self.inner.label()
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> serde_json::Value {
        self.inner.parameters()
    }
    fn execution_mode(&self) -> pi_agent::ExecutionMode {
        self.inner.execution_mode()
    }
    fn prompt_snippet(&self) -> Option<String> {
        self.inner.prompt_snippet()
    }
    fn prompt_guidelines(&self) -> Vec<String> {
        self.inner.prompt_guidelines()
    }
    fn constrained_sampling(&self) -> Option<serde_json::Value> {
        self.inner.constrained_sampling()
    }
    fn prepare_arguments(&self, arguments: serde_json::Value) -> serde_json::Value {
        self.inner.prepare_arguments(arguments)
    }
    fn runs_nested_tools(&self) -> bool {
        self.inner.runs_nested_tools()
    }
    async fn execute(
        &self,
        tool_call_id: &str,
        arguments: serde_json::Value,
        cancel: tokio_util::sync::CancellationToken,
        on_update: pi_agent::ToolUpdateFn,
    ) -> Result<pi_agent::ToolOutput, pi_agent::ToolError> {
        self.inner.execute(tool_call_id, arguments, cancel, on_update).await
    }
}
