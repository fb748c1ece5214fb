//! Lenient readers for fields of streamed provider events: a field of an unexpected type reads
//! as absent instead of failing the event, and text is borrowed from the input where it can
//! be. Used on the per-token hot paths, where building a `serde_json::Value` tree per event
//! (an ordered map per object) cost more than everything else a token does.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A string field: `None` when absent, null or not a string.
#[derive(Debug, Default)]
pub struct Text<'a>(pub Option<Cow<'a, str>>);

impl Text<'_> {
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    pub fn non_empty(&self) -> Option<&str> {
        self.get().filter(|s| !s.is_empty())
    }
}

/// Consume any value; used where a field has an unexpected type.
pub(crate) fn skip<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
    while seq.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

pub(crate) fn skip_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TextVisitor<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for TextVisitor<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'a>, E> {
                Ok(Text(Some(Cow::Owned(v))))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_unit<E>(self) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_none<E>(self) -> Result<Text<'a>, E> {
                Ok(Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text<'a>, A::Error> {
                skip(seq).map(|()| Text(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'a>, A::Error> {
                skip_map(map).map(|()| Text(None))
            }
        }
        d.deserialize_any(TextVisitor(PhantomData))
    }
}

/// An object field read as `T`: `None` when absent, null or not an object.
#[derive(Debug)]
pub struct Object<T>(pub Option<T>);

impl<T> Default for Object<T> {
    fn default() -> Self {
        Object(None)
    }
}

/// Visits any value; an object becomes `T`, anything else `None`.
struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = Option<T>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<T>, A::Error> {
        skip(seq).map(|()| None)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ObjectVisitor(PhantomData)).map(Object)
    }
}

/// An unsigned integer field: `None` when absent or not a non-negative integer.
#[derive(Debug, Default, Clone, Copy)]
pub struct Index(pub Option<u64>);

impl<'de> Deserialize<'de> for Index {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct IndexVisitor;
        impl<'de> Visitor<'de> for IndexVisitor {
            type Value = Index;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Index, E> {
                Ok(Index(Some(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Index, E> {
                Ok(Index(u64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Index, E> {
                Ok(Index(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Index, E> {
                Ok(Index(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Index, E> {
                Ok(Index(None))
            }
            fn visit_unit<E>(self) -> Result<Index, E> {
                Ok(Index(None))
            }
            fn visit_none<E>(self) -> Result<Index, E> {
                Ok(Index(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Index, A::Error> {
                skip(seq).map(|()| Index(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Index, A::Error> {
                skip_map(map).map(|()| Index(None))
            }
        }
        d.deserialize_any(IndexVisitor)
    }
}

/// The fields every streamed event of the Responses API shares that the per-token events need:
/// `type`, `delta` and `error`.
#[derive(Debug, Default, serde::Deserialize)]
pub struct EventHead<'a> {
    #[serde(default, rename = "type", borrow)]
    pub kind: Text<'a>,
    #[serde(default, borrow)]
    pub delta: Text<'a>,
    #[serde(default)]
    pub error: Option<serde_json::Value>,
}

impl<'a> EventHead<'a> {
    /// The head of `data` when it is a JSON object; `None` otherwise (the caller's full
    /// parse then reports broken JSON in its own words).
    pub fn parse(data: &'a str) -> Option<Self> {
        if !data.trim_start().starts_with('{') {
            return None;
        }
        serde_json::from_str(data).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(default, borrow)]
        text: Text<'a>,
        #[serde(default)]
        index: Index,
    }

    #[test]
    fn fields_of_other_types_read_as_absent() {
        let p: Probe = serde_json::from_str(r#"{"text":"a","index":3,"other":[1,{"x":2}]}"#).expect("parse");
        assert_eq!((p.text.get(), p.index.0), (Some("a"), Some(3)));
        let p: Probe = serde_json::from_str(r#"{"text":{"a":[1]},"index":-1}"#).expect("parse");
        assert_eq!((p.text.get(), p.index.0), (None, None));
        let p: Probe = serde_json::from_str(r#"{"text":null,"index":"2"}"#).expect("parse");
        assert_eq!((p.text.get(), p.index.0), (None, None));
        let p: Probe = serde_json::from_str(r#"{}"#).expect("parse");
        assert_eq!((p.text.get(), p.index.0), (None, None));
    }

    #[test]
    fn event_heads_read_type_delta_and_error() {
        let h =
            EventHead::parse(r#"{"type":"response.output_text.delta","item_id":"m","output_index":0,"delta":"Hi"}"#)
                .expect("head");
        assert_eq!(
            (h.kind.get(), h.delta.get(), h.error.is_none()),
            (Some("response.output_text.delta"), Some("Hi"), true)
        );
        let h = EventHead::parse(r#"{"type":"error","error":{"message":"x"}}"#).expect("head");
        assert!(h.error.is_some());
        assert!(EventHead::parse("[1]").is_none());
        assert!(EventHead::parse("{broken").is_none());
    }
}
