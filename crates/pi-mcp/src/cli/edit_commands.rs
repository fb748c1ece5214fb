//! `pi mcp add` and `pi mcp remove`: write or delete one entry of the global or project `mcp.json`.
//! Neither connects to the server.

use serde_json::{json, Map, Value};

use super::args::{pairs, parse, Kind};
use super::{CliContext, CliOutput, HELP_HINT};
use crate::config::{add_server, remove_server, validate_server_config, Scope};

const HTTP_ONLY: [&str; 7] = [
    "header",
    "bearer-token-env-var",
    "oauth-client-id",
    "oauth-client-secret",
    "oauth-callback-port",
    "oauth-client-name",
    "oauth-client-registration",
];
const STDIO_ONLY: [&str; 2] = ["env", "cwd"];

fn string_map(pairs: Vec<(String, String)>) -> Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k, Value::String(v))).collect()
}

/// JavaScript's `Number(text)` for the port option: numbers stay numbers, anything else is kept so
/// validation reports it.
fn port_value(text: &str) -> Value {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return json!(0);
    }
    match trimmed.parse::<f64>() {
        Ok(n) if n.fract() == 0.0 && n.abs() < 9e15 => json!(n as i64),
        Ok(n) => json!(n),
        Err(_) => Value::Null,
    }
}

pub(crate) fn add(args: &[String], context: &CliContext) -> CliOutput {
    let output = CliOutput::default();
    let usage = format!("Usage: pi mcp add <server> [options] (--url <url> | -- <command> [args...])\n{HELP_HINT}");
    let known = [
        ("local", Kind::Flag),
        ("url", Kind::Value),
        ("env", Kind::List),
        ("cwd", Kind::Value),
        ("header", Kind::List),
        ("bearer-token-env-var", Kind::Value),
        ("oauth-client-id", Kind::Value),
        ("oauth-client-secret", Kind::Value),
        ("oauth-callback-port", Kind::Value),
        ("oauth-client-name", Kind::Value),
        ("oauth-client-registration", Kind::Value),
        ("exposure", Kind::Value),
        ("description", Kind::Value),
    ];
    let parsed = match parse(args, &known, 2) {
        Ok(parsed) => parsed,
        Err(message) => return output.fail(message),
    };
    let Some((name, command)) = parsed.positional.split_first() else {
        return output.fail(usage);
    };
    let url = parsed.value("url");
    // Exactly one of a URL and a command.
    if url.is_none() == command.is_empty() {
        return output.fail(usage);
    }
    let wrong = if url.is_none() { &HTTP_ONLY[..] } else { &STDIO_ONLY[..] };
    if let Some(misplaced) = wrong.iter().find(|o| parsed.has(o)) {
        let kind = if url.is_none() {
            "HTTP servers (--url)"
        } else {
            "stdio servers"
        };
        return output.fail(format!("--{misplaced} only applies to {kind}."));
    }
    let mut entry = Map::new();
    if let Some(url) = url {
        let mut headers = match pairs("header", parsed.lists.get("header")) {
            Ok(headers) => string_map(headers),
            Err(message) => return output.fail(message),
        };
        if let Some(variable) = parsed.value("bearer-token-env-var") {
            headers.insert("Authorization".into(), json!(format!("Bearer ${{{variable}}}")));
        }
        let mut oauth = Map::new();
        let fields = [
            ("oauth-client-id", "clientId"),
            ("oauth-client-secret", "clientSecret"),
            ("oauth-callback-port", "callbackPort"),
            ("oauth-client-name", "clientName"),
            ("oauth-client-registration", "clientRegistration"),
        ];
        for (option, field) in fields {
            if let Some(value) = parsed.value(option) {
                let value = if field == "callbackPort" {
                    port_value(value)
                } else {
                    json!(value)
                };
                oauth.insert(field.into(), value);
            }
        }
        entry.insert("url".into(), json!(url));
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
        if !oauth.is_empty() {
            entry.insert("oauth".into(), Value::Object(oauth));
        }
    } else {
        let env = match pairs("env", parsed.lists.get("env")) {
            Ok(env) => string_map(env),
            Err(message) => return output.fail(message),
        };
        let (executable, command_args) = command
            .split_first()
            .map(|(e, a)| (e.clone(), a.to_vec()))
            .unwrap_or_default();
        entry.insert("command".into(), json!(executable));
        if !command_args.is_empty() {
            entry.insert("args".into(), json!(command_args));
        }
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env));
        }
        if let Some(cwd) = parsed.value("cwd") {
            entry.insert("cwd".into(), json!(cwd));
        }
    }
    if let Some(exposure) = parsed.value("exposure") {
        entry.insert("exposure".into(), json!(exposure));
    }
    if let Some(description) = parsed.value("description") {
        entry.insert("description".into(), json!(description));
    }
    let validated = match validate_server_config(name, &Value::Object(entry)) {
        Ok(config) => config,
        Err(message) => return output.fail(message),
    };
    let local = parsed.has("local");
    let (path, scope) = if local {
        (context.project_config(), Scope::Project)
    } else {
        (context.global_config(), Scope::Global)
    };
    let replaced = match add_server(&path, name, validated.raw.clone()) {
        Ok(replaced) => replaced,
        Err(e) => return output.fail(format!("Could not update {}: {}", path.display(), edit_reason(&e))),
    };
    let mut output = output;
    let verb = if replaced { "Replaced" } else { "Added" };
    output.out(format!(
        "{verb} {} MCP server \"{name}\" in {}.",
        scope.as_str(),
        path.display()
    ));
    if local && !context.trusted() {
        output.out(format!(
            "The project is not trusted, so {} is ignored until you start pi in the project and trust it.",
            path.display()
        ));
    }
    let may_sign_in = validated.is_http()
        && !validated
            .raw
            .get("headers")
            .and_then(Value::as_object)
            .is_some_and(|h| h.keys().any(|k| k.eq_ignore_ascii_case("authorization")));
    let hint = if may_sign_in {
        format!(". If it requires sign-in: pi mcp login {name}")
    } else {
        String::new()
    };
    output.out(format!("Check it with: pi mcp list{hint}"));
    output
}

