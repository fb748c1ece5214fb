//! `--list-models [search]`: the table of models that have credentials.

use pi_ai::{InputKind, Model};

/// `200000` → `200K`, `16384` → `16.4K`, `1000000` → `1M`.
pub fn format_token_count(count: u64) -> String {
    let scaled = |n: f64, unit: &str| {
        if n.fract() == 0.0 {
            format!("{n}{unit}")
        } else {
            format!("{n:.1}{unit}")
        }
    };
    #[allow(clippy::cast_precision_loss)]
    let c = count as f64;
    if count >= 1_000_000 {
        scaled(c / 1_000_000.0, "M")
    } else if count >= 1_000 {
        scaled(c / 1_000.0, "K")
    } else {
        count.to_string()
    }
}

/// Every whitespace-separated token of `query` must appear in `text` as a subsequence
/// (case-insensitive), as in pi's model filter.
pub fn fuzzy_matches(query: &str, text: &str) -> bool {
    let text: Vec<char> = text.to_lowercase().chars().collect();
    query.split_whitespace().all(|token| {
        let mut rest = text.iter();
        token.to_lowercase().chars().all(|c| rest.any(|t| *t == c))
    })
}

/// The table, or the message to print when nothing matches. `None` search lists all.
pub fn list_models_text(available: &[Model], search: Option<&str>) -> Result<String, String> {
    let mut models: Vec<&Model> = available
        .iter()
        .filter(|m| search.is_none_or(|q| fuzzy_matches(q, &format!("{} {}", m.provider, m.id))))
        .collect();
    if models.is_empty() {
        return Err(format!("No models matching \"{}\"", search.unwrap_or_default()));
    }
    // pi sorts with `localeCompare`: case-insensitive, punctuation before digits and letters.
    let locale = |a: &str, b: &str| pi_tools::collate::compare_names(a, b).then_with(|| b.cmp(a));
    models.sort_by(|a, b| locale(&a.provider, &b.provider).then_with(|| locale(&a.id, &b.id)));
    let yes_no = |b: bool| if b { "yes" } else { "no" }.to_string();
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            [
                m.provider.clone(),
                m.id.clone(),
                format_token_count(m.context_window),
                format_token_count(m.max_tokens),
                yes_no(m.reasoning),
                yes_no(m.input.contains(&InputKind::Image)),
            ]
        })
        .collect();
    let header = ["provider", "model", "context", "max-out", "thinking", "images"].map(str::to_string);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 6]| -> String {
        cells
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = line(&header);
    for row in &rows {
        out.push('\n');
        out.push_str(&line(row));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_read_like_pi() {
        assert_eq!(format_token_count(200_000), "200K");
        assert_eq!(format_token_count(16_384), "16.4K");
        assert_eq!(format_token_count(32_000), "32K");
        assert_eq!(format_token_count(1_000_000), "1M");
        assert_eq!(format_token_count(1_500_000), "1.5M");
        assert_eq!(format_token_count(999), "999");
    }

    #[test]
    fn fuzzy_filter_is_a_subsequence_per_token() {
        assert!(fuzzy_matches("thinker", "mock-openai mock-thinker"));
        assert!(fuzzy_matches("mo thk", "mock-openai mock-thinker"));
        assert!(!fuzzy_matches("thinker", "mock-openai mock-model"));
    }

    #[test]
    fn rows_sort_as_locale_compare_does() {
        let model = |provider: &str, id: &str| -> Model {
            serde_json::from_value(serde_json::json!({"id": id, "name": id, "api": "openai-completions",
                "provider": provider, "baseUrl": "u", "reasoning": false, "input": ["text"],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 1, "maxTokens": 1}))
            .unwrap()
        };
        let models = [
            model("hf", "Qwen/Qwen3-8B"),
            model("hf", "moonshotai/Kimi-K3"),
            model("hf", "MiniMaxAI/MiniMax-M2"),
            model("hf", "deepseek-ai/DeepSeek-R1"),
            model("Zed", "a"),
            model("amazon", "b"),
        ];
        let text = list_models_text(&models, None).unwrap();
        let order: Vec<&str> = text
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1))
            .collect();
        assert_eq!(
            order,
            [
                "b",
                "deepseek-ai/DeepSeek-R1",
                "MiniMaxAI/MiniMax-M2",
                "moonshotai/Kimi-K3",
                "Qwen/Qwen3-8B",
                "a"
            ]
        );
    }
}
