//! `tool_search` (`builtin:tool-search`): finds registered tools the model has not been given
//! yet (codemode and deferred exposure) by BM25 over their names, descriptions and parameter
//! names and descriptions, and activates the matches so that they are declared from the next
//! request on.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use pi_agent::{AgentTool, Exposure, ToolEntry, ToolError, ToolOutput, ToolRegistry, ToolUpdateFn};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::McpRuntime;

pub const TOOL_SEARCH_NAME: &str = "tool_search";
const DEFAULT_LIMIT: usize = 8;
/// A name's words count this many times, so a tool named for the query outranks one that
/// mentions it.
const NAME_WEIGHT: usize = 3;
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it", "of", "on", "or", "the",
    "to", "with", "that", "this", "tool", "tools",
];

const DESCRIPTION: &str = "# Tool discovery

Some tools are not loaded at the start. Search them by what you need (words of a name, a task, a \
service) and the matching tools are loaded: you can call them from your next call on.
Search again with other words when nothing fits.";

/// Lower-case words of `text` without stop words, naively singular (`files` → `file`).
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(|w| {
            if let Some(stem) = w.strip_suffix("ies").filter(|s| s.len() >= 2) {
                return format!("{stem}y");
            }
            match w.strip_suffix('s') {
                Some(stem) if stem.len() >= 3 && !stem.ends_with('s') => stem.to_string(),
                _ => w,
            }
        })
        .collect()
}

/// The text of a schema's property names and descriptions, nested ones included.
fn schema_text(schema: &Value, out: &mut String) {
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            out.push(' ');
            out.push_str(name);
            if let Some(description) = property.get("description").and_then(Value::as_str) {
                out.push(' ');
                out.push_str(description);
            }
            schema_text(property, out);
        }
    }
    if let Some(items) = schema.get("items") {
        schema_text(items, out);
    }
}

fn document(entry: &ToolEntry) -> Vec<String> {
    let tool = &entry.tool;
    let mut doc = Vec::new();
    for _ in 0..NAME_WEIGHT {
        doc.extend(words(tool.name()));
    }
    let mut text = tool.description().to_string();
    schema_text(&tool.parameters(), &mut text);
    doc.extend(words(&text));
    doc
}

/// The names of the best `limit` matches of `query` among `entries`, best first (BM25).
pub fn rank(entries: &[ToolEntry], query: &str, limit: usize) -> Vec<String> {
    let query = words(query);
    if query.is_empty() || entries.is_empty() {
        return Vec::new();
    }
    let docs: Vec<Vec<String>> = entries.iter().map(document).collect();
    let count = docs.len() as f64;
    let average = docs.iter().map(Vec::len).sum::<usize>() as f64 / count;
    let mut frequency: HashMap<&str, usize> = HashMap::new();
    for doc in &docs {
        let mut seen: Vec<&str> = doc.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *frequency.entry(w).or_default() += 1;
        }
    }
    let (k1, b) = (1.2, 0.75);
    let mut scored: Vec<(f64, usize)> = docs
        .iter()
        .enumerate()
        .map(|(i, doc)| {
            let length = doc.len() as f64;
            let score: f64 = query
                .iter()
                .map(|term| {
                    let tf = doc.iter().filter(|w| *w == term).count() as f64;
                    if tf == 0.0 {
                        return 0.0;
                    }
                    let df = frequency.get(term.as_str()).copied().unwrap_or(0) as f64;
                    let idf = ((count - df + 0.5) / (df + 0.5) + 1.0).ln();
                    idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / average.max(1.0)))
                })
                .sum();
            (score, i)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored
        .into_iter()
        .take(limit)
        .map(|(_, i)| entries[i].tool.name().to_string())
        .collect()
}

pub struct ToolSearch {
    registry: Weak<ToolRegistry>,
    /// Searches wait for every server to connect (or fail), so their tools are there to find.
    servers: Option<Arc<McpRuntime>>,
}

impl ToolSearch {
    pub fn new(registry: &Arc<ToolRegistry>, servers: Option<Arc<McpRuntime>>) -> ToolSearch {
        ToolSearch {
            registry: Arc::downgrade(registry),
            servers,
        }
    }
}