/// The part of an edit error after the path (the caller names the file itself).
fn edit_reason(error: &crate::error::ConfigEditError) -> String {
    use crate::error::ConfigEditError as E;
    match error {
        E::Io { path, source } => format!("{}: {source}", path.display()),
        E::Shape { path, message } => format!("{}: {message}", path.display()),
        other => other.to_string(),
    }
}

pub(crate) fn remove(args: &[String], context: &CliContext) -> CliOutput {
    let output = CliOutput::default();
    let parsed = match parse(args, &[("local", Kind::Flag)], usize::MAX) {
        Ok(parsed) => parsed,
        Err(message) => return output.fail(message),
    };
    let [name] = parsed.positional.as_slice() else {
        return output.fail(format!("Usage: pi mcp remove <server> [-l]\n{HELP_HINT}"));
    };
    let local = parsed.has("local");
    let (path, scope) = if local {
        (context.project_config(), Scope::Project)
    } else {
        (context.global_config(), Scope::Global)
    };
    match remove_server(&path, name) {
        Ok(true) => {
            let mut output = output;
            output.out(format!(
                "Removed {} MCP server \"{name}\" from {}.",
                scope.as_str(),
                path.display()
            ));
            output
        }
        Ok(false) => {
            // Where it is defined instead, trusted or not, so the user knows which flag to use.
            let config = context.load(true);
            let other = config.servers.iter().find(|s| s.name == *name && s.scope != scope);
            let hint = match other {
                Some(other) => {
                    let flag = if other.scope == Scope::Project {
                        "; use --local"
                    } else {
                        "; omit --local"
                    };
                    format!(" It is defined in {}{flag}.", other.source.display())
                }
                None => String::new(),
            };
            output.fail(format!(
                "No {} MCP server named \"{name}\" in {}.{hint}",
                scope.as_str(),
                path.display()
            ))
        }
        Err(e) => output.fail(format!("Could not update {}: {}", path.display(), edit_reason(&e))),
    }
}
