//! Integration tests: the renderer's bytes through a terminal emulator (vt100), overlays,
//! and the cost of a frame with a long history.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

use pi_tui::components::{SelectItem, SelectList, SelectListTheme, Text};
use pi_tui::{Anchor, Component, Container, Frame, OverlayOptions, Renderer, SizeValue, Tui, CURSOR_MARKER};

/// A component showing fixed lines (rebuilt every render, like a live component).
struct Lines(Vec<String>);

impl Component for Lines {
    fn render(&mut self, _width: usize, out: &mut Frame) {
        out.extend_lines(self.0.iter().cloned());
    }
}

fn lines(v: &[&str]) -> Lines {
    Lines(v.iter().map(|s| s.to_string()).collect())
}

struct Term {
    parser: vt100::Parser,
    tui: Tui,
    last: Vec<u8>,
}

impl Term {
    fn new(cols: u16, rows: u16) -> Self {
        Term {
            parser: vt100::Parser::new(rows, cols, 1000),
            tui: Tui::new(cols as usize, rows as usize),
            last: Vec::new(),
        }
    }

    fn draw(&mut self, root: &mut dyn Component) {
        let mut out = Vec::new();
        self.tui.render(root, &mut out).expect("render");
        self.parser.process(&out);
        self.last = out;
    }

    fn screen(&self) -> Vec<String> {
        let (_, cols) = self.parser.screen().size();
        self.parser
            .screen()
            .rows(0, cols)
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    fn last_text(&self) -> String {
        String::from_utf8_lossy(&self.last).into_owned()
    }
}

fn padded(v: &[&str], rows: usize) -> Vec<String> {
    let mut out: Vec<String> = v.iter().map(|s| s.to_string()).collect();
    out.resize(rows, String::new());
    out
}

#[test]
fn frames_land_on_screen_and_only_changes_are_written() {
    let mut t = Term::new(20, 6);
    let mut root = lines(&["alpha", "beta", "gamma"]);
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["alpha", "beta", "gamma"], 6));
    assert!(t.last_text().starts_with("\x1b[?2026h"));
    assert!(t.last_text().ends_with("\x1b[?2026l"));

    // Change the middle line: the write starts at that line and leaves the first alone.
    root.0[1] = "BETA".into();
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["alpha", "BETA", "gamma"], 6));
    let stats = t.tui.stats();
    assert_eq!(stats.first_written, Some(1));
    assert_eq!(stats.lines_written, 1);
    assert!(!stats.full_redraw);
    assert!(!t.last_text().contains("alpha"));
    assert!(!t.last_text().contains("gamma"));

    // Append: only the new lines are written.
    root.0.push("delta".into());
    root.0.push("epsilon".into());
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["alpha", "BETA", "gamma", "delta", "epsilon"], 6));
    assert_eq!(t.tui.stats().first_written, Some(3));
    assert_eq!(t.tui.stats().lines_written, 2);

    // Shrink: removed rows are blanked.
    root.0.truncate(2);
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["alpha", "BETA"], 6));
    assert_eq!(t.tui.stats().lines_cleared, 3);

    // No change: nothing is written at all.
    t.draw(&mut root);
    assert!(t.last.is_empty());
}

