//! `/tree` beyond the selector itself: saving label edits, the "summarize the branch?"
//! question after an entry is chosen (no summary, summary, summary with custom
//! instructions), and the navigation, which Esc can stop while a summary is being written.

use pi_tui::components::SelectItem;
use pi_tui::{OverlayOptions, Tui};
use tokio_util::sync::CancellationToken;

use super::app::{App, Picker};
use super::dialogs::Dialog;
use super::events::Msg;
use super::keys::key_hint;
use super::tree::{tree_rows, TreeFilter, TreeSelector};
use crate::session::tree_ops::NavigateOptions;

const NO_SUMMARY: &str = "No summary";
const SUMMARIZE: &str = "Summarize";
const CUSTOM: &str = "Summarize with custom prompt";

/// Open the tree, the cursor on `select` (else on the current leaf).
pub fn open(app: &mut App, tui: &mut Tui, select: Option<&str>) {
    let session = app.session();
    let rows = session.with_store(|s| tree_rows(s));
    if rows.is_empty() {
        app.notice("No entries in session", "warning");
        return;
    }
    let filter = session
        .settings()
        .lock()
        .map(|s| TreeFilter::from_setting(s.tree_filter_mode()))
        .unwrap_or(TreeFilter::Default);
    let rows_max = (tui.size().1 / 2).max(5);
    let mut view = TreeSelector::new(rows, filter, rows_max, app.theme.clone());
    if let Some(id) = select {
        view.select(id);
    }
    let id = tui.show_overlay(Box::new(view), OverlayOptions::default());
    app.picker = Some((id, Picker::Tree));
}

/// A label was edited in the selector: record it in the session.
pub fn label_changed(app: &mut App, id: &str, label: Option<&str>) {
    let result = app.session().with_store(|s| s.append_label(id, label));
    if let Err(e) = result {
        app.notice(format!("Could not save the label: {e}"), "error");
    }
}

/// An entry was chosen in the tree.
pub fn chosen(app: &mut App, tui: &mut Tui, target: String) {
    if app.busy || app.task_cancel.is_some() {
        app.notice(
            "Wait for the current run to finish before switching branches",
            "warning",
        );
        return;
    }
    let session = app.session();
    if session.with_store(|s| s.get_leaf_id().map(str::to_string)).as_deref() == Some(target.as_str()) {
        app.notice("Already at this point", "dim");
        return;
    }
    let skip = session
        .settings()
        .lock()
        .map(|s| s.branch_summary().skip_prompt)
        .unwrap_or(false);
    if skip {
        navigate(app, target, false, None);
    } else {
        ask_summary(app, tui, target);
    }
}

fn ask_summary(app: &mut App, tui: &mut Tui, target: String) {
    let items = [NO_SUMMARY, SUMMARIZE, CUSTOM]
        .iter()
        .map(|s| SelectItem::new(*s))
        .collect();
    let dialog = Dialog::choice("Summarize branch?", items, false, app.theme.clone());
    let id = tui.show_overlay(Box::new(dialog), OverlayOptions::default());
    app.picker = Some((id, Picker::TreeSummary(target)));
}

/// The answer to "Summarize branch?".
pub fn summary_chosen(app: &mut App, tui: &mut Tui, target: String, choice: &str) {
    match choice {
        CUSTOM => {
            let dialog = Dialog::prompt(
                "Custom summarization instructions",
                "What should the summary focus on?",
                "",
                app.theme.clone(),
            );
            let id = tui.show_overlay(Box::new(dialog), OverlayOptions::default());
            app.picker = Some((id, Picker::TreeCustom(target)));
        }
        SUMMARIZE => navigate(app, target, true, None),
        _ => navigate(app, target, false, None),
    }
}

/// The custom instructions were entered.
pub fn custom_entered(app: &mut App, target: String, text: &str) {
    let text = text.trim();
    navigate(app, target, true, (!text.is_empty()).then(|| text.to_string()));
}

/// A tree dialog was cancelled: step back one question.
pub fn cancelled(app: &mut App, tui: &mut Tui, picker: Picker) {
    match picker {
        Picker::TreeSummary(target) => open(app, tui, Some(&target)),
        Picker::TreeCustom(target) => ask_summary(app, tui, target),
        _ => {}
    }
}

fn navigate(app: &mut App, target: String, summarize: bool, custom_instructions: Option<String>) {
    let cancel = CancellationToken::new();
    if summarize {
        app.task_cancel = Some(cancel.clone());
        let key = key_hint(&app.kb, "app.interrupt");
        app.set_status(Some(format!("Summarizing branch... ({key} to cancel)")));
    }
    let session = app.session();
    let tx = app.tx.clone();
    tokio::spawn(async move {
        let options = NavigateOptions {
            summarize,
            custom_instructions,
            ..Default::default()
        };
        let result = session.navigate_tree(&target, options, cancel).await.map_err(|e| e.0);
        let _ = tx.send(Msg::TreeDone { target, result });
    });
}

/// The navigation finished (or was stopped).
pub fn done(
    app: &mut App,
    tui: &mut Tui,
    target: String,
    result: Result<crate::session::tree_ops::NavigateOutcome, String>,
) {
    match result {
        Ok(outcome) if outcome.cancelled => {
            app.notice("Branch summarization cancelled", "dim");
            open(app, tui, Some(&target));
        }
        Ok(outcome) => {
            let editor_text = outcome.editor_text.filter(|_| app.view.editor.text().trim().is_empty());
            app.replaced(Some("Navigated to selected point".into()), editor_text);
        }
        Err(e) => app.notice(e, "error"),
    }
    app.task_finished();
}
