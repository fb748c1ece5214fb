//! `/bug`'s model-written summary for a session: its current model, credentials and retry
//! settings, over the messages of its context.

use tokio_util::sync::CancellationToken;

use super::agent_session::AgentSession;
use crate::compaction::generate_bug_summary;

impl AgentSession {
    /// The report the current model writes about this session for a bug report, with the
    /// user's description `hint`. `Err` holds what to tell the user (`None`: cancelled).
    pub async fn summarize_for_bug_report(
        &self,
        hint: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<String, Option<String>> {
        let Some(model) = self.model() else {
            return Err(Some("No model selected".into()));
        };
        let api_key = self.summary_api_key(&model).await;
        let stream_fn = self.inner.agent.stream_fn();
        let llm = self.summary_model(&stream_fn, &model, api_key, None);
        let messages = self.with_messages(<[_]>::to_vec);
        let session_id = self.with_store(|s| s.session_id().to_string());
        generate_bug_summary(&messages, hint, &llm, session_id, cancel).await
    }
}
