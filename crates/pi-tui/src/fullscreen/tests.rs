//! Tests of the fullscreen layout: following and scrolling, the pill, selection by drag and
//! clicks, the scrollbar, search and flashes.

use super::*;
use crate::input::{MouseEvent, MouseKind};

fn transcript(n: usize) -> Frame {
    let mut f = Frame::new();
    f.extend_lines((0..n).map(|i| format!("line {i}")));
    f.sealed()
}

fn mouse(kind: MouseKind, column: usize, row: usize) -> MouseEvent {
    MouseEvent {
        kind,
        column,
        row,
        shift: false,
        alt: false,
        ctrl: false,
    }
}

#[test]
fn follows_the_end_until_scrolled_and_stays_put_while_content_grows() {
    let mut fs = Fullscreen::new();
    fs.set_scrollbar(ScrollbarMode::Hidden, Style::new(), Style::new());
    let rows = fs.compose(transcript(100), vec!["dock".into()], 20, 5);
    assert_eq!(rows, ["line 96", "line 97", "line 98", "line 99", "dock"]);
    fs.viewport_mut().scroll_by(-10);
    let rows = fs.compose(transcript(120), vec!["dock".into()], 50, 5);
    assert_eq!(&rows[..3], ["line 86", "line 87", "line 88"]);
    assert!(rows[3].contains("Jump to latest message"), "{rows:?}");
    fs.viewport_mut().to_bottom();
    let rows = fs.compose(transcript(120), vec!["dock".into()], 20, 5);
    assert_eq!(rows[3], "line 119");
}

#[test]
fn short_transcript_starts_at_the_top_and_the_dock_stays_at_the_bottom() {
    let mut fs = Fullscreen::new();
    let rows = fs.compose(transcript(2), vec!["editor".into(), "footer".into()], 20, 6);
    assert_eq!(rows, ["line 0", "line 1", "", "", "editor", "footer"]);
}

#[test]
fn paging_and_the_ends() {
    let mut v = Viewport::default();
    assert_eq!(v.layout(100, 20), 80);
    v.scroll_by(-v.page());
    assert_eq!(v.layout(100, 20), 64);
    v.to_top();
    assert_eq!(v.layout(100, 20), 0);
    v.scroll_by(1000);
    assert!(v.following());
    // Content shorter than the window cannot scroll.
    let mut short = Viewport::default();
    short.layout(3, 20);
    short.scroll_by(-5);
    assert!(short.following());
}

#[test]
fn wheel_scrolls_and_the_pill_jumps_back() {
    let mut fs = Fullscreen::new();
    fs.set_scrollbar(ScrollbarMode::Hidden, Style::new(), Style::new());
    fs.set_wheel_step(WheelStep::Lines(3));
    fs.compose(transcript(50), vec!["dock".into()], 40, 11);
    assert_eq!(fs.handle_mouse(&mouse(MouseKind::WheelUp, 3, 3)), MouseAction::Redraw);
    let rows = fs.compose(transcript(50), vec!["dock".into()], 40, 11);
    assert_eq!(rows[0], "line 37");
    assert_eq!(fs.handle_mouse(&mouse(MouseKind::Press(0), 20, 9)), MouseAction::Redraw);
    assert!(fs.viewport().following());
}

#[test]
fn drag_selects_text_and_release_copies_it() {
    let mut fs = Fullscreen::new();
    let mut f = Frame::new();
    f.extend_lines(["\x1b[1mhello world\x1b[0m   ".to_string(), "second line".to_string()]);
    fs.compose(f.sealed(), vec!["dock".into()], 20, 4);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 6, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 5, 1));
    let rows = fs.compose(
        {
            let mut f = Frame::new();
            f.extend_lines(["\x1b[1mhello world\x1b[0m   ".to_string(), "second line".to_string()]);
            f.sealed()
        },
        vec!["dock".into()],
        20,
        4,
    );
    assert!(rows[0].contains("\x1b[7mworld"), "{:?}", rows[0]);
    match fs.handle_mouse(&mouse(MouseKind::Release(0), 5, 1)) {
        MouseAction::Copy(t) => assert_eq!(t, "world\nsecond"),
        other => panic!("no copy: {other:?}"),
    }
    // A click without a drag selects nothing: it is a click on that line.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 2, 1));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 2, 1)),
        MouseAction::Click(1)
    );
}

