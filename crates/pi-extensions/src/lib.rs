//! Runs pi's TypeScript extensions unchanged, in a Node process of their own.
//!
//! The host is our own JS (built into the binary, written to `<agentDir>/extension-host/` on
//! first use); it loads extensions with jiti and speaks versioned JSON lines with pi over a Unix
//! socket, never over its stdout, which belongs to the extensions. See
//! `docs/extension-protocol.md` for the wire.
//!
//! Plugging in takes four calls: [`discovery::discover`] for the file list,
//! [`ExtensionRunner::start`] (nothing is spawned when the list is empty), then
//! [`ExtensionRunner::dispatch`] for each event and [`ExtensionRunner::call_tool`] for each
//! extension tool call (or [`extension_tools`] for the session's tool registry), with [`ExtensionRunner::push_state`] before events whose handlers read
//! session state. A crashed or hung host turns into [`HostError`]s, never a panic; a runner can
//! [`ExtensionRunner::restart`].

pub mod agent_tool;
pub mod connection;
pub mod discovery;
pub mod emit;
pub mod error;
pub mod handler;
pub mod host_files;
pub mod modules;
pub mod node;
pub mod outcomes;
pub mod protocol;
#[cfg(test)]
mod protocol_fuzz_tests;
pub mod provider_stream;
pub mod runner;

pub use agent_tool::{extension_tools, ExtensionTool};
pub use discovery::{discover, Discovered, DiscoveryInput, SettingsEntry};
pub use emit::Emitted;
pub use error::{HostError, StartError};
pub use handler::{HostHandler, NoHandler, OutputStream};
pub use modules::{Modules, ModulesConfig, ModulesSource};
pub use outcomes::{
    BeforeAgentStartOutcome, ContextOutcome, InputOutcome, SessionBeforeOutcome, ToolCallOutcome, ToolResultPatch,
};
pub use protocol::{
    Dispatched, EntriesDelta, ExtensionError, ExtensionInfo, ExtensionSource, FlagInfo, FlagType, LoadError, Mode,
    ProviderInfo, ProviderOauthInfo, RegisteredMcpServer, StateUpdate, ToolResult, PROTOCOL_VERSION,
};
pub use runner::{
    ExtensionRunner, HostProgram, Registrations, RunnerConfig, StartTimings, Timeouts, ToolCall, TrustNotice,
    TrustOutcome,
};
