//! Ids and timestamps as pi writes them: UUIDv7 session ids, 8-hex entry ids, ISO-8601 times.

use chrono::{DateTime, SecondsFormat, Utc};

/// A new session id (UUIDv7, time-ordered).
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// A new entry id: the first 8 hex digits of a random UUID, retried while `taken` says it is
/// in use; after 100 collisions the whole UUID (as pi does).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let full = uuid::Uuid::new_v4().to_string();
        let short = &full[..8];
        if !taken(short) {
            return short.to_string();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// Now, as JavaScript's `new Date().toISOString()`: `2026-03-15T10:20:30.123Z`.
pub fn now_iso() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Milliseconds since the epoch for an ISO timestamp, `None` where JavaScript's `Date` gives NaN.
pub fn iso_to_ms(iso: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(iso).ok().map(|t| t.timestamp_millis())
}

/// The ISO form of epoch milliseconds.
pub fn ms_to_iso(ms: i64) -> Option<String> {
    DateTime::<Utc>::from_timestamp_millis(ms).map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_has_millis_and_z() {
        let s = now_iso();
        assert_eq!(s.len(), 24, "{s}");
        assert!(s.ends_with('Z'));
        assert_eq!(&s[19..20], ".");
        assert_eq!(ms_to_iso(iso_to_ms(&s).unwrap()).unwrap(), s);
    }

    #[test]
    fn entry_ids_are_8_hex_and_avoid_taken() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        let full = new_entry_id(|_| true);
        assert_eq!(full.len(), 36);
    }

    #[test]
    fn session_ids_are_v7() {
        let id = new_session_id();
        assert_eq!(&id[14..15], "7");
    }
}
