//! Black-box tests of the `pi` binary: print and JSON modes against the mock LLM server,
//! compared with the TypeScript pi's golden transcripts; provider faults and retries; command
//! line behaviour; JSON output into a slow pipe; the package subcommands.

// Test helpers unwrap: a failure there is a test failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "cli/harness.rs"]
mod harness;
#[path = "cli/normalise.rs"]
mod normalise;

#[path = "cli/agent_files.rs"]
mod agent_files;
#[path = "cli/auth.rs"]
mod auth;
#[path = "cli/auth_oauth.rs"]
mod auth_oauth;
#[path = "cli/backpressure.rs"]
mod backpressure;
#[path = "cli/cache_warming.rs"]
mod cache_warming;
#[path = "cli/catalogue16.rs"]
mod catalogue16;
#[path = "cli/cloudflare.rs"]
mod cloudflare;
#[path = "cli/codemode.rs"]
mod codemode;
#[path = "cli/codemode_classifiers.rs"]
mod codemode_classifiers;
#[path = "cli/codemode_events.rs"]
mod codemode_events;
#[path = "cli/codemode_grammar.rs"]
mod codemode_grammar;
#[path = "cli/codemode_models.rs"]
mod codemode_models;
#[path = "cli/codex16.rs"]
mod codex16;
#[path = "cli/docs.rs"]
mod docs;
#[path = "cli/export_colours.rs"]
mod export_colours;
#[path = "cli/ext_boundary.rs"]
mod ext_boundary;
#[path = "cli/ext_builtins.rs"]
mod ext_builtins;
#[path = "cli/ext_examples.rs"]
mod ext_examples;
#[path = "cli/ext_oauth.rs"]
mod ext_oauth;
#[path = "cli/ext_prompt_options.rs"]
mod ext_prompt_options;
#[path = "cli/ext_providers.rs"]
mod ext_providers;
#[path = "cli/ext_registry.rs"]
mod ext_registry;
#[path = "cli/ext_replace.rs"]
mod ext_replace;
#[path = "cli/ext_rpc16.rs"]
mod ext_rpc16;
#[path = "cli/extensions.rs"]
mod extensions;
#[path = "cli/faults.rs"]
mod faults;
#[path = "cli/flags.rs"]
mod flags;
#[path = "cli/flags16.rs"]
mod flags16;
#[path = "cli/golden.rs"]
mod golden;
#[path = "cli/mcp.rs"]
mod mcp;
#[path = "cli/mcp_extensions.rs"]
mod mcp_extensions;
#[path = "cli/mcp_oauth.rs"]
mod mcp_oauth;
#[path = "cli/mcp_python.rs"]
mod mcp_python;
#[path = "cli/mcp_session.rs"]
mod mcp_session;
#[path = "cli/packages.rs"]
mod packages;
#[path = "cli/radius_gateway.rs"]
mod radius_gateway;
#[path = "cli/rpc_fuzz.rs"]
mod rpc_fuzz;
#[path = "cli/secrets.rs"]
mod secrets;
#[path = "cli/session16.rs"]
mod session16;
#[path = "cli/summaries16.rs"]
mod summaries16;
#[path = "cli/trust.rs"]
mod trust;
#[path = "cli/trust_escape.rs"]
mod trust_escape;
#[path = "cli/trust_extensions.rs"]
mod trust_extensions;