#[test]
fn clear_on_shrink_redraws_from_a_cleared_screen_when_content_gets_shorter() {
    let mut t = Term::new(20, 6);
    t.tui.set_clear_on_shrink(true);
    let mut root = lines(&["alpha", "beta", "gamma", "delta"]);
    t.draw(&mut root);

    // Shorter than the tallest frame: the screen and scrollback are cleared and all redrawn.
    root.0.truncate(2);
    t.draw(&mut root);
    assert!(t.tui.stats().full_redraw);
    assert!(t.last_text().contains("\x1b[2J\x1b[H\x1b[3J"), "{:?}", t.last_text());
    assert_eq!(t.screen(), padded(&["alpha", "beta"], 6));

    // The clear resets the high-water mark: the same length again writes nothing.
    t.draw(&mut root);
    assert!(t.last.is_empty());
    // Growing and changing stays differential.
    root.0.push("gamma".into());
    t.draw(&mut root);
    assert!(!t.tui.stats().full_redraw);

    // With an overlay shown the shrink keeps to blanking rows, as the overlay needs them.
    root.0.push("delta".into());
    t.draw(&mut root);
    let id = t.tui.show_overlay(Box::new(lines(&["box"])), OverlayOptions::default());
    t.draw(&mut root);
    root.0.truncate(1);
    t.draw(&mut root);
    assert!(!t.tui.stats().full_redraw);
    t.tui.hide_overlay(id);

    // Switched off (the default): a shrink blanks the rows left below, no clear.
    t.tui.set_clear_on_shrink(false);
    root.0 = vec!["one".into(), "two".into(), "three".into(), "four".into()];
    t.draw(&mut root);
    root.0.truncate(1);
    t.draw(&mut root);
    assert!(!t.tui.stats().full_redraw);
    assert!(!t.last_text().contains("\x1b[2J"));
    assert_eq!(t.screen(), padded(&["one"], 6));
}

#[test]
fn content_scrolls_into_scrollback_and_viewport_edits_stay_partial() {
    let mut t = Term::new(20, 4);
    let mut root = Lines((0..10).map(|i| format!("line {i}")).collect());
    t.draw(&mut root);
    assert_eq!(t.screen(), ["line 6", "line 7", "line 8", "line 9"]);

    // An edit inside the viewport is partial.
    root.0[8] = "edited 8".into();
    t.draw(&mut root);
    assert!(!t.tui.stats().full_redraw);
    assert_eq!(t.tui.stats().first_written, Some(8));
    assert_eq!(t.screen(), ["line 6", "line 7", "edited 8", "line 9"]);

    // Growth scrolls.
    root.0.push("line 10".into());
    t.draw(&mut root);
    assert_eq!(t.screen(), ["line 7", "edited 8", "line 9", "line 10"]);

    // An edit above the viewport needs a full redraw.
    root.0[2] = "changed 2".into();
    t.draw(&mut root);
    assert!(t.tui.stats().full_redraw);
    assert!(t.last_text().contains("\x1b[2J\x1b[H\x1b[3J"));
    assert_eq!(t.screen(), ["line 7", "edited 8", "line 9", "line 10"]);
}

#[test]
fn resize_redraws_everything() {
    let mut t = Term::new(20, 5);
    let mut root = lines(&["one", "two"]);
    t.draw(&mut root);
    t.parser.screen_mut().set_size(5, 30);
    t.tui.set_size(30, 5);
    t.draw(&mut root);
    assert!(t.tui.stats().full_redraw);
    assert_eq!(t.screen(), padded(&["one", "two"], 5));
}

#[test]
fn cursor_marker_places_the_hardware_cursor() {
    let mut t = Term::new(20, 5);
    t.tui.set_show_hardware_cursor(true);
    let mut root = Lines(vec!["header".into(), format!("> ab{CURSOR_MARKER}c"), "footer".into()]);
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["header", "> abc", "footer"], 5));
    assert_eq!(t.parser.screen().cursor_position(), (1, 4));
    assert!(!t.parser.screen().hide_cursor());
    // Moving the marker repositions the cursor and rewrites only that line.
    root.0[1] = format!("> abc{CURSOR_MARKER}");
    t.draw(&mut root);
    assert_eq!(t.parser.screen().cursor_position(), (1, 5));
    assert_eq!(t.tui.stats().first_written, Some(1));
    assert_eq!(t.tui.stats().lines_written, 1);
    // The next frame's diff starts from the right row.
    root.0[2] = "FOOTER".into();
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["header", "> abc", "FOOTER"], 5));
}

