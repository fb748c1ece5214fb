//! The agent loop against a scripted LLM: event order, tools, queues, hooks, abort, JSON shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap: a panic is a test failure

mod faux;
mod golden;
mod hooks;
mod runs;
mod tools;
