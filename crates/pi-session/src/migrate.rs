//! Migrations of older session files to the current version (v1 -> v2 -> v3), on raw objects.

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::entry::CURRENT_SESSION_VERSION;
use crate::ids;

/// Bring `objects` (the parsed lines of a file, header first) to the current version.
/// Returns the version the file had, or `None` when it was already current.
pub fn migrate(objects: &mut [Map<String, Value>]) -> Option<u64> {
    let version = objects
        .first()
        .and_then(|h| h.get("version"))
        .and_then(Value::as_u64)
        .unwrap_or(1);
    if version >= CURRENT_SESSION_VERSION {
        return None;
    }
    if version < 2 {
        v1_to_v2(objects);
    }
    if version < 3 {
        v2_to_v3(objects);
    }
    Some(version)
}

/// v1 has no ids: chain the entries linearly and turn a compaction's `firstKeptEntryIndex`
/// (an index into the file's parsed lines, header included) into `firstKeptEntryId`.
fn v1_to_v2(objects: &mut [Map<String, Value>]) {
    let mut taken: HashSet<String> = HashSet::new();
    let mut prev: Option<String> = None;
    // Ids first, so an index that points forward still resolves.
    for obj in objects.iter_mut() {
        if is_header(obj) {
            obj.insert("version".into(), Value::from(2));
            continue;
        }
        let id = ids::new_entry_id(|c| taken.contains(c));
        taken.insert(id.clone());
        obj.insert("id".into(), Value::String(id.clone()));
        obj.insert("parentId".into(), prev.map_or(Value::Null, Value::String));
        prev = Some(id);
    }
    let id_at: Vec<Option<String>> = objects
        .iter()
        .map(|o| {
            if is_header(o) {
                None
            } else {
                o.get("id").and_then(Value::as_str).map(str::to_string)
            }
        })
        .collect();
    for obj in objects.iter_mut() {
        if obj.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = obj.get("firstKeptEntryIndex").and_then(Value::as_u64) else {
            continue;
        };
        let target = usize::try_from(index)
            .ok()
            .and_then(|i| id_at.get(i).cloned().flatten());
        if let Some(target) = target {
            obj.insert("firstKeptEntryId".into(), Value::String(target));
        }
        obj.remove("firstKeptEntryIndex");
    }
}

/// v3 renamed the message role `hookMessage` to `custom`.
fn v2_to_v3(objects: &mut [Map<String, Value>]) {
    for obj in objects.iter_mut() {
        if is_header(obj) {
            obj.insert("version".into(), Value::from(3));
            continue;
        }
        if obj.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(Value::Object(msg)) = obj.get_mut("message") {
            if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
                msg.insert("role".into(), Value::String("custom".into()));
            }
        }
    }
}

fn is_header(obj: &Map<String, Value>) -> bool {
    obj.get("type").and_then(Value::as_str) == Some("session")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn objs(v: Value) -> Vec<Map<String, Value>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|o| o.as_object().unwrap().clone())
            .collect()
    }

    #[test]
    fn v1_gets_a_linear_chain_and_compaction_ids() {
        let mut o = objs(json!([
            {"type":"session","id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p"},
            {"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}},
            {"type":"message","timestamp":"t","message":{"role":"hookMessage","customType":"x","content":"b","display":true,"timestamp":2}},
            {"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5},
        ]));
        assert_eq!(migrate(&mut o), Some(1));
        assert_eq!(o[0]["version"], 3);
        assert_eq!(o[1]["parentId"], Value::Null);
        assert_eq!(o[2]["parentId"], o[1]["id"]);
        assert_eq!(o[3]["parentId"], o[2]["id"]);
        assert_eq!(o[3]["firstKeptEntryId"], o[2]["id"]);
        assert!(o[3].get("firstKeptEntryIndex").is_none());
        assert_eq!(o[2]["message"]["role"], "custom");
        assert_eq!(o[1]["id"].as_str().unwrap().len(), 8);
    }

    #[test]
    fn v2_renames_hook_messages_only() {
        let mut o = objs(json!([
            {"type":"session","version":2,"id":"s"},
            {"type":"message","id":"a","parentId":null,"message":{"role":"hookMessage","content":"x"}},
            {"type":"message","id":"b","parentId":"a","message":{"role":"user","content":"y"}},
        ]));
        assert_eq!(migrate(&mut o), Some(2));
        assert_eq!(o[0]["version"], 3);
        assert_eq!(o[1]["id"], "a", "v2 ids are kept");
        assert_eq!(o[1]["message"]["role"], "custom");
        assert_eq!(o[2]["message"]["role"], "user");
    }

    #[test]
    fn current_files_are_left_alone() {
        let mut o = objs(json!([{"type":"session","version":3,"id":"s"}]));
        assert_eq!(migrate(&mut o), None);
    }
}