#[test]
fn wide_characters_and_styles_render() {
    let mut t = Term::new(10, 3);
    let mut root = lines(&["日本語テキストが長い", "\x1b[31mred\x1b[39m ok"]);
    t.draw(&mut root);
    // Over-wide lines are cut to the width instead of wrapping.
    assert_eq!(t.screen()[0], "日本語テキ");
    assert_eq!(t.screen()[1], "red ok");
    assert_eq!(
        t.parser.screen().cell(1, 0).map(|c| c.fgcolor()),
        Some(vt100::Color::Idx(1))
    );
    assert_eq!(
        t.parser.screen().cell(1, 4).map(|c| c.fgcolor()),
        Some(vt100::Color::Default)
    );
}

#[test]
fn overlay_is_drawn_over_the_bottom_and_removed() {
    let mut t = Term::new(30, 6);
    let mut root = Lines((0..6).map(|i| format!("row {i} xxxxxxxxxxxxxxxxxxxx")).collect());
    t.draw(&mut root);
    let list = SelectList::new(
        vec![SelectItem::new("first"), SelectItem::new("second")],
        5,
        SelectListTheme::default(),
    );
    let id = t.tui.show_overlay(
        Box::new(list),
        OverlayOptions {
            width: Some(SizeValue::Cells(12)),
            anchor: Anchor::BottomLeft,
            ..Default::default()
        },
    );
    t.draw(&mut root);
    let screen = t.screen();
    assert_eq!(screen[4], "→ first     xxxxxxxxxxxxxx");
    assert_eq!(screen[5], "  second    xxxxxxxxxxxxxx");
    assert_eq!(screen[3], "row 3 xxxxxxxxxxxxxxxxxxxx");
    assert!(!t.tui.stats().full_redraw);

    // Input goes to the overlay.
    let down = pi_tui::InputEvent::Key(pi_tui::parse_key("\x1b[B", false).expect("key"));
    assert!(t.tui.handle_input(&down, &mut root));
    t.draw(&mut root);
    assert_eq!(t.screen()[5], "→ second    xxxxxxxxxxxxxx");
    assert_eq!(t.tui.overlay_mut::<SelectList>(id).map(|l| l.selected_index()), Some(1));

    t.tui.hide_overlay(id);
    t.draw(&mut root);
    assert_eq!(t.screen()[5], "row 5 xxxxxxxxxxxxxxxxxxxx");
}

/// Transcript of many finished (cached) messages plus a live editor line.
struct Chat {
    messages: Container,
    editor: Lines,
}

impl Component for Chat {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.messages.render(width, out);
        self.editor.render(width, out);
    }
}

#[test]
fn keystroke_with_long_history_writes_only_the_editor_line() {
    let mut chat = Chat {
        messages: Container::new(),
        editor: lines(&["> "]),
    };
    for i in 0..10_000 {
        chat.messages
            .push(Box::new(Text::new(format!("message number {i} with some words"))));
    }
    let mut tui = Tui::new(80, 24);
    let mut sink = Vec::new();
    tui.render(&mut chat, &mut sink).expect("render");
    assert_eq!(tui.renderer().previous().len(), 10_001);
    for ch in ["h", "he", "hel"] {
        chat.editor.0[0] = format!("> {ch}");
        let mut out = Vec::new();
        tui.render(&mut chat, &mut out).expect("render");
        let stats = tui.stats();
        assert!(!stats.full_redraw);
        assert_eq!(stats.first_written, Some(10_000));
        assert_eq!(stats.lines_written, 1);
        assert!(out.len() < 64, "frame wrote {} bytes", out.len());
    }
}

#[test]
fn renderer_finish_leaves_cursor_below_content() {
    let mut parser = vt100::Parser::new(5, 20, 0);
    let mut r = Renderer::new();
    let mut out = Vec::new();
    let mut f = Frame::new();
    f.push_line("a");
    f.push_line("b");
    r.render(f, 20, 5, &mut out).expect("render");
    r.finish(&mut out).expect("finish");
    parser.process(&out);
    assert_eq!(parser.screen().cursor_position(), (2, 0));
}

/// A chat-like layout: a markdown message, a spinner and the editor.
struct Layout {
    message: pi_tui::components::Markdown,
    loader: pi_tui::components::Loader,
    editor: pi_tui::components::Editor,
}

