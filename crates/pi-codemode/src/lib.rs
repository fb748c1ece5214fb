//! pi's codemode: a tool whose input is a JavaScript program that calls other tools. The
//! program runs in an embedded QuickJS VM ([`sandbox`]) with no file system, network, process
//! or timer access; its only way out is the [`CodemodeHost`] the product implements, through
//! which every nested call takes the normal tool pipeline.

pub mod declarations;
pub mod description;
pub mod execute;
pub mod models;
pub mod output;
pub mod pool;
pub mod sandbox;
pub mod source;

pub use declarations::{to_identifier, ToolDeclaration};
pub use description::{describe, script_call_line, ListedTool, DEFAULT_INLINE_BUDGET, TOOL_NAME};
pub use execute::{
    execute, CallRecord, CodemodeHost, CodemodeResult, Limits, Namespace, ScriptTool, ToolOutcome, UpdateFn,
};
pub use models::{ModelCall, ModelKind};
pub use output::Block;
pub use source::{parse_source, ScriptOptions, SourceError, SOURCE_GRAMMAR};

/// The session entry type holding one successful script's store writes.
pub const STORE_ENTRY_TYPE: &str = "codemode-store";
