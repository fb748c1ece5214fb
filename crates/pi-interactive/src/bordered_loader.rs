//! pi 1.6's bordered loader: the spinner and message between two rules with the cancel keys
//! under them, drawn in the editor's place while a task the user waits on runs (`/bug`'s
//! summary). The spinner is the status `Loader` the app already animates; keys other than
//! `tui.select.cancel` are not for the editor meanwhile (the app drops them, as 1.6's
//! focused loader does).

use std::sync::Arc;

use pi_tui::components::Loader;
use pi_tui::{keybindings, truncate_to_width, Component, Frame};

use super::theme::UiTheme;

/// Draw `loader` boxed: rule, blank, spinner and message, blank, cancel hint, blank, rule.
pub fn render(loader: &mut Loader, theme: &Arc<UiTheme>, width: usize, out: &mut Frame) {
    let border = theme.paint("border", &"─".repeat(width));
    out.push_line(border.clone());
    loader.render(width, out);
    out.push_line(String::new());
    let keys = keybindings().keys("tui.select.cancel").join("/");
    let hint = format!(" {}{}", theme.paint("dim", &keys), theme.paint("muted", " cancel"));
    out.push_line(truncate_to_width(&hint, width, "…"));
    out.push_line(String::new());
    out.push_line(border);
}
