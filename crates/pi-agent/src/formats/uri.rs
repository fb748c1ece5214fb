//! The URI family of formats: RFC 3986 URIs and URI references (ASCII only, read by their
//! grammar), IRIs and IRI references (RFC 3987, read as a WHATWG URL parser reads them, as
//! pi 1.6 does) and RFC 6570 URI templates.

use std::net::Ipv6Addr;

const SUB_DELIMS: &[u8] = b"!$&'()*+,;=";

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~".contains(&b)
}

/// Whether `text` is made of `allowed` bytes and `%XX` escapes only.
fn chars_ok(text: &str, allowed: impl Fn(u8) -> bool) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            if !bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else if allowed(bytes[i]) {
            i += 1;
        } else {
            return false;
        }
    }
    true
}

fn pchar(b: u8) -> bool {
    unreserved(b) || SUB_DELIMS.contains(&b) || b == b':' || b == b'@'
}

fn scheme_ok(scheme: &str) -> bool {
    scheme.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
        && scheme.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
}

/// `[userinfo@]host[:port]`; the host a bracketed IPv6 or future address, or a name.
fn authority_ok(authority: &str) -> bool {
    let (userinfo, host_port) = match authority.split_once('@') {
        Some((user, rest)) => (Some(user), rest),
        None => (None, authority),
    };
    if userinfo.is_some_and(|u| !chars_ok(u, |b| unreserved(b) || SUB_DELIMS.contains(&b) || b == b':')) {
        return false;
    }
    let (host_ok, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some((literal, rest)) = bracketed.split_once(']') else {
            return false;
        };
        (ip_literal_ok(literal), rest)
    } else {
        let end = host_port.find(':').unwrap_or(host_port.len());
        let host = &host_port[..end];
        (
            chars_ok(host, |b| unreserved(b) || SUB_DELIMS.contains(&b)),
            &host_port[end..],
        )
    };
    let port_ok = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

fn ip_literal_ok(literal: &str) -> bool {
    if let Some(future) = literal.strip_prefix(['v', 'V']) {
        let Some((version, address)) = future.split_once('.') else {
            return false;
        };
        return !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_hexdigit())
            && !address.is_empty()
            && address
                .bytes()
                .all(|b| unreserved(b) || SUB_DELIMS.contains(&b) || b == b':');
    }
    literal.parse::<Ipv6Addr>().is_ok()
}

/// Segments after the first: any path characters, separated by `/`.
fn segments_ok(path: &str) -> bool {
    path.split('/').all(|segment| chars_ok(segment, pchar))
}

/// What follows `scheme:` (or makes up a relative reference), up to the query.
fn hier_ok(hier: &str, relative: bool) -> bool {
    if let Some(rest) = hier.strip_prefix("//") {
        let end = rest.find('/').unwrap_or(rest.len());
        return authority_ok(&rest[..end]) && segments_ok(&rest[end..]);
    }
    if hier.is_empty() {
        return true;
    }
    // Absolute (`/a/b`) or rootless (`a/b`): the first segment is not empty. In a relative
    // reference it holds no `:`, which would read as a scheme.
    let path = hier.strip_prefix('/').unwrap_or(hier);
    if path.is_empty() {
        return true;
    }
    let (first, rest) = path.split_once('/').unwrap_or((path, ""));
    let first_ok = !first.is_empty()
        && chars_ok(first, |b| {
            pchar(b) && !(relative && b == b':' && !hier.starts_with('/'))
        });
    first_ok && segments_ok(rest)
}

/// The query and fragment, and the part before them.
fn split_tail(text: &str) -> Option<&str> {
    let (before, fragment) = match text.split_once('#') {
        Some((before, fragment)) => (before, Some(fragment)),
        None => (text, None),
    };
    let (before, query) = match before.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (before, None),
    };
    let tail_ok = |part: Option<&str>| part.is_none_or(|p| chars_ok(p, |b| pchar(b) || b == b'/' || b == b'?'));
    (tail_ok(query) && tail_ok(fragment)).then_some(before)
}

fn absolute(text: &str) -> bool {
    let Some(before) = split_tail(text) else {
        return false;
    };
    let Some((scheme, hier)) = before.split_once(':') else {
        return false;
    };
    scheme_ok(scheme) && hier_ok(hier, false)
}

