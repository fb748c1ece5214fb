//! Tests for the editor component.
use super::paste::decode_ctrl_csi_u;
use super::*;
use crate::ansi::strip_ansi;
use crate::input::InputParser;

fn editor() -> Editor {
    Editor::new(EditorTheme::default())
}

/// Feed raw terminal bytes; returns the last event.
fn feed(e: &mut Editor, bytes: &str) -> Option<EditorEvent> {
    let mut p = InputParser::new();
    let mut evs = p.feed(bytes.as_bytes());
    evs.extend(p.flush());
    let mut last = None;
    for ev in evs {
        if e.handle_input(&ev) {
            last = e.take_event();
        }
    }
    last
}

fn screen(e: &mut Editor, width: usize) -> Vec<String> {
    render_lines(e, width).iter().map(|l| strip_ansi(l)).collect()
}

#[test]
fn typing_and_submit() {
    let mut e = editor();
    feed(&mut e, "hello");
    assert_eq!(e.text(), "hello");
    assert_eq!(screen(&mut e, 10), ["──────────", "hello ", "──────────"]);
    feed(&mut e, "\x1b[13;2u");
    feed(&mut e, "world");
    assert_eq!(e.text(), "hello\nworld");
    assert_eq!(feed(&mut e, "\r"), Some(EditorEvent::Submit("hello\nworld".into())));
    assert!(e.is_empty());
}

#[test]
fn a_bare_line_feed_is_ctrl_j_and_inserts_a_newline() {
    let mut e = editor();
    feed(&mut e, "a\nb");
    assert_eq!(e.text(), "a\nb");
    assert_eq!(feed(&mut e, "\r"), Some(EditorEvent::Submit("a\nb".into())));
}

#[test]
fn backslash_enter_is_newline() {
    let mut e = editor();
    feed(&mut e, "a\\\rb");
    assert_eq!(e.text(), "a\nb");
}

#[test]
fn ctrl_c_is_left_to_the_application() {
    let mut e = editor();
    assert_eq!(feed(&mut e, "\x03"), None);
}

#[test]
fn cursor_motion_and_editing_keys() {
    let mut e = editor();
    feed(&mut e, "one two three");
    feed(&mut e, "\x1bb"); // alt+b
    feed(&mut e, "\x17"); // ctrl+w
    assert_eq!(e.text(), "one three");
    feed(&mut e, "\x01"); // ctrl+a
    feed(&mut e, "\x0b"); // ctrl+k
    assert_eq!(e.text(), "");
    feed(&mut e, "\x19"); // ctrl+y
    assert_eq!(e.text(), "one three");
    feed(&mut e, "\x1b[D\x1b[D\x7f");
    assert_eq!(e.text(), "one thee");
}

#[test]
fn kill_ring_yank_pop() {
    let mut e = editor();
    feed(&mut e, "alpha beta");
    feed(&mut e, "\x17"); // kill "beta"
    feed(&mut e, "\x17"); // kill "alpha " (joins: "alpha beta")
    feed(&mut e, "gamma");
    feed(&mut e, "\x17"); // kill "gamma"
    feed(&mut e, "\x19"); // yank gamma
    assert_eq!(e.text(), "gamma");
    feed(&mut e, "\x1by"); // alt+y -> previous kill
    assert_eq!(e.text(), "alpha beta");
}

#[test]
fn yank_pop_replaces_a_multi_line_yank() {
    let mut e = editor();
    e.set_text("a\nb");
    feed(&mut e, "\x01\x1b[A\x05"); // to the end of "a"
    feed(&mut e, "\x0b\x0b"); // kill "\n" then "b" (one entry "\nb")
    assert_eq!(e.text(), "a");
    feed(&mut e, " word");
    feed(&mut e, "\x17"); // a second entry: "word"
    feed(&mut e, "\x19"); // yank "word"
    feed(&mut e, "\x1by"); // pop: "word" out, "\nb" in
    assert_eq!(e.text(), "a \nb");
    feed(&mut e, "\x1by"); // pop again: the multi-line yank out, "word" back
    assert_eq!(e.text(), "a word");
}

#[test]
fn undo_restores_words() {
    let mut e = editor();
    feed(&mut e, "hello world");
    feed(&mut e, "\x1b[45;5u"); // ctrl+-
    assert_eq!(e.text(), "hello");
    feed(&mut e, "\x1f"); // legacy ctrl+-
    assert_eq!(e.text(), "");
}

