//! `/tree` beyond the selector itself: saving label edits, the "summarize the branch?"
//! question after an entry is chosen (no summary, summary, summary with custom
//! instructions), and the navigation, which Esc can stop while a summary is being written.

use pi_tui::components::SelectItem;
use tokio_util::sync::CancellationToken;

use super::dialogs::Dialog;
use super::effect::{blocking, notice, spawn, then, Ctx, Effect, OnResult, Overlay, Picker};
use super::keys::key_hint;
use super::tree::{tree_rows, TreeFilter, TreeSelector};
use pi_coding_agent::session::tree_ops::{NavigateOptions, NavigateOutcome};

const NO_SUMMARY: &str = "No summary";
const SUMMARIZE: &str = "Summarize";
const CUSTOM: &str = "Summarize with custom prompt";

fn show(view: impl pi_tui::Component + 'static, picker: Picker) -> Vec<Effect> {
    vec![Effect::Open(Overlay {
        view: Box::new(view),
        picker,
    })]
}

/// Open the tree, the cursor on `select` (else on the current leaf).
pub fn open(cx: &Ctx<'_>, select: Option<&str>) -> Vec<Effect> {
    let rows = cx.session.with_store(|s| tree_rows(s));
    if rows.is_empty() {
        return vec![Effect::StatusLine("No entries in session".into())];
    }
    let filter = cx
        .read_settings(|s| TreeFilter::from_setting(s.tree_filter_mode()))
        .unwrap_or(TreeFilter::Default);
    let rows_max = (cx.ui.rows / 2).max(5);
    let mut view = TreeSelector::new(rows, filter, rows_max, cx.theme.clone());
    if let Some(id) = select {
        view.select(id);
    }
    show(view, Picker::Tree)
}

/// A label was edited in the selector: record it in the session (a line appended to the
/// session file, on the blocking pool).
pub fn label_changed(cx: &Ctx<'_>, id: String, label: Option<String>) -> Vec<Effect> {
    let session = cx.session.clone();
    vec![blocking(move || {
        let result = session.with_store(|s| s.append_label(&id, label.as_deref()));
        then(move |_| match result {
            Ok(_) => Vec::new(),
            Err(e) => vec![notice(format!("Could not save the label: {e}"), "error")],
        })
    })]
}

/// Ctrl+X in the tree: the entry's text to the clipboard (the tree stays open).
pub fn copy_entry(text: Option<String>) -> Vec<Effect> {
    let Some(text) = text else {
        return vec![notice("Selected entry has no text to copy", "error")];
    };
    vec![super::effect::copy_text(text, "Copied selected message to clipboard")]
}

/// An entry was chosen in the tree.
pub fn chosen(cx: &Ctx<'_>, target: String) -> Vec<Effect> {
    if cx.ui.busy || cx.ui.task_running {
        return vec![notice(
            "Wait for the current run to finish before switching branches",
            "warning",
        )];
    }
    let leaf = cx.session.with_store(|s| s.get_leaf_id().map(str::to_string));
    if leaf.as_deref() == Some(target.as_str()) {
        return vec![Effect::StatusLine("Already at this point".into())];
    }
    let skip = cx.read_settings(|s| s.branch_summary().skip_prompt).unwrap_or(false);
    if skip {
        navigate(cx, target, false, None)
    } else {
        ask_summary(cx, target)
    }
}

fn ask_summary(cx: &Ctx<'_>, target: String) -> Vec<Effect> {
    let items = [NO_SUMMARY, SUMMARIZE, CUSTOM]
        .iter()
        .map(|s| SelectItem::new(*s))
        .collect();
    let dialog = Dialog::selector("Summarize branch?", items, cx.theme.clone());
    show(dialog, Picker::TreeSummary(target))
}

/// The answer to "Summarize branch?".
pub fn summary_chosen(cx: &Ctx<'_>, target: String, choice: &str) -> Vec<Effect> {
    match choice {
        CUSTOM => {
            let dialog = Dialog::prompt(
                "Custom summarization instructions",
                "What should the summary focus on?",
                "",
                cx.theme.clone(),
            );
            // A callback dialog, as registered code opens its own: entered text navigates,
            // Esc steps back to the question.
            let on_result: OnResult = Box::new(move |cx, text| match text {
                Some(text) => custom_entered(cx, target, &text),
                None => ask_summary(cx, target),
            });
            show(
                dialog,
                Picker::Blocking {
                    kind: "question",
                    title: "Custom summarization instructions".into(),
                    on_result,
                },
            )
        }
        SUMMARIZE => navigate(cx, target, true, None),
        _ => navigate(cx, target, false, None),
    }
}

/// The custom instructions were entered.
fn custom_entered(cx: &Ctx<'_>, target: String, text: &str) -> Vec<Effect> {
    let text = text.trim();
    navigate(cx, target, true, (!text.is_empty()).then(|| text.to_string()))
}

/// A tree dialog was cancelled: step back one question.
pub fn cancelled(cx: &Ctx<'_>, picker: Picker) -> Vec<Effect> {
    match picker {
        Picker::TreeSummary(target) => open(cx, Some(&target)),
        _ => Vec::new(),
    }
}

fn navigate(cx: &Ctx<'_>, target: String, summarize: bool, custom_instructions: Option<String>) -> Vec<Effect> {
    let cancel = CancellationToken::new();
    let mut out = Vec::new();
    if summarize {
        let key = key_hint(cx.kb, "app.interrupt");
        out.push(Effect::TaskStarted {
            status: format!("Summarizing branch... ({key} to cancel)"),
            cancel: cancel.clone(),
        });
    }
    let session = cx.session.clone();
    out.push(spawn(async move {
        let options = NavigateOptions {
            summarize,
            custom_instructions,
            ..Default::default()
        };
        let result = session
            .navigate_tree(&target, options, cancel)
            .await
            .map_err(|e| e.to_string());
        then(move |cx| done(cx, target, result))
    }));
    out
}

/// The navigation finished (or was stopped).
fn done(cx: &Ctx<'_>, target: String, result: Result<NavigateOutcome, String>) -> Vec<Effect> {
    let mut out = match result {
        Ok(outcome) if outcome.cancelled => {
            let mut v = vec![Effect::StatusLine("Branch summarization cancelled".into())];
            v.extend(open(cx, Some(&target)));
            v
        }
        Ok(outcome) => vec![Effect::Replaced {
            notice: Some("Navigated to selected point".into()),
            editor_text: outcome.editor_text.filter(|_| cx.ui.editor_empty),
        }],
        Err(e) => vec![notice(e, "error")],
    };
    out.push(Effect::TaskFinished);
    out
}
