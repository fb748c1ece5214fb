//! Tool-argument checking against a tool's JSON schema, the way pi does it.
//!
//! pi first coerces primitives toward the schema (models often send `"5"` for a number or `null`
//! for an empty string), then validates and reports every failing path in pi 1.6's wording
//! (`missing`, `expected string, got integer`, `unknown field`, ...), which the model reads and
//! corrects itself from. A general validator (the `jsonschema` crate)
//! neither coerces nor words errors this way, and brings a regex engine, URI and format
//! handling we would not use, so this module covers the keywords tool schemas use: `type` (one or several), `properties`, `required`,
//! `additionalProperties` (bool or schema), `items` (schema or tuple), `enum`, `const`,
//! `minimum`/`maximum` (and the exclusive forms), `multipleOf`, `minLength`/`maxLength`,
//! `minItems`/`maxItems`, `anyOf`/`oneOf`/`allOf`/`not`, `pattern` (JavaScript's look-around
//! and back references included), `format` (the formats of
//! [`crate::formats`]) and local `$ref`s (`#/$defs/...`; one that names nothing rejects only the
//! values at its place, as pi 1.6's validator does). Other keywords are accepted unchecked.

use serde_json::{Map, Number, Value};

/// Coerce `args` toward `schema` and validate them. On failure the error is pi's message:
/// `Validation failed for tool "<name>":\n  - <path>: <msg>...\n\nReceived arguments:\n<json>`.
pub fn validate_tool_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let coerced = coerce(args.clone(), schema);
    let mut issues = Vec::new();
    check(&Cx::new(schema), &coerced, schema, &mut Vec::new(), &mut issues);
    if issues.is_empty() {
        return Ok(coerced);
    }
    let list = issues
        .iter()
        .map(|i| format!("  - {}: {}", i.path, i.message))
        .collect::<Vec<_>>()
        .join("\n");
    let received = serde_json::to_string_pretty(args).unwrap_or_else(|_| "null".to_string());
    Err(format!(
        "Validation failed for tool \"{tool_name}\":\n{list}\n\nReceived arguments:\n{received}"
    ))
}

/// One failing check: dotted path (`root` for the top) and message.
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    pub path: String,
    pub message: String,
}

/// Whether `value` satisfies `schema` (no coercion).
pub fn is_valid(value: &Value, schema: &Value) -> bool {
    valid_in(&Cx::new(schema), value, schema)
}

/// Whether `value` satisfies `schema`, a part of the tool schema `cx` holds.
fn valid_in(cx: &Cx, value: &Value, schema: &Value) -> bool {
    let mut issues = Vec::new();
    check(cx, value, schema, &mut Vec::new(), &mut issues);
    issues.is_empty()
}

/// What checking needs besides the value and the schema node: the whole schema, which local
/// `$ref`s point into, and how deep references are followed (a schema that refers to itself
/// without descending into the value would otherwise never end).
struct Cx<'a> {
    root: &'a Value,
    ref_depth: std::cell::Cell<usize>,
}

/// References followed inside one another before a check gives up on the branch (accepting it).
const MAX_REF_DEPTH: usize = 64;

impl<'a> Cx<'a> {
    fn new(root: &'a Value) -> Self {
        Cx {
            root,
            ref_depth: std::cell::Cell::new(0),
        }
    }

    /// The schema a local reference (`#`, `#/$defs/x`, `#/definitions/x`) names. References to
    /// other documents and anchors name nothing here.
    fn resolve(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(self.root);
        }
        if !pointer.starts_with('/') {
            return None;
        }
        let decoded = percent_decode(pointer);
        self.root.pointer(&decoded)
    }

    /// Whether the schema uses draft 7, where `$ref` makes its sibling keywords inert.
    fn draft_7(&self) -> bool {
        self.root
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|s| s.contains("draft-07"))
    }
}

/// `%XX` escapes of a URI fragment decoded (JSON pointer escapes `~0`/`~1` stay for `pointer`).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' {
            if let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| hex(*b)),
                bytes.get(i + 2).and_then(|b| hex(*b)),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn dotted(path: &[String]) -> String {
    if path.is_empty() {
        "root".to_string()
    } else {
        path.join(".")
    }
}

fn push(issues: &mut Vec<Issue>, path: &[String], message: impl Into<String>) {
    issues.push(Issue {
        path: dotted(path),
        message: message.into(),
    });
}

