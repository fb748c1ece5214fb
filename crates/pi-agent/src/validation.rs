//! Tool-argument checking against a tool's JSON schema, the way pi does it.
//!
//! pi first coerces primitives toward the schema (models often send `"5"` for a number or `null`
//! for an empty string), then validates and reports every failing path with TypeBox's wording,
//! which the model reads and corrects itself from. A general validator (the `jsonschema` crate)
//! neither coerces nor words errors this way, and brings a regex engine, URI and format
//! handling we would not use, so this module covers the keywords tool schemas use: `type` (one or several), `properties`, `required`,
//! `additionalProperties` (bool or schema), `items` (schema or tuple), `enum`, `const`,
//! `minimum`/`maximum` (and the exclusive forms), `multipleOf`, `minLength`/`maxLength`,
//! `minItems`/`maxItems`, `anyOf`/`oneOf`/`allOf`/`not`. Other keywords are accepted unchecked.

use serde_json::{Map, Number, Value};

/// Coerce `args` toward `schema` and validate them. On failure the error is pi's message:
/// `Validation failed for tool "<name>":\n  - <path>: <msg>...\n\nReceived arguments:\n<json>`.
pub fn validate_tool_arguments(tool_name: &str, schema: &Value, args: &Value) -> Result<Value, String> {
    let coerced = coerce(args.clone(), schema);
    let mut issues = Vec::new();
    check(&coerced, schema, &mut Vec::new(), &mut issues);
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
    let mut issues = Vec::new();
    check(value, schema, &mut Vec::new(), &mut issues);
    issues.is_empty()
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

fn check(value: &Value, schema: &Value, path: &mut Vec<String>, issues: &mut Vec<Issue>) {
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => return push(issues, path, "schema is false"),
        Value::Object(s) => s,
        _ => return,
    };

    let types = schema_types(schema);
    if !types.is_empty() && !types.iter().any(|t| matches_type(value, t)) {
        let message = if let [one] = types.as_slice() {
            format!("must be {one}")
        } else {
            format!("must be either {}", types.join(" or "))
        };
        return push(issues, path, message);
    }

    if let Some(c) = schema.get("const") {
        if !json_eq(value, c) {
            push(issues, path, "must be equal to constant");
        }
    }
    if let Some(Value::Array(options)) = schema.get("enum") {
        if !options.iter().any(|o| json_eq(value, o)) {
            push(issues, path, "must be equal to one of the allowed values");
        }
    }

    match value {
        Value::Number(n) => check_number(n.as_f64().unwrap_or(0.0), schema, path, issues),
        Value::String(s) => {
            let len = s.encode_utf16().count() as f64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_f64) {
                if len < min {
                    push(
                        issues,
                        path,
                        format!("must not have fewer than {} characters", js_number(min)),
                    );
                }
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_f64) {
                if len > max {
                    push(
                        issues,
                        path,
                        format!("must not have more than {} characters", js_number(max)),
                    );
                }
            }
        }
        Value::Array(items) => check_array(items, schema, path, issues),
        Value::Object(map) => check_object(map, schema, path, issues),
        _ => {}
    }

    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            check(value, sub, path, issues);
        }
    }
    if let Some(Value::Array(any)) = schema.get("anyOf") {
        let mut branch_issues = Vec::new();
        let mut matched = false;
        for sub in any {
            let mut own = Vec::new();
            check(value, sub, path, &mut own);
            if own.is_empty() {
                matched = true;
                break;
            }
            branch_issues.extend(own);
        }
        if !matched {
            issues.extend(branch_issues);
            push(issues, path, "must match a schema in anyOf");
        }
    }
    if let Some(Value::Array(one)) = schema.get("oneOf") {
        let mut branch_issues = Vec::new();
        let mut valid = 0;
        for sub in one {
            let mut own = Vec::new();
            check(value, sub, path, &mut own);
            if own.is_empty() {
                valid += 1;
            } else {
                branch_issues.extend(own);
            }
        }
        if valid != 1 {
            if valid == 0 {
                issues.extend(branch_issues);
            }
            push(issues, path, "must match exactly one schema in oneOf");
        }
    }
    if let Some(not) = schema.get("not") {
        if is_valid(value, not) {
            push(issues, path, "must not be valid");
        }
    }
}

