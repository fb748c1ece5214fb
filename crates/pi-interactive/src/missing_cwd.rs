//! The question asked when a session's recorded folder is gone: continue it in the current
//! folder, fork it there, or cancel. In the running UI (`/resume`, `/import`) it is a
//! dialog; at startup (`--session`) it is asked on the normal screen before the UI starts.

use std::path::Path;

use pi_coding_agent::modes::MissingCwdChoice;
use pi_tui::components::{SelectItem, SelectList};

use super::theme::UiTheme;
use super::trust_prompt::{run_on_screen, StartupQuestion};

/// The question's title.
pub fn title(gone: &str) -> String {
    format!("Session cwd does not exist: {gone}")
}

/// The choices, in pi 1.6's order and words, for running in `here`.
pub fn choices(here: &str) -> Vec<SelectItem> {
    vec![
        SelectItem::new("continue").with_label(format!("Continue in {here} (asks again next time)")),
        SelectItem::new("fork").with_label(format!("Fork into {here} (new session ID, original kept)")),
        SelectItem::new("cancel").with_label("Cancel"),
    ]
}

/// What a chosen value means (anything else, Escape included: cancel).
pub fn choice_for(value: Option<&str>) -> MissingCwdChoice {
    match value {
        Some("continue") => MissingCwdChoice::Continue,
        Some("fork") => MissingCwdChoice::Fork,
        _ => MissingCwdChoice::Cancel,
    }
}

/// Ask on the terminal before the UI starts.
pub fn ask(gone: &Path, here: &Path, theme: &UiTheme) -> std::io::Result<MissingCwdChoice> {
    // pi 1.6 draws this one plainer than the trust question: the question in bold text, the
    // keys all dim.
    let question = StartupQuestion {
        head: vec![title(&gone.display().to_string())],
        head_token: "text",
        words_token: "dim",
        list: SelectList::new(choices(&here.display().to_string()), 8, theme.select_list()),
        theme: theme.clone(),
    };
    let value = run_on_screen(question)?;
    Ok(choice_for(value.as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_choices_say_what_they_do_and_escape_cancels() {
        let labels: Vec<String> = choices("/work/proj").into_iter().filter_map(|i| i.label).collect();
        assert_eq!(
            labels,
            [
                "Continue in /work/proj (asks again next time)",
                "Fork into /work/proj (new session ID, original kept)",
                "Cancel"
            ]
        );
        assert_eq!(choice_for(Some("continue")), MissingCwdChoice::Continue);
        assert_eq!(choice_for(Some("fork")), MissingCwdChoice::Fork);
        assert_eq!(choice_for(None), MissingCwdChoice::Cancel);
    }
}
