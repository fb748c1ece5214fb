//! Terminal lines (with SGR colours and styles) as HTML: what an extension's tool renderer
//! drew for the terminal, shown in the export with the same colours. Other escape sequences
//! are dropped; OSC 8 links to http(s) and mailto addresses stay links.

use std::fmt::Write as _;

use vte::{Params, Parser, Perform};

use super::render::escape;

/// The 16 colours of the basic palette, as the page draws them.
const PALETTE: [&str; 16] = [
    "#000000", "#800000", "#008000", "#808000", "#000080", "#800080", "#008080", "#c0c0c0", "#808080", "#ff0000",
    "#00ff00", "#ffff00", "#0000ff", "#ff00ff", "#00ffff", "#ffffff",
];

fn indexed(n: u16) -> String {
    match n {
        0..=15 => PALETTE[usize::from(n)].to_string(),
        16..=231 => {
            let i = n - 16;
            let level = |v: u16| if v == 0 { 0 } else { 55 + v * 40 };
            format!("#{:02x}{:02x}{:02x}", level(i / 36), level((i % 36) / 6), level(i % 6))
        }
        _ => {
            let g = 8 + (n.min(255) - 232) * 10;
            format!("#{g:02x}{g:02x}{g:02x}")
        }
    }
}

#[derive(Clone, Default, PartialEq)]
struct Style {
    fg: Option<String>,
    bg: Option<String>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
}

impl Style {
    fn css(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = &self.fg {
            parts.push(format!("color:{c}"));
        }
        if let Some(c) = &self.bg {
            parts.push(format!("background-color:{c}"));
        }
        if self.bold {
            parts.push("font-weight:bold".into());
        }
        if self.dim {
            parts.push("opacity:0.6".into());
        }
        if self.italic {
            parts.push("font-style:italic".into());
        }
        if self.underline {
            parts.push("text-decoration:underline".into());
        }
        parts.join(";")
    }