impl Component for Layout {
    fn render(&mut self, width: usize, out: &mut Frame) {
        self.message.render(width, out);
        self.loader.render(width, out);
        self.editor.render(width, out);
    }
}

#[test]
fn chat_layout_snapshot_through_the_emulator() {
    use pi_tui::components::{Editor, EditorTheme, Loader, Markdown, MarkdownTheme};
    use pi_tui::Style;
    let theme = std::sync::Arc::new(MarkdownTheme::default());
    let mut layout = Layout {
        message: Markdown::new(
            "## Plan\n\n1. Read `main.rs`\n2. Fix the **bug**\n\n| file | lines |\n|---|---|\n| a.rs | 10 |",
            theme,
        ),
        loader: Loader::new("Working...", Style::new(), Style::new()),
        editor: Editor::new(EditorTheme::default()),
    };
    let mut t = Term::new(30, 16);
    t.draw(&mut layout);
    assert_eq!(
        t.screen(),
        padded(
            &[
                "Plan",
                "",
                "1. Read main.rs",
                "2. Fix the bug",
                "",
                "┌──────┬───────┐",
                "│ file │ lines │",
                "├──────┼───────┤",
                "│ a.rs │ 10    │",
                "└──────┴───────┘",
                "",
                " ⠋ Working...",
                "──────────────────────────────",
                "",
                "──────────────────────────────",
            ],
            16
        )
    );
    // Typing rewrites only the editor line; the spinner tick only its line.
    let key = |s: &str| pi_tui::InputEvent::Key(pi_tui::parse_key(s, false).expect("key"));
    t.tui.handle_input(&key("h"), &mut layout.editor);
    t.draw(&mut layout);
    assert_eq!(t.tui.stats().first_written, Some(13));
    assert_eq!(t.tui.stats().lines_written, 1);
    assert_eq!(t.screen()[13], "h");
    layout.loader.tick();
    t.draw(&mut layout);
    assert_eq!(t.tui.stats().first_written, Some(11));
    assert_eq!(t.tui.stats().lines_written, 1);
    assert_eq!(t.screen()[11], " ⠙ Working...");
}

#[test]
fn key_parsing_and_widths_from_the_outside() {
    let mut p = pi_tui::InputParser::new();
    let events = p.feed(b"\x1b[99;5u\x1b[13;2u\x1b[Z\x1b\r\x1b[27;5;99~");
    let ids: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            pi_tui::InputEvent::Key(k) => Some(k.id().to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["ctrl+c", "shift+enter", "shift+tab", "alt+enter", "ctrl+c"]);
    assert_eq!(pi_tui::visible_width("中文字符"), 8);
    assert_eq!(pi_tui::visible_width("🎉 done"), 7);
    assert_eq!(pi_tui::visible_width("\x1b[1m한국어\x1b[0m"), 6);
    assert_eq!(pi_tui::truncate_to_width("🎉🎉🎉", 5, "…"), "🎉🎉…");
}

