//! pi 1.6's `builtin:codemode` in sessions: the `codemode` tool is registered (inactive
//! unless `--tools` names it) in every session while the built-in is on, MCP servers with
//! codemode exposure activate it, and while it is active the declared tools' descriptions say
//! how a script calls them.

pub mod host;
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
        let description = pi_codemode::describe(&listed, Some(pi_codemode::DEFAULT_INLINE_BUDGET));
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

/// The declared tools with the line that says how a script calls them, while codemode is
/// declared too (pi's `codemode.mode: "on"`).
pub fn describe_for_scripts(registry: &ToolRegistry, declared: Vec<Arc<dyn AgentTool>>) -> Vec<Arc<dyn AgentTool>> {
    if !declared.iter().any(|t| t.name() == pi_codemode::TOOL_NAME) {
        return declared;
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
