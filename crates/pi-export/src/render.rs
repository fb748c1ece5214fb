//! Turns session entries into escaped HTML: the header with totals, the active branch's messages
//! (Markdown, thinking, tool calls with their results, images, summaries) and the branch tree.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd};
use serde_json::Value;

use super::{str_field, template, tool, tree, ExportOptions, RenderedTool, SessionDoc};

/// Tool output longer than this many lines is folded after `PREVIEW_LINES`.
const FOLD_LINES: usize = 20;
const PREVIEW_LINES: usize = 10;

/// Escapes text for HTML content and attribute values.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Keeps a link target only when it is harmless to follow: http(s), mailto, an in-page anchor or a
/// relative path. Anything else (`javascript:`, `data:`, `vbscript:`, ...) becomes `#`.
pub(crate) fn sanitize_url(url: &str) -> String {
    let cleaned: String = url
        .trim()
        .chars()
        .filter(|c| !c.is_ascii_control() && !c.is_whitespace())
        .collect();
    let lower = cleaned.to_ascii_lowercase();
    let scheme_end = lower.find(':');
    let path_start = lower.find(['/', '?', '#']);
    let has_scheme = matches!((scheme_end, path_start), (Some(c), Some(p)) if c < p)
        || (scheme_end.is_some() && path_start.is_none());
    if !has_scheme || lower.starts_with("http:") || lower.starts_with("https:") || lower.starts_with("mailto:") {
        url.trim().to_string()
    } else {
        "#".to_string()
    }
}

/// A `data:` URI for an inline image, or `None` when the MIME type or payload looks wrong.
fn image_data_uri(mime: &str, data: &str) -> Option<String> {
    let mime_ok = mime
        .strip_prefix("image/")
        .is_some_and(|sub| !sub.is_empty() && sub.bytes().all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b)));
    let data_ok = data
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"+/=\r\n".contains(&b));
    (mime_ok && data_ok && !data.is_empty() && mime != "image/svg+xml").then(|| format!("data:{mime};base64,{data}"))
}

fn is_inline_image_uri(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    lower.starts_with("data:image/") && !lower.starts_with("data:image/svg")
}

