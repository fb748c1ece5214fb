//! Normalising RPC lines so a golden run and ours compare: ids, session paths, times, mock
//! URLs, and token counts that depend on the size of the system prompt.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Replaces run-specific values by stable placeholders. Ids are numbered in order of first
/// appearance, so two runs that create the same things in the same order normalise alike.
#[derive(Default)]
pub struct Normalizer {
    /// (from, to) literal replacements inside strings, applied first.
    pub literals: Vec<(String, String)>,
    names: HashMap<String, String>,
    counts: HashMap<&'static str, usize>,
    session_ids: Vec<(String, usize)>,
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.len() == 5
        && [8, 4, 4, 4, 12]
            .iter()
            .zip(&parts)
            .all(|(n, p)| p.len() == *n && is_hex(p))
}

/// Keys whose numeric values depend on how many bytes we send (system prompt, tool schemas).
const SIZE_KEYS: &[&str] = &[
    "input",
    "totalTokens",
    "total",
    "tokensBefore",
    "tokens",
    "percent",
    "cost",
];

impl Normalizer {
    pub fn new(literals: Vec<(String, String)>) -> Self {
        Normalizer {
            literals,
            ..Default::default()
        }
    }

    fn name(&mut self, kind: &'static str, raw: &str) -> String {
        if let Some(n) = self.names.get(raw) {
            return n.clone();
        }
        let c = self.counts.entry(kind).or_insert(0);
        *c += 1;
        let n = format!("<{kind}#{c}>");
        self.names.insert(raw.to_string(), n.clone());
        n
    }

    /// Name sessions and their entries after their place among the run's session files (in
    /// creation order), so ids compare by what they point at. An entry copied into a later
    /// file by fork or clone keeps the name from the first file that has it.
    pub fn seed_sessions(&mut self, files: &[Vec<Value>]) {
        for (f, entries) in files.iter().enumerate() {
            for (j, e) in entries.iter().enumerate() {
                let Some(id) = e["id"].as_str() else { continue };
                let name = if e["type"] == "session" {
                    self.session_ids.push((id.to_string(), f + 1));
                    format!("<session {}>", f + 1)
                } else {
                    format!("<entry {}.{j}>", f + 1)
                };
                self.names.entry(id.to_string()).or_insert(name);
            }
        }
    }

    fn string(&mut self, s: &str) -> String {
        let mut s = s.to_string();
        for (from, to) in &self.literals {
            s = s.replace(from.as_str(), to);
        }
        if s.contains("/sessions/") && s.ends_with(".jsonl") {
            if let Some((_, f)) = self.session_ids.iter().find(|(id, _)| s.contains(id.as_str())) {
                return format!("<file {f}>");
            }
            return self.name("session-file", &s);
        }
        if is_uuid(&s) {
            return self.name("uuid", &s);
        }
        if s.len() == 8 && is_hex(&s) {
            return self.name("entry", &s);
        }
        s
    }

    /// Normalise `v`.
    pub fn value(&mut self, v: &Value) -> Value {
        self.walk(v, false)
    }

    fn walk(&mut self, v: &Value, sized: bool) -> Value {
        match v {
            Value::String(s) => Value::String(self.string(s)),
            Value::Number(_) if sized => Value::String("<N>".into()),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.walk(x, sized)).collect()),
            Value::Object(o) => {
                let mut out = Map::new();
                for (k, x) in o {
                    let nx = match k.as_str() {
                        "timestamp" if !x.is_null() => Value::String("<time>".into()),
                        "durationMs" if x.is_number() => Value::String("<ms>".into()),
                        // The prompt's wording is ours: its sections compare by name and tags.
                        "sections" if x.is_object() => sections_shape(x, &mut |s| self.string(s)),
                        "toolsAdded" if x.is_array() => {
                            let masked = mask_descriptions(x);
                            self.walk(&masked, sized)
                        }
                        "usage" | "tokens" | "contextUsage" => self.walk(x, true),
                        key if SIZE_KEYS.contains(&key) && (sized || x.is_number()) && !in_model_cost(o) => {
                            self.walk(x, true)
                        }
                        _ => self.walk(x, sized),
                    };
                    out.insert(k.clone(), nx);
                }
                // How much of an aborted reply arrived depends on timing.
                if o.get("stopReason").and_then(Value::as_str) == Some("aborted") {
                    if let Some(Value::Array(blocks)) = out.get_mut("content") {
                        for b in blocks.iter_mut().filter(|b| b.get("text").is_some()) {
                            b["text"] = Value::String("<partial>".into());
                        }
                    }
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

/// System prompt sections as their shape: the preamble as a marker, every other section as
/// its tags around a marker, except `cwd`, whose text is the (normalised) directory.
fn sections_shape(v: &Value, string: &mut dyn FnMut(&str) -> String) -> Value {
    let Value::Object(sections) = v else { return v.clone() };
    let mut out = Map::new();
    for (name, text) in sections {
        let shape = match text.as_str() {
            None => text.clone(),
            Some(_) if name == "preamble" => Value::from("<preamble>"),
            Some(t) if name == "cwd" => Value::from(string(t)),
            Some(t) => {
                let open = format!("<{name}>\n");
                let close = format!("\n</{name}>");
                if t.starts_with(&open) && t.ends_with(&close) {
                    Value::from(format!("<{name}>…</{name}>"))
                } else {
                    Value::from(format!("unwrapped {name}"))
                }
            }
        };
        out.insert(name.clone(), shape);
    }
    Value::Object(out)
}

/// Tool declarations with every `description` replaced by `<DESC>` (our wording, the
/// golden's masked).
fn mask_descriptions(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| match (k.as_str(), x) {
                    ("description", Value::String(_)) => (k.clone(), Value::from("<DESC>")),
                    _ => (k.clone(), mask_descriptions(x)),
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(mask_descriptions).collect()),
        other => other.clone(),
    }
}

/// A model's static price table (`cost: {input, output, cacheRead, cacheWrite}` beside `contextWindow`)
/// is compared as is; only run-dependent numbers are replaced.
fn in_model_cost(o: &Map<String, Value>) -> bool {
    o.contains_key("cacheRead") && o.contains_key("cacheWrite") && !o.contains_key("total")
}

/// Recursive comparison that lists every difference (keys and their order, values).
pub fn diff(got: &Value, want: &Value, at: &str, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let gk: Vec<&String> = g.keys().collect();
            let wk: Vec<&String> = w.keys().collect();
            if gk != wk {
                out.push(format!("{at}: keys {gk:?}, golden {wk:?}"));
            }
            for (k, wv) in w {
                if let Some(gv) = g.get(k) {
                    diff(gv, wv, &format!("{at}.{k}"), out);
                }
            }
        }
        (Value::Array(g), Value::Array(w)) => {
            if g.len() != w.len() {
                out.push(format!("{at}: {} items, golden {}", g.len(), w.len()));
            }
            for (i, (gv, wv)) in g.iter().zip(w).enumerate() {
                diff(gv, wv, &format!("{at}[{i}]"), out);
            }
        }
        (Value::Number(g), Value::Number(w)) if g.as_f64() == w.as_f64() => {}
        _ if got == want => {}
        _ => out.push(format!("{at}: {got}, golden {want}")),
    }
}