    /// Apply one SGR sequence's codes.
    fn apply(&mut self, codes: &[u16]) {
        let mut i = 0;
        while i < codes.len() {
            let code = codes[i];
            match code {
                0 => *self = Style::default(),
                1 => self.bold = true,
                2 => self.dim = true,
                3 => self.italic = true,
                4 => self.underline = true,
                22 => {
                    self.bold = false;
                    self.dim = false;
                }
                23 => self.italic = false,
                24 => self.underline = false,
                30..=37 => self.fg = Some(indexed(code - 30)),
                90..=97 => self.fg = Some(indexed(code - 90 + 8)),
                39 => self.fg = None,
                40..=47 => self.bg = Some(indexed(code - 40)),
                100..=107 => self.bg = Some(indexed(code - 100 + 8)),
                49 => self.bg = None,
                38 | 48 => {
                    let color = match codes.get(i + 1) {
                        Some(5) => {
                            let c = codes.get(i + 2).map(|&n| indexed(n));
                            i += 2;
                            c
                        }
                        Some(2) => {
                            let c = match (codes.get(i + 2), codes.get(i + 3), codes.get(i + 4)) {
                                // Written as pi's export writes it.
                                (Some(&r), Some(&g), Some(&b)) => Some(format!("rgb({r},{g},{b})")),
                                _ => None,
                            };
                            i += 4;
                            c
                        }
                        _ => None,
                    };
                    if code == 38 {
                        self.fg = color;
                    } else {
                        self.bg = color;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// Builds the HTML of one line as the parser reports what it reads.
#[derive(Default)]
struct Html {
    out: String,
    style: Style,
    /// The style of the open `<span>`, if one is open.
    open: Option<Style>,
    link_open: bool,
}

impl Html {
    fn close_span(&mut self) {
        if self.open.take().is_some() {
            self.out.push_str("</span>");
        }
    }

    fn finish(mut self) -> String {
        self.close_span();
        if self.link_open {
            self.out.push_str("</a>");
        }
        self.out
    }
}

impl Perform for Html {
    fn print(&mut self, c: char) {
        if self.open.as_ref() != Some(&self.style) {
            self.close_span();
            if self.style != Style::default() {
                let _ = write!(self.out, "<span style=\"{}\">", self.style.css());
                self.open = Some(self.style.clone());
            }
        }
        self.out.push_str(&escape(c.encode_utf8(&mut [0; 4])));
    }

    fn csi_dispatch(&mut self, params: &Params, _intermediates: &[u8], ignore: bool, action: char) {
        if action != 'm' || ignore {
            return;
        }
        let codes: Vec<u16> = params.iter().flat_map(|p| p.iter().copied()).collect();
        self.style.apply(if codes.is_empty() { &[0] } else { &codes });
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], _bell_terminated: bool) {
        if params.first() != Some(&b"8".as_slice()) {
            return;
        }
        self.close_span();
        if self.link_open {
            self.out.push_str("</a>");
            self.link_open = false;
        }
        let url = params
            .get(2)
            .map(|u| String::from_utf8_lossy(u).into_owned())
            .unwrap_or_default();
        let safe = ["http://", "https://", "mailto:"].iter().any(|p| url.starts_with(p));
        if safe {
            let _ = write!(self.out, "<a href=\"{}\">", escape(&url));
            self.link_open = true;
        }
    }
}

/// `line` without APC strings (`ESC _ ... BEL` or `... ESC \\`): pi-tui's cursor markers
/// end with BEL, which the parser would not take as their end.
fn without_apc(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.contains("\x1b_") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("\x1b_") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = match (after.find('\x07'), after.find("\x1b\\")) {
            (Some(b), Some(st)) if st < b => st + 2,
            (Some(b), _) => b + 1,
            (None, Some(st)) => st + 2,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out.into()
}

/// One line of terminal text as HTML.
pub fn ansi_to_html(line: &str) -> String {
    let mut parser = Parser::new();
    let mut html = Html::default();
    parser.advance(&mut html, without_apc(line).as_bytes());
    html.finish()
}

/// Lines as pi's export shows a renderer's output: one block per line, an empty line kept.
pub fn ansi_lines_to_html(lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| {
            let html = ansi_to_html(l);
            format!(
                "<div class=\"ansi-line\">{}</div>",
                if html.is_empty() { "&nbsp;" } else { &html }
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_styles_become_inline_css_and_text_is_escaped() {
        let html = ansi_to_html("\x1b[38;2;255;0;16mred <b>\x1b[39m plain \x1b[1;4mbold\x1b[0m");
        assert_eq!(
            html,
            "<span style=\"color:rgb(255,0,16)\">red &lt;b&gt;</span> plain <span style=\"font-weight:bold;text-decoration:underline\">bold</span>"
        );
        assert_eq!(
            ansi_to_html("\x1b[38;5;196mx"),
            "<span style=\"color:#ff0000\">x</span>"
        );
        assert_eq!(
            ansi_to_html("\x1b[92;44mx"),
            "<span style=\"color:#00ff00;background-color:#000080\">x</span>"
        );
        // Cursor moves and other sequences are dropped.
        assert_eq!(ansi_to_html("a\x1b[2Kb\x1b_pi:fc\x07c"), "abc");
    }

    #[test]
    fn only_web_links_stay_links_and_empty_lines_keep_their_place() {
        let html = ansi_to_html(
            "\x1b]8;;https://example.com/a?b=1\x07site\x1b]8;;\x07 and \x1b]8;;file:///etc\x07file\x1b]8;;\x07",
        );
        assert_eq!(html, "<a href=\"https://example.com/a?b=1\">site</a> and file");
        let lines = ansi_lines_to_html(&["one".to_string(), String::new()]);
        assert_eq!(
            lines,
            "<div class=\"ansi-line\">one</div><div class=\"ansi-line\">&nbsp;</div>"
        );
    }
}