#[test]
fn history_navigation() {
    let mut e = editor();
    e.add_to_history("first");
    e.add_to_history("second");
    e.add_to_history("second");
    feed(&mut e, "\x1b[A");
    assert_eq!(e.text(), "second");
    feed(&mut e, "\x1b[A");
    assert_eq!(e.text(), "first");
    feed(&mut e, "\x1b[A");
    assert_eq!(e.text(), "first");
    feed(&mut e, "\x1b[B");
    assert_eq!(e.text(), "second");
    feed(&mut e, "\x1b[B");
    assert_eq!(e.text(), "");
}

#[test]
fn up_on_a_draft_goes_to_line_start_then_into_history() {
    let mut e = editor();
    e.add_to_history("old one");
    e.add_to_history("old two");
    feed(&mut e, "draft");
    feed(&mut e, "\x1b[A");
    assert_eq!((e.text().as_str(), e.cursor()), ("draft", (0, 0)));
    feed(&mut e, "\x1b[A");
    // Going back puts the cursor at the entry's start.
    assert_eq!((e.text().as_str(), e.cursor()), ("old two", (0, 0)));
    feed(&mut e, "\x1b[A");
    assert_eq!((e.text().as_str(), e.cursor()), ("old one", (0, 0)));
    // Down from the start goes to the line end first, then forward with the cursor at the end.
    feed(&mut e, "\x1b[B");
    assert_eq!((e.text().as_str(), e.cursor()), ("old two", (0, 7)));
    // Leaving history gives the draft back as it was.
    feed(&mut e, "\x1b[B");
    assert_eq!((e.text().as_str(), e.cursor()), ("draft", (0, 0)));
}

#[test]
fn removing_a_paste_marker_renumbers_the_later_ones() {
    let mut e = editor();
    for c in ["a", "b", "c"] {
        feed(&mut e, &format!("\x1b[200~{}\x1b[201~ ", c.repeat(1001)));
    }
    assert_eq!(
        e.text(),
        "[paste #1 1001 chars] [paste #2 1001 chars] [paste #3 1001 chars] "
    );
    // Backspace over the first marker (the cursor steps over each marker in one move).
    feed(&mut e, "\x01\x1b[C\x7f");
    assert_eq!(e.text(), " [paste #1 1001 chars] [paste #2 1001 chars] ");
    let Some(EditorEvent::Submit(text)) = feed(&mut e, "\r") else {
        panic!("expected submit");
    };
    assert_eq!(text, format!("{} {}", "b".repeat(1001), "c".repeat(1001)));
}

#[test]
fn undo_gives_back_the_pastes_with_the_text() {
    let mut e = editor();
    feed(&mut e, &format!("\x1b[200~{}\x1b[201~ ", "a".repeat(1001)));
    feed(&mut e, &format!("\x1b[200~{}\x1b[201~", "b".repeat(1001)));
    // Removing the first marker renumbers the second; undo brings both back as they were.
    feed(&mut e, "\x01\x1b[C\x7f");
    assert_eq!(e.text(), " [paste #1 1001 chars]");
    feed(&mut e, "\x1f"); // ctrl+-
    assert_eq!(e.text(), "[paste #1 1001 chars] [paste #2 1001 chars]");
    assert_eq!(e.expanded_text(), format!("{} {}", "a".repeat(1001), "b".repeat(1001)));
}

#[test]
fn word_motion_steps_over_markers_and_keeps_underscored_words() {
    let mut e = editor();
    feed(
        &mut e,
        &format!("see \x1b[200~{}\x1b[201~ foo.bar_baz", "z".repeat(1200)),
    );
    feed(&mut e, "\x1bb"); // alt+b: back to "bar_baz", not "baz"
    assert_eq!(e.cursor(), (0, "see [paste #1 1200 chars] foo.".len()));
    feed(&mut e, "\x1bb\x1bb\x1bb");
    assert_eq!(e.cursor(), (0, "see ".len()));
    feed(&mut e, "\x1bd"); // alt+d kills the marker whole
    assert_eq!(e.text(), "see  foo.bar_baz");
}

#[test]
fn editing_a_history_entry_ends_browsing() {
    let mut e = editor();
    e.add_to_history("one two");
    feed(&mut e, "\x1b[A\x05\x17"); // up, end, ctrl+w
    assert_eq!(e.text(), "one ");
    // Down now stays in the text instead of going back to the (empty) draft.
    feed(&mut e, "\x1b[B");
    assert_eq!(e.text(), "one ");
}