#[test]
fn a_backward_drag_takes_both_end_cells_as_a_forward_one_does() {
    let mut fs = Fullscreen::new();
    fs.compose(transcript(3), vec!["dock".into()], 20, 5);
    // From the "2" of "line 2" back to the "n" of "line 1": both cells are in.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 5, 2));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 2, 1));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 2, 1)),
        MouseAction::Copy("ne 1\nline 2".into())
    );
    // A drag back onto the cell it began on selects nothing.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 3, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 4, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 3, 0));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 3, 0)),
        MouseAction::Redraw
    );
}

#[test]
fn a_press_below_the_transcript_selects_the_screen_rows() {
    let mut fs = Fullscreen::new();
    let dock = || vec!["some editor text".to_string(), "/tmp/project  footer".to_string()];
    fs.compose(transcript(2), dock(), 30, 5);
    // From the footer's "tmp" up into the editor row.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 1, 4));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 7, 4));
    let rows = fs.compose(transcript(2), dock(), 30, 5);
    assert!(rows[4].contains("\x1b[7mtmp/pro"), "{:?}", rows[4]);
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 7, 4)),
        MouseAction::Copy("tmp/pro".into())
    );
    // Up across the editor into the transcript rows: the screen as shown.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 3, 4));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 5, 1));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 5, 1)),
        MouseAction::Copy("1\n\nsome editor text\n/tmp".into())
    );
    // A double click takes a word of the footer.
    for _ in 0..2 {
        fs.handle_mouse(&mouse(MouseKind::Press(0), 16, 4));
    }
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 16, 4)),
        MouseAction::Copy("footer".into())
    );
}

#[test]
fn a_drag_held_at_the_edge_scrolls_a_line_every_fifty_ms_until_the_end() {
    let mut fs = Fullscreen::new();
    fs.compose(transcript(40), vec!["dock".into()], 20, 6);
    fs.viewport_mut().scroll_by(-10);
    fs.compose(transcript(40), vec!["dock".into()], 20, 6);
    assert_eq!(fs.viewport().first_line(), 25);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 0, 1));
    // Over the dock: no line moves at once, then one every 50 ms.
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 3, 5));
    assert_eq!(fs.viewport().first_line(), 25);
    assert!(!fs.expire(), "not yet");
    std::thread::sleep(Duration::from_millis(120));
    assert!(fs.expire());
    assert_eq!(fs.viewport().first_line(), 27);
    // Held long enough, it reaches the end and stops; the selection runs to the pointer.
    std::thread::sleep(Duration::from_millis(600));
    fs.expire();
    assert!(fs.viewport().following());
    match fs.handle_mouse(&mouse(MouseKind::Release(0), 3, 5)) {
        MouseAction::Copy(t) => {
            assert!(t.starts_with("line 26\n") && t.ends_with("\nline"), "{t:?}");
            assert_eq!(t.lines().count(), 14);
        }
        other => panic!("no copy: {other:?}"),
    }
    // Back off the edge, the scrolling stops.
    fs.viewport_mut().scroll_by(-10);
    fs.compose(transcript(40), vec!["dock".into()], 20, 6);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 0, 2));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 0, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 0, 2));
    std::thread::sleep(Duration::from_millis(120));
    assert!(!fs.expire());
    assert_eq!(fs.viewport().first_line(), 25);
}

#[test]
fn search_finds_matches_from_the_view_and_steps_through_them() {
    let mut fs = Fullscreen::new();
    let lines: Vec<String> = (0..60)
        .map(|i| {
            if i % 10 == 3 {
                format!("needle at {i}")
            } else {
                format!("hay {i}")
            }
        })
        .collect();
    let frame = || {
        let mut f = Frame::new();
        f.extend_lines(lines.clone());
        f.sealed()
    };
    fs.compose(frame(), vec!["dock".into()], 60, 11);
    fs.toggle_search();
    for c in ["N", "e", "e", "d", "l", "e"] {
        fs.search_key(SearchKey::Text(c.into()));
    }
    let rows = fs.compose(frame(), vec!["dock".into()], 60, 11);
    assert_eq!(
        fs.search_position(),
        Some((6, 6)),
        "first match at or below the view: line 53"
    );
    // The box: one row down and one column in from the top-right corner.
    assert!(
        !rows[0].contains("┌") && rows[1].contains("┌") && rows[2].contains("6/6"),
        "{:?}",
        &rows[..4]
    );
    assert_eq!(crate::width::visible_width(&rows[1]), 59, "{:?}", &rows[..4]);
    assert!(rows.iter().any(|r| r.contains("\x1b[1;7mneedle")));
    fs.search_key(SearchKey::Next);
    let rows = fs.compose(frame(), vec!["dock".into()], 60, 11);
    assert_eq!(fs.search_position(), Some((1, 6)));
    // Line 3 is scrolled into view.
    assert!(
        rows.iter().any(|r| crate::ansi::strip_ansi(r).contains("needle at 3")),
        "{rows:?}"
    );
    fs.search_key(SearchKey::Previous);
    fs.compose(frame(), vec!["dock".into()], 60, 11);
    assert_eq!(fs.search_position(), Some((6, 6)));
    fs.close_search();
    let rows = fs.compose(frame(), vec!["dock".into()], 60, 11);
    assert!(!rows.iter().any(|r| r.contains("\x1b[4m")));
}