/// Renders Markdown. Raw HTML is shown as text, link targets are sanitised, and images that are
/// not inline `data:` images become plain links so the page never loads anything remote.
pub(crate) fn markdown(text: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut image_as_link: Vec<bool> = Vec::new();
    let events = Parser::new_ext(text, opts).map(|ev| match ev {
        Event::Html(s) | Event::InlineHtml(s) => Event::Text(s),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::Paragraph),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::Paragraph),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: CowStr::from(sanitize_url(&dest_url)),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => {
            if is_inline_image_uri(&dest_url) {
                image_as_link.push(false);
                Event::Start(Tag::Image {
                    link_type,
                    dest_url,
                    title,
                    id,
                })
            } else {
                image_as_link.push(true);
                Event::Start(Tag::Link {
                    link_type: LinkType::Inline,
                    dest_url: CowStr::from(sanitize_url(&dest_url)),
                    title,
                    id,
                })
            }
        }
        Event::End(TagEnd::Image) => {
            if image_as_link.pop().unwrap_or(true) {
                Event::End(TagEnd::Link)
            } else {
                Event::End(TagEnd::Image)
            }
        }
        other => other,
    });
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// Every text block of a message content (a string or an array of blocks), joined by newlines.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_field(b, "type") == Some("text"))
            .filter_map(|b| str_field(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn content_images(content: Option<&Value>) -> String {
    let mut out = String::new();
    if let Some(Value::Array(blocks)) = content {
        for b in blocks.iter().filter(|b| str_field(b, "type") == Some("image")) {
            let mime = str_field(b, "mimeType").unwrap_or("");
            match image_data_uri(mime, str_field(b, "data").unwrap_or("")) {
                Some(uri) => {
                    let _ = write!(out, "<img src=\"{}\" alt=\"image\">", escape(&uri));
                }
                None => out.push_str("<div class=\"status\">[image could not be shown]</div>"),
            }
        }
    }
    out
}

fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// Header time as `YYYY-MM-DD HH:MM:SS` from an ISO timestamp (left as is when it is not one).
fn short_time(iso: &str) -> String {
    let t = iso.replacen('T', " ", 1);
    match t.find('.') {
        Some(dot) if dot >= 19 => t[..dot].to_string(),
        _ => t.trim_end_matches('Z').to_string(),
    }
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |cur, k| cur.get(*k))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

fn fmt_tokens(n: f64) -> String {
    if n >= 1_000_000.0 {
        format!("{:.1}M", n / 1_000_000.0)
    } else if n >= 10_000.0 {
        format!("{:.0}k", n / 1000.0)
    } else if n >= 1000.0 {
        format!("{:.1}k", n / 1000.0)
    } else {
        format!("{n:.0}")
    }
}

/// Labels per entry id: the latest `label` entry for a target wins; an empty one removes it.
fn labels(doc: &SessionDoc) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for e in doc.entries.iter().filter(|e| str_field(e, "type") == Some("label")) {
        if let Some(target) = str_field(e, "targetId") {
            match str_field(e, "label").map(str::trim) {
                Some(l) if !l.is_empty() => {
                    map.insert(target.to_string(), l.to_string());
                }
                _ => {
                    map.remove(target);
                }
            }
        }
    }
    map
}

fn session_name(doc: &SessionDoc) -> Option<String> {
    doc.entries
        .iter()
        .filter(|e| str_field(e, "type") == Some("session_info"))
        .filter_map(|e| str_field(e, "name").map(str::trim))
        .rfind(|n| !n.is_empty())
        .map(str::to_string)
}

/// The whole page for a session.
pub(crate) fn render_page(doc: &SessionDoc, options: &ExportOptions) -> String {
    let path = doc.active_path(options.leaf_id.as_deref());
    let labels = labels(doc);
    let name = session_name(doc);
    let mut main = header_html(doc, &path, name.as_deref(), options);
    main.push_str(&messages_html(doc, &path, &labels, &options.rendered_tools));
    let sidebar = tree::tree_html(doc, &path, &labels);
    let title = match &name {
        Some(n) => format!("pi session: {}", escape(n)),
        None => format!("pi session {}", escape(str_field(&doc.header, "id").unwrap_or(""))),
    };
    let theme = options.theme.clone().unwrap_or_default();
    template::page(&theme, &title, &sidebar, &main)
}

fn header_html(doc: &SessionDoc, path: &[usize], name: Option<&str>, options: &ExportOptions) -> String {
    let (mut users, mut assistants, mut tool_calls, mut tool_results) = (0, 0, 0, 0);
    let (mut input, mut output, mut cache_read, mut cache_write, mut cost) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut models: Vec<String> = Vec::new();
    let mut add_model = |m: String| {
        if !models.contains(&m) {
            models.push(m);
        }
    };
    for &i in path {
        let e = &doc.entries[i];
        if str_field(e, "type") == Some("model_change") {
            add_model(format!(
                "{}/{}",
                str_field(e, "provider").unwrap_or("?"),
                str_field(e, "modelId").unwrap_or("?")
            ));
        }
        let Some(m) = e.get("message") else { continue };
        match str_field(m, "role") {
            Some("user") => users += 1,
            Some("toolResult") => tool_results += 1,
            Some("assistant") => {
                assistants += 1;
                if let Some(Value::Array(blocks)) = m.get("content") {
                    tool_calls += blocks
                        .iter()
                        .filter(|b| str_field(b, "type") == Some("toolCall"))
                        .count();
                }
                input += num(m, &["usage", "input"]);
                output += num(m, &["usage", "output"]);
                cache_read += num(m, &["usage", "cacheRead"]);
                cache_write += num(m, &["usage", "cacheWrite"]);
                cost += num(m, &["usage", "cost", "total"]);
                if let (Some(p), Some(id)) = (str_field(m, "provider"), str_field(m, "model")) {
                    add_model(format!("{p}/{id}"));
                }
            }
            _ => {}
        }
    }
    let h = &doc.header;
    let mut out = String::from("<header class=\"session\">");
    let _ = write!(
        out,
        "<h1>{}</h1><dl class=\"info\">",
        escape(name.unwrap_or("pi session"))
    );
    let mut row = |k: &str, v: &str| {
        let _ = write!(out, "<dt>{k}</dt><dd>{}</dd>", escape(v));
    };
    row("Session", str_field(h, "id").unwrap_or(""));
    if let Some(cwd) = str_field(h, "cwd") {
        row("Directory", cwd);
    }
    if let Some(ts) = str_field(h, "timestamp") {
        row("Started", &short_time(ts));
    }
    if !models.is_empty() {
        row("Models", &models.join(", "));
    }
    row(
        "Messages",
        &format!("{users} user, {assistants} assistant, {tool_results} tool results"),
    );
    row("Tool calls", &tool_calls.to_string());
    let mut tokens = format!("↑{} ↓{}", fmt_tokens(input), fmt_tokens(output));
    if cache_read > 0.0 || cache_write > 0.0 {
        let _ = write!(
            tokens,
            " (cache read {}, cache write {})",
            fmt_tokens(cache_read),
            fmt_tokens(cache_write)
        );
    }
    row("Tokens", &tokens);
    row("Cost", &format!("${cost:.4}"));
    if let Some(parent) = str_field(h, "parentSession") {
        row("Forked from", parent);
    }
    out.push_str("</dl>");
    if let Some(sp) = &options.system_prompt {
        let _ = write!(
            out,
            "<details class=\"sys collapsible\"><summary>System prompt</summary><pre>{}</pre></details>",
            escape(sp)
        );
    }
    if !options.tools.is_empty() {
        out.push_str("<details class=\"sys collapsible\"><summary>Tools</summary><ul>");
        for t in &options.tools {
            let _ = write!(
                out,
                "<li><b>{}</b>: {}</li>",
                escape(&t.name),
                escape(&first_line(&t.description, 200))
            );
        }
        out.push_str("</ul></details>");
    }
    out.push_str(
        "<div class=\"controls js-only\"><button id=\"expand-all\" type=\"button\">Expand all</button> \
<button id=\"collapse-all\" type=\"button\">Collapse all</button></div></header>\n",
    );
    out
}

fn messages_html(
    doc: &SessionDoc,
    path: &[usize],
    labels: &HashMap<String, String>,
    rendered: &HashMap<String, RenderedTool>,
) -> String {
    // Tool results are drawn inside the call that asked for them.
    let mut results: HashMap<&str, &Value> = HashMap::new();
    for &i in path {
        if let Some(m) = doc.entries[i].get("message") {
            if str_field(m, "role") == Some("toolResult") {
                if let Some(id) = str_field(m, "toolCallId") {
                    results.entry(id).or_insert(m);
                }
            }
        }
    }
    let mut shown: HashSet<&str> = HashSet::new();
    let mut out = String::new();
    for &i in path {
        let e = &doc.entries[i];
        let id = str_field(e, "id").unwrap_or("");
        let time = str_field(e, "timestamp").map(short_time).unwrap_or_default();
        let label = labels
            .get(id)
            .map(|l| format!("<span class=\"label-badge\">{}</span>", escape(l)))
            .unwrap_or_default();
        let body = match str_field(e, "type") {
            Some("message") => match e.get("message") {
                Some(m) => message_html(m, &results, &mut shown, rendered),
                None => continue,
            },
            Some("compaction") => format!(
                "<details class=\"summary-box\"><summary>Compaction: {} tokens summarised</summary>\
<div class=\"md\">{}</div></details>",
                fmt_tokens(num(e, &["tokensBefore"])),
                markdown(str_field(e, "summary").unwrap_or(""))
            ),
            Some("branch_summary") => match str_field(e, "summary").filter(|s| !s.is_empty()) {
                Some(s) => format!(
                    "<div class=\"summary-box\"><div class=\"kind\">Branch summary</div>\
<div class=\"md\">{}</div></div>",
                    markdown(s)
                ),
                None => continue,
            },
            Some("model_change") => format!(
                "<div class=\"event\">Model: <b>{}/{}</b></div>",
                escape(str_field(e, "provider").unwrap_or("?")),
                escape(str_field(e, "modelId").unwrap_or("?"))
            ),
            Some("thinking_level_change") => format!(
                "<div class=\"event\">Thinking level: <b>{}</b></div>",
                escape(str_field(e, "thinkingLevel").unwrap_or("?"))
            ),
            Some("custom_message") => {
                if e.get("display").and_then(Value::as_bool) == Some(false) {
                    continue;
                }
                custom_html(str_field(e, "customType"), e.get("content"))
            }
            _ => continue,
        };
        if body.is_empty() {
            continue;
        }
        // Settings changes are one quiet line; everything else gets who and when.
        let who = match str_field(e, "type") {
            Some("model_change" | "thinking_level_change") => None,
            Some("message") => e.get("message").and_then(|m| str_field(m, "role")).map(|r| match r {
                "bashExecution" => "bash",
                "toolResult" => "tool",
                other => other,
            }),
            Some("compaction") => Some("compaction"),
            Some("branch_summary") => Some("branch summary"),
            _ => Some("custom"),
        };
        let meta = match who {
            Some(w) => format!(
                "<div class=\"meta\">{label}<span class=\"who\">{}</span>{}</div>",
                escape(w),
                escape(&time)
            ),
            None => label,
        };
        let _ = writeln!(
            out,
            "<section class=\"entry\" id=\"e-{}\">{meta}{body}</section>",
            escape(id)
        );
    }
    out
}

fn custom_html(kind: Option<&str>, content: Option<&Value>) -> String {
    format!(
        "<div class=\"custom\"><div class=\"kind\">{}</div><div class=\"md\">{}</div>{}</div>",
        escape(kind.unwrap_or("custom")),
        markdown(&content_text(content)),
        content_images(content)
    )
}

fn message_html<'a>(
    m: &'a Value,
    results: &HashMap<&str, &'a Value>,
    shown: &mut HashSet<&'a str>,
    rendered: &HashMap<String, RenderedTool>,
) -> String {
    match str_field(m, "role") {
        Some("user") => user_html(m),
        Some("assistant") => assistant_html(m, results, shown, rendered),
        Some("toolResult") => {
            let id = str_field(m, "toolCallId").unwrap_or("");
            if shown.contains(id) {
                return String::new();
            }
            let name = str_field(m, "toolName").unwrap_or("tool");
            let err = m.get("isError").and_then(Value::as_bool) == Some(true);
            format!(
                "<div class=\"tool {}\"><div class=\"title\">{} result</div>{}</div>",
                if err { "err" } else { "ok" },
                escape(name),
                result_body(m)
            )
        }
        Some("bashExecution") => bash_execution_html(m),
        // `hookMessage` is the pre-v3 name of `custom`.
        Some("custom" | "hookMessage") => {
            if m.get("display").and_then(Value::as_bool) == Some(false) {
                return String::new();
            }
            custom_html(str_field(m, "customType"), m.get("content"))
        }
        _ => String::new(),
    }
}

