//! Which tools a run starts with: `--tools` (an allowlist of names and `*` patterns, or a list of
//! only `+name`/`-name` changes to the defaults), `--no-tools`/`--no-builtin-tools`, and
//! `--exclude-tools` (a denylist applied last).

/// Whether an entry changes the defaults (`+name` adds, `-name` removes) instead of naming a tool.
pub fn is_modifier(entry: &str) -> bool {
    entry.starts_with('+') || entry.starts_with('-')
}

/// What is wrong with a `--tools` list, if anything: the two forms cannot be mixed, and the
/// modifiers take exact names.
pub fn tool_list_error<S: AsRef<str>>(entries: &[S]) -> Option<String> {
    let modifiers: Vec<&str> = entries.iter().map(AsRef::as_ref).filter(|e| is_modifier(e)).collect();
    if modifiers.is_empty() {
        return None;
    }
    if modifiers.len() < entries.len() {
        return Some("tool names cannot be mixed with +name or -name entries".into());
    }
    modifiers
        .iter()
        .find(|e| e.contains('*'))
        .map(|pattern| format!("+name and -name entries take exact tool names, not patterns: {pattern}"))
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn matches_pattern(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == name;
    };
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Whether `name` is one of `entries` (exact names or `*` patterns).
pub fn matches_any<S: AsRef<str>>(entries: &[S], name: &str) -> bool {
    entries.iter().any(|e| {
        let e = e.as_ref();
        if e.contains('*') {
            matches_pattern(e, name)
        } else {
            e == name
        }
    })
}

/// The command line's say over the tools.
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolFlags<'a> {
    pub tools: Option<&'a [String]>,
    pub exclude: Option<&'a [String]>,
    pub no_tools: bool,
    pub no_builtin_tools: bool,
}

/// The names of the tools to start with, in order. `defaults` are the tools on when nothing
/// says otherwise and `known` every tool that exists (patterns expand against it, in its order).
/// Unknown plain names stay in the list: the tool factory drops them, as pi does silently.
pub fn select_tools(flags: ToolFlags<'_>, defaults: &[&str], known: &[&str]) -> Vec<String> {
    let base: Vec<String> = if flags.no_tools || flags.no_builtin_tools {
        Vec::new()
    } else {
        defaults.iter().map(|s| s.to_string()).collect()
    };
    let selected = match flags.tools {
        Some(list) if !list.is_empty() && list.iter().all(|e| is_modifier(e)) => apply_modifiers(base, list),
        Some(list) => expand(list, known),
        None => base,
    };
    match flags.exclude {
        Some(deny) => selected.into_iter().filter(|name| !matches_any(deny, name)).collect(),
        None => selected,
    }
}

/// `+name` adds a tool (once), `-name` removes it, in list order.
fn apply_modifiers(mut tools: Vec<String>, entries: &[String]) -> Vec<String> {
    for entry in entries {
        let name = &entry[1..];
        let at = tools.iter().position(|t| t == name);
        match (entry.starts_with('+'), at) {
            (true, None) if !name.is_empty() => tools.push(name.to_string()),
            (false, Some(i)) => {
                tools.remove(i);
            }
            _ => {}
        }
    }
    tools
}

/// Plain names as given; each pattern becomes the known names it matches.
fn expand(entries: &[String], known: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for entry in entries {
        if entry.contains('*') {
            for name in known.iter().filter(|n| matches_pattern(entry, n)) {
                if !out.iter().any(|o| o == name) {
                    out.push(name.to_string());
                }
            }
        } else if !out.contains(entry) {
            out.push(entry.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULTS: &[&str] = &["read", "bash", "edit", "write"];
    const KNOWN: &[&str] = &["read", "bash", "edit", "write", "grep", "find", "ls"];

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    fn select(tools: Option<&[&str]>, exclude: Option<&[&str]>) -> Vec<String> {
        let tools = tools.map(list);
        let exclude = exclude.map(list);
        select_tools(
            ToolFlags {
                tools: tools.as_deref(),
                exclude: exclude.as_deref(),
                ..Default::default()
            },
            DEFAULTS,
            KNOWN,
        )
    }

    #[test]
    fn list_errors() {
        assert_eq!(tool_list_error(&["read", "grep"]), None);
        assert_eq!(tool_list_error(&["+grep", "-write"]), None);
        assert_eq!(
            tool_list_error(&["+grep", "read"]).as_deref(),
            Some("tool names cannot be mixed with +name or -name entries")
        );
        assert_eq!(
            tool_list_error(&["+gr*"]).as_deref(),
            Some("+name and -name entries take exact tool names, not patterns: +gr*")
        );
    }

    #[test]
    fn patterns() {
        assert!(matches_pattern("*", "read"));
        assert!(matches_pattern("mcp__radius__*", "mcp__radius__search"));
        assert!(!matches_pattern("mcp__radius__*", "mcp__other__search"));
        assert!(matches_pattern("*e*d*", "read"));
        assert!(!matches_pattern("r*x", "read"));
        assert!(matches_pattern("re*ad", "read"));
        assert!(!matches_pattern("rea*ead", "read"), "the two ends may not overlap");
    }

    #[test]
    fn allowlist_modifiers_and_denylist() {
        assert_eq!(select(None, None), list(DEFAULTS));
        assert_eq!(select(Some(&["grep", "read"]), None), list(&["grep", "read"]));
        assert_eq!(
            select(Some(&["+grep", "-write"]), None),
            list(&["read", "bash", "edit", "grep"])
        );
        assert_eq!(
            select(Some(&["+read"]), None),
            list(DEFAULTS),
            "an added tool appears once"
        );
        assert_eq!(select(Some(&["*"]), None), list(KNOWN));
        assert_eq!(
            select(Some(&["bash", "*"]), None),
            list(&["bash", "read", "edit", "write", "grep", "find", "ls"])
        );
        assert_eq!(select(None, Some(&["read"])), list(&["bash", "edit", "write"]));
        assert_eq!(
            select(Some(&["*"]), Some(&["*i*"])),
            list(&["read", "bash", "grep", "ls"])
        );
        let no_tools = select_tools(
            ToolFlags {
                no_tools: true,
                ..Default::default()
            },
            DEFAULTS,
            KNOWN,
        );
        assert!(no_tools.is_empty());
        let plus_on_none = list(&["+grep"]);
        let added = select_tools(
            ToolFlags {
                tools: Some(&plus_on_none),
                no_tools: true,
                ..Default::default()
            },
            DEFAULTS,
            KNOWN,
        );
        assert_eq!(added, list(&["grep"]));
    }
}
