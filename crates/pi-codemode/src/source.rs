//! The script's text: JavaScript, optionally starting with one `// @options: {...}` line that
//! sets `max_output_tokens` and `timeout_ms`. A bad options line fails the call before anything
//! runs.

use serde_json::Value;

pub const OPTIONS_PREFIX: &str = "// @options:";
/// The script's text as a Lark grammar, for APIs that sample a custom tool's raw input under
/// one: an optional options line, then any source. The model then writes the script as plain
/// text instead of a JSON string.
pub const SOURCE_GRAMMAR: &str = r"
start: OPTIONS EOL BODY | BODY
OPTIONS: /[ \t]*\/\/ @options:[^\r\n]*/
EOL: /\r?\n/
BODY: /[\s\S]+/
";
/// The largest deadline a script may ask for (the largest 32-bit signed millisecond count).
pub const MAX_TIMEOUT_MS: u64 = 2_147_483_647;
const FIELDS: &str = "`max_output_tokens` and `timeout_ms`";

/// The options a script asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptOptions {
    pub max_output_tokens: Option<u64>,
    pub timeout_ms: Option<u64>,
}

/// A script split from its options line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedSource {
    /// The code to run. Keeps the options line's newline so error line numbers match the input.
    pub code: String,
    pub options: ScriptOptions,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SourceError(pub String);

fn error(message: impl Into<String>) -> SourceError {
    SourceError(message.into())
}

fn parse_options(directive: &str) -> Result<ScriptOptions, SourceError> {
    let object_error = || error(format!("@options must be a JSON object with the fields {FIELDS}"));
    if directive.is_empty() {
        return Err(object_error());
    }
    let value: Value = serde_json::from_str(directive)
        .map_err(|e| error(format!("@options must be valid JSON with the fields {FIELDS}: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(object_error());
    };
    let mut options = ScriptOptions::default();
    for (key, value) in &fields {
        match key.as_str() {
            "max_output_tokens" => {
                let n = value
                    .as_u64()
                    .filter(|n| *n < (1 << 53))
                    .ok_or_else(|| error("@options field `max_output_tokens` must be a non-negative safe integer"))?;
                options.max_output_tokens = Some(n);
            }
            "timeout_ms" => {
                let n = value
                    .as_u64()
                    .filter(|n| *n > 0 && *n <= MAX_TIMEOUT_MS)
                    .ok_or_else(|| {
                        error(format!(
                            "@options field `timeout_ms` must be a positive integer up to {MAX_TIMEOUT_MS}"
                        ))
                    })?;
                options.timeout_ms = Some(n);
            }
            other => return Err(error(format!("@options only supports {FIELDS}; got `{other}`"))),
        }
    }
    Ok(options)
}

/// Split the optional first-line options from the script.
pub fn parse_source(input: &str) -> Result<ParsedSource, SourceError> {
    if input.trim().is_empty() {
        return Err(error(
            "Expected JavaScript source text (non-empty). Send JavaScript only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`.",
        ));
    }
    if let Some(line) = input
        .split('\n')
        .enumerate()
        .skip(1)
        .find(|(_, line)| line.trim_start().starts_with(OPTIONS_PREFIX))
        .map(|(index, _)| index + 1)
    {
        return Err(error(format!(
            "The {OPTIONS_PREFIX} line must be the first line of the input; found one on line {line}"
        )));
    }
    let first = input.split('\n').next().unwrap_or_default();
    let first = first.strip_suffix('\r').unwrap_or(first).trim_start();
    let Some(directive) = first.strip_prefix(OPTIONS_PREFIX) else {
        return Ok(ParsedSource {
            code: input.to_string(),
            options: ScriptOptions::default(),
        });
    };
    let code = input.find('\n').map(|at| &input[at..]).unwrap_or_default();
    if code.trim().is_empty() {
        return Err(error(
            "The @options line must be followed by JavaScript source on the next lines",
        ));
    }
    Ok(ParsedSource {
        code: code.to_string(),
        options: parse_options(directive.trim())?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_line_is_split_and_checked() {
        let parsed = parse_source("// @options: {\"max_output_tokens\": 5, \"timeout_ms\": 100}\nreturn 1").unwrap();
        assert_eq!(parsed.code, "\nreturn 1");
        assert_eq!(parsed.options.max_output_tokens, Some(5));
        assert_eq!(parsed.options.timeout_ms, Some(100));
        assert_eq!(parse_source("return 2").unwrap().options, ScriptOptions::default());
        let e = parse_source("// @options: {\"foo\": 1}\nreturn 1").unwrap_err();
        assert_eq!(
            e.0,
            "@options only supports `max_output_tokens` and `timeout_ms`; got `foo`"
        );
        let e = parse_source("return 1\n// @options: {}").unwrap_err();
        assert!(e.0.contains("found one on line 2"), "{e}");
        assert!(parse_source("// @options: {\"timeout_ms\": 0}\nx").is_err());
        assert!(parse_source("// @options: {}\n  ").is_err());
        assert!(parse_source("   ").is_err());
        assert!(parse_source("// @options: nope\nx")
            .unwrap_err()
            .0
            .contains("valid JSON"));
    }
}