/// Splits `<skill name=".." location="..">\n body \n</skill>\n\nuser text` into its parts.
fn parse_skill(text: &str) -> Option<(&str, &str, Option<&str>)> {
    let rest = text.strip_prefix("<skill name=\"")?;
    let (name, rest) = rest.split_once('"')?;
    let rest = rest.strip_prefix(" location=\"")?;
    let (_, rest) = rest.split_once("\">\n")?;
    let (body, after) = rest.rsplit_once("\n</skill>")?;
    if after.is_empty() {
        return Some((name, body, None));
    }
    Some((name, body, Some(after.strip_prefix("\n\n")?)))
}

fn user_html(m: &Value) -> String {
    let text = content_text(m.get("content"));
    let mut out = String::from("<div class=\"user\">");
    match parse_skill(&text) {
        Some((name, body, args)) => {
            let _ = write!(
                out,
                "<details class=\"skill\"><summary>skill: {}</summary><div class=\"body\">{}</div></details>",
                escape(name),
                escape(body)
            );
            if let Some(a) = args {
                let _ = write!(out, "<div class=\"text\">{}</div>", escape(a));
            }
        }
        None => {
            let _ = write!(out, "<div class=\"text\">{}</div>", escape(&text));
        }
    }
    out.push_str(&content_images(m.get("content")));
    out.push_str("</div>");
    out
}