#[async_trait]
impl AgentTool for ToolSearch {
    fn name(&self) -> &str {
        TOOL_SEARCH_NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the tools you need."},
                "limit": {"type": "number", "description": "How many tools to load at most (default 8)."}
            },
            "required": ["query"]
        })
    }

    fn prompt_snippet(&self) -> Option<String> {
        Some("Find tools that are not loaded yet and load the ones that match".into())
    }

    async fn execute(
        &self,
        _tool_call_id: &str,
        arguments: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> Result<ToolOutput, ToolError> {
        if let Some(servers) = &self.servers {
            tokio::select! {
                _ = servers.wait_for_all() => {}
                _ = cancel.cancelled() => return Err(ToolError::new("Tool search aborted")),
            }
        }
        let Some(registry) = self.registry.upgrade() else {
            return Err(ToolError::new("The session's tools are gone."));
        };
        let query = arguments.get("query").and_then(Value::as_str).unwrap_or("");
        let limit = arguments
            .get("limit")
            .and_then(Value::as_f64)
            .filter(|l| *l >= 1.0)
            .map_or(DEFAULT_LIMIT, |l| l as usize);
        let candidates: Vec<ToolEntry> = registry
            .entries()
            .into_iter()
            .filter(|e| !e.active && matches!(e.meta.exposure, Exposure::Codemode | Exposure::Deferred))
            .collect();
        let found = rank(&candidates, query, limit);
        let mut loaded: Vec<String> = Vec::new();
        let mut lines: Vec<String> = Vec::new();
        for name in found {
            if registry.activate(&name) {
                let description = candidates
                    .iter()
                    .find(|e| e.tool.name() == name)
                    .map(|e| e.tool.description().lines().next().unwrap_or("").trim().to_string())
                    .unwrap_or_default();
                lines.push(format!("- {name}: {description}"));
                loaded.push(name);
            }
        }
        let text = if loaded.is_empty() {
            "No matching tools found.".to_string()
        } else {
            format!(
                "Loaded {} tool{}. They are available from your next call:\n{}",
                loaded.len(),
                if loaded.len() == 1 { "" } else { "s" },
                lines.join("\n")
            )
        };
        Ok(ToolOutput::text(text).with_details(json!({ "loaded": loaded })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_agent::{ToolMeta, ToolSource};

    struct T(&'static str, &'static str, Value);

    #[async_trait]
    impl AgentTool for T {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            self.1
        }
        fn parameters(&self) -> Value {
            self.2.clone()
        }
        async fn execute(
            &self,
            _: &str,
            _: Value,
            _: CancellationToken,
            _: ToolUpdateFn,
        ) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text("ran"))
        }
    }

    fn registry() -> Arc<ToolRegistry> {
        let registry = ToolRegistry::new();
        let tools: Vec<(T, Exposure)> = vec![
            (
                T("mcp__demo__echo", "Echo the given text back.", json!({"type":"object"})),
                Exposure::Deferred,
            ),
            (
                T(
                    "mcp__demo__weather",
                    "Current conditions for a place.",
                    json!({"type":"object","properties":{"city":{"type":"string","description":"City to report on, e.g. Paris"}}}),
                ),
                Exposure::Deferred,
            ),
            (
                T("mcp__demo__mentions", "Mentions echo once.", json!({"type":"object"})),
                Exposure::Codemode,
            ),
            (
                T("mcp__demo__secret", "Echo secrets.", json!({"type":"object"})),
                Exposure::Hidden,
            ),
        ];
        for (tool, exposure) in tools {
            let meta = ToolMeta::of(&tool, ToolSource::Mcp("demo".into())).exposure(exposure);
            registry.register(Arc::new(tool), meta);
        }
        registry
    }

    #[test]
    fn names_outrank_mentions_and_parameters_are_searched() {
        let registry = registry();
        let entries = registry.entries();
        assert_eq!(rank(&entries, "echo", 8), ["mcp__demo__echo", "mcp__demo__mentions"]);
        assert_eq!(
            rank(&entries, "cities", 8),
            ["mcp__demo__weather"],
            "plural and a parameter description"
        );
        assert!(rank(&entries, "the of", 8).is_empty(), "stop words only");
        assert_eq!(rank(&entries, "echo", 1).len(), 1);
    }

    #[tokio::test]
    async fn a_search_loads_the_matches_for_the_next_request() {
        let registry = registry();
        let search = ToolSearch::new(&registry, None);
        let noop: ToolUpdateFn = Arc::new(|_| {});
        let out = search
            .execute(
                "1",
                json!({"query": "weather in a city"}),
                CancellationToken::new(),
                noop.clone(),
            )
            .await
            .expect("searched");
        assert_eq!(
            out.content[0].clone(),
            pi_ai::Content::text(
                "Loaded 1 tool. They are available from your next call:\n- mcp__demo__weather: Current conditions for a place."
            )
        );
        assert_eq!(out.details, Some(json!({"loaded": ["mcp__demo__weather"]})));
        assert_eq!(registry.active_names(), ["mcp__demo__weather"]);
        let again = search
            .execute("2", json!({"query": "weather"}), CancellationToken::new(), noop)
            .await
            .expect("searched");
        assert_eq!(
            again.content[0].clone(),
            pi_ai::Content::text("No matching tools found."),
            "already loaded"
        );
    }
}