#[test]
fn large_paste_becomes_marker_and_expands_on_submit() {
    let mut e = editor();
    let big: String = (0..12).map(|i| format!("line {i}\n")).collect();
    feed(&mut e, &format!("see \x1b[200~{big}\x1b[201~"));
    assert_eq!(e.text(), "see [paste #1 +13 lines]");
    let Some(EditorEvent::Submit(text)) = feed(&mut e, "\r") else {
        panic!("expected submit");
    };
    assert!(text.starts_with("see line 0\nline 1"));
    // Backspace removes a marker whole.
    feed(&mut e, &format!("\x1b[200~{}\x1b[201~", "x".repeat(1200)));
    assert_eq!(e.text(), "[paste #1 1200 chars]");
    feed(&mut e, "\x7f");
    assert_eq!(e.text(), "");
    // The cursor steps over a marker in one move; delete removes it whole.
    // Its number is free again.
    feed(&mut e, &format!("a\x1b[200~{}\x1b[201~b", "y".repeat(1500)));
    assert_eq!(e.text(), "a[paste #1 1500 chars]b");
    feed(&mut e, "\x1b[D\x1b[D");
    assert_eq!(e.cursor(), (0, 1));
    feed(&mut e, "\x1b[C");
    assert_eq!(e.cursor(), (0, "a[paste #1 1500 chars]".len()));
    feed(&mut e, "\x1b[D\x1b[3~");
    assert_eq!(e.text(), "ab");
    feed(&mut e, "\x05\x15");
    // Small pastes go in as text, control characters dropped.
    feed(&mut e, "\x1b[200~a\x07b\r\nc\x1b[201~");
    assert_eq!(e.text(), "ab\nc");
}

#[test]
fn jump_to_character() {
    let mut e = editor();
    feed(&mut e, "abcabc");
    feed(&mut e, "\x01"); // home
    feed(&mut e, "\x1d"); // ctrl+]
    feed(&mut e, "c");
    assert_eq!(e.cursor(), (0, 2));
    feed(&mut e, "\x1b\x1d"); // ctrl+alt+]
    feed(&mut e, "a");
    assert_eq!(e.cursor(), (0, 0));
}

#[test]
fn wrapping_vertical_motion_and_scroll_indicator() {
    let mut e = editor();
    e.set_terminal_rows(10);
    feed(&mut e, "aaaa bbbb cccc");
    let s = screen(&mut e, 7);
    assert_eq!(s, ["───────", "aaaa ", "bbbb ", "cccc ", "───────"]);
    feed(&mut e, "\x1b[A");
    assert_eq!(e.cursor(), (0, 9));
    for _ in 0..8 {
        feed(&mut e, "\x1b[13;2ux");
    }
    let s = screen(&mut e, 7);
    assert_eq!(s.len(), 7);
    assert_eq!(s[0], "─── ↑ 5", "{s:?}");
    assert_eq!(s[5], "x cccc");
    feed(&mut e, "\x1b[5~");
    let s = screen(&mut e, 7);
    assert!(s[6].starts_with("─── ↓ "), "{s:?}");
}

#[test]
fn cursor_marker_only_when_focused() {
    let mut e = editor();
    feed(&mut e, "ab");
    assert!(render_lines(&mut e, 10)[1].contains(CURSOR_MARKER));
    e.set_focused(false);
    assert!(!render_lines(&mut e, 10)[1].contains(CURSOR_MARKER));
}