fn assistant_html<'a>(
    m: &'a Value,
    results: &HashMap<&str, &'a Value>,
    shown: &mut HashSet<&'a str>,
    rendered: &HashMap<String, RenderedTool>,
) -> String {
    let mut out = String::from("<div class=\"assistant\">");
    let blocks = m.get("content").and_then(Value::as_array);
    for b in blocks.into_iter().flatten() {
        match str_field(b, "type") {
            Some("text") => {
                let t = str_field(b, "text").unwrap_or("");
                if !t.trim().is_empty() {
                    let _ = write!(out, "<div class=\"md\">{}</div>", markdown(t));
                }
            }
            Some("thinking") => {
                let t = str_field(b, "thinking").unwrap_or("");
                if b.get("redacted").and_then(Value::as_bool) == Some(true) {
                    out.push_str("<div class=\"thinking\">Thinking (redacted)</div>");
                } else if !t.trim().is_empty() {
                    let _ = write!(
                        out,
                        "<details class=\"thinking\"><summary>Thinking</summary><div class=\"body\">{}</div></details>",
                        escape(t.trim())
                    );
                }
            }
            Some("toolCall") => {
                let id = str_field(b, "id").unwrap_or("");
                let result = results.get(id).copied();
                if result.is_some() {
                    shown.insert(id);
                }
                out.push_str(&tool::call_html(b, result, rendered.get(id)));
            }
            _ => {}
        }
    }
    match str_field(m, "stopReason") {
        Some("error") => {
            let _ = write!(
                out,
                "<div class=\"error\">Error: {}</div>",
                escape(str_field(m, "errorMessage").unwrap_or("unknown error"))
            );
        }
        Some("aborted") => {
            let _ = write!(
                out,
                "<div class=\"error\">{}</div>",
                escape(str_field(m, "errorMessage").unwrap_or("Operation aborted"))
            );
        }
        _ => {}
    }
    let model = str_field(m, "model").unwrap_or("");
    let _ = write!(
        out,
        "<div class=\"usage\">{} · ↑{} ↓{}</div></div>",
        escape(model),
        fmt_tokens(num(m, &["usage", "input"])),
        fmt_tokens(num(m, &["usage", "output"]))
    );
    out
}

