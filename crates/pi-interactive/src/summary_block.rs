//! A compaction or branch summary in the transcript, as pi 1.6 shows it: a `[compaction]` or
//! `[branch]` panel on the custom-message background, collapsed to one line (`Compacted from
//! 12,345 tokens (ctrl+o to expand)`), the whole summary while tool output is expanded.

use std::sync::Arc;

use pi_tui::components::Markdown;
use pi_tui::{apply_background, truncate_to_width, Component, Frame, Style};

use super::theme::UiTheme;

pub struct SummaryBlock {
    /// `Some(tokens before)` for a compaction, `None` for a branch summary.
    tokens_before: Option<u64>,
    summary: String,
    expand_key: String,
    expanded: bool,
    theme: Arc<UiTheme>,
}

/// `12345` as `12,345` (also `/session`'s counts).
pub(super) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl SummaryBlock {
    pub fn new(
        tokens_before: Option<u64>,
        summary: &str,
        expand_key: String,
        expanded: bool,
        theme: Arc<UiTheme>,
    ) -> Self {
        SummaryBlock {
            tokens_before,
            summary: summary.to_string(),
            expand_key,
            expanded,
            theme,
        }
    }

    /// From a transcript message (`compactionSummary` or `branchSummary`); `None` for others.
    pub fn from_message(
        c: &pi_agent::CustomMessage,
        expand_key: String,
        expanded: bool,
        theme: Arc<UiTheme>,
    ) -> Option<Self> {
        let summary = c.fields.get("summary").and_then(|v| v.as_str()).unwrap_or("");
        let tokens = match c.role.as_str() {
            "compactionSummary" => Some(c.fields.get("tokensBefore").and_then(|v| v.as_u64()).unwrap_or(0)),
            "branchSummary" => None,
            _ => return None,
        };
        Some(Self::new(tokens, summary, expand_key, expanded, theme))
    }

    /// A compaction's summary (not a branch's).
    pub fn is_compaction(&self) -> bool {
        self.tokens_before.is_some()
    }

    pub fn set_expanded(&mut self, expanded: bool) {
        self.expanded = expanded;
    }

    pub fn is_expanded(&self) -> bool {
        self.expanded
    }
}

impl Component for SummaryBlock {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let t = &self.theme;
        let pad = super::chat::output_pad();
        let inner = width.saturating_sub(pad * 2).max(1);
        let bg = t.bg("customMessageBg");
        let mut body: Vec<String> = Vec::new();
        let label = if self.tokens_before.is_some() {
            "[compaction]"
        } else {
            "[branch]"
        };
        body.push(t.paint("customMessageLabel", &Style::new().bold().paint(label)));
        body.push(String::new());
        if self.expanded {
            let header = match self.tokens_before {
                Some(n) => format!("**Compacted from {} tokens**\n\n", grouped(n)),
                None => "**Branch Summary**\n\n".to_string(),
            };
            let mut md = Markdown::new(format!("{header}{}", self.summary), t.markdown.clone())
                .with_text_style(t.fg("customMessageText"));
            let mut f = Frame::default();
            md.render(inner, &mut f);
            body.extend(f.to_vec());
        } else {
            let what = match self.tokens_before {
                Some(n) => format!("Compacted from {} tokens (", grouped(n)),
                None => "Branch summary (".to_string(),
            };
            body.push(format!(
                "{}{}{}",
                t.paint("customMessageText", &what),
                t.paint("dim", &self.expand_key),
                t.paint("customMessageText", " to expand)")
            ));
        }
        out.push_line(String::new());
        let margin = " ".repeat(pad);
        let mut lines = vec![String::new()];
        lines.extend(
            body.into_iter()
                .map(|l| format!("{margin}{}", truncate_to_width(&l, inner, ""))),
        );
        lines.push(String::new());
        for l in lines {
            out.push_line(match bg {
                Some(bg) => apply_background(&l, width, bg),
                None => l,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collapsed_and_expanded() {
        let theme = Arc::new(UiTheme::fallback());
        let mut b = SummaryBlock::new(Some(12_345), "We fixed the parser.", "ctrl+o".into(), false, theme);
        let text = |b: &mut SummaryBlock| {
            let mut f = Frame::default();
            b.render(60, &mut f);
            pi_tui::strip_ansi(&f.to_vec().join("\n"))
        };
        let shown = text(&mut b);
        assert!(shown.contains(" [compaction]"), "{shown}");
        assert!(
            shown.contains(" Compacted from 12,345 tokens (ctrl+o to expand)"),
            "{shown}"
        );
        b.set_expanded(true);
        let shown = text(&mut b);
        assert!(
            shown.contains("Compacted from 12,345 tokens") && shown.contains("We fixed the parser."),
            "{shown}"
        );
        assert!(!shown.contains("to expand"), "{shown}");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000_000), "1,000,000");
    }
}