fn schema_types(schema: &Map<String, Value>) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_type(value: &Value, ty: &str) -> bool {
    match ty {
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|f| f.fract() == 0.0 && f.is_finite()),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// Equality as JSON means it: `1` equals `1.0`.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A number the way JavaScript prints it (`5`, not `5.0`).
pub(crate) fn js_number(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn number_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// The type name a message gives a value (`integer` for whole numbers, as JavaScript's
/// `Number.isInteger` sees them).
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
    }
}

/// How many values an `enum` message lists before it says how many more there are.
const LISTED_VALUES: usize = 20;

fn list_values(values: &[Value]) -> String {
    let listed = Value::Array(values.iter().take(LISTED_VALUES).cloned().collect()).to_string();
    if values.len() <= LISTED_VALUES {
        return listed;
    }
    format!(
        "{}, ... and {} more]",
        &listed[..listed.len() - 1],
        values.len() - LISTED_VALUES
    )
}

/// Every failing keyword of `schema` at the value it failed on, in pi 1.6's order and words
/// (type first and alone, then enum, const, the value's own bounds, children, combinators).
fn check(cx: &Cx, value: &Value, schema: &Value, path: &mut Vec<String>, issues: &mut Vec<Issue>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(issues, path, "no value is allowed here"),
        Value::Object(s) => s,
        _ => return,
    };

    if let Some(Value::String(reference)) = schema.get("$ref") {
        match cx.resolve(reference) {
            Some(target) if cx.ref_depth.get() < MAX_REF_DEPTH => {
                cx.ref_depth.set(cx.ref_depth.get() + 1);
                check(cx, value, target, path, issues);
                cx.ref_depth.set(cx.ref_depth.get() - 1);
            }
            Some(_) => {}
            None => push(issues, path, format!("unresolved reference {reference}")),
        }
        if cx.draft_7() {
            return;
        }
    }

    let types = schema_types(schema);
    if schema.contains_key("type") && !types.iter().any(|t| matches_type(value, t)) {
        return push(
            issues,
            path,
            format!("expected {}, got {}", types.join(" or "), type_name(value)),
        );
    }

    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.iter().any(|o| json_eq(value, o)) {
            push(issues, path, format!("expected one of {}", list_values(options)));
        }
    }
    if let Some(c) = schema.get("const") {
        if !json_eq(value, c) {
            push(issues, path, format!("expected {c}"));
        }
    }

    match value {
        Value::Number(n) => check_number(n.as_f64().unwrap_or(0.0), schema, path, issues),
        Value::String(s) => {
            let len = s.chars().count() as f64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_f64) {
                if len < min {
                    push(issues, path, format!("expected at least {} characters", js_number(min)));
                }
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_f64) {
                if len > max {
                    push(issues, path, format!("expected at most {} characters", js_number(max)));
                }
            }
            if let Some(Value::String(pattern)) = schema.get("pattern") {
                if pattern_mismatch(pattern, s) {
                    push(issues, path, format!("expected to match {pattern}"));
                }
            }
            if let Some(Value::String(format)) = schema.get("format") {
                if crate::formats::check(format, s) == Some(false) {
                    push(issues, path, format!("expected format {format}"));
                }
            }
        }
        Value::Array(items) => check_array(cx, items, schema, path, issues),
        Value::Object(map) => check_object(cx, map, schema, path, issues),
        _ => {}
    }

    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            check(cx, value, sub, path, issues);
        }
    }
    if let Some(Value::Array(any)) = schema.get("anyOf") {
        check_union(cx, value, any, false, path, issues);
    }
    if let Some(Value::Array(one)) = schema.get("oneOf") {
        check_union(cx, value, one, true, path, issues);
    }
    if let Some(not) = schema.get("not") {
        if valid_in(cx, value, not) {
            push(issues, path, "must not match the schema in not");
        }
    }
}

/// The `const` of each branch's `key` property, when every branch has a distinct primitive
/// one: a tagged union, whose tag says which branch a value meant.
fn union_tag(branches: &[Value]) -> Option<(&str, Vec<&Value>)> {
    let first = branches.first()?.get("properties")?.as_object()?;
    first.keys().find_map(|key| {
        let values: Vec<&Value> = branches
            .iter()
            .map(|b| {
                b.get("properties")
                    .and_then(|p| p.get(key))
                    .and_then(|t| t.get("const"))
            })
            .collect::<Option<Vec<_>>>()?;
        let primitive = values.iter().all(|v| !v.is_object() && !v.is_array());
        let distinct = values
            .iter()
            .enumerate()
            .all(|(i, v)| values[..i].iter().all(|w| !json_eq(v, w)));
        (primitive && distinct).then_some((key.as_str(), values))
    })
}