/// Random edits (changes, appends, shrinks, edits above the screen) must always leave the
/// emulator showing a window of the content that includes its last line.
#[test]
fn random_frame_sequences_keep_the_screen_consistent() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n.max(1)
    };
    for round in 0..20 {
        let mut height = 3 + next(6) as usize;
        let mut t = Term::new(24, height as u16);
        let mut root = Lines(Vec::new());
        let mut counter = 0;
        for step in 0..60 {
            let len = root.0.len();
            match next(5) {
                0 if len > 0 => {
                    // Mostly near the bottom, sometimes anywhere (maybe above the screen).
                    let i = if next(4) == 0 {
                        next(len as u64) as usize
                    } else {
                        len - 1 - next(len.min(height) as u64) as usize
                    };
                    counter += 1;
                    root.0[i] = format!("edit {counter} \x1b[1mb\x1b[22m");
                }
                1 | 2 => {
                    for _ in 0..=next(4) {
                        counter += 1;
                        root.0.push(format!("line {counter} 日本"));
                    }
                }
                3 if len > 0 => {
                    let k = 1 + next(len.min(3) as u64) as usize;
                    root.0.truncate(len - k);
                }
                4 if next(4) == 0 => {
                    height = 3 + next(6) as usize;
                    t.parser.screen_mut().set_size(height as u16, 24);
                    t.tui.set_size(24, height);
                }
                _ => {}
            }
            // The last line carries the cursor marker, like an editor would.
            let mut shown = Lines(root.0.clone());
            if let Some(last) = shown.0.last_mut() {
                last.insert_str(0, CURSOR_MARKER);
            }
            t.draw(&mut shown);
            let screen = t.screen();
            let content: Vec<String> = root.0.iter().map(|l| pi_tui::strip_ansi(l)).collect();
            // The last line is on screen (nothing hides above it) and the rows match.
            let ok = (0..content.len().max(1)).any(|top| {
                top + height >= content.len()
                    && (0..height).all(|r| screen[r] == content.get(top + r).map_or("", String::as_str))
            });
            assert!(ok, "round {round} step {step}: screen {screen:?} content {content:?}");
            if !content.is_empty() {
                // The cursor sits on the last content line, column 0.
                let row = t.parser.screen().cursor_position().0 as usize;
                assert_eq!(screen[row], content[content.len() - 1], "round {round} step {step}");
                assert_eq!(t.parser.screen().cursor_position().1, 0);
            }
        }
    }
}

#[test]
fn overlay_styles_do_not_leak() {
    let mut t = Term::new(20, 3);
    // A base line that is red from start to end, and an overlay line that never closes bold.
    let mut root = Lines(vec![
        "top".into(),
        "mid".into(),
        format!("\x1b[31m{}\x1b[39m", "r".repeat(20)),
    ]);
    t.tui.show_overlay(
        Box::new(Lines(vec!["\x1b[1mOV".into()])),
        OverlayOptions {
            width: Some(SizeValue::Cells(4)),
            col: Some(SizeValue::Cells(5)),
            anchor: Anchor::BottomLeft,
            ..Default::default()
        },
    );
    t.draw(&mut root);
    assert_eq!(t.screen()[2], "rrrrrOV  rrrrrrrrrrr");
    let cell = |c: u16| t.parser.screen().cell(2, c).cloned().expect("cell");
    assert_eq!(cell(4).fgcolor(), vt100::Color::Idx(1));
    assert_eq!(cell(5).fgcolor(), vt100::Color::Default);
    assert!(cell(5).bold());
    assert!(!cell(9).bold());
    assert_eq!(cell(9).fgcolor(), vt100::Color::Idx(1));
}

#[test]
fn overlay_over_short_content_grows_the_frame_only_as_needed() {
    let mut t = Term::new(20, 10);
    let mut root = lines(&["one", "two", "three"]);
    t.draw(&mut root);
    let id = t.tui.show_overlay(
        Box::new(lines(&["AAAA", "BBBB"])),
        OverlayOptions {
            width: Some(SizeValue::Cells(4)),
            anchor: Anchor::BottomRight,
            ..Default::default()
        },
    );
    t.draw(&mut root);
    assert_eq!(
        t.screen(),
        padded(&["one", "two             AAAA", "three           BBBB"], 10)
    );
    let tall = lines(&["1", "2", "3", "4", "5"]);
    t.tui.hide_overlay(id);
    t.tui.show_overlay(
        Box::new(tall),
        OverlayOptions {
            width: Some(SizeValue::Cells(2)),
            anchor: Anchor::TopLeft,
            ..Default::default()
        },
    );
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["1 e", "2 o", "3 ree", "4", "5"], 10));
    t.tui.pop_overlay();
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["one", "two", "three"], 10));
}

#[test]
fn control_characters_in_lines_cannot_break_the_layout() {
    let mut t = Term::new(20, 4);
    let mut root = lines(&["a\tb", "x\ny\rz", "end"]);
    t.draw(&mut root);
    assert_eq!(t.screen(), padded(&["a   b", "xyz", "end"], 4));
}

