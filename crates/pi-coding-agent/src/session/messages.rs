//! What the LLM sees of pi's own message roles in the agent's transcript.

use pi_agent::AgentMessage;
use pi_ai::Message;

/// What the LLM sees: its own roles as they are, pi's roles (bash executions, summaries,
/// extension messages) as user messages, as the session format defines.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    pi_session::convert_to_llm(messages)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bash_executions_reach_the_llm_as_user_text() {
        let bash: AgentMessage = serde_json::from_value(json!({
            "role": "bashExecution", "command": "echo hi", "output": "hi\n", "exitCode": 0,
            "cancelled": false, "truncated": false, "timestamp": 5
        }))
        .expect("parse");
        let llm = convert_to_llm(&[bash]);
        assert_eq!(llm.len(), 1);
        assert_eq!(llm[0].role(), "user");
    }
}
