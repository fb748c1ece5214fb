//! The string formats a tool schema's `format` keyword names, checked as pi 1.6's validator
//! checks them (RFC 3339 dates and times, RFC 5321-style addresses, RFC 4122 UUIDs, IP
//! addresses, host names, URIs). A format this module does not know is not checked.

use std::net::{Ipv4Addr, Ipv6Addr};

/// `Some(valid)` for a known format, `None` for one that is not checked.
pub fn check(format: &str, text: &str) -> Option<bool> {
    Some(match format {
        "date" => is_date(text),
        "time" => is_time(text),
        "date-time" => is_date_time(text),
        "email" => is_email(text),
        "uuid" => is_uuid(text),
        "ipv4" => is_ipv4(text),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        "hostname" => is_hostname(text),
        "uri" => is_uri(text),
        "url" => is_url(text),
        _ => return None,
    })
}

fn digits(text: &str, n: usize) -> Option<u32> {
    (text.len() == n && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// `YYYY-MM-DD`, a day that exists (29 February only in leap years).
fn is_date(text: &str) -> bool {
    let mut parts = text.split('-');
    let (Some(y), Some(m), Some(d), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.frac]` and a zone (`Z` or `+HH:MM`); second 60 allowed (a leap second).
fn is_time(text: &str) -> bool {
    let (clock, zone) = match text.find(['Z', 'z', '+', '-']) {
        Some(i) => text.split_at(i),
        None => return false,
    };
    let zone_ok = match zone {
        "Z" | "z" => true,
        _ => {
            let offset = &zone[1..];
            offset.len() == 5
                && offset.as_bytes()[2] == b':'
                && digits(&offset[..2], 2).is_some_and(|h| h <= 23)
                && digits(&offset[3..], 2).is_some_and(|m| m <= 59)
        }
    };
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(s), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    zone_ok
        && digits(h, 2).is_some_and(|h| h <= 23)
        && digits(m, 2).is_some_and(|m| m <= 59)
        && digits(s, 2).is_some_and(|s| s <= 60)
}

fn is_date_time(text: &str) -> bool {
    match text.find(['T', 't', ' ']) {
        Some(i) => is_date(&text[..i]) && is_time(&text[i + 1..]),
        None => false,
    }
}

/// `local@domain`: a dot-atom local part and a host name or an address literal.
fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let atom = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+/=?^_`{|}~-".contains(&b);
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && local.split('.').all(|part| !part.is_empty() && part.bytes().all(atom));
    let domain_ok = match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(literal) => {
            is_ipv4(literal)
                || literal
                    .strip_prefix("IPv6:")
                    .is_some_and(|a| a.parse::<Ipv6Addr>().is_ok())
        }
        None => is_hostname(domain),
    };
    local_ok && domain_ok
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Four decimal octets without leading zeros.
fn is_ipv4(text: &str) -> bool {
    text.parse::<Ipv4Addr>().is_ok()
}

/// Labels of letters, digits and inner hyphens, at most 63 characters each, 253 in all.
fn is_hostname(text: &str) -> bool {
    let name = text.strip_suffix('.').unwrap_or(text);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// An absolute URI: a scheme, `:`, and no characters a URI cannot hold.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let scheme_ok = scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    scheme_ok
        && !rest
            .bytes()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || b"<>\"{}|\\^`".contains(&b))
}

/// A URI with an authority (`scheme://host...`).
fn is_url(text: &str) -> bool {
    is_uri(text)
        && text
            .split_once("://")
            .is_some_and(|(_, rest)| !rest.is_empty() && !rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn known_formats_accept_and_reject() {
        let cases = [
            ("date", "2026-02-28", true),
            ("date", "2024-02-29", true),
            ("date", "2026-02-29", false),
            ("date", "2026-13-01", false),
            ("time", "23:59:60.5+02:00", true),
            ("time", "10:00:00", false),
            ("date-time", "2026-12-02T03:30:00.123Z", true),
            ("date-time", "2026-12-02 03:30", false),
            ("email", "a.b+c@example.com", true),
            ("email", "a..b@example.com", false),
            ("email", "nobody", false),
            ("uuid", "0195f3a2-7b1c-7c3d-8e4f-0123456789ab", true),
            ("uuid", "0195f3a2-7b1c-7c3d-8e4f", false),
            ("ipv4", "192.168.0.1", true),
            ("ipv4", "256.0.0.1", false),
            ("ipv6", "::1", true),
            ("ipv6", "1::2::3", false),
            ("hostname", "api.example-1.com", true),
            ("hostname", "-bad.com", false),
            ("uri", "https://example.com/a?b=c", true),
            ("uri", "mailto:x@y.z", true),
            ("uri", "/relative/path", false),
            ("uri", "https://exa mple.com", false),
            ("url", "http://localhost:8080/x", true),
            ("url", "mailto:x@y.z", false),
        ];
        for (format, text, valid) in cases {
            assert_eq!(check(format, text), Some(valid), "{format} {text:?}");
        }
        assert_eq!(check("color", "red"), None);
    }
}