#[test]
fn the_scrollbar_shows_while_scrolling_and_its_track_and_thumb_scroll() {
    let mut fs = Fullscreen::new();
    let plain = |rows: &[String]| rows.iter().map(|r| crate::ansi::strip_ansi(r)).collect::<Vec<_>>();
    let rows = fs.compose(transcript(100), vec!["dock".into()], 20, 11);
    assert!(!plain(&rows)[0].contains('│'), "auto: hidden while following");
    fs.handle_mouse(&mouse(MouseKind::WheelUp, 3, 3));
    let rows = plain(&fs.compose(transcript(100), vec!["dock".into()], 20, 11));
    // 100 lines in 10 rows: a thumb of 2 rows near the bottom, the track above it.
    let column: Vec<char> = rows[..10].iter().map(|r| r.chars().last().unwrap_or(' ')).collect();
    assert_eq!(column.iter().filter(|&&c| c == '┃').count(), 2, "{rows:?}");
    assert_eq!(column[0], '│');
    assert_eq!(rows[10], "dock");
    // A press at the top of the track jumps to the start; dragging down follows the pointer.
    assert_eq!(fs.handle_mouse(&mouse(MouseKind::Press(0), 19, 0)), MouseAction::Redraw);
    let rows = plain(&fs.compose(transcript(100), vec!["dock".into()], 20, 11));
    assert!(rows[0].starts_with("line 0 "), "{rows:?}");
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 19, 4));
    let rows = plain(&fs.compose(transcript(100), vec!["dock".into()], 20, 11));
    // Held by its middle row: the thumb's top is at row 3 of 8 possible, 3/8 of 90 lines.
    assert!(rows[0].starts_with("line 34"), "{rows:?}");
    assert!(rows.iter().any(|r| r.ends_with('█')), "the held thumb is solid");
    fs.handle_mouse(&mouse(MouseKind::Release(0), 19, 4));
    assert!(fs.selected_text().is_none(), "the bar selects no text");
    // `always` gives the bar a column of its own; `hidden` never draws it.
    fs.set_scrollbar(ScrollbarMode::Always, Style::new(), Style::new());
    assert_eq!(fs.transcript_width(20), 19);
    fs.set_scrollbar(ScrollbarMode::Hidden, Style::new(), Style::new());
    assert_eq!(fs.transcript_width(20), 20);
    fs.handle_mouse(&mouse(MouseKind::WheelUp, 3, 3));
    let rows = plain(&fs.compose(transcript(100), vec!["dock".into()], 20, 11));
    assert!(!rows.iter().any(|r| r.contains('│') || r.contains('┃')));
}

#[test]
fn double_click_takes_a_word_and_triple_click_the_line() {
    let mut fs = Fullscreen::new();
    let frame = || {
        let mut f = Frame::new();
        f.extend_lines(["run cargo-test --lib now".to_string(), "next line".to_string()]);
        f.sealed()
    };
    fs.compose(frame(), vec!["dock".into()], 40, 4);
    let click = |fs: &mut Fullscreen, col| {
        fs.handle_mouse(&mouse(MouseKind::Press(0), col, 0));
        fs.handle_mouse(&mouse(MouseKind::Release(0), col, 0))
    };
    assert_eq!(click(&mut fs, 6), MouseAction::Click(0), "one click copies nothing");
    assert_eq!(click(&mut fs, 6), MouseAction::Copy("cargo-test".into()));
    assert_eq!(click(&mut fs, 6), MouseAction::Copy("run cargo-test --lib now".into()));
    // A drag after a double click grows by words.
    fs.clear_selection();
    fs.last_click = None;
    click(&mut fs, 0);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 1, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 1, 1));
    match fs.handle_mouse(&mouse(MouseKind::Release(0), 1, 1)) {
        MouseAction::Copy(t) => assert_eq!(
            t,
            "run cargo-test --lib now
next"
        ),
        other => panic!("no copy: {other:?}"),
    }
}

