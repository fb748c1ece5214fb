//! Tools as scripts see them: the JavaScript identifier of a tool name, and a TypeScript
//! declaration rendered from its JSON schemas (property descriptions as `//` comments,
//! constraints as `@minimum 1`-style tags, local `$ref`s followed).

use serde_json::{Map, Value};

const INDENT: &str = "  ";
const MAX_REF_EXPANSIONS: usize = 32;
/// Input types longer than this are rendered without tags, then as `unknown`.
pub const INPUT_TYPE_MAX_CHARS: usize = 16_000;
const TAG_KEYWORDS: [&str; 11] = [
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
];
const MAX_TAG_CHARS: usize = 80;

/// A tool name as a script identifier: characters JavaScript does not allow become `_`.
pub fn to_identifier(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        let valid = c.is_ascii_alphabetic() || c == '_' || c == '$' || (!out.is_empty() && c.is_ascii_digit());
        out.push(if valid { c } else { '_' });
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

/// What a script needs to know about one tool.
#[derive(Debug, Clone)]
pub struct ToolDeclaration {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// `None`: the call resolves to the tool's text.
    pub output_schema: Option<Value>,
}

impl ToolDeclaration {
    /// The signature inside `declare const tools: { ... }`.
    pub fn signature(&self) -> String {
        let mut input = schema_to_type(&self.input_schema, true);
        if input.len() > INPUT_TYPE_MAX_CHARS {
            input = schema_to_type(&self.input_schema, false);
            if input.len() > INPUT_TYPE_MAX_CHARS {
                input = "unknown".to_string();
            }
        }
        format!(
            "{}(args: {input}): Promise<{}>;",
            to_identifier(&self.name),
            self.output_type()
        )
    }

    pub fn output_type(&self) -> String {
        match &self.output_schema {
            None => "string".to_string(),
            Some(schema) => schema_to_type(schema, true),
        }
    }

    /// The description followed by the declaration in a `ts` fence.
    pub fn sample(&self) -> String {
        format!(
            "{}\n\ncodemode tool declaration:\n```ts\ndeclare const tools: {{ {} }};\n```",
            self.description.trim(),
            self.signature()
        )
    }
}

/// The subschema a local `$ref` (`#/$defs/x`) names.
pub fn resolve_ref<'a>(reference: &str, root: &'a Value) -> Option<&'a Value> {
    if reference != "#" && !reference.starts_with("#/") {
        return None;
    }
    let mut current = root;
    for segment in reference
        .get(2..)
        .unwrap_or_default()
        .split('/')
        .filter(|s| !s.is_empty())
    {
        let key = segment.replace("~1", "/").replace("~0", "~");
        current = current.as_object()?.get(&key)?;
    }
    (current.is_object() || current.is_boolean()).then_some(current)
}

struct Render<'a> {
    root: &'a Value,
    resolving: Vec<String>,
    expansions: usize,
    tags: bool,
}

pub fn schema_to_type(schema: &Value, tags: bool) -> String {
    let mut render = Render {
        root: schema,
        resolving: Vec::new(),
        expansions: 0,
        tags,
    };
    render.type_of(schema)
}

