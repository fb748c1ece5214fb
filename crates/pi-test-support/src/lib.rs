//! pi-test-support: mock LLM servers speaking each wire format, for tests and benchmarks; the
//! test data of the repository, the reference pi, and the tools tests need ([`require`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use pi_test_support::{AgentDir, MockServer, Script, Turn};
//! use serde_json::json;
//!
//! let server = MockServer::start(Script::sequential(vec![
//!     Turn::tool_call("read", json!({"path": "hello.txt"})),
//!     Turn::text("done"),
//! ]))
//! .await?;
//! let agent_dir = AgentDir::new(&server)?; // models.json with mock-openai, mock-anthropic, ...
//! // run pi with agent_dir.env(), then:
//! let requests = server.requests();
//! # Ok(()) }
//! ```
//!
//! The server speaks OpenAI Chat Completions, OpenAI Responses (also over a WebSocket, as the
//! Codex backend does), Anthropic Messages and Google Generative AI (streaming only). Ids are derived from the turn index `t` and tool call index
//! `i`: `chatcmpl-mock{t}`, `msg_mock{t}`, `resp_mock{t}`, `rs_mock{t}`, `mockresp{t}` (Google),
//! `call_mock_{t}_{i}`, `toolu_mock_{t}_{i}`, `fc_mock_{t}_{i}`, thinking signature
//! `mocksig{t}`. Token usage is estimated deterministically (see `plan`): input = request body
//! bytes / 4, output = number of streamed content pieces.

mod agent_dir;
mod conversation;
mod error;
pub mod fuzz;
mod http;
pub mod oauth;
mod plan;
pub mod pyjson;
mod reference;
mod request_head;
pub mod require;
mod script;
mod server;
mod task_apis;
mod websocket;
mod wire;

pub use agent_dir::{models_json, write_models_json, AgentDir, ALL_APIS, GOLDEN_APIS, PROVIDERS};
pub use conversation::Api;
pub use error::MockError;
pub use http::unzstd;
pub use reference::{
    find_reference, golden_073, golden_16, reference_pi, testdata, ReferencePi, REFERENCE_PACKAGE, REFERENCE_VERSION,
};
pub use script::{Fault, FaultKind, Mode, Rule, Script, ToolCallSpec, Turn, UsageSpec};
pub use server::{MockServer, MockServerBuilder, RecordedRequest};
pub use task_apis::MOCK_PNG_BASE64;