#[test]
fn components_survive_tiny_widths() {
    use pi_tui::components::*;
    use pi_tui::{render_lines, Style};
    let theme = std::sync::Arc::new(MarkdownTheme::default());
    let mut editor = Editor::new(EditorTheme::default());
    editor.insert_text("some text 日本語 👍🏽 and more\nsecond line");
    let mut comps: Vec<Box<dyn Component>> = vec![
        Box::new(Text::new("hello 日本語 world").with_padding(2, 1)),
        Box::new(TruncatedText::new("truncate me please").with_padding(1)),
        Box::new(Markdown::new(
            "# T\n\n| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n\n- x\n  1. y\n\n> q\n\n```rust\nfn x() {}\n```",
            theme,
        )),
        Box::new(editor),
        Box::new(Input::new("> ")),
        Box::new(Loader::new("Working...", Style::new(), Style::new())),
        Box::new(SelectList::new(
            vec![SelectItem::new("one").with_description("first item")],
            5,
            SelectListTheme::default(),
        )),
        Box::new(SettingsList::new(
            vec![SettingItem {
                id: "a".into(),
                label: "Label".into(),
                description: Some("desc".into()),
                value: "v".into(),
                values: vec!["v".into(), "w".into()],
            }],
            5,
            SettingsListTheme::default(),
        )),
    ];
    for c in comps.iter_mut() {
        for w in 1..8 {
            let _ = render_lines(c.as_mut(), w);
        }
    }
    // Through the renderer nothing may exceed the terminal width.
    let mut t = Term::new(3, 30);
    let mut root = Container::new();
    for c in comps {
        root.push(c);
    }
    t.draw(&mut root);
    for row in t.screen() {
        assert!(pi_tui::visible_width(&row) <= 3, "{row}");
    }
}

#[test]
fn key_releases_reach_only_components_that_want_them() {
    struct Counter(usize, bool);
    impl Component for Counter {
        fn render(&mut self, _w: usize, _out: &mut Frame) {}
        fn handle_input(&mut self, _e: &pi_tui::InputEvent) -> bool {
            self.0 += 1;
            true
        }
        fn wants_key_release(&self) -> bool {
            self.1
        }
    }
    let mut tui = Tui::new(10, 5);
    let release = pi_tui::InputEvent::Key(pi_tui::parse_key("\x1b[97;1:3u", true).expect("key"));
    let mut plain = Counter(0, false);
    assert!(!tui.handle_input(&release, &mut plain));
    assert_eq!(plain.0, 0);
    let mut wants = Counter(0, true);
    assert!(tui.handle_input(&release, &mut wants));
    assert_eq!(wants.0, 1);
}

#[test]
fn overlay_focus_order_and_hiding() {
    let mut tui = Tui::new(20, 5);
    let a = tui.show_overlay(Box::new(lines(&["a"])), OverlayOptions::default());
    let b = tui.show_overlay(Box::new(lines(&["b"])), OverlayOptions::default());
    let n = tui.show_overlay(
        Box::new(lines(&["n"])),
        OverlayOptions {
            non_capturing: true,
            ..Default::default()
        },
    );
    assert_eq!(tui.focused_overlay(), Some(b));
    tui.focus_overlay(a);
    assert_eq!(tui.focused_overlay(), Some(a));
    tui.set_overlay_hidden(a, true);
    assert_eq!(tui.is_overlay_hidden(a), Some(true));
    assert_eq!(tui.focused_overlay(), Some(b));
    tui.hide_overlay(b);
    assert_eq!(tui.focused_overlay(), None);
    assert!(tui.hide_overlay(n).is_some());
}

