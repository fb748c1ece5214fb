//! The one registry of tools a session can use: built-in, extension, MCP and codemode tools,
//! with where each came from, how it is exposed, and which are active.
//!
//! The registry answers the questions asked before every request: which tools are declared to
//! the model ([`ToolRegistry::declared`]), which a script may call ([`ToolRegistry::reachable`],
//! what codemode and `ExtensionToolContext.tools` see), and what the system prompt says about
//! them ([`ToolRegistry::prompt_entries`]). Every change bumps [`ToolRegistry::generation`], so a
//! caller rebuilds the prompt and the declarations only when something changed.
//!
//! The rules are pi's:
//! - exposure `direct` (default): declared while active, reachable while active;
//!   `model-only`: declared while active, never reachable from scripts;
//!   `codemode`: reachable once registered, declared only when activated;
//!   `deferred`: like `codemode`, found through `tool_search`;
//!   `hidden`: neither (registering a tool again as hidden is how it is withdrawn).
//! - Registering activates a new tool only when it is `direct`/`model-only` and its
//!   `default_active` is true. A tool registered again under the same name replaces the old one
//!   in place (an extension overriding a built-in keeps the built-in's position and activation);
//!   the prompt snippet and guidelines are the new tool's, never inherited.
//! - [`ToolRegistry::set_active`] ignores unknown and hidden names; tools already active keep
//!   their order, newly activated ones are appended.

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::tool::AgentTool;

/// Where a tool came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolSource {
    /// One of pi's own tools (read, bash, edit, write, grep, find, ls).
    Builtin,
    /// Registered by an extension (its path or package name).
    Extension(String),
    /// Offered by an MCP server (its configured name).
    Mcp(String),
    /// codemode and tool_search.
    Codemode,
}

/// How a tool is offered (pi's `exposure`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Exposure {
    #[default]
    Direct,
    ModelOnly,
    Codemode,
    Deferred,
    Hidden,
}

impl Exposure {
    /// pi's spelling (`model-only`, `codemode-deferred` as an alias of `codemode`).
    pub fn parse(s: &str) -> Option<Exposure> {
        Some(match s {
            "direct" => Exposure::Direct,
            "model-only" => Exposure::ModelOnly,
            "codemode" | "codemode-deferred" => Exposure::Codemode,
            "deferred" => Exposure::Deferred,
            "hidden" => Exposure::Hidden,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Exposure::Direct => "direct",
            Exposure::ModelOnly => "model-only",
            Exposure::Codemode => "codemode",
            Exposure::Deferred => "deferred",
            Exposure::Hidden => "hidden",
        }
    }

    /// Whether registering a tool with this exposure may activate it.
    fn activates_on_register(self) -> bool {
        matches!(self, Exposure::Direct | Exposure::ModelOnly)
    }
}

/// What the registry knows about a tool besides the tool itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolMeta {
    pub source: ToolSource,
    pub exposure: Exposure,
    /// `false`: registered inactive until `--tools`, a setting or `set_active` names it.
    pub default_active: bool,
    /// One line for the prompt's tool list while active (`None`: not listed).
    pub snippet: Option<String>,
    /// Bullets the prompt's rules gain while this tool is active.
    pub guidelines: Vec<String>,
}

impl ToolMeta {
    /// Metadata taken from the tool's own prompt snippet and guidelines.
    pub fn of(tool: &dyn AgentTool, source: ToolSource) -> ToolMeta {
        ToolMeta {
            source,
            exposure: Exposure::Direct,
            default_active: true,
            snippet: tool.prompt_snippet(),
            guidelines: tool.prompt_guidelines(),
        }
    }

    pub fn exposure(mut self, exposure: Exposure) -> Self {
        self.exposure = exposure;
        self
    }

    pub fn default_active(mut self, active: bool) -> Self {
        self.default_active = active;
        self
    }
}

/// A registered tool as listings show it (pi's `getAllTools`).
#[derive(Clone)]
pub struct ToolEntry {
    pub tool: Arc<dyn AgentTool>,
    pub meta: ToolMeta,
    pub active: bool,
}

impl std::fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.tool.name())
            .field("meta", &self.meta)
            .field("active", &self.active)
            .finish()
    }
}

/// What the system prompt says about one declared tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptEntry {
    pub name: String,
    pub snippet: Option<String>,
    pub guidelines: Vec<String>,
}