fn union(types: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for t in types {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if unique.iter().any(|t| t == "unknown") {
        return "unknown".to_string();
    }
    if unique.is_empty() {
        return "never".to_string();
    }
    unique.join(" | ")
}

fn property_key(name: &str) -> String {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if valid {
        name.to_string()
    } else {
        Value::String(name.to_string()).to_string()
    }
}

impl Render<'_> {
    fn type_of(&mut self, schema: &Value) -> String {
        let object = match schema {
            Value::Bool(true) => return "unknown".to_string(),
            Value::Bool(false) => return "never".to_string(),
            Value::Object(object) => object,
            _ => return "unknown".to_string(),
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            if self.resolving.iter().any(|r| r == reference) || self.expansions >= MAX_REF_EXPANSIONS {
                return "unknown".to_string();
            }
            let Some(target) = resolve_ref(reference, self.root) else {
                return "unknown".to_string();
            };
            self.expansions += 1;
            self.resolving.push(reference.to_string());
            let out = self.type_of(target);
            self.resolving.pop();
            return out;
        }
        if let Some(value) = object.get("const") {
            return value.to_string();
        }
        if let Some(values) = object.get("enum").and_then(Value::as_array) {
            return union(values.iter().map(Value::to_string).collect());
        }
        let variants = object
            .get("anyOf")
            .and_then(Value::as_array)
            .or_else(|| object.get("oneOf").and_then(Value::as_array));
        if let Some(variants) = variants {
            return union(variants.iter().map(|v| self.type_of(v)).collect());
        }
        if let Some(parts) = object.get("allOf").and_then(Value::as_array) {
            let parts: Vec<String> = parts
                .iter()
                .map(|p| self.type_of(p))
                .filter(|p| p != "unknown")
                .collect();
            if parts.is_empty() {
                return "unknown".to_string();
            }
            return parts
                .iter()
                .map(|p| if p.contains(" | ") { format!("({p})") } else { p.clone() })
                .collect::<Vec<_>>()
                .join(" & ");
        }
        match object.get("type") {
            Some(Value::Array(types)) => {
                let types: Vec<String> = types
                    .iter()
                    .map(|t| {
                        let mut one = object.clone();
                        one.insert("type".to_string(), t.clone());
                        self.type_of(&Value::Object(one))
                    })
                    .collect();
                union(types)
            }
            Some(Value::String(t)) => match t.as_str() {
                "string" => "string".to_string(),
                "number" | "integer" => "number".to_string(),
                "boolean" => "boolean".to_string(),
                "null" => "null".to_string(),
                "array" => self.array_type(object),
                "object" => self.object_type(object),
                _ => "unknown".to_string(),
            },
            None => {
                if ["properties", "additionalProperties", "required"]
                    .iter()
                    .any(|k| object.contains_key(*k))
                {
                    self.object_type(object)
                } else if object.contains_key("items") || object.contains_key("prefixItems") {
                    self.array_type(object)
                } else {
                    "unknown".to_string()
                }
            }
            Some(_) => "unknown".to_string(),
        }
    }

    fn array_type(&mut self, schema: &Map<String, Value>) -> String {
        if let Some(items @ (Value::Object(_) | Value::Bool(_))) = schema.get("items") {
            return format!("Array<{}>", self.type_of(items));
        }
        let tuple = schema
            .get("prefixItems")
            .and_then(Value::as_array)
            .or_else(|| schema.get("items").and_then(Value::as_array));
        match tuple {
            Some(items) if !items.is_empty() => {
                let parts: Vec<String> = items.iter().map(|i| self.type_of(i)).collect();
                format!("[{}]", parts.join(", "))
            }
            _ => "unknown[]".to_string(),
        }
    }

    fn object_type(&mut self, schema: &Map<String, Value>) -> String {
        let empty = Map::new();
        let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut names: Vec<&String> = properties.keys().collect();
        names.sort();
        let mut members: Vec<String> = names
            .iter()
            .map(|name| {
                let optional = if required.contains(&name.as_str()) { "" } else { "?" };
                format!(
                    "{}{optional}: {};",
                    property_key(name),
                    self.type_of(&properties[name.as_str()])
                )
            })
            .collect();
        match schema.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => members.push("[key: string]: unknown;".to_string()),
            Some(additional) => members.push(format!("[key: string]: {};", self.type_of(additional))),
            None if names.is_empty() => members.push("[key: string]: unknown;".to_string()),
            None => {}
        }
        if members.is_empty() {
            return "{}".to_string();
        }
        let comments: Vec<Vec<String>> = names
            .iter()
            .map(|name| {
                let property = &properties[name.as_str()];
                let mut lines: Vec<String> = property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .lines()
                    .map(|l| l.trim().to_string())
                    .filter(|l| !l.is_empty())
                    .collect();
                if self.tags {
                    let tags = constraint_tags(property);
                    if !tags.is_empty() {
                        lines.push(tags);
                    }
                }
                lines
            })
            .collect();
        if comments.iter().all(Vec::is_empty) {
            return format!("{{ {} }}", members.join(" "));
        }
        let mut lines = vec!["{".to_string()];
        for (index, comment) in comments.iter().enumerate() {
            for line in comment {
                lines.push(format!("{INDENT}// {line}"));
            }
            lines.push(format!(
                "{INDENT}{}",
                members[index].replace('\n', &format!("\n{INDENT}"))
            ));
        }
        for member in &members[names.len()..] {
            lines.push(format!("{INDENT}{member}"));
        }
        lines.push("}".to_string());
        lines.join("\n")
    }
}

