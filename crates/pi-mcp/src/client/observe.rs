//! A transport wrapper that sees every message from the server first, in order: progress
//! notifications are handed to waiting calls before the answer that follows them is read, and the
//! end of the stream marks the connection closed.

// The protocol revisions pi speaks still have roots and logging, which rmcp marks deprecated.
#![allow(deprecated)]

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use serde_json::Value;
use tokio::sync::broadcast;

use super::handler::Progress;

pub(crate) struct Observed<T> {
    inner: T,
    progress: broadcast::Sender<Progress>,
    closed: Arc<AtomicBool>,
}

impl<T> Observed<T> {
    pub(crate) fn new(inner: T, progress: broadcast::Sender<Progress>, closed: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            progress,
            closed,
        }
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        match &message {
            None => self.closed.store(true, Ordering::SeqCst),
            Some(JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ServerNotification::ProgressNotification(note),
                ..
            })) => {
                let params = &note.params;
                // No receiver means no call is waiting for it.
                let _ = self.progress.send(Progress {
                    token: serde_json::to_value(&params.progress_token).unwrap_or(Value::Null),
                    progress: params.progress,
                    total: params.total,
                    message: params.message.clone(),
                });
            }
            Some(_) => {}
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