/// The length of a path as a JSON pointer (`/a/0`), what picks the branch to blame.
fn pointer_len(path: &str) -> usize {
    if path == "root" {
        0
    } else {
        path.split('.').map(|segment| segment.len() + 1).sum()
    }
}

fn check_union(
    cx: &Cx,
    value: &Value,
    branches: &[Value],
    exactly_one: bool,
    path: &mut Vec<String>,
    issues: &mut Vec<Issue>,
) {
    let matches = branches.iter().filter(|b| valid_in(cx, value, b)).count();
    if matches == 1 || (!exactly_one && matches > 0) {
        return;
    }
    if matches > 1 {
        return push(issues, path, "matches more than one alternative");
    }
    if let (Some((key, tags)), Value::Object(map)) = (union_tag(branches), value) {
        let chosen = map.get(key).and_then(|v| tags.iter().position(|t| json_eq(v, t)));
        match chosen {
            Some(i) => check(cx, value, &branches[i], path, issues),
            None => {
                let listed: Vec<Value> = tags.into_iter().cloned().collect();
                path.push(key.to_string());
                push(issues, path, format!("expected one of {}", list_values(&listed)));
                path.pop();
            }
        }
        return;
    }
    // An object is blamed on the branch declaring most of its properties, then on the branch
    // whose first error is deepest.
    let mut best: Option<(Vec<Issue>, usize)> = None;
    for branch in branches {
        let mut own = Vec::new();
        check(cx, value, branch, path, &mut own);
        let Some(first) = own.first() else {
            continue;
        };
        let declared = match (value, branch.get("properties").and_then(Value::as_object)) {
            (Value::Object(map), Some(props)) => map.keys().filter(|k| props.contains_key(*k)).count(),
            _ => 0,
        };
        let better = match &best {
            None => true,
            Some((errors, best_declared)) => {
                declared > *best_declared
                    || (declared == *best_declared && pointer_len(&first.path) > pointer_len(&errors[0].path))
            }
        };
        if better {
            best = Some((own, declared));
        }
    }
    match best {
        Some((errors, _)) => issues.extend(errors),
        None => push(issues, path, "matches no alternative"),
    }
}

fn check_number(f: f64, schema: &Map<String, Value>, path: &[String], issues: &mut Vec<Issue>) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum") {
        if f < min {
            push(issues, path, format!("expected >= {}", js_number(min)));
        }
    }
    if let Some(max) = bound("maximum") {
        if f > max {
            push(issues, path, format!("expected <= {}", js_number(max)));
        }
    }
    if let Some(min) = bound("exclusiveMinimum") {
        if f <= min {
            push(issues, path, format!("expected > {}", js_number(min)));
        }
    }
    if let Some(max) = bound("exclusiveMaximum") {
        if f >= max {
            push(issues, path, format!("expected < {}", js_number(max)));
        }
    }
    if let Some(m) = bound("multipleOf") {
        if m > 0.0 && (f / m).fract().abs() > 1e-9 {
            push(issues, path, format!("expected a multiple of {}", js_number(m)));
        }
    }
}

fn check_array(cx: &Cx, items: &[Value], schema: &Map<String, Value>, path: &mut Vec<String>, issues: &mut Vec<Issue>) {
    let (prefix, rest): (&[Value], Option<&Value>) = match schema.get("items") {
        Some(Value::Array(tuple)) => (tuple.as_slice(), schema.get("additionalItems")),
        Some(sub) => (
            schema
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(&[][..], |p| p.as_slice()),
            Some(sub),
        ),
        None => (
            schema
                .get("prefixItems")
                .and_then(Value::as_array)
                .map_or(&[][..], |p| p.as_slice()),
            None,
        ),
    };
    for (i, item) in items.iter().enumerate() {
        if let Some(sub) = prefix.get(i).or(rest) {
            path.push(i.to_string());
            check(cx, item, sub, path, issues);
            path.pop();
        }
    }
    let len = items.len() as f64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_f64) {
        if len < min {
            push(issues, path, format!("expected at least {} items", js_number(min)));
        }
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_f64) {
        if len > max {
            push(issues, path, format!("expected at most {} items", js_number(max)));
        }
    }
    if schema.get("uniqueItems") == Some(&Value::Bool(true))
        && items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| json_eq(a, b)))
    {
        push(issues, path, "expected unique items");
    }
}

