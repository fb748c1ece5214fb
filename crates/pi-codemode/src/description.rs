//! The codemode tool as the model sees it: what a script is and which globals it has, then the
//! tools listed with their declarations, grouped by namespace and held to a token budget so a
//! large catalogue does not ride along with every request.

use crate::declarations::{to_identifier, ToolDeclaration};
use crate::execute::Namespace;
use crate::output::CHARS_PER_TOKEN;

pub const TOOL_NAME: &str = "codemode";
pub const DEFAULT_INLINE_BUDGET: usize = 3000;
pub const PROMPT_SNIPPET: &str = "Run JavaScript that calls other tools";
pub const PROMPT_GUIDELINE: &str = "Use codemode to batch independent tool calls (Promise.allSettled), chain them, or filter large output, instead of many separate calls.";
pub const CODE_DESCRIPTION: &str = "Raw JavaScript source.";

const INTRO: &str = "Run a JavaScript program that calls other tools. Send the program itself (no JSON wrapping, no markdown fence); it runs as the body of an async function in a QuickJS sandbox, so `await` and `return` work at the top level. There is no Node, no file system, no network and no timers.
- `await tools.<name>({ ...args })` gives a string, or an object when the tool's declaration returns one, and throws an Error when the call fails. A tool declared to return an object also gives that object for a failed call that returned one, so check its fields. Calls still running when the program ends are cancelled.
- The first line may set options: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`";

const GLOBALS: &str = "Globals:
- Output: `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return`; `exit()` stops the program. Several text items each start with a `==> text N/M <==` line; `console` lines come after the rest in one `<console_output>` block. Each `image()` is also saved to a temp file whose path the result gives.
- `store(key, value)` / `load(key)`: JSON values kept from one codemode call to the next.
- Finding tools that are not listed here, such as MCP tools: `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`.";

/// One tool the description may list.
#[derive(Debug, Clone)]
pub struct ListedTool {
    pub declaration: ToolDeclaration,
    pub namespace: Option<Namespace>,
}

fn section(declaration: &ToolDeclaration) -> String {
    let id = to_identifier(&declaration.name);
    let heading = if id == declaration.name {
        format!("### `{id}`")
    } else {
        format!("### `{id}` (`{}`)", declaration.name)
    };
    format!("{heading}\n{}", declaration.sample().trim())
}

struct Entry {
    name: String,
    section: String,
    cost: usize,
}

struct Group {
    namespace: Option<Namespace>,
    entries: Vec<Entry>,
}

/// Round by round, every group places its cheapest remaining tool while it fits; a group whose
/// next tool does not fit stops. So every namespace shows something before any shows all.
fn select(groups: &[Group], budget: Option<usize>) -> Vec<String> {
    let Some(mut remaining) = budget else {
        return groups
            .iter()
            .flat_map(|g| g.entries.iter().map(|e| e.name.clone()))
            .collect();
    };
    let mut queues: Vec<Vec<&Entry>> = groups
        .iter()
        .map(|g| {
            let mut entries: Vec<&Entry> = g.entries.iter().collect();
            entries.sort_by_key(|e| e.cost);
            entries.reverse();
            entries
        })
        .filter(|q| !q.is_empty())
        .collect();
    let mut shown = Vec::new();
    while !queues.is_empty() {
        queues.retain_mut(|queue| {
            let Some(next) = queue.last() else {
                return false;
            };
            if next.cost > remaining {
                return false;
            }
            remaining -= next.cost;
            shown.push(next.name.clone());
            queue.pop();
            !queue.is_empty()
        });
    }
    shown
}

/// The codemode description listing `tools` (already without deferred ones) within `budget`
/// estimated tokens (`None`: no limit).
/// `models_docs` is where the `models` reference lives; `None` when scripts have no `models`.
pub fn describe(tools: &[ListedTool], budget: Option<usize>, models_docs: Option<&str>) -> String {
    let mut out = format!("{INTRO}\n\n{GLOBALS}");
    if let Some(docs) = models_docs {
        out.push_str(&format!(
            "\n- `models`: the model catalogue, classifiers and image models. Read {docs} before using it."
        ));
    }
    if tools.is_empty() {
        return out;
    }
    let mut groups: Vec<Group> = vec![Group {
        namespace: None,
        entries: Vec::new(),
    }];
    for tool in tools {
        let section = section(&tool.declaration);
        let entry = Entry {
            name: tool.declaration.name.clone(),
            cost: section.len().div_ceil(CHARS_PER_TOKEN),
            section,
        };
        let key = tool.namespace.as_ref().map(|n| n.name.as_str());
        match groups
            .iter_mut()
            .find(|g| g.namespace.as_ref().map(|n| n.name.as_str()) == key)
        {
            Some(group) => group.entries.push(entry),
            None => groups.push(Group {
                namespace: tool.namespace.clone(),
                entries: vec![entry],
            }),
        }
    }
    groups[1..].sort_by(|a, b| {
        let name = |g: &Group| g.namespace.as_ref().map(|n| n.name.clone()).unwrap_or_default();
        name(a).cmp(&name(b))
    });
    let shown = select(&groups, budget);
    let mut parts = vec!["Nested tools:".to_string()];
    for group in &groups {
        let visible: Vec<&Entry> = group.entries.iter().filter(|e| shown.contains(&e.name)).collect();
        if let Some(namespace) = &group.namespace {
            let listing = if visible.len() == group.entries.len() {
                ""
            } else if visible.is_empty() {
                " (tools not listed)"
            } else {
                " (some tools not listed)"
            };
            let mut heading = format!("## {}{listing}", namespace.name);
            if let Some(description) = namespace
                .description
                .as_deref()
                .map(str::trim)
                .filter(|d| !d.is_empty())
            {
                heading.push('\n');
                heading.push_str(description);
            }
            parts.push(heading);
        }
        parts.extend(visible.iter().map(|e| e.section.clone()));
    }
    out.push_str("\n\n");
    out.push_str(&parts.join("\n\n"));
    out
}

/// The line a declared tool's own description gains when scripts can call it too.
pub fn script_call_line(declaration: &ToolDeclaration) -> String {
    let resolves = match &declaration.output_schema {
        None => "a string".to_string(),
        Some(schema) => match object_fields(schema, schema, 1) {
            Some(fields) => format!("`{fields}`"),
            None => {
                let rendered = declaration.output_type();
                if rendered.contains('\n') {
                    format!(
                        "a value; `await describeTool({})` shows its type",
                        serde_json::Value::String(declaration.name.clone())
                    )
                } else {
                    format!("`{rendered}`")
                }
            }
        },
    };
    format!(
        "{}\n\nCodemode: `tools.{}(args)` resolves to {resolves}.",
        declaration.description.trim(),
        to_identifier(&declaration.name)
    )
}

/// `{ output, exit_code, full_output_path? }`: an object schema's field names, `depth` levels deep.
fn object_fields(schema: &serde_json::Value, root: &serde_json::Value, depth: usize) -> Option<String> {
    let mut current = schema;
    for _ in 0..8 {
        match current.get("$ref").and_then(|r| r.as_str()) {
            Some(reference) => current = crate::declarations::resolve_ref(reference, root)?,
            None => break,
        }
    }
    if current.get("type").and_then(|t| t.as_str()) != Some("object") {
        return None;
    }
    let properties = current.get("properties")?.as_object()?;
    let required: Vec<&str> = current
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| r.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default();
    let fields: Vec<String> = properties
        .iter()
        .map(|(name, field)| {
            let optional = if required.contains(&name.as_str()) { "" } else { "?" };
            let nested = match field.get("const") {
                Some(value) => Some(value.to_string()),
                None if depth > 0 => object_fields(field, root, depth - 1),
                None => None,
            };
            match nested {
                Some(nested) => format!("{name}{optional}: {nested}"),
                None => format!("{name}{optional}"),
            }
        })
        .collect();
    Some(format!("{{ {} }}", fields.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, namespace: Option<&str>) -> ListedTool {
        ListedTool {
            declaration: ToolDeclaration {
                name: name.into(),
                description: format!("The {name} tool."),
                input_schema: json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
                output_schema: None,
            },
            namespace: namespace.map(|n| Namespace {
                name: n.into(),
                ..Namespace::default()
            }),
        }
    }

    #[test]
    fn tools_are_grouped_and_the_budget_marks_what_is_left_out() {
        let all = describe(&[tool("read", None), tool("mcp__a__x", Some("mcp__a"))], None, None);
        assert!(all.contains("Nested tools:\n\n### `read`\nThe read tool."), "{all}");
        assert!(all.contains("## mcp__a\n\n### `mcp__a__x`"), "{all}");
        let tight = describe(&[tool("read", None), tool("mcp__a__x", Some("mcp__a"))], Some(0), None);
        assert!(tight.contains("## mcp__a (tools not listed)"), "{tight}");
        assert!(!tight.contains("### `read`"));
        assert!(!describe(&[], None, None).contains("Nested tools"));
    }

    #[test]
    fn declared_tools_say_what_a_script_call_gives() {
        let mut bash = tool("bash", None).declaration;
        assert!(script_call_line(&bash).ends_with("Codemode: `tools.bash(args)` resolves to a string."));
        bash.output_schema = Some(
            json!({"type": "object", "properties": {"output": {"type": "string"}, "exit_code": {"type": "number"}}, "required": ["output"]}),
        );
        assert!(
            script_call_line(&bash).ends_with("resolves to `{ output, exit_code? }`."),
            "{}",
            script_call_line(&bash)
        );
    }
}