#[test]
fn autocomplete_commands() {
    use crate::autocomplete::{CombinedAutocompleteProvider, SlashCommand};
    let mut e = editor();
    e.set_autocomplete_provider(Box::new(CombinedAutocompleteProvider::new(
        vec![
            SlashCommand::new("model", "Select model"),
            SlashCommand::new("compact", "Compact"),
        ],
        ".",
    )));
    feed(&mut e, "/");
    assert!(e.is_showing_autocomplete());
    feed(&mut e, "co");
    let s = screen(&mut e, 60);
    assert!(s[3].starts_with("→ compact"), "{s:?}");
    // Enter on a command completes and submits it.
    assert_eq!(feed(&mut e, "\r"), Some(EditorEvent::Submit("/compact".into())));
    // Tab on a command name opens the menu (even for one match); a second Tab completes.
    feed(&mut e, "/mod\x1b");
    assert!(!e.is_showing_autocomplete());
    feed(&mut e, "\t");
    assert!(e.is_showing_autocomplete());
    assert_eq!(e.text(), "/mod");
    feed(&mut e, "\t");
    assert_eq!(e.text(), "/model ");
    assert!(!e.is_showing_autocomplete());
    feed(&mut e, "\x15/mo\x1b");
    assert!(!e.is_showing_autocomplete());
    assert_eq!(e.text(), "/mo");
    // Backspace inside a command line opens the menu again.
    feed(&mut e, "\x7f");
    assert!(e.is_showing_autocomplete());
    assert!(screen(&mut e, 60)[3].starts_with("→ model"));
    // An open menu follows the cursor: moved back before the `/`, it closes.
    feed(&mut e, "\x15/model");
    assert!(e.is_showing_autocomplete());
    feed(&mut e, "\x01\x1b[C\x1b[D");
    assert!(!e.is_showing_autocomplete());
    // Typing a space where the menu is closed leaves it closed.
    feed(&mut e, "\x1b\x05 ");
    assert!(!e.is_showing_autocomplete());
}

