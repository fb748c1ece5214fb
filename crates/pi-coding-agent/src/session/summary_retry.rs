//! Summary requests (compaction, branch summary, `/bug`) as the session sends them: the
//! provider's key, the session's retry settings, and the retries as session events (a
//! request that meets a transient provider error tells the session, which reports
//! `summarization_retry_*`).

use std::future::Future;
use std::pin::Pin;

use pi_ai::{Model, StreamFn};

use super::agent_session::{lock, AgentSession};
use super::events::{CompactionReason, SessionEvent};
use crate::compaction::{SummaryModel, SummaryRetry, SummaryRetryEvent, SummaryRetryObserver};

impl AgentSession {
    /// The key for a summary request to `model`'s provider, looked up off the runtime (a
    /// configured key command may take a while).
    pub(crate) async fn summary_api_key(&self, model: &Model) -> Option<String> {
        let registry = std::sync::Arc::clone(self.registry());
        let provider = model.provider.clone();
        tokio::task::spawn_blocking(move || lock(&registry).api_key_for_provider(&provider))
            .await
            .ok()
            .flatten()
    }

    /// A summary request to `model` with `api_key`, retried under the session's `retry`
    /// settings, each retry told to `observer`.
    pub(crate) fn summary_model<'a>(
        &self,
        stream_fn: &'a StreamFn,
        model: &'a Model,
        api_key: Option<String>,
        observer: Option<&'a dyn SummaryRetryObserver>,
    ) -> SummaryModel<'a> {
        SummaryModel {
            stream_fn,
            model,
            api_key,
            headers: Vec::new(),
            retry: SummaryRetry {
                policy: Some(lock(self.settings()).retry()),
                observer,
            },
        }
    }
}

/// Reports one summary call's retries for `session`.
pub(crate) struct SummaryRetryReporter<'a> {
    pub session: &'a AgentSession,
    /// `compaction` or `branchSummary`, as pi 1.6 names the request.
    pub source: &'static str,
    /// Why the compaction runs; `None` for a branch summary.
    pub reason: Option<CompactionReason>,
}

impl SummaryRetryObserver for SummaryRetryReporter<'_> {
    fn notify<'s>(&'s self, event: SummaryRetryEvent) -> Pin<Box<dyn Future<Output = ()> + Send + 's>> {
        Box::pin(async move {
            self.session
                .emit(SessionEvent::SummarizationRetry {
                    event,
                    source: self.source,
                    reason: self.reason,
                })
                .await;
        })
    }
}
