//! The agent loop against a scripted LLM: event order, tools, queues, hooks, abort, JSON shapes.

mod faux;
mod golden;
mod hooks;
mod runs;
mod tools;