/// Random input bytes (escape fragments, UTF-8 pieces, pastes, control keys) must never make
/// the parser, the editor or its rendering panic.
#[test]
fn random_input_never_panics() {
    use pi_tui::components::{Editor, EditorTheme};
    let pieces: &[&[u8]] = &[
        b"a",
        b"Z",
        b" ",
        b"\r",
        b"\n",
        b"\t",
        b"\x7f",
        b"\x1b",
        b"\x1b[",
        b"\x1b[1;5",
        b"C",
        b"\x1b[A",
        b"\x1b[B",
        b"\x1b[D",
        b"\x1b[C",
        b"\x1b[3~",
        b"\x17",
        b"\x0b",
        b"\x15",
        b"\x19",
        b"\x1by",
        b"\x1f",
        b"\x1d",
        b"\x01",
        b"\x05",
        b"\x1b[200~",
        b"\x1b[201~",
        b"\x1b[13;2u",
        b"\x1b[99;5u",
        "日".as_bytes(),
        &"👍🏽".as_bytes()[..3],
        &"👍🏽".as_bytes()[3..],
        "é".as_bytes(),
        b"\xff",
        b"@",
        b"/",
        b"\\",
        b"[paste #1 ",
        b"]",
        b"\x1b]8;;x",
        b"\x07",
        b"\x1bO",
        b"\x1b\x1b",
        b"\x1b[5~",
        b"\x1b[6~",
    ];
    let mut seed: u64 = 42;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for _ in 0..200 {
        let mut parser = pi_tui::InputParser::new();
        let mut editor = Editor::new(EditorTheme::default());
        editor.set_terminal_rows(1 + next(30));
        for _ in 0..80 {
            let mut bytes = Vec::new();
            for _ in 0..=next(4) {
                bytes.extend_from_slice(pieces[next(pieces.len())]);
            }
            let mut events = parser.feed(&bytes);
            if next(3) == 0 {
                events.extend(parser.flush());
            }
            for ev in &events {
                editor.handle_input(ev);
            }
            // (At width 1 a wide character cannot fit at all; the renderer cuts such lines.)
            let width = 2 + next(20);
            for line in pi_tui::render_lines(&mut editor, width) {
                assert!(pi_tui::visible_width(&line) <= width + 1, "{line:?} at {width}");
            }
        }
    }
}

/// Random markdown-ish text renders without panicking and within the width (except where a
/// single wide character cannot fit).
#[test]
fn random_markdown_never_panics() {
    use pi_tui::components::{Markdown, MarkdownTheme};
    let pieces = [
        "# ",
        "## ",
        "- ",
        "1. ",
        "> ",
        "```",
        "```rust\n",
        "\n",
        "\n\n",
        "|",
        "|---|",
        " ",
        "word",
        "日本語",
        "👍🏽",
        "**",
        "*",
        "_",
        "`",
        "~~",
        "[",
        "](",
        ")",
        "<http://x.io>",
        "\t",
        "---",
        "  ",
        "\\",
        "<b>",
        "![a](b)",
        "- [ ] ",
        "\x1b[31m",
        "\r\n",
    ];
    let theme = std::sync::Arc::new(MarkdownTheme::default());
    let mut seed: u64 = 7;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for _ in 0..300 {
        let mut text = String::new();
        for _ in 0..next(60) {
            text.push_str(pieces[next(pieces.len())]);
        }
        let mut md = Markdown::new(text.clone(), theme.clone());
        let width = 4 + next(40);
        for line in md.lines(width) {
            assert!(pi_tui::visible_width(&line) <= width, "{text:?} at {width}: {line:?}");
        }
    }
}