#[test]
fn flash_sits_top_right_until_it_expires() {
    let mut fs = Fullscreen::new();
    fs.flash("Copied!", Duration::from_millis(0));
    let rows = fs.compose(transcript(3), vec![], 30, 3);
    assert!(rows[0].starts_with("line 0") && rows[0].contains(" Copied! "));
    assert!(fs.expire_flash());
    let rows = fs.compose(transcript(3), vec![], 30, 3);
    assert_eq!(rows[0], "line 0");
}

#[test]
fn flashes_stack_one_a_row_and_expire_on_their_own() {
    let mut fs = Fullscreen::new();
    fs.flash("Copied!", Duration::from_secs(60));
    fs.flash("Copy failed: no clipboard", Duration::from_millis(0));
    fs.flash("Copied!", Duration::from_secs(60));
    let rows = fs.compose(transcript(4), vec![], 40, 4);
    let plain: Vec<String> = rows.iter().map(|r| crate::ansi::strip_ansi(r)).collect();
    // Oldest at the top, each flush with the right edge.
    assert_eq!(plain[0], format!("line 0{:>34}", " Copied! "));
    assert!(plain[1].ends_with(" Copy failed: no clipboard ") && plain[1].starts_with("line 1"));
    assert!(plain[2].ends_with(" Copied! "));
    assert_eq!(plain[3], "line 3");
    // The short one goes; the others move up a row.
    assert!(fs.expire_flash());
    assert!(!fs.expire_flash(), "nothing more to expire");
    let plain: Vec<String> = fs
        .compose(transcript(4), vec![], 40, 4)
        .iter()
        .map(|r| crate::ansi::strip_ansi(r))
        .collect();
    assert!(plain[0].ends_with(" Copied! ") && plain[1].ends_with(" Copied! "));
    assert_eq!(plain[2], "line 2");
}

#[test]
fn more_flashes_than_rows_show_the_newest_cut_to_the_width() {
    let mut fs = Fullscreen::new();
    for n in 0..5 {
        fs.flash(format!("flash number {n} with a long text"), Duration::from_secs(60));
    }
    let rows = fs.compose(transcript(3), vec![], 12, 3);
    let plain: Vec<String> = rows.iter().map(|r| crate::ansi::strip_ansi(r)).collect();
    assert_eq!(plain, vec![" flash numbe", " flash numbe", " flash numbe"]);
    let all: Vec<&str> = fs.flashes().collect();
    assert_eq!(all.len(), 5);
    let rows = fs.compose(transcript(3), vec![], 60, 3);
    assert!(crate::ansi::strip_ansi(&rows[0]).contains("number 2"), "{rows:?}");
    assert!(crate::ansi::strip_ansi(&rows[2]).contains("number 4"));
}

#[test]
fn a_match_in_view_still_stops_following_the_end() {
    let mut fs = Fullscreen::new();
    let rows = fs.compose(transcript(100), vec!["dock".into()], 40, 11);
    assert!(!rows.iter().any(|r| r.contains("Jump to latest")));
    fs.toggle_search();
    // The last line is in view: no scrolling, but new lines no longer move the view.
    for c in ["9", "9"] {
        fs.search_key(SearchKey::Text(c.into()));
    }
    let rows = fs.compose(transcript(100), vec!["dock".into()], 40, 11);
    assert!(rows.iter().any(|r| r.contains("Jump to latest")), "{rows:?}");
    let before: Vec<String> = rows.iter().map(|r| crate::ansi::strip_ansi(r)).collect();
    let after: Vec<String> = fs
        .compose(transcript(120), vec!["dock".into()], 40, 11)
        .iter()
        .map(|r| crate::ansi::strip_ansi(r))
        .collect();
    assert_eq!(before[6], after[6], "pinned: more lines did not scroll the view");
}