fn check_number(f: f64, schema: &Map<String, Value>, path: &[String], issues: &mut Vec<Issue>) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    if let Some(min) = bound("minimum") {
        if f < min {
            push(issues, path, format!("must be >= {}", js_number(min)));
        }
    }
    if let Some(max) = bound("maximum") {
        if f > max {
            push(issues, path, format!("must be <= {}", js_number(max)));
        }
    }
    if let Some(min) = bound("exclusiveMinimum") {
        if f <= min {
            push(issues, path, format!("must be > {}", js_number(min)));
        }
    }
    if let Some(max) = bound("exclusiveMaximum") {
        if f >= max {
            push(issues, path, format!("must be < {}", js_number(max)));
        }
    }
    if let Some(m) = bound("multipleOf") {
        if m > 0.0 && (f / m).fract().abs() > 1e-9 {
            push(issues, path, format!("must be multiple of {}", js_number(m)));
        }
    }
}

fn check_array(items: &[Value], schema: &Map<String, Value>, path: &mut Vec<String>, issues: &mut Vec<Issue>) {
    let len = items.len() as f64;
    if let Some(min) = schema.get("minItems").and_then(Value::as_f64) {
        if len < min {
            push(
                issues,
                path,
                format!("must not have fewer than {} items", js_number(min)),
            );
        }
    }
    if let Some(max) = schema.get("maxItems").and_then(Value::as_f64) {
        if len > max {
            push(
                issues,
                path,
                format!("must not have more than {} items", js_number(max)),
            );
        }
    }
    match schema.get("items") {
        Some(Value::Array(tuple)) => {
            for (i, (item, sub)) in items.iter().zip(tuple).enumerate() {
                path.push(i.to_string());
                check(item, sub, path, issues);
                path.pop();
            }
        }
        Some(sub @ (Value::Object(_) | Value::Bool(_))) => {
            for (i, item) in items.iter().enumerate() {
                path.push(i.to_string());
                check(item, sub, path, issues);
                path.pop();
            }
        }
        _ => {}
    }
}

fn check_object(
    map: &Map<String, Value>,
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    issues: &mut Vec<Issue>,
) {
    let properties = schema.get("properties").and_then(Value::as_object);

    // One issue names every missing property; its path is the first one (TypeBox's shape).
    if let Some(Value::Array(required)) = schema.get("required") {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|k| !map.contains_key(*k))
            .collect();
        if let Some(first) = missing.first() {
            path.push((*first).to_string());
            push(
                issues,
                path,
                format!("must have required properties {}", missing.join(", ")),
            );
            path.pop();
        }
    }

    if let Some(additional) = schema.get("additionalProperties") {
        if !matches!(additional, Value::Bool(true)) {
            let mut failed = false;
            for (key, v) in map {
                if properties.is_some_and(|p| p.contains_key(key)) {
                    continue;
                }
                path.push(key.clone());
                let before = issues.len();
                check(v, additional, path, issues);
                failed |= issues.len() > before;
                path.pop();
            }
            if failed {
                push(issues, path, "must not have additional properties");
            }
        }
    }

    if let Some(props) = properties {
        for (key, sub) in props {
            if let Some(v) = map.get(key) {
                path.push(key.clone());
                check(v, sub, path, issues);
                path.pop();
            }
        }
    }
}