/// Width invariants of the text utilities over random styled text.
#[test]
fn random_text_utilities_respect_widths() {
    let pieces = [
        "a",
        "bc",
        " ",
        "  ",
        "日",
        "本語",
        "👍🏽",
        "🇩🇪",
        "e\u{301}",
        "\t",
        "\x1b[1m",
        "\x1b[22m",
        "\x1b[38;2;1;2;3m",
        "\x1b[39m",
        "\x1b]8;;http://x\x1b\\",
        "\x1b]8;;\x1b\\",
        "longwordwithoutspaces",
        "-",
        "\x1b[0m",
    ];
    let mut seed: u64 = 99;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n.max(1)
    };
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..next(30) {
            text.push_str(pieces[next(pieces.len())]);
        }
        let w = 2 + next(30);
        for line in pi_tui::wrap_text(&text, w) {
            assert!(pi_tui::visible_width(&line) <= w, "wrap {text:?} at {w}: {line:?}");
        }
        let t = pi_tui::truncate_to_width(&text, w, "...");
        assert!(pi_tui::visible_width(&t) <= w, "truncate {text:?} at {w}: {t:?}");
        let start = next(20);
        let s = pi_tui::slice_columns(&text, start, w);
        assert_eq!(pi_tui::visible_width(&s), w, "slice {text:?} {start}+{w}: {s:?}");
        let p = pi_tui::pad_to_width(&text, w);
        assert_eq!(pi_tui::visible_width(&p), w, "pad {text:?} to {w}: {p:?}");
        // Plain text survives wrapping (modulo the spaces at breaks).
        let plain: String = pi_tui::strip_ansi(&text).split_whitespace().collect();
        let wrapped: String = pi_tui::wrap_text(&text, w)
            .iter()
            .map(|l| pi_tui::strip_ansi(l))
            .collect::<String>()
            .split_whitespace()
            .collect();
        assert_eq!(wrapped, plain, "wrap lost text of {text:?} at {w}");
    }
}

/// The parts of a regular-mode screen: two transcript lines, a blank, the editor, a footer.
fn parts() -> pi_tui::ScreenParts {
    let mut transcript = Frame::new();
    transcript.extend_lines(["t1".to_string(), "t2".to_string()]);
    pi_tui::ScreenParts {
        transcript: transcript.sealed(),
        above_editor: vec![vec![String::new()]],
        editor: vec!["EDITOR".to_string()],
        below_editor: vec![vec!["footer".to_string()]],
    }
}

#[test]
fn inline_a_docked_dialog_takes_the_editors_place_and_the_main_screen_resumes_after_fullscreen() {
    let mut t = Term::new(30, 8);
    let draw = |t: &mut Term| {
        let mut out = Vec::new();
        t.tui.render_parts(parts(), &mut out).expect("render");
        t.parser.process(&out);
        t.last = out;
    };
    draw(&mut t);
    assert_eq!(t.screen()[..5], ["t1", "t2", "", "EDITOR", "footer"]);
    let list = SelectList::new(
        vec![SelectItem::new("first"), SelectItem::new("second")],
        5,
        SelectListTheme::default(),
    );
    let id = t.tui.show_overlay(Box::new(list), OverlayOptions::default());
    draw(&mut t);
    assert_eq!(t.screen()[..6], ["t1", "t2", "", "→ first", "  second", "footer"]);
    // Fullscreen and back, with nothing drawn on the main screen meanwhile: the next frame
    // goes on from the last one (no clear, nothing written again).
    t.tui.set_fullscreen(true);
    t.tui.set_fullscreen(false);
    draw(&mut t);
    assert!(!t.tui.stats().full_redraw);
    assert_eq!(t.tui.stats().lines_written, 0, "{:?}", t.last_text());
    t.tui.hide_overlay(id);
    draw(&mut t);
    assert_eq!(t.screen()[..5], ["t1", "t2", "", "EDITOR", "footer"]);
    assert!(!t.tui.stats().full_redraw);
}

#[test]
fn renderer_finish_spaced_leaves_a_blank_row_unless_the_screen_is_full() {
    let finish = |lines: usize| {
        let mut parser = vt100::Parser::new(5, 20, 0);
        let mut r = Renderer::new();
        let mut out = Vec::new();
        let mut f = Frame::new();
        for i in 0..lines {
            f.push_line(format!("line{i}"));
        }
        r.render(f, 20, 5, &mut out).expect("render");
        r.finish_spaced(&mut out).expect("finish");
        out.extend_from_slice(b"after");
        parser.process(&out);
        parser.screen().contents()
    };
    // Room below: one blank row between the frame and what follows.
    assert_eq!(finish(2), "line0\nline1\n\nafter");
    // The frame fills the screen: what follows comes on the next line.
    assert_eq!(finish(5), "line1\nline2\nline3\nline4\nafter");
}