#[test]
fn enter_on_a_path_menu_completes_without_submitting() {
    use crate::autocomplete::CombinedAutocompleteProvider;
    let dir = std::env::temp_dir().join(format!("pi-tui-ed-path-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("bin")).expect("mkdir");
    std::fs::create_dir_all(dir.join("boot")).expect("mkdir");
    let mut e = editor();
    e.set_autocomplete_provider(Box::new(CombinedAutocompleteProvider::new(vec![], &dir)));
    let prefix = format!("see {}/b", dir.display());
    feed(&mut e, &prefix);
    feed(&mut e, "\t");
    assert!(e.is_showing_autocomplete());
    assert_eq!(feed(&mut e, "\r"), Some(EditorEvent::Changed));
    assert_eq!(e.text(), format!("see {}/bin/", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn decode_csi_u_in_paste() {
    assert_eq!(decode_ctrl_csi_u("a\x1b[106;5ub"), "a\nb");
    assert_eq!(decode_ctrl_csi_u("a\x1b[1;5ub"), "a\x1b[1;5ub");
}

#[test]
fn suggestions_delivered_later_show_if_still_current() {
    use crate::autocomplete::{AutocompleteItem, Suggestions};
    let mut e = editor();
    feed(&mut e, "see @ma");
    let item = AutocompleteItem {
        value: "@src/main.rs".into(),
        label: "main.rs".into(),
        description: None,
    };
    e.show_suggestions(Suggestions {
        items: vec![item.clone()],
        prefix: "@zz".into(),
    });
    assert!(!e.is_showing_autocomplete());
    e.show_suggestions(Suggestions {
        items: vec![item],
        prefix: "@ma".into(),
    });
    assert!(e.is_showing_autocomplete());
}

#[test]
fn top_label_rides_in_the_border() {
    let mut e = editor();
    e.set_top_label(Some("⠹ Working".into()));
    let lines = crate::component::render_lines(&mut e, 30);
    assert_eq!(strip_ansi(&lines[0]), format!("── ⠹ Working {}", "─".repeat(17)));
    e.set_top_label(None);
    let lines = crate::component::render_lines(&mut e, 30);
    assert_eq!(strip_ansi(&lines[0]), "─".repeat(30));
}

/// A provider that answers later (as an application's background completions do): it
/// records what it was asked and the applications it was handed.
#[derive(Default)]
struct LaterProvider {
    asked: std::sync::Arc<std::sync::Mutex<Vec<(String, bool)>>>,
    applied: std::sync::Arc<std::sync::Mutex<Vec<(String, bool)>>>,
}

impl crate::autocomplete::AutocompleteProvider for LaterProvider {
    fn suggestions(
        &mut self,
        lines: &[String],
        line: usize,
        col: usize,
        force: bool,
    ) -> Option<crate::autocomplete::Suggestions> {
        self.asked.lock().unwrap().push((lines[line][..col].to_string(), force));
        None
    }
    fn apply(
        &self,
        lines: &[String],
        line: usize,
        col: usize,
        _item: &crate::autocomplete::AutocompleteItem,
        _prefix: &str,
    ) -> crate::autocomplete::Applied {
        crate::autocomplete::Applied {
            lines: lines.to_vec(),
            line,
            col,
        }
    }
    fn trigger_characters(&self) -> Vec<char> {
        vec!['#', '$']
    }
    fn answers_later(&self) -> bool {
        true
    }
    fn apply_later(
        &mut self,
        _lines: &[String],
        _line: usize,
        _col: usize,
        item: &crate::autocomplete::AutocompleteItem,
        _prefix: &str,
        submit: bool,
    ) -> bool {
        self.applied.lock().unwrap().push((item.value.clone(), submit));
        true
    }
}

#[test]
fn providers_answering_later_keep_the_menu_until_their_answer() {
    use crate::autocomplete::{Applied, AutocompleteItem, Suggestions};
    let provider = LaterProvider::default();
    let (asked, applied) = (provider.asked.clone(), provider.applied.clone());
    let mut e = editor();
    e.set_autocomplete_provider(Box::new(provider));
    // Trigger characters where a token starts (also after an opening bracket), and word
    // characters inside such a token; not inside a word.
    feed(&mut e, "a#b (#1 $x");
    let asked_for: Vec<String> = asked.lock().unwrap().iter().map(|(t, _)| t.clone()).collect();
    assert_eq!(asked_for, ["a#b (#", "a#b (#1", "a#b (#1 $", "a#b (#1 $x"]);
    let item = |v: &str| AutocompleteItem {
        value: v.into(),
        label: v.into(),
        description: None,
    };
    e.answer_suggestions(
        Some(Suggestions {
            items: vec![item("$HOME"), item("$xy")],
            prefix: "$x".into(),
        }),
        false,
    );
    assert!(e.is_showing_autocomplete());
    // The best match is selected (the first starting with the prefix).
    assert!(screen(&mut e, 60)[4].starts_with("→ $xy"), "{:?}", screen(&mut e, 60));
    // Another key asks again; the menu stays until the answer.
    feed(&mut e, "y");
    assert!(e.is_showing_autocomplete());
    // Enter hands the selection to the provider, which applies it later; nothing submits.
    assert_eq!(feed(&mut e, "\r"), Some(EditorEvent::Handled));
    assert_eq!(applied.lock().unwrap().as_slice(), [("$xy".to_string(), false)]);
    // The menu stays up until the completion is in: both change in one frame.
    assert!(e.is_showing_autocomplete() && e.is_applying());
    assert_eq!(e.text(), "a#b (#1 $xy");
    e.set_applied(Applied {
        lines: vec!["a#b (#1 ${xy}".into()],
        line: 0,
        col: 13,
    });
    assert!(!e.is_showing_autocomplete());
    assert_eq!(e.text(), "a#b (#1 ${xy}");
    assert_eq!(e.cursor(), (0, 13));
    // Tab with no menu asks with `force`; a single answer for it is accepted.
    feed(&mut e, "\t");
    assert_eq!(asked.lock().unwrap().last(), Some(&("a#b (#1 ${xy}".to_string(), true)));
    e.answer_suggestions(
        Some(Suggestions {
            items: vec![item("${xyz}")],
            prefix: "${xy}".into(),
        }),
        true,
    );
    assert_eq!(applied.lock().unwrap().last(), Some(&("${xyz}".to_string(), false)));
    // An answer of nothing closes the menu.
    e.answer_suggestions(None, false);
    assert!(!e.is_showing_autocomplete());
    assert_eq!(e.submit_now(), Some("a#b (#1 ${xy}".to_string()));
    assert_eq!(e.text(), "");
}

#[test]
fn scroll_indicators_sit_in_the_middle_of_the_borders() {
    let mut e = editor();
    e.set_terminal_rows(20); // at most 6 rows show
    let text: Vec<String> = (1..=10).map(|i| format!("l{i}")).collect();
    e.set_text(&text.join("\n"));
    let s = screen(&mut e, 30);
    assert_eq!(s[0], format!("{} ↑ 4 more {}", "─".repeat(10), "─".repeat(10)));
    assert_eq!(s[1], "l5");
    // With a working label the count moves to the middle, the label stays at the start.
    e.set_top_label(Some("⠋ Working".into()));
    let s = screen(&mut e, 40);
    assert_eq!(
        s[0],
        format!("── ⠋ Working {} ↑ 4 more {}", "─".repeat(2), "─".repeat(15))
    );
    // Back at the top: the count of the rows below goes to the bottom border.
    e.set_top_label(None);
    feed(&mut e, "\x1b[5~\x1b[5~");
    let s = screen(&mut e, 30);
    assert_eq!(s[7], format!("{} ↓ 4 more {}", "─".repeat(10), "─".repeat(10)));
}