/// Whether a registration added a tool or replaced one of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Registered {
    Added,
    Replaced,
}

#[derive(Default)]
struct Inner {
    /// In registration order.
    entries: Vec<ToolEntry>,
    /// Active tool names, in activation order (the order they are declared in).
    active: Vec<String>,
    generation: u64,
}

impl Inner {
    fn index(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.tool.name() == name)
    }

    fn activate(&mut self, name: &str) {
        if !self.active.iter().any(|n| n == name) {
            self.active.push(name.to_string());
        }
    }

    fn deactivate(&mut self, name: &str) {
        self.active.retain(|n| n != name);
    }

    fn sync_flags(&mut self) {
        for e in &mut self.entries {
            e.active = self.active.iter().any(|n| n == e.tool.name());
        }
    }
}

/// Shared by the session, the extension runner, the MCP manager and codemode; cheap to read.
#[derive(Default)]
pub struct ToolRegistry {
    inner: RwLock<Inner>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.read();
        f.debug_struct("ToolRegistry")
            .field("entries", &inner.entries)
            .field("active", &inner.active)
            .field("generation", &inner.generation)
            .finish()
    }
}

impl ToolRegistry {
    pub fn new() -> Arc<ToolRegistry> {
        Arc::new(ToolRegistry::default())
    }

    /// A registry holding `tools` as built-ins, all active, in order.
    pub fn with_builtins(tools: Vec<Arc<dyn AgentTool>>) -> Arc<ToolRegistry> {
        let registry = ToolRegistry::new();
        for tool in tools {
            let meta = ToolMeta::of(tool.as_ref(), ToolSource::Builtin);
            registry.register(tool, meta);
        }
        registry
    }

    // A poisoned lock only means a panic elsewhere while holding it; the data is still whole
    // (every write below completes before it can panic), so keep serving it.
    fn read(&self) -> RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Add a tool, or replace the one of the same name in place.
    pub fn register(&self, tool: Arc<dyn AgentTool>, meta: ToolMeta) -> Registered {
        let mut inner = self.write();
        let name = tool.name().to_string();
        let outcome = match inner.index(&name) {
            Some(i) => {
                let was_active = inner.entries[i].active;
                inner.entries[i] = ToolEntry {
                    tool,
                    meta: meta.clone(),
                    active: was_active,
                };
                if meta.exposure == Exposure::Hidden {
                    inner.deactivate(&name);
                }
                Registered::Replaced
            }
            None => {
                inner.entries.push(ToolEntry {
                    tool,
                    meta: meta.clone(),
                    active: false,
                });
                if meta.exposure.activates_on_register() && meta.default_active {
                    inner.activate(&name);
                }
                Registered::Added
            }
        };
        inner.sync_flags();
        inner.generation += 1;
        outcome
    }

    /// Drop every tool `source` matches (an MCP server disconnected, an extension host restarted).
    pub fn remove_where(&self, matches: impl Fn(&ToolSource) -> bool) -> usize {
        let mut inner = self.write();
        let before = inner.entries.len();
        let removed: Vec<String> = inner
            .entries
            .iter()
            .filter(|e| matches(&e.meta.source))
            .map(|e| e.tool.name().to_string())
            .collect();
        inner.entries.retain(|e| !matches(&e.meta.source));
        for name in &removed {
            inner.deactivate(name);
        }
        let count = before - inner.entries.len();
        if count > 0 {
            inner.generation += 1;
        }
        count
    }

    /// Make exactly `names` active (pi's `setActiveTools`): unknown and hidden names are ignored,
    /// tools already active keep their order, newly activated ones follow in the given order.
    pub fn set_active<S: AsRef<str>>(&self, names: &[S]) {
        let mut inner = self.write();
        let allowed = |inner: &Inner, n: &str| {
            inner
                .index(n)
                .is_some_and(|i| inner.entries[i].meta.exposure != Exposure::Hidden)
        };
        let wanted: Vec<&str> = names.iter().map(AsRef::as_ref).filter(|n| allowed(&inner, n)).collect();
        let mut active: Vec<String> = inner
            .active
            .iter()
            .filter(|n| wanted.contains(&n.as_str()))
            .cloned()
            .collect();
        for n in wanted {
            if !active.iter().any(|a| a == n) {
                active.push(n.to_string());
            }
        }
        if active != inner.active {
            inner.active = active;
            inner.sync_flags();
            inner.generation += 1;
        }
    }

