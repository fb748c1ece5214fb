//! `/bug [description]` and `/llama`, the two 1.6 commands that reach pi's own services.
//! `/bug` asks what went wrong and whether to include the transcript (without it, whether the
//! session's model should write a summary to attach instead), then uploads the report
//! to pi's report service (`pi_coding_agent::bug_upload`; offline it says that needs online mode, and a
//! failed upload offers the archive instead) or exports it as a zip archive in the current
//! folder, and records a `pi.bug-report` entry. `/llama` manages a llama.cpp router once one
//! is signed in; this build has no llama.cpp provider, so it says how pi 1.6 expects it
//! configured.

use std::path::PathBuf;

use pi_tui::components::SelectItem;

use super::dialogs::Dialog;
use super::effect::{blocking, spawn, then, Ctx, Effect, OnResult, Overlay, Picker};
use pi_coding_agent::bug_report::{self, Choices};

const WHAT_IT_HOLDS: &str = "The report is sent to the pi developers only. It carries the pi version, the operating system and terminal, the current model and provider (never API keys), the loaded extensions, settings with secrets removed, and the errors providers reported in this session.";
const TRANSCRIPT_HOLDS: &str = "The transcript holds everything in this session: your messages, the model's answers, and tool calls with their output (file contents and command output included).";
const YES_TRANSCRIPT: &str = "Yes, include the transcript";
const YES_SUMMARY: &str = "Yes, generate a summary";
const UPLOAD: &str = "Upload Report";
const EXPORT: &str = "Export as Zip";
const CANCEL: &str = "Cancel";

fn show(dialog: Dialog, on_result: OnResult) -> Vec<Effect> {
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(on_result),
    })]
}

fn cancelled() -> Vec<Effect> {
    vec![Effect::StatusLine("Bug report cancelled".into())]
}

fn choice(cx: &Ctx<'_>, title: &str, options: &[&str], details: Vec<String>) -> Dialog {
    let items = options.iter().map(|o| SelectItem::new(*o)).collect();
    Dialog::selector(title, items, cx.theme.clone()).with_details(details, Vec::new())
}

/// `/bug [description]`: the description first (several lines may be typed), prefilled with
/// the argument.
pub fn bug(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let dialog = super::text_dialog::TextDialog::new(
        "Report a bug",
        &format!("{WHAT_IT_HOLDS}\n\nWhat went wrong? (optional)"),
        arg.trim(),
        cx.theme.clone(),
    );
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(|cx, hint| match hint {
            Some(hint) => ask_transcript(cx, hint),
            None => cancelled(),
        })),
    })]
}

fn ask_transcript(cx: &Ctx<'_>, hint: String) -> Vec<Effect> {
    let dialog = choice(
        cx,
        "Include the session transcript?",
        &[YES_TRANSCRIPT, "No"],
        vec![TRANSCRIPT_HOLDS.into()],
    );
    show(
        dialog,
        Box::new(move |cx, answer| {
            let hint = Some(hint.trim().to_string()).filter(|h| !h.is_empty());
            match answer.as_deref() {
                Some(YES_TRANSCRIPT) => ask_delivery(
                    cx,
                    Choices {
                        hint,
                        include_session: true,
                        include_summary: false,
                    },
                ),
                Some(_) => ask_summary(cx, hint),
                None => cancelled(),
            }
        }),
    )
}

/// The session model's name, as the summary questions name it.
fn model_name(cx: &Ctx<'_>) -> String {
    cx.session
        .model()
        .map_or_else(|| "the current model".to_string(), |m| m.name)
}

/// Without the transcript: whether the session's model should write a summary of it instead.
fn ask_summary(cx: &Ctx<'_>, hint: Option<String>) -> Vec<Effect> {
    let provider = cx
        .session
        .model()
        .map_or_else(|| "your provider".to_string(), |m| m.provider);
    let dialog = choice(
        cx,
        &format!("Attach a summary written by {} instead?", model_name(cx)),
        &[YES_SUMMARY, "No"],
        vec![format!(
            "Writing it sends the transcript to {provider}, on your credentials and tokens. Only the summary goes into the report; the transcript itself stays on this machine."
        )],
    );
    show(
        dialog,
        Box::new(move |cx, answer| match answer {
            Some(answer) => ask_delivery(
                cx,
                Choices {
                    hint,
                    include_session: false,
                    include_summary: answer == YES_SUMMARY,
                },
            ),
            None => cancelled(),
        }),
    )
}

