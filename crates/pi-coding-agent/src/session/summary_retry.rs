//! Summary requests' retries as session events: a compaction or branch summary that meets a
//! transient provider error tells the session, which reports `summarization_retry_*`.

use std::future::Future;
use std::pin::Pin;

use super::agent_session::AgentSession;
use super::events::{CompactionReason, SessionEvent};
use crate::compaction::{SummaryRetryEvent, SummaryRetryObserver};

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