/// An absolute URI: `scheme:`, then an authority and path, a path, or nothing; ASCII only.
pub fn is_uri(text: &str) -> bool {
    absolute(text)
}

/// A URI, or a reference relative to one (`../a?b#c`, `//host/x`, `#frag`, or nothing).
pub fn is_uri_reference(text: &str) -> bool {
    if absolute(text) {
        return true;
    }
    split_tail(text).is_some_and(|before| hier_ok(before, true))
}

fn percent_ok(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().all(|(i, b)| {
        *b != b'%'
            || bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    })
}

/// An IPvFuture host (`[v1.x]`), which URL parsers refuse, read as an IPv6 loopback so the
/// rest of the IRI is still checked.
fn without_future_host(text: &str) -> std::borrow::Cow<'_, str> {
    let Some(start) = text.find("[v").or_else(|| text.find("[V")) else {
        return text.into();
    };
    let inside = &text[start + 2..];
    let Some(close) = inside.find(']') else {
        return text.into();
    };
    let host = &inside[..close];
    let valid = host
        .split_once('.')
        .is_some_and(|(v, rest)| !v.is_empty() && v.bytes().all(|b| b.is_ascii_hexdigit()) && !rest.is_empty());
    if !valid {
        return text.into();
    }
    format!("{}[::1]{}", &text[..start], &inside[close + 1..]).into()
}

/// An absolute IRI: no spaces, controls or `<>^\`{|}\\`, escapes well formed, and a URL a
/// WHATWG parser reads.
pub fn is_iri(text: &str) -> bool {
    let bad = |c: char| c <= ' ' || "<>^`{|}\\".contains(c);
    !text.chars().any(bad) && percent_ok(text) && url::Url::parse(&without_future_host(text)).is_ok()
}

/// An IRI or a reference relative to one, read against `http://example.com`.
pub fn is_iri_reference(text: &str) -> bool {
    let bad = |c: char| c <= ' ' || c == '\u{7f}' || c == '\\';
    // `http//x` (a scheme without its colon) would read as a path.
    let scheme_without_colon = text.find("//").is_some_and(|at| at > 0 && scheme_ok(&text[..at]));
    let Ok(base) = url::Url::parse("http://example.com") else {
        return false;
    };
    !text.chars().any(bad) && percent_ok(text) && !scheme_without_colon && base.join(text).is_ok()
}

/// An RFC 6570 template: literal text and `{...}` expressions of an optional operator and
/// comma-separated variables, each with an optional prefix length (`:1` to `:9999`) or `*`.
pub fn is_uri_template(text: &str) -> bool {
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(inner) = rest.strip_prefix('{') {
            let Some(close) = inner.find('}') else {
                return false;
            };
            if !expression_ok(&inner[..close]) {
                return false;
            }
            rest = &inner[close + 1..];
            continue;
        }
        let end = rest.find('{').unwrap_or(rest.len());
        let literal = &rest[..end];
        let bad = |c: char| c <= ' ' || c == '\u{7f}' || "\"<>\\^`|}".contains(c);
        if literal.chars().any(|c| bad(c) && c != '%') || !percent_ok(literal) {
            return false;
        }
        rest = &rest[end..];
    }
    true
}

fn expression_ok(expression: &str) -> bool {
    let body = expression
        .strip_prefix(|c: char| "+#./;?&=,!@|".contains(c))
        .unwrap_or(expression);
    !body.is_empty() && body.split(',').all(varspec_ok)
}

fn varspec_ok(spec: &str) -> bool {
    let (name, modifier) = match spec.find([':', '*']) {
        Some(at) => spec.split_at(at),
        None => (spec, ""),
    };
    let modifier_ok = match modifier {
        "" | "*" => true,
        m => m.strip_prefix(':').is_some_and(|n| {
            (1..=4).contains(&n.len()) && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit())
        }),
    };
    let name_ok = name
        .split('.')
        .all(|part| !part.is_empty() && chars_ok(part, |b| b.is_ascii_alphanumeric() || b == b'_'));
    modifier_ok && name_ok
}
