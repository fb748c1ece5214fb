//! `/session`: the session's file and id, message and token counts, the cache warmer's state
//! with what a miss and a refresh would cost, and the cost per model with what cache misses
//! billed again, laid out as pi 1.6 does.

use super::effect::{Ctx, Effect};
use super::footer::format_tokens;
// `/session` shows counts with commas between thousands (`12,345`), as the summaries do.
use super::summary_block::grouped as thousands;
use super::theme::UiTheme;

/// The `Cache Re-billed` value: the cost when it reaches a hundredth of a cent, then the
/// tokens and misses (dim); only the tokens and misses when it is too small to show.
fn rebilled(waste: &super::cache_notices::Waste) -> Vec<(String, bool)> {
    let misses = if waste.miss_count == 1 {
        "1 miss".to_string()
    } else {
        format!("{} misses", waste.miss_count)
    };
    let detail = format!("{} tokens, {misses}", thousands(waste.missed_tokens));
    if waste.missed_cost >= 0.0001 {
        vec![
            (format!("${:.3} ", waste.missed_cost), false),
            (format!("({detail})"), true),
        ]
    } else {
        vec![(detail, false)]
    }
}

pub(super) fn session_info(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    let session = &cx.session;
    let s = session.session_stats();
    let name = session.with_store(|st| st.session_name().map(str::to_string));
    // Misses over every entry of the file (all branches), as pi 1.6 counts them.
    let rate = |p: &str, id: &str| session.find_model(p, id).map_or(0.0, |m| m.cost.cache_read);
    let waste = session.with_store(|st| super::cache_notices::waste(st.get_entries(), &rate));
    let t = &s.tokens;
    // Headings, `label: value` rows and blank rows; labels are drawn dim when shown.
    let mut rows: Vec<InfoRow> = vec![InfoRow::Heading("Session Info"), InfoRow::Blank];
    let field = |label: &str, value: String| InfoRow::Field(String::new(), label.to_string(), vec![(value, false)]);
    if let Some(n) = name {
        rows.push(field("Name:", n));
    }
    rows.push(field(
        "File:",
        s.session_file.clone().unwrap_or_else(|| "In-memory".into()),
    ));
    rows.push(field("ID:", s.session_id.clone()));
    rows.push(InfoRow::Blank);
    rows.push(InfoRow::Heading("Messages"));
    rows.push(field("Total:", s.total_messages.to_string()));
    rows.push(field("User:", s.user_messages.to_string()));
    rows.push(field("Assistant:", s.assistant_messages.to_string()));
    rows.push(field(
        "Tools:",
        format!("{} calls, {} results", s.tool_calls, s.tool_results),
    ));
    rows.push(InfoRow::Blank);
    rows.push(InfoRow::Heading("Tokens"));
    // "Input" is everything the prompts carried; with cache activity it splits into what
    // the cache served and the rest (the split every provider reports).
    let prompt = t.input + t.cache_read + t.cache_write;
    rows.push(field("Input:", thousands(prompt)));
    if prompt > 0 && (t.cache_read > 0 || t.cache_write > 0) {
        let rate = format!("({:.1}%)", t.cache_read as f64 * 100.0 / prompt as f64);
        rows.push(InfoRow::Field(
            "  ".into(),
            "Cached:".into(),
            vec![(format!("{} ", thousands(t.cache_read)), false), (rate, true)],
        ));
        let mut uncached = vec![(thousands(t.input + t.cache_write), false)];
        if t.cache_write > 0 {
            uncached.push((" ".into(), false));
            uncached.push((format!("({} written to cache)", thousands(t.cache_write)), true));
        }
        rows.push(InfoRow::Field("  ".into(), "Uncached:".into(), uncached));
    }
    rows.push(field("Output:", thousands(t.output)));
    rows.push(field("Total:", thousands(t.total)));
    rows.push(InfoRow::Blank);
    let (mode, status) = session.cache_warming_status();
    rows.push(InfoRow::Heading("Cache Warming"));
    rows.push(field("Mode:", mode.to_string()));
    rows.push(field("Status:", status));
    // What the warmer weighs: losing the cache entry against refreshing it.
    if let Some((miss, warm)) = session.cache_warming_costs() {
        rows.push(field("Cache miss penalty:", format!("${miss:.3}")));
        rows.push(field("Refresh cost:", format!("${warm:.3}")));
    }
    if s.cost > 0.0 || waste.missed_tokens > 0 {
        rows.push(InfoRow::Blank);
        rows.push(InfoRow::Heading("Cost"));
        rows.push(field("Total:", format!("${:.3}", s.cost)));
        // One model per line; a lone group only when it is not the selected model (a
        // routed model answered, or the model was switched since).
        let breakdown = session.usage_cost_breakdown();
        let selected = session.model().map(|m| format!("{}/{}", m.provider, m.id));
        if breakdown.len() > 1 || breakdown.first().map(|u| Some(&u.key)) != Some(selected.as_ref()) {
            for u in &breakdown {
                rows.push(InfoRow::Field(
                    "  ".into(),
                    format!("{}:", u.key),
                    vec![
                        (format!("${:.3} ", u.cost), false),
                        (format!("({} tokens)", format_tokens(u.tokens)), true),
                    ],
                ));
            }
        }
        if waste.missed_tokens > 0 {
            rows.push(InfoRow::Field(
                String::new(),
                "Cache Re-billed:".into(),
                rebilled(&waste),
            ));
        }
    } else {
        // pi 1.6's text ends in a line break here: one empty row under the block.
        rows.push(InfoRow::Blank);
    }
    vec![Effect::Themed(std::sync::Arc::new(move |theme: &UiTheme| {
        rows.iter().map(|r| r.render(theme)).collect::<Vec<_>>().join("\n")
    }))]
}

/// A row of `/session`'s block: pi 1.6 draws its headings bold and its labels dim.
enum InfoRow {
    Heading(&'static str),
    /// Indent, label, and the value's parts (each drawn dim or not).
    Field(String, String, Vec<(String, bool)>),
    Blank,
}

impl InfoRow {
    fn render(&self, theme: &UiTheme) -> String {
        match self {
            InfoRow::Heading(h) => pi_tui::Style::new().bold().paint(h),
            InfoRow::Blank => String::new(),
            InfoRow::Field(indent, label, parts) => {
                let value: String = parts
                    .iter()
                    .map(|(text, dim)| if *dim { theme.paint("dim", text) } else { text.clone() })
                    .collect();
                format!("{indent}{} {value}", theme.paint("dim", label))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cache_notices::Waste;
    use super::*;

    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn rebilled_names_the_cost_only_when_it_shows() {
        let text = |w: Waste| rebilled(&w).into_iter().map(|(t, _)| t).collect::<String>();
        let w = Waste {
            missed_tokens: 31_000,
            missed_cost: 0.0837,
            miss_count: 1,
        };
        assert_eq!(text(w), "$0.084 (31,000 tokens, 1 miss)");
        let w = Waste {
            missed_tokens: 2_048,
            missed_cost: 0.00005,
            miss_count: 2,
        };
        assert_eq!(text(w), "2,048 tokens, 2 misses");
    }
}