fn check_object(
    cx: &Cx,
    map: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    issues: &mut Vec<Issue>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);

    // One issue per missing property, at its own path.
    if let Some(Value::Array(required)) = schema.get("required") {
        for key in required.iter().filter_map(Value::as_str) {
            if !map.contains_key(key) {
                path.push(key.to_string());
                push(issues, path, "missing");
                path.pop();
            }
        }
    }

    if let Some(props) = properties {
        for (key, sub) in props {
            if let Some(v) = map.get(key) {
                path.push(key.clone());
                check(cx, v, sub, path, issues);
                path.pop();
            }
        }
    }

    if let Some(additional) = schema.get("additionalProperties") {
        for (key, v) in map {
            if properties.is_some_and(|p| p.contains_key(key)) {
                continue;
            }
            path.push(key.clone());
            match additional {
                Value::Bool(false) => push(issues, path, "unknown field"),
                other => check(cx, v, other, path, issues),
            }
            path.pop();
        }
    }

    let count = map.len() as f64;
    if let Some(min) = schema.get("minProperties").and_then(Value::as_f64) {
        if count < min {
            push(issues, path, format!("expected at least {} properties", js_number(min)));
        }
    }
    if let Some(max) = schema.get("maxProperties").and_then(Value::as_f64) {
        if count > max {
            push(issues, path, format!("expected at most {} properties", js_number(max)));
        }
    }
}

/// Whether `text` fails `pattern`. Patterns with look-around or back references (JavaScript
/// has them, the linear-time engine does not) go to a backtracking engine; a pattern neither
/// reads is not checked.
fn pattern_mismatch(pattern: &str, text: &str) -> bool {
    match regex::Regex::new(pattern) {
        Ok(re) => !re.is_match(text),
        Err(_) => fancy_regex::Regex::new(pattern)
            .ok()
            .and_then(|re| re.is_match(text).ok())
            .is_some_and(|matched| !matched),
    }
}

/// Move `value` toward `schema` the way pi does before validating: primitives are converted to
/// the schema's type where the conversion is lossless in spirit (`"5"` -> 5, `null` -> `""`).
/// Local `$ref`s are followed, as pi 1.6 follows them.
pub fn coerce(value: Value, schema: &Value) -> Value {
    let cx = Cx::new(schema);
    let mut entered = Vec::new();
    coerce_in(&cx, &mut entered, value, schema)
}

/// The (schema node, value) pairs being converted through a `$ref`: meeting one again (a
/// schema that refers to itself, and a value none of its branches takes) leaves the value as
/// it is instead of converting it without end.
type Entered = Vec<(*const Value, Value)>;

fn coerce_in(cx: &Cx, entered: &mut Entered, value: Value, schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return value;
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        let Some(target) = cx.resolve(reference) else {
            return value;
        };
        let node = target as *const Value;
        if entered.iter().any(|(n, v)| *n == node && *v == value) {
            return value;
        }
        entered.push((node, value.clone()));
        let converted = coerce_in(cx, entered, value, target);
        entered.pop();
        return converted;
    }
    coerce_node(cx, entered, value, map)
}

