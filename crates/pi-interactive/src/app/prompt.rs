//! What the editor's text becomes: a slash command (its effects applied), a `!` command
//! (run with its output streamed into a block), or a prompt (sent, steered or queued).

use pi_tui::Tui;
use tokio_util::sync::CancellationToken;

use super::super::events::{Msg, UiSender};
use super::super::keys::key_hint;
use super::super::tool_block::ToolBlock;
use super::App;
use pi_coding_agent::modes::PromptQueue;
use pi_coding_agent::session::StreamingBehavior;

/// The callback a `!` command's output goes through: each chunk is handed over as it is,
/// to be appended to the block (never the whole output so far).
pub(in super::super) fn bash_chunk_sink(tx: UiSender, id: String) -> impl FnMut(&str) + Send {
    move |chunk: &str| tx.append_output(&id, chunk)
}

impl App {
    /// The prompts given on the command line, sent one after the other.
    pub fn start_initial(&mut self, initial: PromptQueue) {
        if initial.first.is_none() && initial.rest.is_empty() {
            return;
        }
        self.busy = true;
        let session = self.session();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut error = None;
            if let Some((text, images)) = initial.first {
                if let Err(e) = session.prompt(&text, images).await {
                    error = Some(e.to_string());
                }
            }
            for text in initial.rest {
                if let Err(e) = session.prompt(&text, Vec::new()).await {
                    error = Some(e.to_string());
                }
            }
            tx.send(Msg::PromptDone(error)).await;
        });
    }

    /// Esc during a run: stop it and put every queued message back into the editor.
    pub(super) fn abort(&mut self) {
        let session = self.session();
        session.abort();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let q = session.clear_queue().await;
            let texts: Vec<String> = q.steering.into_iter().chain(q.follow_up).collect();
            tx.send(Msg::Restore { texts, announce: false }).await;
        });
    }

    pub fn restore(&mut self, texts: Vec<String>, announce: bool) {
        if announce {
            let n = texts.len();
            if n == 0 {
                self.status_line("No queued messages to restore");
            } else {
                let plural = if n > 1 { "s" } else { "" };
                self.status_line(format!("Restored {n} queued message{plural} to editor"));
            }
        }
        if texts.is_empty() {
            return;
        }
        let current = self.view.editor.text();
        let mut all = texts.join("\n\n");
        if !current.trim().is_empty() {
            all.push_str("\n\n");
            all.push_str(&current);
        }
        self.view.editor.set_text(&all);
        self.view.pending.set(&[], &[]);
    }

    /// Enter (or Alt+Enter with `follow_up`) on the editor's text.
    pub fn submit(&mut self, text: String, follow_up: bool, tui: &mut Tui) {
        // Debug builds only: the crash tests make the UI loop panic on a prompt they name.
        #[cfg(debug_assertions)]
        if std::env::var("PI_TEST_PANIC_ON").is_ok_and(|v| v == text) {
            panic!("test panic on {text:?}");
        }
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        self.view.editor.add_to_history(trimmed);
        if self.task_cancel.is_some() {
            let key = key_hint(&self.kb, "app.interrupt");
            self.notice(
                format!("Wait for the current task to finish (or press {key} to stop it)"),
                "warning",
            );
            self.view.editor.set_text(trimmed);
            return;
        }
        if trimmed.starts_with('/') && !super::super::commands::is_builtin_with_stray_argument(trimmed) {
            let effects = self.commands.run(&self.ctx(), trimmed);
            if let Some(effects) = effects {
                self.apply(effects, tui);
                return;
            }
        }
        if let Some(cmd) = trimmed.strip_prefix('!') {
            let (exclude, cmd) = match cmd.strip_prefix('!') {
                Some(c) => (true, c.trim()),
                None => (false, cmd.trim()),
            };
            if !cmd.is_empty() {
                self.run_bash(cmd.to_string(), exclude);
                return;
            }
        }
        let session = self.session();
        let tx = self.tx.clone();
        let text = trimmed.to_string();
        if self.busy || self.running {
            let behavior = if follow_up {
                StreamingBehavior::FollowUp
            } else {
                StreamingBehavior::Steer
            };
            let task = super::super::effect::spawn(async move {
                match session.prompt_with(&text, Vec::new(), Some(behavior)).await {
                    Ok(_) => Box::new(|_: &super::super::effect::Ctx<'_>| Vec::new()),
                    Err(e) => super::super::effect::then_notice(e.to_string(), "error"),
                }
            });
            self.apply(vec![task], tui);
            return;
        }
        self.busy = true;
        tokio::spawn(async move {
            let r = session.prompt(&text, Vec::new()).await;
            tx.send(Msg::PromptDone(r.err().map(|e| e.to_string()))).await;
        });
    }

    fn run_bash(&mut self, command: String, exclude: bool) {
        if self.bash_cancel.is_some() {
            self.notice("A command is already running. Press Esc to cancel it.", "warning");
            return;
        }
        self.bash_counter += 1;
        let id = format!("user-bash-{}", self.bash_counter);
        let block = ToolBlock::user_bash(
            &id,
            serde_json::json!({"command": command.clone(), "excludeFromContext": exclude}),
            self.theme.clone(),
            self.tools_expanded,
        );
        if self.busy || self.running {
            // While the agent works the command shows above the editor, as in pi 1.6; it
            // moves into the chat once the run settles.
            self.view.pending.push_bash(block);
        } else {
            self.tools.insert(id.clone(), self.view.chat.len());
            self.view.chat.push(Box::new(block));
        }
        let cancel = CancellationToken::new();
        self.bash_cancel = Some(cancel.clone());
        let session = self.session();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            let mut on_chunk = bash_chunk_sink(tx.clone(), id.clone());
            let r = session
                .execute_bash(&command, exclude, cancel, Some(&mut on_chunk))
                .await;
            let msg = match r {
                Ok(r) => Msg::BashDone {
                    id,
                    output: r.output,
                    exit_code: r.exit_code,
                    cancelled: r.cancelled,
                    truncated_path: r.full_output_path,
                },
                Err(e) => Msg::BashDone {
                    id,
                    output: e.to_string(),
                    exit_code: None,
                    cancelled: false,
                    truncated_path: None,
                },
            };
            tx.send(msg).await;
        });
    }

    /// Move the `!` commands shown above the editor into the chat (the run settled).
    pub fn flush_pending_bash(&mut self) {
        for block in self.view.pending.take_bash() {
            self.tools.insert(block.id().to_string(), self.view.chat.len());
            self.view.chat.push(Box::new(block));
        }
    }

    pub fn bash_done(
        &mut self,
        id: &str,
        output: String,
        exit_code: Option<i32>,
        cancelled: bool,
        path: Option<String>,
    ) {
        // Chunks still waiting belong before the final output.
        self.apply_live();
        self.bash_cancel = None;
        let theme = self.theme.clone();
        let shown = match self.view.pending.bash_mut(id) {
            Some(b) => Some(b),
            None => self.tool_block(id),
        };
        if let Some(b) = shown {
            let failed = cancelled || exit_code.is_some_and(|c| c != 0);
            b.finish(output, failed);
            b.set_footnote(super::super::tool_block::bash_notes(
                &theme,
                exit_code,
                cancelled,
                path.as_deref(),
            ));
        }
        // The execution is in the context now (unless `!!`): the footer's context use counts it.
        self.refresh_footer();
    }
}