fn bash_execution_html(m: &Value) -> String {
    let cmd = str_field(m, "command").unwrap_or("");
    let exit = m.get("exitCode").and_then(Value::as_i64);
    let cancelled = m.get("cancelled").and_then(Value::as_bool) == Some(true);
    let bad = cancelled || exit.is_some_and(|c| c != 0);
    let mut out = format!(
        "<div class=\"tool bash {}\"><div class=\"title\">$ <span class=\"arg\">{}</span>{}</div>",
        if bad { "err" } else { "ok" },
        escape(cmd),
        if m.get("excludeFromContext").and_then(Value::as_bool) == Some(true) {
            " <span class=\"extra\">(not sent to the model)</span>"
        } else {
            ""
        }
    );
    out.push_str(&folded_pre(str_field(m, "output").unwrap_or(""), "output"));
    if cancelled {
        out.push_str("<div class=\"status bad\">(command cancelled)</div>");
    } else if let Some(c) = exit.filter(|c| *c != 0) {
        let _ = write!(out, "<div class=\"status bad\">exit code {c}</div>");
    }
    if m.get("truncated").and_then(Value::as_bool) == Some(true) {
        let _ = write!(
            out,
            "<div class=\"status\">[output truncated{}]</div>",
            str_field(m, "fullOutputPath")
                .map(|p| format!(": full output in {}", escape(p)))
                .unwrap_or_default()
        );
    }
    out.push_str("</div>");
    out
}

