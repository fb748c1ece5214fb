//! RPC mode (`pi --mode rpc`): a JSONL protocol on stdin/stdout through which IDEs, apps and
//! other agents drive pi, wire-compatible with the TypeScript pi 0.73.
//!
//! - [`framing`]: LF-only line reader and the single ordered output writer.
//! - [`protocol`]: commands, responses, and how a line becomes one of them.
//! - [`types`]: the `data` payloads of responses.
//! - [`backend`]: [`RpcBackend`], what the session runtime implements.
//! - [`extension_ui`]: dialogs and UI requests for extensions.
//! - [`server`]: the loop tying them together.
//!
//! Wiring, in `pi --mode rpc`:
//!
//! ```ignore
//! let server = RpcServer::new(tokio::io::stdout());
//! let runtime = Runtime::new(server.output(), server.extension_ui()); // implements RpcBackend
//! server.run(Arc::new(runtime), tokio::io::stdin()).await?;          // returns at stdin EOF
//! ```

pub mod backend;
pub mod command_sources;
pub mod extension_ui;
pub mod framing;
#[cfg(test)]
mod fuzz_tests;

pub mod protocol;
pub mod server;
pub mod session_backend;
pub mod types;

pub use crate::modes::output::{LineOutput, LineWriter};
pub use backend::{BashDeltaFn, RpcBackend, RpcError, RpcResult, ALREADY_PROCESSING};
pub use extension_ui::{DialogOptions, ExtensionUi, NotifyType, UiResponse, WidgetPlacement};
pub use framing::LineReader;
pub use protocol::{
    parse_line, CommandError, Envelope, Incoming, QueueMode, RpcCommand, RpcResponse, StreamingBehavior,
};
pub use server::RpcServer;
pub use server::{Disposition, Preflight};
pub use types::*;
