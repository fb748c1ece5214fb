//! The session's tool loadout: the tools declared to the model and the system prompt that
//! describes them, both computed from the one [`ToolRegistry`] and rebuilt only when the
//! registry changed (a tool registered, withdrawn or (de)activated mid-session shows in the
//! next request, including one between two tool batches of the same run).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pi_agent::{AgentTool, NextTurn, PromptEntry, ToolRegistry};

use serde_json::{json, Map, Value};

use crate::system_prompt::{PromptEdits, PromptSections, ToolPrompt};

/// Builds the system prompt's sections for a set of declared tools and a run's edits (the rest
/// of the prompt's inputs are the source's own: resources, cwd, docs), and describes those
/// inputs as pi 1.6's `systemPromptOptions` fields for `before_agent_start`.
pub trait PromptSource: Send + Sync {
    fn build(&self, tools: &[ToolPrompt], edits: &PromptEdits) -> PromptSections;

    /// `customPrompt`, `appendSystemPrompt`, `cwd`, `contextFiles`, `skills` (camelCase JSON).
    fn options(&self) -> Map<String, Value> {
        Map::new()
    }
}

impl<F> PromptSource for F
where
    F: Fn(&[ToolPrompt], &PromptEdits) -> PromptSections + Send + Sync,
{
    fn build(&self, tools: &[ToolPrompt], edits: &PromptEdits) -> PromptSections {
        self(tools, edits)
    }
}

pub type PromptBuilder = Box<dyn PromptSource>;

/// What the agent should run with now.
#[derive(Clone)]
pub struct LoadoutState {
    /// The prompt's sections, as the transcript's system messages record them.
    pub sections: PromptSections,
    /// The sections rendered: the text a request carries.
    pub system_prompt: String,
    pub tools: Vec<Arc<dyn AgentTool>>,
}

pub struct Loadout {
    registry: Arc<ToolRegistry>,
    build: PromptBuilder,
    /// The prompt for a registry generation (`None`: never built).
    cache: Mutex<Option<(u64, PromptSections)>>,
    /// The generation last handed to the agent.
    applied: AtomicU64,
    /// A `before_agent_start` override holds for the prompt being run.
    prompt_overridden: AtomicBool,
    /// What `before_agent_start` handlers edited in `systemPromptOptions`, for the run.
    edits: Mutex<PromptEdits>,
    /// How codemode presents the other tools while it is declared.
    codemode: crate::codemode::CodemodeSettings,
}

impl std::fmt::Debug for Loadout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Loadout")
            .field("registry", &self.registry)
            .field("applied", &self.applied.load(Ordering::Relaxed))
            .finish()
    }
}

fn tool_prompts(entries: Vec<PromptEntry>) -> Vec<ToolPrompt> {
    entries
        .into_iter()
        .map(|e| ToolPrompt {
            name: e.name,
            snippet: e.snippet,
            guidelines: e.guidelines,
        })
        .collect()
}

impl Loadout {
    pub fn new(registry: Arc<ToolRegistry>, build: PromptBuilder) -> Loadout {
        Loadout {
            registry,
            build,
            cache: Mutex::new(None),
            applied: AtomicU64::new(u64::MAX),
            prompt_overridden: AtomicBool::new(false),
            edits: Mutex::new(PromptEdits::default()),
            codemode: Default::default(),
        }
    }

    /// The same loadout with codemode's settings.
    pub fn with_codemode_settings(mut self, settings: crate::codemode::CodemodeSettings) -> Loadout {
        self.codemode = settings;
        self
    }

    /// A loadout whose prompt is `prompt` whatever the tools (a caller that built its own).
    pub fn fixed(prompt: String, tools: Vec<Arc<dyn AgentTool>>) -> Loadout {
        let sections = PromptSections(vec![("preamble".to_string(), prompt)]);
        Loadout::new(
            ToolRegistry::with_builtins(tools),
            Box::new(move |_: &[ToolPrompt], _: &PromptEdits| sections.clone()),
        )
    }

    /// Record whether the prompt being run replaced the built one (`before_agent_start`).
    pub fn set_prompt_overridden(&self, overridden: bool) {
        self.prompt_overridden.store(overridden, Ordering::Relaxed);
    }

    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// The system prompt's sections for the registry as it is now (built once per generation).
    pub fn sections(&self) -> PromptSections {
        let generation = self.registry.generation();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        match cache.as_ref() {
            Some((g, sections)) if *g == generation => sections.clone(),
            _ => {
                let entries = crate::codemode::prompt_entries_for_scripts(
                    &self.registry,
                    self.registry.prompt_entries(),
                    self.codemode,
                );
                let edits = self.edits.lock().unwrap_or_else(|e| e.into_inner()).clone();
                let sections = self.build.build(&tool_prompts(entries), &edits);
                *cache = Some((generation, sections.clone()));
                sections
            }
        }
    }

    /// Build the prompt again at next use, and count it as changed (its inputs other than the
    /// tools changed: extensions added skills).
    pub fn invalidate(&self) {
        *self.cache.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.applied.store(u64::MAX, Ordering::Relaxed);
    }

    /// Edits of the prompt for the run being prepared (cleared with the default when it ends);
    /// a change counts as a change of the loadout.
    pub fn set_edits(&self, edits: PromptEdits) {
        let mut current = self.edits.lock().unwrap_or_else(|e| e.into_inner());
        if *current != edits {
            *current = edits;
            drop(current);
            self.invalidate();
        }
    }

