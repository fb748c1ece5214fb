//! The `pi mcp` subcommands.
