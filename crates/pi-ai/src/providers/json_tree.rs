//! A JSON tree for request bodies that borrows its text from the conversation.
//!
//! A request carries the whole history, so it is rebuilt for every turn of a long session.
//! Building it as `serde_json::Value` copies every text into an ordered map per message, and
//! freeing that tree afterwards costs as much again; this tree holds references and plain
//! vectors, serializes to the same bytes, and becomes a `Value` only where a caller needs one
//! (payload hooks, later edits).

use std::borrow::Cow;
use std::cell::RefCell;
use std::marker::PhantomData;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Keys in insertion order, unique (see [`Json::insert`]).
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
    /// An owned subtree. Boxed: a `Value` is several times the size of the other variants,
    /// and a long history's request is a tree of hundreds of thousands of these nodes.
    Value(Box<Value>),
    /// A borrowed subtree.
    Ref(&'a Value),
}

impl<'a> Json<'a> {
    pub fn str(s: &'a str) -> Self {
        Json::Str(Cow::Borrowed(s))
    }

    pub fn string(s: String) -> Self {
        Json::Str(Cow::Owned(s))
    }

    /// An object from `(key, value)` pairs with distinct keys.
    pub fn object<const N: usize>(pairs: [(&'a str, Json<'a>); N]) -> Self {
        Json::Object(pairs.into_iter().map(|(k, v)| (Cow::Borrowed(k), v)).collect())
    }

    /// Set `key` in an object, keeping its place when it exists (as `Map::insert` does).
    pub fn insert(&mut self, key: Cow<'a, str>, value: Json<'a>) {
        if let Json::Object(entries) = self {
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => *v = value,
                None => entries.push((key, value)),
            }
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json<'a>> {
        match self {
            Json::Object(entries) => entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// About how many bytes this serializes to: exact for plain text, low by the escapes.
    pub fn size_estimate(&self) -> usize {
        match self {
            Json::Null => 4,
            Json::Bool(_) => 5,
            Json::Str(s) => s.len() + 2,
            Json::Array(items) => 2 + items.iter().map(|i| i.size_estimate() + 1).sum::<usize>(),
            Json::Object(entries) => {
                2 + entries
                    .iter()
                    .map(|(k, v)| k.len() + 4 + v.size_estimate())
                    .sum::<usize>()
            }
            // Small subtrees (arguments, settings): a guess is enough.
            Json::Value(_) | Json::Ref(_) => 64,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Str(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(entries) => {
                let map: Map<String, Value> = entries.iter().map(|(k, v)| (k.to_string(), v.to_value())).collect();
                Value::Object(map)
            }
            Json::Value(v) => Value::clone(v),
            Json::Ref(v) => (*v).clone(),
        }
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Str(text) => s.serialize_str(text),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = s.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k.as_ref(), v)?;
                }
                map.end()
            }
            Json::Value(v) => v.serialize(s),
            Json::Ref(v) => v.serialize(s),
        }
    }
}

/// A body built as a `Value` map whose `key` entry (a placeholder) is written from a [`Json`]
/// list (or a [`Produced`] one) instead: the small fields keep their `Value` code, the
/// history is borrowed.
pub(crate) struct WithMessages<'m, M: Serialize + ?Sized> {
    pub body: &'m Map<String, Value>,
    /// `messages` for most APIs, `input` for Responses.
    pub key: &'static str,
    pub messages: &'m M,
}

/// A JSON array whose items are made while it is written, each dropped once written: the body
/// of a long history then never holds the whole history as a tree beside its bytes. `produce`
/// hands every item to the function it is given, in order; it runs once (a second write of
/// the same value writes an empty array).
pub(crate) struct Produced<'a, F>(RefCell<Option<F>>, PhantomData<Json<'a>>);

impl<'a, F: FnOnce(&mut dyn FnMut(Json<'a>))> Produced<'a, F> {
    pub fn new(produce: F) -> Self {
        Produced(RefCell::new(Some(produce)), PhantomData)
    }
}

impl<'a, F: FnOnce(&mut dyn FnMut(Json<'a>))> Serialize for Produced<'a, F> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        let mut failed = None;
        if let Some(produce) = self.0.borrow_mut().take() {
            produce(&mut |item: Json<'a>| {
                if failed.is_none() {
                    if let Err(e) = seq.serialize_element(&item) {
                        failed = Some(e);
                    }
                }
            });
        }
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

impl<M: Serialize + ?Sized> Serialize for WithMessages<'_, M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.body.len()))?;
        for (k, v) in self.body {
            if k == self.key {
                map.serialize_entry(k, self.messages)?;
            } else {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

/// `body` serialized with its `key` entry written from `items` (see [`WithMessages`]).
pub(crate) fn body_bytes(body: &Map<String, Value>, key: &'static str, items: &[Json<'_>]) -> Result<Vec<u8>, String> {
    let estimate: usize = items.iter().map(Json::size_estimate).sum();
    write_body(body, key, items, estimate)
}

/// `body` serialized with its `key` entry written from `messages`, in a buffer sized for
/// about `estimate` bytes of messages. Sized up front: grown by doubling, the buffer of a long
/// history's 2 MB body ends up at 4 MB, and the copies on the way cost page faults of their own.
pub(crate) fn write_body<M: Serialize + ?Sized>(
    body: &Map<String, Value>,
    key: &'static str,
    messages: &M,
    estimate: usize,
) -> Result<Vec<u8>, String> {
    let estimate = estimate + 4096;
    let mut out = Vec::with_capacity(estimate + estimate / 16);
    serde_json::to_writer(&mut out, &WithMessages { body, key, messages }).map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn serializes_as_the_equivalent_value_does() {
        let text = String::from("a \"quoted\"\nline");
        let mut j = Json::object([
            ("role", Json::str("user")),
            ("content", Json::Array(vec![Json::object([("text", Json::str(&text))])])),
            ("n", Json::Value(Box::new(json!(1.5)))),
            ("none", Json::Null),
        ]);
        j.insert(Cow::Borrowed("role"), Json::str("assistant"));
        j.insert(Cow::Owned("extra".to_string()), Json::string("yes".to_string()));
        let expected =
            json!({"role": "assistant", "content": [{"text": text}], "n": 1.5, "none": null, "extra": "yes"});
        assert_eq!(
            serde_json::to_string(&j).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
        assert_eq!(j.to_value(), expected);
        assert_eq!(j.get("extra"), Some(&Json::str("yes")));
    }

    #[test]
    fn the_messages_placeholder_is_written_from_the_list() {
        let body = json!({"model": "m", "messages": null, "stream": true});
        let messages = vec![Json::object([("role", Json::str("user"))])];
        let spliced = WithMessages {
            body: body.as_object().unwrap(),
            key: "messages",
            messages: &messages,
        };
        assert_eq!(
            serde_json::to_string(&spliced).unwrap(),
            r#"{"model":"m","messages":[{"role":"user"}],"stream":true}"#
        );
    }

    #[test]
    fn a_produced_list_is_written_as_the_collected_one() {
        let body = json!({"model": "m", "messages": null, "stream": true});
        let texts = ["a", "b\"c"];
        let produced = Produced::new(|emit| {
            for t in &texts {
                emit(Json::object([("text", Json::str(t))]));
            }
        });
        let collected: Vec<Json> = texts.iter().map(|t| Json::object([("text", Json::str(t))])).collect();
        let map = body.as_object().unwrap();
        assert_eq!(
            write_body(map, "messages", &produced, 0).unwrap(),
            body_bytes(map, "messages", &collected).unwrap()
        );
    }
}