    /// Activate one more tool (tool_search loading a deferred tool); false if unknown or hidden.
    pub fn activate(&self, name: &str) -> bool {
        let mut inner = self.write();
        match inner.index(name) {
            Some(i) if inner.entries[i].meta.exposure != Exposure::Hidden => {
                if !inner.entries[i].active {
                    inner.activate(name);
                    inner.sync_flags();
                    inner.generation += 1;
                }
                true
            }
            _ => false,
        }
    }

    /// The active tool names, in declaration order (pi's `getActiveTools`).
    pub fn active_names(&self) -> Vec<String> {
        self.read().active.clone()
    }

    /// Every registered tool except hidden ones, in registration order (pi's `getAllTools`).
    pub fn entries(&self) -> Vec<ToolEntry> {
        self.read()
            .entries
            .iter()
            .filter(|e| e.meta.exposure != Exposure::Hidden)
            .cloned()
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<ToolEntry> {
        let inner = self.read();
        inner.index(name).map(|i| inner.entries[i].clone())
    }

    /// The tools declared to the model for the next request, in activation order.
    pub fn declared(&self) -> Vec<Arc<dyn AgentTool>> {
        let inner = self.read();
        inner
            .active
            .iter()
            .filter_map(|n| inner.index(n))
            .map(|i| Arc::clone(&inner.entries[i].tool))
            .collect()
    }

    /// The tools a script may call (codemode, `ExtensionToolContext.tools`): active direct
    /// tools, and codemode and deferred tools whether active or not.
    pub fn reachable(&self) -> Vec<Arc<dyn AgentTool>> {
        self.read()
            .entries
            .iter()
            .filter(|e| match e.meta.exposure {
                Exposure::Direct => e.active,
                Exposure::Codemode | Exposure::Deferred => true,
                Exposure::ModelOnly | Exposure::Hidden => false,
            })
            .map(|e| Arc::clone(&e.tool))
            .collect()
    }

    /// The prompt's tool lines and rules, for the declared tools in declaration order.
    pub fn prompt_entries(&self) -> Vec<PromptEntry> {
        let inner = self.read();
        inner
            .active
            .iter()
            .filter_map(|n| inner.index(n))
            .map(|i| {
                let e = &inner.entries[i];
                PromptEntry {
                    name: e.tool.name().to_string(),
                    snippet: e.meta.snippet.clone(),
                    guidelines: e.meta.guidelines.clone(),
                }
            })
            .collect()
    }

    /// Bumped by every change; equal generations mean equal declarations and prompt entries.
    pub fn generation(&self) -> u64 {
        self.read().generation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ToolError, ToolOutput, ToolUpdateFn};
    use async_trait::async_trait;
    use serde_json::{json, Value};
    use tokio_util::sync::CancellationToken;

    struct Named(&'static str, &'static str);

    #[async_trait]
    impl AgentTool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            self.1
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn prompt_snippet(&self) -> Option<String> {
            Some(format!("{} snippet", self.1))
        }
        async fn execute(
            &self,
            _id: &str,
            _args: Value,
            _cancel: CancellationToken,
            _on_update: ToolUpdateFn,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(self.1))
        }
    }

    fn tool(name: &'static str) -> Arc<dyn AgentTool> {
        Arc::new(Named(name, "builtin"))
    }

    fn ext(name: &'static str) -> Arc<dyn AgentTool> {
        Arc::new(Named(name, "extension"))
    }

    fn names(tools: &[Arc<dyn AgentTool>]) -> Vec<&str> {
        tools.iter().map(|t| t.name()).collect()
    }

    fn builtins() -> Arc<ToolRegistry> {
        let r = ToolRegistry::with_builtins(vec![tool("read"), tool("bash"), tool("edit"), tool("write")]);
        for n in ["grep", "find", "ls"] {
            let t = tool(n);
            let meta = ToolMeta::of(t.as_ref(), ToolSource::Builtin).default_active(false);
            r.register(t, meta);
        }
        r
    }

    #[test]
    fn builtins_inactive_by_default_are_registered_but_not_declared() {
        let r = builtins();
        assert_eq!(names(&r.declared()), ["read", "bash", "edit", "write"]);
        assert_eq!(r.entries().len(), 7);
        assert!(r.get("grep").is_some_and(|e| !e.active));
    }

    #[test]
    fn a_tool_added_later_is_declared_and_in_the_prompt_and_bumps_the_generation() {
        let r = builtins();
        let before = r.generation();
        let t = ext("deploy");
        let meta = ToolMeta::of(t.as_ref(), ToolSource::Extension("ext.ts".into()));
        assert_eq!(r.register(t, meta), Registered::Added);
        assert!(r.generation() > before);
        assert_eq!(names(&r.declared()), ["read", "bash", "edit", "write", "deploy"]);
        let prompt = r.prompt_entries();
        assert_eq!(prompt.last().map(|p| p.name.as_str()), Some("deploy"));
        assert_eq!(
            prompt.last().and_then(|p| p.snippet.as_deref()),
            Some("extension snippet")
        );
    }

    #[test]
    fn overriding_a_builtin_keeps_its_place_and_takes_the_new_snippet() {
        let r = builtins();
        let t = ext("bash");
        let meta = ToolMeta {
            snippet: None,
            ..ToolMeta::of(t.as_ref(), ToolSource::Extension("x.ts".into()))
        };
        assert_eq!(r.register(t, meta), Registered::Replaced);
        assert_eq!(names(&r.declared()), ["read", "bash", "edit", "write"]);
        assert_eq!(r.declared()[1].description(), "extension");
        assert_eq!(r.prompt_entries()[1].snippet, None, "snippets are not inherited");
    }

    #[test]
    fn hidden_withdraws_a_tool_everywhere() {
        let r = builtins();
        let t = ext("edit");
        let meta = ToolMeta::of(t.as_ref(), ToolSource::Extension("x.ts".into())).exposure(Exposure::Hidden);
        r.register(t, meta);
        assert_eq!(names(&r.declared()), ["read", "bash", "write"]);
        assert!(!names(&r.reachable()).contains(&"edit"));
        assert!(r.entries().iter().all(|e| e.tool.name() != "edit"));
        r.set_active(&["edit", "read"]);
        assert_eq!(r.active_names(), ["read"], "hidden names are ignored");
    }

    #[test]
    fn set_active_keeps_the_order_of_active_tools_and_appends_new_ones() {
        let r = builtins();
        r.set_active(&["ls", "write", "nope", "read"]);
        assert_eq!(r.active_names(), ["read", "write", "ls"]);
        let g = r.generation();
        r.set_active(&["read", "write", "ls"]);
        assert_eq!(r.generation(), g, "no change, no new generation");
    }

    #[test]
    fn exposures_decide_what_is_declared_and_what_scripts_reach() {
        let r = ToolRegistry::new();
        for (name, exposure) in [
            ("direct", Exposure::Direct),
            ("model_only", Exposure::ModelOnly),
            ("cm", Exposure::Codemode),
            ("later", Exposure::Deferred),
        ] {
            let t = ext(name);
            let meta = ToolMeta::of(t.as_ref(), ToolSource::Mcp("srv".into())).exposure(exposure);
            r.register(t, meta);
        }
        assert_eq!(names(&r.declared()), ["direct", "model_only"]);
        assert_eq!(names(&r.reachable()), ["direct", "cm", "later"]);
        assert!(r.activate("later"), "tool_search loads a deferred tool");
        assert_eq!(names(&r.declared()), ["direct", "model_only", "later"]);
        assert!(!r.activate("missing"));
    }

    #[test]
    fn removing_a_source_drops_its_tools_and_their_activation() {
        let r = builtins();
        for n in ["mcp__a__x", "mcp__a__y"] {
            let t = ext(n);
            let meta = ToolMeta::of(t.as_ref(), ToolSource::Mcp("a".into()));
            r.register(t, meta);
        }
        assert_eq!(r.declared().len(), 6);
        assert_eq!(r.remove_where(|s| *s == ToolSource::Mcp("a".into())), 2);
        assert_eq!(names(&r.declared()), ["read", "bash", "edit", "write"]);
        assert_eq!(r.remove_where(|s| *s == ToolSource::Mcp("a".into())), 0);
    }

    #[test]
    fn exposure_names_round_trip() {
        for e in [
            Exposure::Direct,
            Exposure::ModelOnly,
            Exposure::Codemode,
            Exposure::Deferred,
            Exposure::Hidden,
        ] {
            assert_eq!(Exposure::parse(e.as_str()), Some(e));
        }
        assert_eq!(Exposure::parse("codemode-deferred"), Some(Exposure::Codemode));
        assert_eq!(Exposure::parse("everything"), None);
    }
}