/// Output text in a `<pre>`; long output shows its first lines and folds the rest into a
/// `<details>` that works without script.
pub(crate) fn folded_pre(text: &str, class: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return String::new();
    }
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() <= FOLD_LINES {
        return format!("<pre class=\"{class}\">{}</pre>", escape(text));
    }
    format!(
        "<pre class=\"{class}\">{}</pre><details class=\"more\"><summary>… {} more lines</summary><pre class=\"{class}\">{}</pre></details>",
        escape(&lines[..PREVIEW_LINES].join("\n")),
        lines.len() - PREVIEW_LINES,
        escape(&lines[PREVIEW_LINES..].join("\n"))
    )
}

/// A tool result's text and images.
pub(crate) fn result_body(m: &Value) -> String {
    let mut out = folded_pre(&content_text(m.get("content")), "output");
    out.push_str(&content_images(m.get("content")));
    out
}

/// The first line of an entry for the branch tree, with a role prefix.
pub(crate) fn entry_summary(e: &Value) -> Option<(&'static str, String)> {
    const MAX: usize = 80;
    let s = match str_field(e, "type")? {
        "message" => {
            let m = e.get("message")?;
            match str_field(m, "role")? {
                "user" => {
                    let text = content_text(m.get("content"));
                    match parse_skill(&text) {
                        Some((name, _, args)) => {
                            ("user", format!("skill:{name} {}", first_line(args.unwrap_or(""), MAX)))
                        }
                        None => ("user", first_line(&text, MAX)),
                    }
                }
                "assistant" => {
                    let blocks = m.get("content").and_then(Value::as_array);
                    let text = content_text(m.get("content"));
                    let tools: Vec<&str> = blocks
                        .into_iter()
                        .flatten()
                        .filter(|b| str_field(b, "type") == Some("toolCall"))
                        .filter_map(|b| str_field(b, "name"))
                        .collect();
                    let line = if !text.trim().is_empty() {
                        let line = first_line(&text, MAX);
                        line.trim_start_matches('#').trim_start().to_string()
                    } else if !tools.is_empty() {
                        format!("[{}]", tools.join(", "))
                    } else if str_field(m, "stopReason") == Some("error") {
                        "[error]".to_string()
                    } else {
                        "[thinking]".to_string()
                    };
                    ("assistant", line)
                }
                "toolResult" => return None,
                "bashExecution" => ("bash", format!("$ {}", first_line(str_field(m, "command")?, MAX))),
                "custom" | "hookMessage" => ("custom", first_line(&content_text(m.get("content")), MAX)),
                _ => return None,
            }
        }
        "compaction" => ("compaction", "context compacted".to_string()),
        "branch_summary" => ("summary", first_line(str_field(e, "summary").unwrap_or(""), MAX)),
        "model_change" => (
            "model",
            format!(
                "{}/{}",
                str_field(e, "provider").unwrap_or("?"),
                str_field(e, "modelId").unwrap_or("?")
            ),
        ),
        "thinking_level_change" => ("thinking", str_field(e, "thinkingLevel").unwrap_or("?").to_string()),
        "custom_message" => ("custom", first_line(&content_text(e.get("content")), MAX)),
        _ => return None,
    };
    Some(s)
}