    /// pi 1.6's `systemPromptOptions` for the registry as it is now: the declared tools with
    /// their snippets and guidelines, and the source's other inputs.
    pub fn prompt_options(&self) -> Value {
        let entries = self.registry.prompt_entries();
        let mut options = self.build.options();
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        let snippets: Map<String, Value> = entries
            .iter()
            .filter_map(|e| {
                let snippet = e.snippet.as_deref().filter(|s| !s.is_empty())?;
                Some((e.name.clone(), json!(snippet)))
            })
            .collect();
        let guidelines: Map<String, Value> = entries
            .iter()
            .filter(|e| !e.guidelines.is_empty())
            .map(|e| (e.name.clone(), json!(e.guidelines)))
            .collect();
        options.insert("selectedTools".into(), json!(names));
        options.insert("hiddenTools".into(), json!([]));
        options.insert("toolSnippets".into(), Value::Object(snippets));
        options.insert("toolGuidelines".into(), Value::Object(guidelines));
        options.insert("promptGuidelines".into(), json!([]));
        options.entry("appendSystemPrompt").or_insert(json!(""));
        options.insert("sections".into(), json!({}));
        options.entry("contextFiles").or_insert(json!([]));
        options.entry("skills").or_insert(json!([]));
        Value::Object(options)
    }

    /// The system prompt text for the registry as it is now.
    pub fn system_prompt(&self) -> String {
        self.sections().render()
    }

    /// The prompt and declared tools now, marked as handed to the agent.
    pub fn current(&self) -> LoadoutState {
        let generation = self.registry.generation();
        let sections = self.sections();
        let state = LoadoutState {
            system_prompt: sections.render(),
            sections,
            tools: crate::codemode::describe_for_scripts(&self.registry, self.registry.declared(), self.codemode),
        };
        self.applied.store(generation, Ordering::Relaxed);
        state
    }

    /// The new prompt and tools if the registry changed since they were last handed out.
    pub fn changed(&self) -> Option<LoadoutState> {
        (self.registry.generation() != self.applied.load(Ordering::Relaxed)).then(|| self.current())
    }

    /// For the agent loop's turn boundary: the changes to make before the next request. While
    /// a `before_agent_start` override holds for this prompt the tools still change and the
    /// overriding prompt stays.
    pub fn next_turn(&self) -> Option<NextTurn> {
        let keep_prompt = self.prompt_overridden.load(Ordering::Relaxed);
        self.changed().map(|state| NextTurn {
            system_prompt: (!keep_prompt).then_some(state.system_prompt),
            tools: Some(state.tools),
            ..Default::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use pi_agent::{ToolError, ToolMeta, ToolOutput, ToolSource, ToolUpdateFn};
    use serde_json::{json, Value};
    use std::sync::atomic::AtomicUsize;
    use tokio_util::sync::CancellationToken;

    struct T(&'static str);

    #[async_trait]
    impl AgentTool for T {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "d"
        }
        fn parameters(&self) -> Value {
            json!({"type": "object"})
        }
        fn prompt_snippet(&self) -> Option<String> {
            Some(format!("does {}", self.0))
        }
        async fn execute(
            &self,
            _: &str,
            _: Value,
            _: CancellationToken,
            _: ToolUpdateFn,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ok"))
        }
    }

    fn loadout(builds: Arc<AtomicUsize>) -> Loadout {
        let registry = ToolRegistry::with_builtins(vec![Arc::new(T("read")), Arc::new(T("bash"))]);
        Loadout::new(
            registry,
            Box::new(move |tools: &[ToolPrompt], _: &PromptEdits| {
                builds.fetch_add(1, Ordering::Relaxed);
                let list = tools
                    .iter()
                    .map(|t| format!("- {}: {}", t.name, t.snippet.clone().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join("\n");
                PromptSections(vec![("preamble".into(), list)])
            }),
        )
    }

    #[test]
    fn the_prompt_is_built_once_per_registry_change() {
        let builds = Arc::new(AtomicUsize::new(0));
        let l = loadout(builds.clone());
        assert_eq!(l.current().system_prompt, "- read: does read\n- bash: does bash");
        l.system_prompt();
        assert_eq!(builds.load(Ordering::Relaxed), 1);
        assert!(l.changed().is_none(), "nothing changed since it was handed out");
        let tool: Arc<dyn AgentTool> = Arc::new(T("deploy"));
        let meta = ToolMeta::of(tool.as_ref(), ToolSource::Extension("e.ts".into()));
        l.registry().register(tool, meta);
        let state = l.changed().expect("a registration changes the loadout");
        assert!(state.system_prompt.ends_with("- deploy: does deploy"));
        assert_eq!(state.tools.len(), 3);
        assert_eq!(builds.load(Ordering::Relaxed), 2);
        assert!(l.changed().is_none());
    }

    #[test]
    fn a_turn_boundary_after_a_change_carries_tools_and_keeps_an_override() {
        let l = loadout(Arc::new(AtomicUsize::new(0)));
        l.current();
        assert!(l.next_turn().is_none());
        l.registry().set_active(&["read"]);
        l.set_prompt_overridden(true);
        let next = l.next_turn().expect("changed");
        assert!(next.system_prompt.is_none(), "the override of this prompt stays");
        assert_eq!(next.tools.map(|t| t.len()), Some(1));
        l.registry().set_active(&["read", "bash"]);
        l.set_prompt_overridden(false);
        let next = l.next_turn().expect("changed");
        assert_eq!(
            next.system_prompt.as_deref(),
            Some("- read: does read\n- bash: does bash")
        );
    }
}