/// Move `value` toward `schema` the way pi does before validating: primitives are converted to
/// the schema's type where the conversion is lossless in spirit (`"5"` -> 5, `null` -> `""`).
pub fn coerce(value: Value, schema: &Value) -> Value {
    let Value::Object(schema) = schema else {
        return value;
    };
    let mut value = value;
    if let Some(Value::Array(all)) = schema.get("allOf") {
        for sub in all {
            value = coerce(value, sub);
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for sub in branches {
                let candidate = coerce(value.clone(), sub);
                if is_valid(&candidate, sub) {
                    value = candidate;
                    break;
                }
            }
        }
    }

    let types = schema_types(schema);
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
            if let Some(props) = properties {
                for (key, sub) in props {
                    if let Some(v) = map.get_mut(key) {
                        *v = coerce(std::mem::take(v), sub);
                    }
                }
            }
            if let Some(additional @ Value::Object(_)) = schema.get("additionalProperties") {
                for (key, v) in map.iter_mut() {
                    if !properties.is_some_and(|p| p.contains_key(key)) {
                        *v = coerce(std::mem::take(v), additional);
                    }
                }
            }
        }
        Value::Array(items) if types.contains(&"array") => match schema.get("items") {
            Some(Value::Array(tuple)) => {
                for (item, sub) in items.iter_mut().zip(tuple) {
                    *item = coerce(std::mem::take(item), sub);
                }
            }
            Some(sub @ Value::Object(_)) => {
                for item in items.iter_mut() {
                    *item = coerce(std::mem::take(item), sub);
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
            Value::String(s) if !s.trim().is_empty() => {
                let parsed = s.trim().parse::<f64>().ok().filter(|f| f.is_finite())?;
                if ty == "integer" && parsed.fract() != 0.0 {
                    return None;
                }
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
        check(&coerced, schema, &mut Vec::new(), &mut issues);
        issues
            .into_iter()
            .map(|i| format!("{}: {}", i.path, i.message))
            .collect()
    }

    #[test]
    fn missing_required_reports_first_path_and_all_names() {
        let err = validate_tool_arguments("read", &read_schema(), &json!({})).unwrap_err();
        assert_eq!(
            err,
            "Validation failed for tool \"read\":\n  - path: must have required properties path\n\nReceived arguments:\n{}"
        );
        assert_eq!(
            issues_of(&edit_schema(), json!({})),
            vec!["path: must have required properties path, edits"]
        );
    }

    #[test]
    fn primitives_are_coerced_like_pi() {
        let ok = validate_tool_arguments("read", &read_schema(), &json!({"path": 5, "limit": "7"})).unwrap();
        assert_eq!(ok, json!({"path": "5", "limit": 7}));
        let ok = validate_tool_arguments("read", &read_schema(), &json!({"path": null})).unwrap();
        assert_eq!(ok, json!({"path": ""}));
        let flag = json!({"type": "object", "properties": {"f": {"type": "boolean"}, "n": {"type": "integer"}}});
        assert_eq!(
            coerce(json!({"f": "true", "n": "3"}), &flag),
            json!({"f": true, "n": 3})
        );
    }

    #[test]
    fn type_errors_name_the_path_and_show_received_arguments() {
        let err = validate_tool_arguments("read", &read_schema(), &json!({"path": "a", "limit": "abc"})).unwrap_err();
        assert_eq!(
            err,
            "Validation failed for tool \"read\":\n  - limit: must be number\n\nReceived arguments:\n{\n  \"path\": \"a\",\n  \"limit\": \"abc\"\n}"
        );
        assert_eq!(issues_of(&read_schema(), json!("str")), vec!["root: must be object"]);
    }

    #[test]
    fn additional_properties_and_nested_paths() {
        assert_eq!(
            issues_of(&edit_schema(), json!({"edits": [{}], "x": 1})),
            vec![
                "path: must have required properties path",
                "x: schema is false",
                "root: must not have additional properties",
                "edits.0.oldText: must have required properties oldText, newText",
            ]
        );
        assert_eq!(
            issues_of(
                &edit_schema(),
                json!({"path": "a", "edits": [{"oldText": "x", "newText": "y"}, 5]})
            ),
            vec!["edits.1: must be object"]
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
                "mode: must be equal to one of the allowed values",
                "n: must be >= 1",
                "x: must be <= 5",
                "s: must not have fewer than 2 characters",
            ]
        );
        assert_eq!(issues_of(&schema, json!({"n": 1.5})), vec!["n: must be integer"]);
        assert_eq!(
            issues_of(&schema, json!({"opt": [1]})),
            vec![
                "opt: must be string",
                "opt: must be number",
                "opt: must match a schema in anyOf"
            ]
        );
        assert_eq!(coerce(json!({"opt": true}), &schema), json!({"opt": "true"}));
    }

    #[test]
    fn several_types_and_js_numbers() {
        let schema = json!({"type": ["string", "null"]});
        assert!(is_valid(&json!(null), &schema));
        assert_eq!(
            issues_of(&schema, json!([1])),
            vec!["root: must be either string or null"]
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
}