/// The summary first when one was asked for (under a bordered loader in the editor's place,
/// which Esc cancels), then the upload or the archive.
fn deliver(cx: &Ctx<'_>, choices: Choices, upload_it: bool) -> Vec<Effect> {
    if !choices.include_summary {
        return if upload_it {
            upload(cx, choices, None)
        } else {
            export(cx, choices, None)
        };
    }
    let session = cx.session.clone();
    let cancel = tokio_util::sync::CancellationToken::new();
    let task_cancel = cancel.clone();
    vec![
        Effect::LoaderStarted {
            message: format!("Writing summary with {}...", model_name(cx)),
            cancel,
        },
        spawn(async move {
            let written = session
                .summarize_for_bug_report(choices.hint.as_deref(), &task_cancel)
                .await;
            then(move |cx| {
                let mut out = vec![Effect::TaskFinished];
                out.extend(match written {
                    Ok(summary) if upload_it => upload(cx, choices, Some(summary)),
                    Ok(summary) => export(cx, choices, Some(summary)),
                    Err(None) => cancelled(),
                    Err(Some(e)) => vec![Effect::Notice(
                        format!("Failed to write bug report summary: {e}"),
                        "error",
                    )],
                });
                out
            })
        }),
    ]
}

fn ask_delivery(cx: &Ctx<'_>, choices: Choices) -> Vec<Effect> {
    let details = vec![
        format!("Description: {}", choices.hint.as_deref().unwrap_or("none")),
        format!(
            "Transcript: {}",
            if choices.include_session {
                "included"
            } else {
                "not included"
            }
        ),
        format!(
            "Summary: {}",
            if choices.include_summary {
                format!("written by {}", model_name(cx))
            } else {
                "none".into()
            }
        ),
        String::new(),
        format!(
            "Upload sends the report to {}. Export writes a zip archive to the current folder instead.",
            pi_coding_agent::bug_upload::gateway_host(&pi_coding_agent::bug_upload::gateway())
        ),
    ];
    let dialog = choice(cx, "Bug report", &[UPLOAD, EXPORT, CANCEL], details);
    show(
        dialog,
        Box::new(move |cx, answer| match answer.as_deref() {
            Some(UPLOAD)
                if pi_coding_agent::config::offline::offline(pi_coding_agent::config::offline::NetworkUse::Checks) =>
            {
                vec![Effect::Notice(
                    "Uploading bug reports requires online mode. Use Export as Zip instead.".into(),
                    "error",
                )]
            }
            Some(UPLOAD) => deliver(cx, choices, true),
            Some(EXPORT) => deliver(cx, choices, false),
            _ => cancelled(),
        }),
    )
}

/// A failed upload: the reason, and the archive offered instead.
fn upload_failed(cx: &Ctx<'_>, reason: String, choices: Choices, summary: Option<String>) -> Vec<Effect> {
    let dialog = choice(
        cx,
        "Upload failed",
        &[EXPORT, CANCEL],
        vec![
            reason,
            String::new(),
            "Export the report as a zip archive instead?".into(),
        ],
    );
    show(
        dialog,
        Box::new(move |cx, answer| match answer.as_deref() {
            Some(EXPORT) => export(cx, choices, summary),
            _ => cancelled(),
        }),
    )
}

/// Build the report, send it to the report service (signed with the Radius token when
/// signed in), and record it in the session.
fn upload(cx: &Ctx<'_>, choices: Choices, summary: Option<String>) -> Vec<Effect> {
    let session = cx.session.clone();
    let Some(settings) = cx.read_settings(|s| (s.global_settings().clone(), s.project_settings().clone())) else {
        return Vec::new();
    };
    // Under 1.6's bordered loader, which Esc cancels.
    let cancel = tokio_util::sync::CancellationToken::new();
    let task_cancel = cancel.clone();
    let mut out = vec![Effect::LoaderStarted {
        message: "Uploading bug report...".into(),
        cancel,
    }];
    out.push(blocking(move || {
        let bundle = match build_bundle(&session, &choices, &settings, summary.clone()) {
            Ok(b) => b,
            Err(e) => {
                return then(move |_| {
                    vec![
                        Effect::TaskFinished,
                        Effect::Notice(format!("Failed to build bug report: {e}"), "error"),
                    ]
                })
            }
        };
        let token = pi_coding_agent::session::agent_session::lock(session.services().registry())
            .api_key_for_provider("radius")
            .filter(|t| !t.is_empty());
        let gateway = pi_coding_agent::bug_upload::gateway();
        let sent = tokio::runtime::Handle::current().block_on(async {
            tokio::select! {
                sent = pi_coding_agent::bug_upload::upload(&bundle, &gateway, token.as_deref()) => Some(sent),
                () = task_cancel.cancelled() => None,
            }
        });
        let Some(sent) = sent else {
            return then(|_| {
                let mut out = vec![Effect::TaskFinished];
                out.extend(cancelled());
                out
            });
        };
        match sent {
            Ok(id) => {
                forget_reported_crashes(&session, &bundle);
                let data = bug_report::entry_data(&bundle, &choices, None);
                let recorded = session.with_store(|s| s.append_custom(bug_report::ENTRY_TYPE, Some(data)));
                then(move |_| {
                    let mut out = vec![
                        Effect::TaskFinished,
                        Effect::StatusLine(format!("Bug report uploaded. Report ID: {id}")),
                    ];
                    if let Err(e) = recorded {
                        out.push(Effect::Notice(
                            format!("The report was not recorded in the session: {e}"),
                            "warning",
                        ));
                    }
                    out
                })
            }
            Err(reason) => then(move |cx| {
                let mut out = vec![Effect::TaskFinished];
                out.extend(upload_failed(cx, reason, choices, summary));
                out
            }),
        }
    }));
    out
}

