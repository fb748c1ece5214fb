//! Prints markdown rendered without colours (`cargo run -p pi-tui --example md_dump -- TEXT WIDTH`).

use std::sync::Arc;

use pi_tui::components::{Markdown, MarkdownTheme};
use pi_tui::{strip_ansi, Style};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = args.get(1).cloned().unwrap_or_default();
    let width = args.get(2).and_then(|w| w.parse().ok()).unwrap_or(40);
    let plain = Style::new();
    let theme = MarkdownTheme {
        heading: plain,
        link: plain,
        link_url: plain,
        code: plain,
        code_block: plain,
        code_block_border: plain,
        quote: plain,
        quote_border: plain,
        hr: plain,
        list_bullet: plain,
        table_border: plain,
        highlight_code: false,
        ..MarkdownTheme::default()
    };
    let mut md = Markdown::new(text, Arc::new(theme));
    for l in md.lines(width) {
        println!("{:?}", strip_ansi(&l).trim_end());
    }
}
