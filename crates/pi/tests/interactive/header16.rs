//! The startup header as pi 1.6 draws it: the half-block logo cell by cell in the brand
//! colours (coral, blue, yellow; the nearest 256-colour entries without 24-bit colour), and
//! the full key list beside the logo while tool output is expanded.

use vt100::Color;

use super::pty::Pty;
use super::{quit, setup, CTRL_D};

/// The foreground and background of the logo's eight cells (rows 1 and 2, columns 1 to 4),
/// with the text of each.
fn logo_cells(pty: &Pty) -> Vec<(String, Color, Color)> {
    let rows = pty.rows();
    let mut cells = Vec::new();
    for row in 1..=2u16 {
        let text: Vec<char> = rows[row as usize].chars().collect();
        for col in 1..=4u16 {
            let fg = pty.fg_at(row, col).expect("cell");
            let bg = pty.bg_at(row, col).expect("cell");
            cells.push((text[col as usize].to_string(), fg, bg));
        }
    }
    cells
}

fn expected(coral: Color, blue: Color, yellow: Color) -> Vec<(String, Color, Color)> {
    let d = Color::Default;
    [
        ("▀", coral, blue),
        ("▀", coral, d),
        ("█", coral, d),
        (" ", d, d),
        ("█", blue, d),
        ("▀", blue, d),
        (" ", d, d),
        ("█", yellow, d),
    ]
    .into_iter()
    .map(|(t, f, b)| (t.to_string(), f, b))
    .collect()
}

#[test]
fn the_logo_cells_take_pi_1_6_brand_colours_in_truecolor() {
    let s = setup(pi_test_support::Script::sequential(vec![]));
    let mut pty = s.pi(30, 100);
    assert_eq!(
        logo_cells(&pty),
        expected(
            Color::Rgb(228, 138, 122),
            Color::Rgb(79, 142, 179),
            Color::Rgb(234, 182, 93)
        )
    );
    quit(&mut pty);
}

#[test]
fn without_truecolor_the_logo_takes_the_nearest_palette_entries() {
    let s = setup(pi_test_support::Script::sequential(vec![]));
    let mut pty = Pty::spawn_env(&[], s.cwd.path(), s.agent.path(), 30, 100, &[("COLORTERM", "")]);
    pty.wait_text("mock-model");
    // pi 1.6's `rgbToAnsi256` of (228,138,122), (79,142,179) and (234,182,93).
    assert_eq!(
        logo_cells(&pty),
        expected(Color::Idx(174), Color::Idx(67), Color::Idx(179))
    );
    pty.send(CTRL_D);
    let _ = pty.wait_exit(std::time::Duration::from_secs(10));
}

#[test]
fn the_full_key_list_starts_beside_the_logo() {
    let s = setup(pi_test_support::Script::sequential(vec![]));
    let mut pty = s.pi(40, 100);
    pty.send("\x0f"); // ctrl+o: the header with every key
    pty.wait_text("ctrl+c twice to exit");
    let rows = pty.rows();
    assert!(rows[1].starts_with(" ▀▀█  v"), "{rows:#?}");
    assert!(rows[2].starts_with(" █▀ █ escape to interrupt"), "{rows:#?}");
    assert!(rows[3].starts_with(" ctrl+c to clear"), "{rows:#?}");
    quit(&mut pty);
}
