//! Names of MCP tools (`mcp__<server>__<tool>`), server namespaces, labels, summaries, and the `*`
//! patterns of `toolExposure`.

use sha2::{Digest, Sha256};

/// Provider tool names are limited to 64 characters.
const MAX_TOOL_NAME_LENGTH: usize = 64;

/// Every character outside `[A-Za-z0-9_]` becomes `_`, one per UTF-16 unit (as pi 1.6 counts them,
/// so a character outside the BMP becomes `__`).
fn sanitize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    out
}

/// The name a model calls a server's tool by: `mcp__<server>__<tool>` with everything outside
/// `[A-Za-z0-9_]` replaced by `_`. A name longer than 64 characters, or one `is_taken` reports as used
/// by another tool, is cut to fit and gets `_<8 hex of sha256(server \0 tool)>`.
pub fn mcp_tool_name(server: &str, tool: &str, is_taken: impl Fn(&str) -> bool) -> String {
    let name = sanitize(&format!("mcp__{server}__{tool}"));
    // Each character of `name` is ASCII now, so its length in chars equals its length in UTF-16 units.
    if name.len() <= MAX_TOOL_NAME_LENGTH && !is_taken(&name) {
        return name;
    }
    let digest = Sha256::digest(format!("{server}\0{tool}").as_bytes());
    let hash: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let keep = MAX_TOOL_NAME_LENGTH - hash.len() - 1;
    let cut: String = name.chars().take(keep).collect();
    format!("{cut}_{hash}")
}

/// Names for all tools of one server, in order. `taken` reports names owned by other tools. Tools
/// whose plain names collide with each other all get the hash suffix, so which one keeps the plain
/// name does not depend on the order of the list.
pub fn mcp_tool_names(server: &str, tools: &[&str], taken: impl Fn(&str) -> bool) -> Vec<String> {
    let mut unique: Vec<&str> = Vec::new();
    for tool in tools {
        if !unique.contains(tool) {
            unique.push(tool);
        }
    }
    let plain: Vec<String> = unique.iter().map(|t| mcp_tool_name(server, t, |_| false)).collect();
    let mut current: Vec<String> = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = mcp_tool_name(server, tool, |candidate| {
            taken(candidate)
                || current.iter().any(|c| c == candidate)
                || plain.iter().filter(|p| *p == candidate).count() > 1
        });
        current.push(name);
    }
    current
}

/// Namespace of a server's tools: `mcp__<server>` with `-` replaced by `_`.
pub fn mcp_namespace(server: &str) -> String {
    format!("mcp__{}", server.replace('-', "_"))
}

/// The label of a tool in the UI: `<server>/<tool>`.
pub fn mcp_tool_label(server: &str, tool: &str) -> String {
    format!("{server}/{tool}")
}

/// The one-line summary of a server: the first line of its description, else of its instructions.
pub fn mcp_server_summary(description: Option<&str>, instructions: Option<&str>) -> String {
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    let instructions = instructions.map(str::trim).filter(|i| !i.is_empty());
    let text = description.or(instructions).unwrap_or("");
    text.split('\n').next().unwrap_or("").trim().to_string()
}

/// Whether `name` matches a pattern where `*` stands for any characters (and nothing else is special).
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(split) => split,
        None => return name.is_empty(),
    };
    let Some(mut remaining) = name.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for part in middle {
        match remaining.find(part) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_like_the_examples() {
        assert_eq!(
            mcp_tool_name("demo-direct", "add-numbers", |_| false),
            "mcp__demo_direct__add_numbers"
        );
        assert_eq!(mcp_tool_name("demo", "echo", |_| false), "mcp__demo__echo");
        assert_eq!(mcp_namespace("demo-direct"), "mcp__demo_direct");
        assert_eq!(mcp_tool_label("demo-direct", "add-numbers"), "demo-direct/add-numbers");
    }

    /// Expected names come from running pi 1.6's `createMcpToolName` under node.
    #[test]
    fn matches_the_reference_implementation() {
        let cases = [
            ("a.b", "x y", "mcp__a_b__x_y"),
            ("s", "tööl", "mcp__s__t__l"),
            ("s", "emoji😀x", "mcp__s__emoji__x"),
            (
                "very-long-server-name-for-testing",
                "a-tool-with-an-extremely-long-name-that-overflows",
                "mcp__very_long_server_name_for_testing__a_tool_with_an__d91a31be",
            ),
            (
                "s",
                &"x".repeat(56),
                "mcp__s__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            ),
            (
                "s",
                &"x".repeat(57),
                "mcp__s__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_065b956f",
            ),
        ];
        for (server, tool, expected) in cases {
            assert_eq!(mcp_tool_name(server, tool, |_| false), expected, "{server}/{tool}");
        }
        assert_eq!(mcp_tool_name("taken", "a-b", |_| true), "mcp__taken__a_b_1a9e40a1");
    }

    #[test]
    fn colliding_tools_of_one_server_all_get_the_suffix() {
        let names = mcp_tool_names("taken", &["a-b", "a_b", "c"], |_| false);
        assert_eq!(names[0], "mcp__taken__a_b_1a9e40a1");
        assert!(names[1].starts_with("mcp__taken__a_b_") && names[1] != names[0]);
        assert_eq!(names[2], "mcp__taken__c");
        let other_owner = mcp_tool_names("s", &["c"], |n| n == "mcp__s__c");
        assert_ne!(other_owner[0], "mcp__s__c");
    }

    #[test]
    fn patterns_match_like_globs_of_stars_only() {
        assert!(pattern_matches("add-*", "add-numbers"));
        assert!(pattern_matches("*", "x"));
        assert!(pattern_matches("a*b*c", "aXbYc"));
        assert!(pattern_matches("a*a", "aa"));
        assert!(!pattern_matches("a*a", "a"));
        assert!(!pattern_matches("add-*", "sub-numbers"));
        assert!(pattern_matches("mcp__*__x.y", "mcp__s__x.y"));
        assert!(!pattern_matches("x.y", "xzy"));
    }

    #[test]
    fn summary_prefers_the_description_first_line() {
        assert_eq!(
            mcp_server_summary(Some("  Direct demo\nmore"), Some("ins")),
            "Direct demo"
        );
        assert_eq!(
            mcp_server_summary(Some("  "), Some("Demo server.\nSecond")),
            "Demo server."
        );
        assert_eq!(mcp_server_summary(None, None), "");
    }
}
