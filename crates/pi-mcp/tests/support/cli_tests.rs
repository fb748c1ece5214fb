//! `pi mcp` tests.
pub async fn cli_list_add_remove_against_real_servers() {}
pub async fn cli_messages_and_exit_codes() {}
