//! Reading tool arguments leniently (string numbers accepted), with pi-shaped validation errors.

use pi_agent::ToolError;
use serde_json::Value;

fn validation_error(tool: &str, path: &str, message: &str, args: &Value) -> ToolError {
    let received = serde_json::to_string_pretty(args).unwrap_or_default();
    ToolError::new(format!(
        "Validation failed for tool \"{tool}\":\n  - {path}: {message}\n\nReceived arguments:\n{received}"
    ))
}

/// The arguments of one call, with the tool name for error messages.
pub struct Args<'a> {
    pub tool: &'a str,
    pub value: &'a Value,
}

impl<'a> Args<'a> {
    pub fn new(tool: &'a str, value: &'a Value) -> Self {
        Args { tool, value }
    }

    fn get(&self, key: &str) -> Option<&'a Value> {
        self.value.get(key).filter(|v| !v.is_null())
    }

    /// A required string (numbers and booleans are turned into text, as pi's coercion does).
    pub fn string(&self, key: &str) -> Result<String, ToolError> {
        match self.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(Value::Bool(b)) => Ok(b.to_string()),
            Some(_) => Err(validation_error(self.tool, key, "Expected string", self.value)),
            None => Err(validation_error(
                self.tool,
                key,
                "Expected required property",
                self.value,
            )),
        }
    }

    /// An optional string.
    pub fn opt_string(&self, key: &str) -> Result<Option<String>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(_) => self.string(key).map(Some),
        }
    }

    /// An optional number; numeric strings are accepted.
    pub fn opt_number(&self, key: &str) -> Result<Option<f64>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .map(Some)
                .map_err(|_| validation_error(self.tool, key, "Expected number", self.value)),
            Some(_) => Err(validation_error(self.tool, key, "Expected number", self.value)),
        }
    }

    /// An optional boolean; `"true"`/`"false"` are accepted.
    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, ToolError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(Value::String(s)) if s == "true" => Ok(Some(true)),
            Some(Value::String(s)) if s == "false" => Ok(Some(false)),
            Some(_) => Err(validation_error(self.tool, key, "Expected boolean", self.value)),
        }
    }
}

/// Format a number the way JavaScript prints it (`3`, not `3.0`).
pub fn js_number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i64)
    } else {
        format!("{n}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_may_come_as_strings() {
        let v = json!({"offset": "10", "path": "a"});
        let a = Args::new("read", &v);
        assert_eq!(a.opt_number("offset").expect("number"), Some(10.0));
        assert_eq!(a.opt_number("limit").expect("none"), None);
    }

    #[test]
    fn a_missing_string_is_a_validation_error() {
        let v = json!({});
        let err = Args::new("read", &v).string("path").expect_err("missing");
        assert!(err.message.starts_with("Validation failed for tool \"read\""));
    }

    #[test]
    fn js_numbers_print_without_fraction() {
        assert_eq!(js_number(3.0), "3");
        assert_eq!(js_number(2.5), "2.5");
    }
}