fn coerce_node(cx: &Cx, entered: &mut Entered, value: Value, schema: &Map<String, Value>) -> Value {
    let mut value = value;
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            value = coerce_in(cx, entered, value, sub);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for sub in branches {
                let candidate = coerce_in(cx, entered, value.clone(), sub);
                if valid_in(cx, &candidate, sub) {
                    value = candidate;
                    break;
                }
            }
        }
    }

    let types = schema_types(schema);
    // A single value sent for an array (not a tuple) becomes a one-item array.
    if types == ["array"] && !value.is_array() && !matches!(schema.get("items"), Some(Value::Array(_))) {
        value = Value::Array(vec![value]);
    }
    // `null` for a string is the text "null" when the schema names one type (pi 1.6 converts
    // by the type first), and "" among several types.
    if types == ["string"] && value.is_null() {
        value = Value::String("null".to_string());
    }
    let matches_one_of_several = types.len() > 1 && types.iter().any(|t| matches_type(&value, t));
    if !types.is_empty() && !matches_one_of_several {
        for ty in &types {
            if let Some(converted) = coerce_primitive(&value, ty) {
                value = converted;
                break;
            }
        }
    }

    match &mut value {
        Value::Object(map) if types.contains(&"object") => {
            let properties = schema.get("properties").and_then(Value::as_object);
            // A null in an optional property whose schema takes no null counts as omitted.
            if let Some(props) = properties {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                // A reference's target decides for itself (pi 1.6 does not look through it here).
                map.retain(|key, v| {
                    !(v.is_null()
                        && !required.contains(&key.as_str())
                        && props
                            .get(key)
                            .is_some_and(|sub| sub.get("$ref").is_none() && !valid_in(cx, &Value::Null, sub)))
                });
            }
            if let Some(props) = properties {
                for (key, sub) in props {
                    if let Some(v) = map.get_mut(key) {
                        *v = coerce_in(cx, entered, std::mem::take(v), sub);
                    }
                }
            }
            if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
                for (key, v) in map.iter_mut() {
                    if !properties.is_some_and(|p| p.contains_key(key)) {
                        *v = coerce_in(cx, entered, std::mem::take(v), additional);
                    }
                }
            }
        }
        Value::Array(items) if types.contains(&"array") => match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (item, sub) in items.iter_mut().zip(tuple) {
                    *item = coerce_in(cx, entered, std::mem::take(item), sub);
                }
            }
            Some(sub @ Value::Object(_)) => {
                for item in items.iter_mut() {
                    *item = coerce_in(cx, entered, std::mem::take(item), sub);
                }
            }
            _ => {}
        },
        _ => {}
    }
    value
}

