//! `/changelog`: this build's own changelog (embedded at compile time), shown oldest first so
//! the newest version ends up next to the editor.

const CHANGELOG: &str = include_str!("changelog.md");

/// The `## [version]` sections of a changelog, in file order (newest first).
pub fn entries(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        if line.starts_with("## ") {
            out.push(String::new());
        }
        if let Some(cur) = out.last_mut() {
            cur.push_str(line);
            cur.push('\n');
        }
    }
    out.into_iter().map(|e| e.trim_end().to_string()).collect()
}

/// The "What's New" markdown.
pub fn markdown() -> String {
    let mut all = entries(CHANGELOG);
    if all.is_empty() {
        return "**What's New**\n\nNo changelog entries found.".into();
    }
    all.reverse();
    format!("**What's New**\n\n{}", all.join("\n\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_at_version_headings() {
        let e = entries("# Changelog\n\n## [2]\n\n- b\n\n## [1]\n\n- a\n");
        assert_eq!(e, ["## [2]\n\n- b", "## [1]\n\n- a"]);
        let md = markdown();
        assert!(md.starts_with("**What's New**"));
        // The newest entry comes last.
        assert!(md.find("[0.73.0]") < md.find("[0.73.1]"));
    }
}