/// Global and project settings, as the report carries them (secrets removed later).
type SettingsPair = (
    serde_json::Map<String, serde_json::Value>,
    serde_json::Map<String, serde_json::Value>,
);

/// The report of this session.
fn build_bundle(
    session: &pi_coding_agent::session::AgentSession,
    choices: &Choices,
    (global, project): &SettingsPair,
    summary: Option<String>,
) -> Result<bug_report::Bundle, bug_report::BugReportError> {
    let model = session.model();
    let thinking = session.thinking_level();
    let message_count = session.with_messages(|m| m.len());
    let cwd = session.cwd().to_path_buf();
    let extensions: Vec<String> = session
        .services()
        .extensions()
        .runner()
        .map(|r| r.loaded().into_iter().map(|e| e.path).collect())
        .unwrap_or_default();
    let crashes = pi_coding_agent::crash_log::for_report(&crash_log_path(session));
    session
        .with_store(|store| {
            let session_id = store.session_id().to_string();
            let facts = bug_report::Facts {
                session_id: &session_id,
                cwd: &cwd,
                message_count,
                model: model.as_ref(),
                thinking_level: thinking.as_str(),
                global_settings: global,
                project_settings: project,
                extensions: &extensions,
                crashes: &crashes,
            };
            bug_report::build(store, choices, &facts)
        })
        .map(|bundle| match summary {
            Some(summary) => bundle.with_summary(summary),
            None => bundle,
        })
}

/// `crashes.json` of the session's agent folder.
fn crash_log_path(session: &pi_coding_agent::session::AgentSession) -> PathBuf {
    pi_coding_agent::crash_log::path(&super::commands::paths_for(session).agent_dir)
}

/// A delivered report carried the recorded crashes: they are not attached again.
fn forget_reported_crashes(session: &pi_coding_agent::session::AgentSession, bundle: &bug_report::Bundle) {
    if bundle.diagnostics["crashes"].as_array().is_some_and(|c| !c.is_empty()) {
        pi_coding_agent::crash_log::clear(&crash_log_path(session));
    }
}

/// Build the report from the session, write the archive, and record it in the session.
fn export(cx: &Ctx<'_>, choices: Choices, summary: Option<String>) -> Vec<Effect> {
    let session = cx.session.clone();
    let dir: PathBuf = std::env::current_dir().unwrap_or_else(|_| session.cwd().to_path_buf());
    let Some(settings) = cx.read_settings(|s| (s.global_settings().clone(), s.project_settings().clone())) else {
        return Vec::new();
    };
    vec![blocking(move || {
        let result = build_bundle(&session, &choices, &settings, summary).and_then(|bundle| {
            let path = dir.join(bug_report::archive_name(&bundle.id));
            bug_report::write_archive(&bundle, &path).map(|()| (bundle, path))
        });
        match result {
            Ok((bundle, path)) => {
                forget_reported_crashes(&session, &bundle);
                let data = bug_report::entry_data(&bundle, &choices, Some(&path));
                let recorded = session.with_store(|s| s.append_custom(bug_report::ENTRY_TYPE, Some(data)));
                then(move |_| {
                    let mut out = vec![Effect::StatusLine(format!(
                        "Bug report exported to: {}\nReport ID: {}",
                        path.display(),
                        bundle.id
                    ))];
                    if let Err(e) = recorded {
                        out.push(Effect::Notice(
                            format!("The report was not recorded in the session: {e}"),
                            "warning",
                        ));
                    }
                    out
                })
            }
            Err(e) => then(move |_| vec![Effect::Notice(format!("Failed to write bug report: {e}"), "error")]),
        }
    })]
}

/// `/llama`: pi 1.6's llama.cpp router manager needs a configured `llama.cpp` provider
/// (models.json is read again off the UI thread to know).
pub fn llama(cx: &Ctx<'_>, _: &str) -> Vec<Effect> {
    let session = cx.session.clone();
    vec![blocking(move || {
        // A server saved by `/login llama.cpp` (or `LLAMA_BASE_URL`) configures it too.
        let configured = session.available_models().iter().any(|m| m.provider == "llama.cpp")
            || session
                .registry()
                .lock()
                .is_ok_and(|r| r.auth().get("llama.cpp").is_some())
            || std::env::var("LLAMA_BASE_URL").is_ok_and(|v| !v.trim().is_empty());
        let text = if configured {
            "The llama.cpp model manager is not available in this build; load and unload models with the router's own tools."
        } else {
            "Configure llama.cpp with /login llama.cpp"
        };
        then(move |_| vec![Effect::Notice(text.into(), "warning")])
    })]
}
