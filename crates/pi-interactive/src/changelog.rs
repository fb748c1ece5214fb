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

/// `/changelog`'s markdown, shown under a "What's New" title: every section, the newest last.
pub fn markdown() -> String {
    let mut all = entries(CHANGELOG);
    if all.is_empty() {
        return "No changelog entries found.".into();
    }
    all.reverse();
    all.join("\n\n")
}

/// `x.y.z` as numbers, for ordering versions (missing or odd parts count as 0).
fn version_key(v: &str) -> (u64, u64, u64) {
    let mut parts = v
        .trim()
        .trim_start_matches('v')
        .split('.')
        .map(|p| p.parse::<u64>().unwrap_or(0));
    (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    )
}

/// The version in a section's `## [x.y.z]` heading.
fn section_version(section: &str) -> Option<&str> {
    let heading = section.lines().next()?.strip_prefix("## ")?;
    Some(heading.trim().trim_start_matches('[').split(']').next()?.trim())
}

/// What the startup shows after an update: the sections of `text` newer than `seen`, newest
/// last, or `None` when there are none.
pub fn newer_than(text: &str, seen: &str) -> Option<String> {
    let seen = version_key(seen);
    let mut newer: Vec<String> = entries(text)
        .into_iter()
        .filter(|e| section_version(e).is_some_and(|v| version_key(v) > seen))
        .collect();
    if newer.is_empty() {
        return None;
    }
    newer.reverse();
    Some(newer.join("\n\n"))
}

/// This build's sections newer than `seen`.
pub fn newer_than_seen(seen: &str) -> Option<String> {
    newer_than(CHANGELOG, seen)
}

/// After an update, what changed since the version last seen (`lastChangelogVersion`): the
/// newer sections as "What's New", or one line with `collapseChangelog` or `quietStartup`. The
/// first run only records the version; a resumed session with messages shows nothing, as pi.
pub fn startup_notice(cx: &super::effect::Ctx<'_>) -> Vec<super::effect::Effect> {
    use super::effect::Effect;
    let current = cx.version;
    let resumed = cx.session.with_messages(|m| !m.is_empty());
    let Some((seen, condensed)) = cx.read_settings(|s| {
        (
            s.last_changelog_version().map(str::to_string),
            s.collapse_changelog() || s.quiet_startup(),
        )
    }) else {
        return Vec::new();
    };
    let record = Effect::Settings(Box::new(move |s| s.set_last_changelog_version(current)));
    let Some(seen) = seen else {
        return vec![record];
    };
    if version_key(current) <= version_key(&seen) || resumed {
        return Vec::new();
    }
    let mut out = vec![record];
    let Some(markdown) = newer_than_seen(&seen) else {
        return out;
    };
    // As pi 1.6: between rules, the sections under "What's New" or one line.
    out.push(if condensed {
        Effect::RuledInfo(
            String::new(),
            format!("Updated to v{current}. Use **/changelog** to view full changelog."),
        )
    } else {
        Effect::RuledInfo("What's New".into(), markdown)
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_at_version_headings() {
        let e = entries("# Changelog\n\n## [2]\n\n- b\n\n## [1]\n\n- a\n");
        assert_eq!(e, ["## [2]\n\n- b", "## [1]\n\n- a"]);
        let md = markdown();
        assert!(md.starts_with("## [0.73.0]"), "{md}");
        // The newest entry comes last.
        assert!(md.find("[0.73.0]") < md.find("[0.73.1]"));
    }

    #[test]
    fn only_sections_newer_than_the_seen_version_are_shown() {
        let text = "# Changelog\n\n## [0.10.0]\n\n- c\n\n## [0.9.1]\n\n- b\n\n## [0.9.0]\n\n- a\n";
        assert_eq!(
            newer_than(text, "0.9.0").as_deref(),
            Some("## [0.9.1]\n\n- b\n\n## [0.10.0]\n\n- c")
        );
        assert_eq!(newer_than(text, "0.10.0"), None);
        assert_eq!(newer_than(text, "garbage").map(|t| t.matches("## ").count()), Some(3));
    }
}