/// The converted value, or `None` when nothing changes.
fn coerce_primitive(value: &Value, ty: &str) -> Option<Value> {
    match ty {
        "number" | "integer" => match value {
            Value::Null => Some(Value::from(0)),
            // pi 1.6 cuts a fraction sent for an integer to its whole part.
            Value::Number(n) if ty == "integer" => {
                let f = n.as_f64().filter(|f| f.is_finite() && f.fract() != 0.0)?;
                Some(number_value(f.trunc()))
            }
            Value::String(s) if !s.trim().is_empty() => {
                let parsed = s.trim().parse::<f64>().ok().filter(|f| f.is_finite())?;
                let parsed = if ty == "integer" { parsed.trunc() } else { parsed };
                Some(number_value(parsed))
            }
            Value::Bool(b) => Some(Value::from(u8::from(*b))),
            _ => None,
        },
        "boolean" => match value {
            Value::Null => Some(Value::Bool(false)),
            Value::String(s) if s == "true" => Some(Value::Bool(true)),
            Value::String(s) if s == "false" => Some(Value::Bool(false)),
            Value::Number(n) if n.as_f64() == Some(1.0) => Some(Value::Bool(true)),
            Value::Number(n) if n.as_f64() == Some(0.0) => Some(Value::Bool(false)),
            _ => None,
        },
        "string" => match value {
            Value::Null => Some(Value::String(String::new())),
            Value::Number(n) => Some(Value::String(
                n.as_f64().map(js_number).unwrap_or_else(|| n.to_string()),
            )),
            Value::Bool(b) => Some(Value::String(b.to_string())),
            _ => None,
        },
        "null" => match value {
            Value::String(s) if s.is_empty() => Some(Value::Null),
            Value::Bool(false) => Some(Value::Null),
            Value::Number(n) if n.as_f64() == Some(0.0) => Some(Value::Null),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_schema() -> Value {
        json!({"type": "object", "required": ["path"], "properties": {
            "path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}}})
    }

    fn edit_schema() -> Value {
        json!({"type": "object", "required": ["path", "edits"], "properties": {
            "path": {"type": "string"},
            "edits": {"type": "array", "items": {"type": "object", "required": ["oldText", "newText"],
                "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                "additionalProperties": false}}},
            "additionalProperties": false})
    }

    fn issues_of(schema: &Value, args: Value) -> Vec<String> {
        let coerced = coerce(args, schema);
        let mut issues = Vec::new();
        check(&Cx::new(schema), &coerced, schema, &mut Vec::new(), &mut issues);
        issues
            .into_iter()
            .map(|i| format!("{}: {}", i.path, i.message))
            .collect()
    }

    // The expected messages are what pi 1.6's own validator (pi-ai's `validateToolArguments`)
    // gives for the same schema and arguments.
    #[test]
    fn missing_required_properties_are_reported_one_by_one() {
        let err = validate_tool_arguments("read", &read_schema(), &json!({})).unwrap_err();
        assert_eq!(
            err,
            "Validation failed for tool \"read\":\n  - path: missing\n\nReceived arguments:\n{}"
        );
        assert_eq!(
            issues_of(&edit_schema(), json!({})),
            vec!["path: missing", "edits: missing"]
        );
    }

    #[test]
    fn primitives_are_coerced_like_pi() {
        let ok = validate_tool_arguments("read", &read_schema(), &json!({"path": 5, "limit": "7"})).unwrap();
        assert_eq!(ok, json!({"path": "5", "limit": 7}));
        let flag = json!({"type": "object", "properties": {"f": {"type": "boolean"}, "n": {"type": "integer"}}});
        assert_eq!(
            coerce(json!({"f": "true", "n": "3"}), &flag),
            json!({"f": true, "n": 3})
        );
        // A fraction sent for an integer is cut to its whole part.
        assert_eq!(coerce(json!({"n": 1.5}), &flag), json!({"n": 1}));
        assert_eq!(coerce(json!({"n": "3.5"}), &flag), json!({"n": 3}));
    }

    #[test]
    fn nulls_and_single_values_are_read_as_pi_reads_them() {
        let schema = json!({"type": "object", "required": ["paths"], "properties": {
            "paths": {"type": "array", "items": {"type": "string"}},
            "flag": {"type": "boolean"}, "s": {"type": "string"}}});
        assert_eq!(coerce(json!({"paths": "x"}), &schema), json!({"paths": ["x"]}));
        assert_eq!(
            coerce(json!({"paths": ["a"], "flag": null, "s": null}), &schema),
            json!({"paths": ["a"]})
        );
        assert_eq!(
            coerce(json!({"paths": [1, true]}), &schema),
            json!({"paths": ["1", "true"]})
        );
        let read = validate_tool_arguments("read", &read_schema(), &json!({"path": null})).unwrap();
        assert_eq!(read, json!({"path": "null"}));
        let read = validate_tool_arguments("read", &read_schema(), &json!({"path": "a", "limit": null})).unwrap();
        assert_eq!(read, json!({"path": "a"}));
    }

    #[test]
    fn type_errors_name_the_path_and_show_received_arguments() {
        let err = validate_tool_arguments("read", &read_schema(), &json!({"path": "a", "limit": "abc"})).unwrap_err();
        assert_eq!(
            err,
            "Validation failed for tool \"read\":\n  - limit: expected number, got string\n\nReceived arguments:\n{\n  \"path\": \"a\",\n  \"limit\": \"abc\"\n}"
        );
        assert_eq!(
            issues_of(&read_schema(), json!("str")),
            vec!["root: expected object, got string"]
        );
    }

    #[test]
    fn unknown_fields_and_nested_paths() {
        assert_eq!(
            issues_of(&edit_schema(), json!({"edits": [{}], "x": 1})),
            vec![
                "path: missing",
                "edits.0.oldText: missing",
                "edits.0.newText: missing",
                "x: unknown field",
            ]
        );
        assert_eq!(
            issues_of(
                &edit_schema(),
                json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}, 5]})
            ),
            vec!["edits.1: expected object, got integer"]
        );
    }

    #[test]
    fn bounds_enums_and_unions() {
        let schema = json!({"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["a", "b"]},
            "n": {"type": "integer", "minimum": 1},
            "x": {"type": "number", "maximum": 5, "exclusiveMinimum": 0},
            "s": {"type": "string", "minLength": 2},
            "opt": {"anyOf": [{"type": "string"}, {"type": "number"}]}}});
        assert_eq!(
            issues_of(&schema, json!({"mode": "c", "n": 0, "x": 9, "s": "a"})),
            vec![
                "mode: expected one of [\"a\",\"b\"]",
                "n: expected >= 1",
                "x: expected <= 5",
                "s: expected at least 2 characters",
            ]
        );
        assert_eq!(
            issues_of(&schema, json!({"opt": [1]})),
            vec!["opt: expected string, got array"]
        );
        assert_eq!(coerce(json!({"opt": true}), &schema), json!({"opt": "true"}));
        let more = json!({"type": "object", "properties": {
            "a": {"type": "array", "minItems": 2, "uniqueItems": true, "items": {"type": "integer"}},
            "c": {"const": 3},
            "m": {"type": "object", "minProperties": 1},
            "s": {"type": "string", "maxLength": 1}}});
        assert_eq!(
            issues_of(&more, json!({"a": [1, 1.5], "c": 4, "m": {}, "s": "ab"})),
            vec![
                "a: expected unique items",
                "c: expected 3",
                "m: expected at least 1 properties",
                "s: expected at most 1 characters",
            ]
        );
    }

    #[test]
    fn a_tagged_union_blames_the_branch_its_tag_names() {
        let schema = json!({"type": "object", "properties": {"op": {"oneOf": [
            {"type": "object", "properties": {"kind": {"const": "add"}, "n": {"type": "number"}}, "required": ["kind", "n"]},
            {"type": "object", "properties": {"kind": {"const": "del"}, "id": {"type": "string"}}, "required": ["kind", "id"]}]}}});
        assert_eq!(
            issues_of(&schema, json!({"op": {"kind": "zap"}})),
            vec!["op.kind: expected one of [\"add\",\"del\"]"]
        );
        assert_eq!(
            issues_of(&schema, json!({"op": {"kind": "del"}})),
            vec!["op.id: missing"]
        );
        assert_eq!(
            issues_of(&schema, json!({"op": 5})),
            vec!["op: expected object, got integer"]
        );
    }

    #[test]
    fn patterns_formats_and_references() {
        let schema = json!({"type": "object",
            "$defs": {"id": {"type": "string", "pattern": "^[a-z]+-\\d+$"}},
            "properties": {
                "id": {"$ref": "#/$defs/id"},
                "when": {"type": "string", "format": "date-time"},
                "ids": {"type": "array", "items": {"$ref": "#/$defs/id"}},
                "lost": {"$ref": "#/$defs/missing"},
                "odd": {"type": "string", "pattern": "(?<=a)b"}}});
        assert!(issues_of(
            &schema,
            json!({"id": "abc-12", "when": "2026-12-02T03:00:00Z", "ids": ["x-1"], "odd": "ab"})
        )
        .is_empty());
        assert_eq!(
            issues_of(
                &schema,
                json!({"id": "ABC", "when": "tomorrow", "ids": ["x-1", "y"], "odd": "zz"})
            ),
            vec![
                "id: expected to match ^[a-z]+-\\d+$",
                "when: expected format date-time",
                "ids.1: expected to match ^[a-z]+-\\d+$",
                "odd: expected to match (?<=a)b",
            ]
        );
        // A reference that names nothing rejects only the values at its place.
        assert_eq!(
            issues_of(&schema, json!({"lost": 1})),
            vec!["lost: unresolved reference #/$defs/missing"]
        );
        // A schema that refers to itself checks nested values and ends.
        let tree = json!({"type": "object", "properties": {"name": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#"}}}});
        assert_eq!(
            issues_of(&tree, json!({"kids": [{"kids": [{"name": {}}]}]})),
            vec!["kids.0.kids.0.name: expected string, got object"]
        );
        assert!(is_valid(&json!(1), &json!({"$ref": "#"})));
    }

    #[test]
    fn several_types_and_js_numbers() {
        let schema = json!({"type": ["string", "null"]});
        assert!(is_valid(&json!(null), &schema));
        assert_eq!(
            issues_of(&schema, json!([1])),
            vec!["root: expected string or null, got array"]
        );
        assert_eq!(js_number(5.0), "5");
        assert_eq!(js_number(0.5), "0.5");
    }

    /// A bounded, seeded fuzz run: random JSON values (deep, wide, odd numbers and strings)
    /// against random schemas built from the keywords the validator reads. Nothing may panic;
    /// a value the validator accepts validates again unchanged (coercion is idempotent), and a
    /// rejection names the tool. `PI_FUZZ_ITERS=200000 cargo test --release -p pi-agent fuzz_`.
    #[test]
    fn fuzz_random_values_against_random_schemas() {
        let iters: usize = std::env::var("PI_FUZZ_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(3_000);
        let mut state: u64 = 0x7001_a165_0000_0005;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        fn value(next: &mut dyn FnMut() -> u64, depth: u32) -> Value {
            match next() % if depth > 3 { 6 } else { 8 } {
                0 => Value::Null,
                1 => Value::Bool(next().is_multiple_of(2)),
                2 => json!((next() % 1000) as i64 - 500),
                3 => json!(f64::from_bits(next()).clamp(-1e300, 1e300)),
                4 => json!(["", "12", "true", "é😀", "-0", "1e999", "null"][(next() % 7) as usize]),
                5 => json!(u64::MAX - next() % 3),
                6 => Value::Array((0..next() % 4).map(|_| value(next, depth + 1)).collect()),
                _ => {
                    let mut m = serde_json::Map::new();
                    for _ in 0..next() % 4 {
                        let k = ["path", "edits", "a", "", "oldText"][(next() % 5) as usize];
                        m.insert(k.to_string(), value(next, depth + 1));
                    }
                    Value::Object(m)
                }
            }
        }
        fn schema(next: &mut dyn FnMut() -> u64, depth: u32) -> Value {
            let kinds = ["string", "number", "integer", "boolean", "array", "object", "null"];
            let kind = kinds[(next() % if depth > 2 { 4 } else { 7 }) as usize];
            let mut s = json!({"type": kind});
            match kind {
                "array" => {
                    s["items"] = schema(next, depth + 1);
                    if next().is_multiple_of(2) {
                        s["minItems"] = json!(next() % 3);
                    }
                }
                "object" => {
                    let mut props = serde_json::Map::new();
                    let mut required = Vec::new();
                    for k in ["path", "edits", "a"] {
                        if next().is_multiple_of(2) {
                            props.insert(k.to_string(), schema(next, depth + 1));
                            if next().is_multiple_of(2) {
                                required.push(json!(k));
                            }
                        }
                    }
                    s["properties"] = Value::Object(props);
                    s["required"] = Value::Array(required);
                    if next().is_multiple_of(3) {
                        s["additionalProperties"] = json!(false);
                    }
                }
                "string" if next().is_multiple_of(3) => s["enum"] = json!(["a", "b"]),
                "number" | "integer" if next().is_multiple_of(3) => s["minimum"] = json!(0),
                _ => {}
            }
            if next().is_multiple_of(9) {
                s = json!({"anyOf": [s, {"type": "null"}]});
            }
            s
        }
        for _ in 0..iters {
            let schema = schema(&mut next, 0);
            let args = value(&mut next, 0);
            match validate_tool_arguments("fuzz_tool", &schema, &args) {
                // Coercion across `anyOf` branches may take a second step ("" -> null -> 0), as
                // the reference validator's does; without `anyOf` one pass is final.
                Ok(coerced) if !schema.to_string().contains("anyOf") => {
                    let again = validate_tool_arguments("fuzz_tool", &schema, &coerced);
                    assert_eq!(again.as_ref(), Ok(&coerced), "schema {schema}, args {args}");
                }
                Ok(_) => {}
                Err(message) => assert!(message.contains("fuzz_tool"), "{message}"),
            }
        }
    }

    /// Coercion follows local references, as pi 1.6's does; each expectation is what 1.6's
    /// `validateToolArguments` returned (or reported) for the same schema and arguments.
    #[test]
    fn coercion_follows_references() {
        let defs = json!({"type": "object",
            "$defs": {"n": {"type": "number"},
                      "item": {"type": "object", "properties": {"count": {"$ref": "#/$defs/n"}, "on": {"type": "boolean"}}}},
            "properties": {"a": {"$ref": "#/$defs/n"},
                           "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
                           "one": {"$ref": "#/$defs/item"}}});
        assert_eq!(
            validate_tool_arguments(
                "t",
                &defs,
                &json!({"a": "5", "items": [{"count": "2", "on": "true"}], "one": {"count": "7"}})
            ),
            Ok(json!({"a": 5, "items": [{"count": 2, "on": true}], "one": {"count": 7}}))
        );
        let tree = json!({"type": "object", "properties": {"tree": {"$ref": "#/$defs/t"}},
            "$defs": {"t": {"type": "object", "properties": {"v": {"type": "integer"},
                "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}}});
        assert_eq!(
            validate_tool_arguments("t", &tree, &json!({"tree": {"v": "1", "kids": {"v": "2.5"}}})),
            Ok(json!({"tree": {"v": 1, "kids": [{"v": 2}]}}))
        );
        // A null for an optional property behind a reference is converted by its target.
        let text =
            json!({"type": "object", "properties": {"s": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}});
        assert_eq!(
            validate_tool_arguments("t", &text, &json!({"s": null})),
            Ok(json!({"s": "null"}))
        );
        assert_eq!(
            validate_tool_arguments("t", &text, &json!({"s": 12})),
            Ok(json!({"s": "12"}))
        );
        // A schema that refers to itself with a value none of it takes ends.
        let looped = json!({"type": "object", "properties": {"x": {"type": "array", "items": {"$ref": "#"}}}});
        assert_eq!(
            issues_of(&looped, json!({"x": 5})),
            vec!["x.0: expected object, got integer"]
        );
    }
}
