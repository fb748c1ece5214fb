//! How a tool call and its result look in the export: a title line per built-in tool (bash
//! command, read range, search pattern), edit diffs, written content, and the result's output.

use std::fmt::Write as _;

use serde_json::Value;

use super::ansi::ansi_lines_to_html;
use super::render::{escape, folded_pre, result_body};
use super::{str_field, RenderedTool, PAGE_LAID_OUT_TOOLS};

impl RenderedTool {
    fn has_any(&self) -> bool {
        self.call.is_some() || self.result_collapsed.is_some() || self.result_expanded.is_some()
    }
}

/// A tool block from its renderers' lines: the call's lines as the title, the result's
/// collapsed lines opening to the expanded ones when they differ.
fn rendered_html(name: &str, result: Option<&Value>, rendered: &RenderedTool) -> String {
    let state = match result {
        None => "pending",
        Some(r) if r.get("isError").and_then(Value::as_bool) == Some(true) => "err",
        Some(_) => "ok",
    };
    let mut out = format!("<div class=\"tool {state}\">");
    match &rendered.call {
        Some(lines) => {
            let _ = write!(
                out,
                "<div class=\"title ansi-rendered\">{}</div>",
                ansi_lines_to_html(lines)
            );
        }
        None => {
            let _ = write!(out, "<div class=\"title\">{}</div>", escape(name));
        }
    }
    let collapsed = rendered.result_collapsed.as_deref().map(ansi_lines_to_html);
    let expanded = rendered.result_expanded.as_deref().map(ansi_lines_to_html);
    match (collapsed, expanded) {
        (Some(c), Some(e)) if c != e => {
            let _ = write!(
                out,
                "<details class=\"ansi-rendered\"><summary>{c}</summary><div class=\"body\">{e}</div></details>"
            );
        }
        (_, Some(e)) => {
            let _ = write!(out, "<div class=\"output ansi-rendered\">{e}</div>");
        }
        _ => match result {
            Some(r) => out.push_str(&result_body(r)),
            None => out.push_str("<div class=\"status\">(no result)</div>"),
        },
    }
    out.push_str("</div>");
    out
}

/// One tool call block, with its result when there is one; drawn from what the tool's
/// renderers gave, when they gave something.
pub(crate) fn call_html(call: &Value, result: Option<&Value>, rendered: Option<&RenderedTool>) -> String {
    let name = str_field(call, "name").unwrap_or("tool");
    if let Some(rendered) = rendered.filter(|r| !PAGE_LAID_OUT_TOOLS.contains(&name) && r.has_any()) {
        return rendered_html(name, result, rendered);
    }
    let empty = Value::Null;
    let args = call.get("arguments").unwrap_or(&empty);
    let arg = |k: &str| str_field(args, k).unwrap_or("");
    let state = match result {
        None => "pending",
        Some(r) if r.get("isError").and_then(Value::as_bool) == Some(true) => "err",
        Some(_) => "ok",
    };
    let mut out = format!("<div class=\"tool {state}\"><div class=\"title\">");
    let mut body = String::new();
    match name {
        "bash" => {
            let _ = write!(out, "$ <span class=\"arg\">{}</span>", escape(arg("command")));
            if let Some(t) = args.get("timeout").and_then(Value::as_f64) {
                let _ = write!(out, " <span class=\"extra\">(timeout {t}s)</span>");
            }
        }
        "read" => {
            let _ = write!(out, "read <span class=\"arg\">{}</span>", escape(arg("path")));
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                let range = match limit {
                    Some(l) => format!(":{start}-{}", start + l.saturating_sub(1)),
                    None => format!(":{start}"),
                };
                let _ = write!(out, "<span class=\"extra\">{range}</span>");
            }
        }
        "write" => {
            let content = arg("content");
            let _ = write!(
                out,
                "write <span class=\"arg\">{}</span> <span class=\"extra\">({} lines)</span>",
                escape(arg("path")),
                content.lines().count()
            );
            body.push_str(&folded_pre(content, "written"));
        }
        "edit" => {
            let _ = write!(out, "edit <span class=\"arg\">{}</span>", escape(arg("path")));
            let diff = result.and_then(|r| r.get("details")).and_then(|d| str_field(d, "diff"));
            body.push_str(&match diff {
                Some(d) => diff_html(d),
                None => edits_html(args),
            });
        }
        "grep" | "find" => {
            let _ = write!(
                out,
                "{name} <span class=\"arg\">{}</span> <span class=\"extra\">in {}</span>",
                escape(arg("pattern")),
                escape(str_field(args, "path").unwrap_or("."))
            );
            if let Some(g) = str_field(args, "glob") {
                let _ = write!(out, " <span class=\"extra\">({})</span>", escape(g));
            }
        }
        "ls" => {
            let _ = write!(
                out,
                "ls <span class=\"arg\">{}</span>",
                escape(str_field(args, "path").unwrap_or("."))
            );
        }
        _ => {
            out.push_str(&escape(name));
            if args.as_object().is_some_and(|o| !o.is_empty()) {
                let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
                body.push_str(&folded_pre(&pretty, "args"));
            }
        }
    }
    out.push_str("</div>");
    out.push_str(&body);
    match result {
        Some(r) => out.push_str(&result_body(r)),
        None => out.push_str("<div class=\"status\">(no result)</div>"),
    }
    out.push_str("</div>");
    out
}

/// pi's edit diff (`+N text`, `-N text`, ` N text` lines) coloured per line.
fn diff_html(diff: &str) -> String {
    let mut out = String::from("<pre class=\"diff\">");
    for line in diff.split('\n') {
        let class = match line.as_bytes().first() {
            Some(b'+') => "add",
            Some(b'-') => "del",
            _ => "ctx",
        };
        let _ = write!(out, "<span class=\"{class}\">{}</span>", escape(line));
    }
    out.push_str("</pre>");
    out
}

/// Without a recorded diff: the requested replacements as removed/added lines.
fn edits_html(args: &Value) -> String {
    let pairs: Vec<(&str, &str)> = match args.get("edits").and_then(Value::as_array) {
        Some(edits) => edits
            .iter()
            .map(|e| {
                (
                    str_field(e, "oldText").unwrap_or(""),
                    str_field(e, "newText").unwrap_or(""),
                )
            })
            .collect(),
        None => vec![(
            str_field(args, "oldText").unwrap_or(""),
            str_field(args, "newText").unwrap_or(""),
        )],
    };
    let mut diff = String::new();
    for (old, new) in pairs {
        for l in old.lines() {
            let _ = writeln!(diff, "-{l}");
        }
        for l in new.lines() {
            let _ = writeln!(diff, "+{l}");
        }
    }
    if diff.is_empty() {
        return String::new();
    }
    diff_html(diff.trim_end_matches('\n'))
}