/// `@integer @minimum 1 @default 20`-style tags of one property.
fn constraint_tags(property: &Value) -> String {
    let Some(object) = property.as_object() else {
        return String::new();
    };
    // An optional field written as `anyOf: [T, null]` keeps its constraints in the T branch.
    let variants = object
        .get("anyOf")
        .and_then(Value::as_array)
        .or_else(|| object.get("oneOf").and_then(Value::as_array));
    let mut schemas = vec![object];
    if let Some(variants) = variants {
        let non_null: Vec<&Value> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        if let [only] = non_null.as_slice() {
            if let Some(branch) = only.as_object() {
                schemas.push(branch);
            }
        }
    }
    let mut tags = Vec::new();
    let is_integer = |t: Option<&Value>| match t {
        Some(Value::String(s)) => s == "integer",
        Some(Value::Array(list)) => list.iter().any(|v| v == "integer"),
        _ => false,
    };
    if schemas.iter().any(|s| is_integer(s.get("type"))) {
        tags.push("@integer".to_string());
    }
    for keyword in TAG_KEYWORDS {
        let mut seen: Vec<String> = Vec::new();
        for schema in &schemas {
            let value = match schema.get(keyword) {
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::String(s)) => s.clone(),
                _ => continue,
            };
            if !seen.contains(&value) {
                seen.push(value);
            }
        }
        for value in seen {
            tags.push(format!("@{keyword} {value}"));
        }
    }
    if schemas.iter().any(|s| s.get("uniqueItems") == Some(&Value::Bool(true))) {
        tags.push("@uniqueItems".to_string());
    }
    if let Some(default) = object.get("default").filter(|d| !d.is_null()) {
        tags.push(format!("@default {default}"));
    }
    if object.get("deprecated") == Some(&Value::Bool(true)) {
        tags.push("@deprecated".to_string());
    }
    tags.into_iter()
        .filter(|t| t.chars().count() <= MAX_TAG_CHARS)
        .map(|t| t.replace('\n', "\\u000a").replace('\r', "\\u000d"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identifiers_replace_what_javascript_does_not_allow() {
        assert_eq!(to_identifier("mcp__dev-radius__x"), "mcp__dev_radius__x");
        assert_eq!(to_identifier("read"), "read");
        assert_eq!(to_identifier("9lives"), "_lives");
    }

    #[test]
    fn declaration_has_comments_tags_and_optional_fields() {
        let tool = ToolDeclaration {
            name: "mcp__demo__echo".into(),
            description: "Echo the text.".into(),
            input_schema: json!({"type": "object", "properties": {
                "text": {"type": "string", "description": "text to echo"},
                "upper": {"type": "boolean", "default": false},
                "count": {"type": "integer", "minimum": 1}
            }, "required": ["text"]}),
            output_schema: None,
        };
        assert_eq!(
            tool.signature(),
            "mcp__demo__echo(args: {\n  // @integer @minimum 1\n  count?: number;\n  // text to echo\n  text: string;\n  // @default false\n  upper?: boolean;\n}): Promise<string>;"
        );
        assert!(tool.sample().starts_with(
            "Echo the text.\n\ncodemode tool declaration:\n```ts\ndeclare const tools: { mcp__demo__echo(args: {"
        ));
        let refs = json!({"$defs": {"p": {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}},
            "type": "object", "properties": {"p": {"$ref": "#/$defs/p"}, "kind": {"enum": ["x", "y"]}}});
        assert_eq!(
            schema_to_type(&refs, true),
            "{ kind?: \"x\" | \"y\"; p?: { a: number; }; }"
        );
    }
}