#[test]
fn losing_focus_mid_drag_drops_that_selection_only() {
    let mut fs = Fullscreen::new();
    fs.compose(transcript(3), vec!["dock".into()], 20, 5);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 0, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 4, 1));
    fs.end_drag();
    assert_eq!(fs.selected_text(), None);
    assert_eq!(fs.handle_mouse(&mouse(MouseKind::Release(0), 4, 1)), MouseAction::None);
    // A finished selection survives it.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 0, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 3, 0));
    fs.handle_mouse(&mouse(MouseKind::Release(0), 3, 0));
    fs.end_drag();
    assert_eq!(fs.selected_text().as_deref(), Some("line"));
}

#[test]
fn a_query_runs_on_across_lines_and_marks_each_part() {
    let mut fs = Fullscreen::new();
    fs.set_scrollbar(ScrollbarMode::Hidden, Style::new(), Style::new());
    fs.compose(transcript(4), vec!["dock".into()], 100, 8);
    fs.toggle_search();
    fs.search_key(SearchKey::Text("0   LINE".into()));
    let rows = fs.compose(transcript(4), vec!["dock".into()], 100, 8);
    assert_eq!(fs.search_position(), Some((1, 1)));
    // The current match is drawn bold and inverse on both lines.
    assert!(rows[0].ends_with("\x1b[1;7m0\x1b[0m"), "{:?}", rows[0]);
    assert!(rows[1].starts_with("\x1b[1;7mline"), "{:?}", rows[1]);
    assert!(!rows[2].contains("\x1b[1;7m"));
}

#[test]
fn the_selection_ends_under_the_pointer_when_let_go_as_output_streams_in() {
    let mut fs = Fullscreen::new();
    fs.set_scrollbar(ScrollbarMode::Hidden, Style::new(), Style::new());
    fs.compose(transcript(10), vec!["dock".into()], 20, 5);
    // Following the end: lines 6..=9 show.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 0, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 3, 1));
    // Two more lines arrive; the pointer has not moved, the text under it has.
    fs.compose(transcript(12), vec!["dock".into()], 20, 5);
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 3, 1)),
        MouseAction::Copy("line 6\nline 7\nline 8\nline".into())
    );
}

#[test]
fn a_click_on_a_link_opens_it_and_a_drag_over_it_selects() {
    let mut fs = Fullscreen::new();
    let frame = || {
        let mut f = Frame::new();
        f.extend_lines(["see \x1b]8;;https://pi.dev/docs\x1b\\the docs\x1b]8;;\x1b\\ now".to_string()]);
        f.sealed()
    };
    fs.compose(frame(), vec!["dock".into()], 40, 3);
    fs.handle_mouse(&mouse(MouseKind::Press(0), 6, 0));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 6, 0)),
        MouseAction::OpenUrl("https://pi.dev/docs".into())
    );
    // Off the link: a plain click.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 14, 0));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 14, 0)),
        MouseAction::Click(0)
    );
    // Dragging from the link selects text instead.
    fs.handle_mouse(&mouse(MouseKind::Press(0), 4, 0));
    fs.handle_mouse(&mouse(MouseKind::Drag(0), 6, 0));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Release(0), 6, 0)),
        MouseAction::Copy("the".into())
    );
    assert_eq!(
        mouse::link_at("\x1b]8;id=1;http://a\x07ab\x1b]8;;\x07c", 1).as_deref(),
        Some("http://a")
    );
    assert_eq!(mouse::link_at("\x1b]8;id=1;http://a\x07ab\x1b]8;;\x07c", 2), None);
}

#[test]
fn the_search_button_under_the_pointer_is_underlined() {
    let mut fs = Fullscreen::new();
    fs.compose(transcript(30), vec!["dock".into()], 100, 12);
    fs.toggle_search();
    let rows = fs.compose(transcript(30), vec!["dock".into()], 100, 12);
    let bottom = crate::ansi::strip_ansi(&rows[3]);
    let col = bottom.chars().position(|c| c == '↓').expect("next button");
    assert!(!rows[3].contains("\x1b[4m"));
    assert_eq!(
        fs.handle_mouse(&mouse(MouseKind::Move, col + 1, 3)),
        MouseAction::Redraw
    );
    let rows = fs.compose(transcript(30), vec!["dock".into()], 100, 12);
    assert!(rows[3].contains("\x1b[4m↓ Enter\x1b[24m"), "{:?}", rows[3]);
    // Moving off it: plain again.
    assert_eq!(fs.handle_mouse(&mouse(MouseKind::Move, 2, 8)), MouseAction::Redraw);
    let rows = fs.compose(transcript(30), vec!["dock".into()], 100, 12);
    assert!(!rows[3].contains("\x1b[4m"));
}
