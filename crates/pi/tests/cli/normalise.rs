//! Making our output and the golden output comparable: ids become `<ID n>` by first
//! appearance (so parent links are still checked), times become `<TIME>`, the scratch and agent
//! dirs become `<TMP>` and `<AGENT>`, and the numbers that follow the request size (input
//! tokens and their cost) become `<N>`. Then a structural diff that names each difference.

use std::collections::HashMap;

use serde_json::Value;

/// Keys whose string values are generated ids.
const ID_KEYS: &[&str] = &[
    "id",
    "parentId",
    "prompt_cache_key",
    "session_id",
    "firstKeptEntryId",
    "parentSession",
    "fromId",
    "targetId",
];

pub struct Normaliser {
    subs: Vec<(String, &'static str)>,
    ids: HashMap<String, String>,
}

impl Normaliser {
    /// `tmp` is the scratch dir holding `proj`, `agent` the agent dir.
    pub fn new(tmp: &str, agent: &str) -> Normaliser {
        let mut subs = vec![(agent.to_owned(), "<AGENT>"), (tmp.to_owned(), "<TMP>")];
        subs.retain(|(s, _)| !s.is_empty());
        Normaliser {
            subs,
            ids: HashMap::new(),
        }
    }

    /// For golden text, which already says `<TMP>`.
    pub fn golden() -> Normaliser {
        Normaliser::new("", "")
    }

    fn id(&mut self, raw: &str) -> String {
        let next = self.ids.len() + 1;
        self.ids
            .entry(raw.to_owned())
            .or_insert_with(|| format!("<ID {next}>"))
            .clone()
    }

    pub fn value(&mut self, v: &mut Value) {
        match v {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    match key.as_str() {
                        "timestamp" if !item.is_null() => *item = Value::from("<TIME>"),
                        "durationMs" if item.is_number() => *item = Value::from("<MS>"),
                        // A command's measured run time depends on the machine's load.
                        "wall_time_seconds" if item.is_number() => *item = Value::from("<SECONDS>"),
                        // The prompt's wording is ours: only its section names are compared.
                        "sections" if item.is_object() => {
                            if let Some(sections) = item.as_object_mut() {
                                sections.sort_keys();
                                for text in sections.values_mut().filter(|t| t.is_string()) {
                                    *text = Value::from("<SECTION>");
                                }
                            }
                        }
                        // Tool and parameter descriptions are ours too.
                        "toolsAdded" if item.is_array() => {
                            mask_descriptions(item);
                            self.value(item);
                        }
                        k if ID_KEYS.contains(&k) => match item {
                            // The mock's ids are deterministic: keep them.
                            Value::String(s) if !s.contains("mock") => *item = Value::from(self.id(s)),
                            _ => {}
                        },
                        "usage" if item.is_object() => {
                            for k in ["input", "totalTokens"] {
                                if item.get(k).is_some_and(|n| n.as_u64().is_some_and(|n| n > 0)) {
                                    item[k] = Value::from("<N>");
                                }
                            }
                            for k in ["input", "total"] {
                                if item["cost"].get(k).is_some_and(|n| n.as_f64().is_some_and(|n| n > 0.0)) {
                                    item["cost"][k] = Value::from("<N>");
                                }
                            }
                        }
                        _ => self.value(item),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.value(i)),
            Value::String(s) => {
                for (from, to) in &self.subs {
                    if s.contains(from.as_str()) {
                        *s = s.replace(from.as_str(), to);
                    }
                }
            }
            _ => {}
        }
    }

    pub fn text(&self, s: &str) -> String {
        let mut s = s.to_owned();
        for (from, to) in &self.subs {
            s = s.replace(from.as_str(), to);
        }
        s
    }
}

/// Every difference between `ours` and `theirs` (including key order), as `path: detail`.
pub fn diff(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff_at("$", ours, theirs, &mut out);
    out
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 300 {
        format!("{}…", &s[..s.char_indices().nth(300).map_or(s.len(), |(i, _)| i)])
    } else {
        s
    }
}

fn diff_at(path: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, bv) in b {
                match a.get(k) {
                    Some(av) => diff_at(&format!("{path}.{k}"), av, bv, out),
                    None => out.push(format!("{path}.{k}: missing in ours (theirs {})", short(bv))),
                }
            }
            for k in a.keys().filter(|k| !b.contains_key(*k)) {
                out.push(format!("{path}.{k}: extra in ours ({})", short(&a[k])));
            }
            let order_a: Vec<&String> = a.keys().filter(|k| b.contains_key(*k)).collect();
            let order_b: Vec<&String> = b.keys().filter(|k| a.contains_key(*k)).collect();
            if order_a != order_b {
                out.push(format!("{path}: key order ours {order_a:?} theirs {order_b:?}"));
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff_at(&format!("{path}[{i}]"), av, bv, out);
            }
            if a.len() != b.len() {
                out.push(format!("{path}: length ours {} theirs {}", a.len(), b.len()));
            }
        }
        (a, b) if a == b => {}
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => {}
        (a, b) => out.push(format!("{path}: ours {} theirs {}", short(a), short(b))),
    }
}

/// Every string `description` below `v` becomes `<DESC>`.
fn mask_descriptions(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "description" && item.is_string() {
                    *item = Value::from("<DESC>");
                } else {
                    mask_descriptions(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask_descriptions),
        _ => {}
    }
}
