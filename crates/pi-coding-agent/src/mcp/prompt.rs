//! The system prompt's `mcp_servers` section: the enabled servers whose tools are not declared
//! to the model, how their tools are reached, and a one-line summary of each, within pi's size
//! limits (250 characters a summary, 4096 the section).

/// Characters of one server's summary.
const MAX_SUMMARY_CHARS: usize = 250;
/// Characters of the whole section.
const MAX_SECTION_CHARS: usize = 4096;

/// How the model reaches a listed server's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Codemode,
    ToolSearch,
}

impl Reach {
    fn as_str(self) -> &'static str {
        match self {
            Reach::Codemode => "codemode",
            Reach::ToolSearch => "tool_search",
        }
    }
}

/// One server of the section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedServer {
    pub name: String,
    pub reach: Reach,
    /// The first line of its description, else of its instructions (may be empty).
    pub summary: String,
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    if max <= 1 {
        return String::new();
    }
    let head: String = text.chars().take(max - 1).collect();
    format!("{}…", head.trim_end())
}

/// The section's text (without its tags), or `None` when no server belongs in it.
pub fn render_servers_section(servers: &[ListedServer]) -> Option<String> {
    if servers.is_empty() {
        return None;
    }
    let mut listed: Vec<&ListedServer> = servers.iter().collect();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    let mut intro = String::from("MCP servers whose tools are not declared to you.");
    if listed.iter().any(|s| s.reach == Reach::Codemode) {
        intro.push_str(" Call the tools of `codemode` servers from codemode scripts.");
    }
    if listed.iter().any(|s| s.reach == Reach::ToolSearch) {
        intro.push_str(" Load the tools of `tool_search` servers with `tool_search`.");
    }
    let heads: Vec<String> = listed
        .iter()
        .map(|s| format!("- {} ({})", pi_mcp::mcp_namespace(&s.name), s.reach.as_str()))
        .collect();
    let omitted = |count: usize| -> Vec<String> {
        if count == 0 {
            return Vec::new();
        }
        let plural = if count == 1 { "" } else { "s" };
        vec![format!(
            "- … {count} more server{plural}; find their tools with searchTools()"
        )]
    };
    // Characters of the intro, the first `kept` heads and the omission line, joined by newlines.
    let size = |kept: usize| -> usize {
        let mut parts: Vec<&str> = vec![intro.as_str()];
        parts.extend(heads[..kept].iter().map(String::as_str));
        let tail = omitted(listed.len() - kept);
        parts.extend(tail.iter().map(String::as_str));
        parts.iter().map(|p| p.chars().count()).sum::<usize>() + parts.len() - 1
    };
    let mut kept = listed.len();
    while kept > 0 && size(kept) > MAX_SECTION_CHARS {
        kept -= 1;
    }
    // Each summary also takes a ": " separator.
    let per_server = MAX_SECTION_CHARS
        .saturating_sub(size(kept))
        .checked_div(kept)
        .map_or(0, |room| room.saturating_sub(2).min(MAX_SUMMARY_CHARS));
    let mut lines = vec![intro.clone()];
    for (server, head) in listed.iter().zip(&heads).take(kept) {
        let summary = if per_server > 0 {
            cut(&server.summary, per_server)
        } else {
            String::new()
        };
        lines.push(if summary.is_empty() {
            head.clone()
        } else {
            format!("{head}: {summary}")
        });
    }
    lines.extend(omitted(listed.len() - kept));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(name: &str, reach: Reach, summary: &str) -> ListedServer {
        ListedServer {
            name: name.into(),
            reach,
            summary: summary.into(),
        }
    }

    #[test]
    fn servers_are_sorted_and_the_intro_names_only_the_reaches_in_use() {
        let text = render_servers_section(&[
            server("zeta", Reach::Codemode, ""),
            server("demo-x", Reach::Codemode, "Demo server."),
        ])
        .expect("a section");
        assert_eq!(
            text,
            "MCP servers whose tools are not declared to you. Call the tools of `codemode` servers from codemode scripts.\n\
             - mcp__demo_x (codemode): Demo server.\n\
             - mcp__zeta (codemode)"
        );
        let deferred = render_servers_section(&[server("d", Reach::ToolSearch, "x")]).expect("a section");
        assert!(deferred.starts_with(
            "MCP servers whose tools are not declared to you. Load the tools of `tool_search` servers with `tool_search`.\n"
        ));
        assert!(render_servers_section(&[]).is_none());
    }

    #[test]
    fn long_summaries_are_cut_and_too_many_servers_are_counted() {
        let long = "word ".repeat(100);
        let text = render_servers_section(&[server("a", Reach::Codemode, &long)]).expect("a section");
        let line = text.lines().nth(1).expect("a server line");
        assert!(line.ends_with('…'), "{line}");
        assert!(line.chars().count() <= "- mcp__a (codemode): ".len() + 250, "{line}");

        let many: Vec<ListedServer> = (0..400)
            .map(|i| server(&format!("server{i:03}"), Reach::Codemode, "summary"))
            .collect();
        let text = render_servers_section(&many).expect("a section");
        assert!(text.chars().count() <= 4096, "{}", text.len());
        let last = text.lines().last().expect("lines");
        assert!(
            last.starts_with("- … ") && last.ends_with("more servers; find their tools with searchTools()"),
            "{last}"
        );
    }
}
