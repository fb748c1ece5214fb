//! Several [`AgentHooks`] as one, in order: the session's own hooks first, then each
//! extension source. The loop keeps one hooks slot; this is what fills it when more than one
//! party shapes a run.
//!
//! How the answers combine (pi's rules for chained handlers):
//! - `transform_context`: each hook sees the previous one's messages.
//! - `convert_to_llm`: the first hook's (the session's conversion of its own roles).
//! - `get_api_key`: the first hook that names a key.
//! - `request_headers`: all hooks' headers, in order (a later one of a name wins when sent).
//! - `before_tool_call`: rewritten arguments feed the next hook; the first block wins and
//!   ends the chain; a hook error blocks the call.
//! - `after_tool_call`: each hook sees the result as the previous ones left it; a field set
//!   later replaces one set earlier.
//! - `message_end`: each hook sees the message as the previous ones left it.
//! - `prepare_next_turn`: fields set later replace those set earlier.
//! - `declare_changes`: the first hook that declares something.
//! - `should_stop_after_turn`: any hook may end the run.
//! - `continue_after_turn`: any hook may ask for one more request.

use std::sync::Arc;

use async_trait::async_trait;
use pi_ai::Message;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::AgentContext;
use crate::hooks::{AfterToolCall, AgentHooks, BeforeToolCall, HookError, NextTurn, ToolCallContext, TurnContext};
use crate::message::{default_convert_to_llm, AgentMessage};
use crate::tool::ToolOutput;

/// Hooks run in order; see the module docs for how their answers combine.
#[derive(Clone, Default)]
pub struct HookChain {
    hooks: Vec<Arc<dyn AgentHooks>>,
}

impl HookChain {
    pub fn new(hooks: Vec<Arc<dyn AgentHooks>>) -> Self {
        HookChain { hooks }
    }

    /// Add a hook after the others.
    pub fn push(&mut self, hook: Arc<dyn AgentHooks>) {
        self.hooks.push(hook);
    }

    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

fn merge_after(into: &mut AfterToolCall, next: AfterToolCall) {
    if next.content.is_some() {
        into.content = next.content;
    }
    if next.details.is_some() {
        into.details = next.details;
    }
    if next.is_error.is_some() {
        into.is_error = next.is_error;
    }
    if next.terminate.is_some() {
        into.terminate = next.terminate;
    }
}

fn merge_next(into: &mut NextTurn, next: NextTurn) {
    if next.model.is_some() {
        into.model = next.model;
    }
    if next.thinking_level.is_some() {
        into.thinking_level = next.thinking_level;
    }
    if next.system_prompt.is_some() {
        into.system_prompt = next.system_prompt;
    }
    if next.messages.is_some() {
        into.messages = next.messages;
    }
    if next.tools.is_some() {
        into.tools = next.tools;
    }
}

/// The result as the hooks so far have left it, for the next hook to see.
fn apply_after(result: &ToolOutput, is_error: bool, change: &AfterToolCall) -> (ToolOutput, bool) {
    let mut out = result.clone();
    if let Some(content) = &change.content {
        out.content = content.clone();
    }
    if let Some(details) = &change.details {
        out.details = Some(details.clone());
    }
    if let Some(t) = change.terminate {
        out.terminate = t;
    }
    (out, change.is_error.unwrap_or(is_error))
}

#[async_trait]
impl AgentHooks for HookChain {
    async fn transform_context(
        &self,
        messages: &[AgentMessage],
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<AgentMessage>>, HookError> {
        let mut current: Option<Vec<AgentMessage>> = None;
        for hook in &self.hooks {
            let input = current.as_deref().unwrap_or(messages);
            if let Some(next) = hook.transform_context(input, cancel).await? {
                current = Some(next);
            }
        }
        Ok(current)
    }

    async fn convert_to_llm(&self, messages: &[AgentMessage]) -> Result<Vec<Message>, HookError> {
        match self.hooks.first() {
            Some(hook) => hook.convert_to_llm(messages).await,
            None => Ok(default_convert_to_llm(messages)),
        }
    }

    async fn message_end(&self, message: &AgentMessage) -> Result<Option<AgentMessage>, HookError> {
        let mut current: Option<AgentMessage> = None;
        for hook in &self.hooks {
            let input = current.as_ref().unwrap_or(message);
            if let Some(next) = hook.message_end(input).await? {
                current = Some(next);
            }
        }
        Ok(current)
    }

    async fn request_headers(&self, model: &pi_ai::Model) -> Result<Vec<(String, String)>, HookError> {
        let mut headers = Vec::new();
        for hook in &self.hooks {
            headers.extend(hook.request_headers(model).await?);
        }
        Ok(headers)
    }

    async fn get_api_key(&self, provider: &str) -> Result<Option<String>, HookError> {
        for hook in &self.hooks {
            if let Some(key) = hook.get_api_key(provider).await? {
                return Ok(Some(key));
            }
        }
        Ok(None)
    }

    async fn before_tool_call(
        &self,
        call: ToolCallContext<'_>,
        cancel: &CancellationToken,
    ) -> Result<Option<BeforeToolCall>, HookError> {
        let mut args: Option<Value> = None;
        for hook in &self.hooks {
            let view = ToolCallContext {
                args: args.as_ref().unwrap_or(call.args),
                ..call
            };
            match hook.before_tool_call(view, cancel).await? {
                Some(b) if b.block => return Ok(Some(b)),
                Some(BeforeToolCall { args: Some(a), .. }) => args = Some(a),
                _ => {}
            }
        }
        Ok(args.map(|a| BeforeToolCall {
            args: Some(a),
            ..Default::default()
        }))
    }

    async fn after_tool_call(
        &self,
        call: ToolCallContext<'_>,
        result: &ToolOutput,
        is_error: bool,
        cancel: &CancellationToken,
    ) -> Result<Option<AfterToolCall>, HookError> {
        let mut merged: Option<AfterToolCall> = None;
        for hook in &self.hooks {
            let (seen, seen_error) = match &merged {
                Some(m) => apply_after(result, is_error, m),
                None => (result.clone(), is_error),
            };
            if let Some(change) = hook.after_tool_call(call, &seen, seen_error, cancel).await? {
                merge_after(merged.get_or_insert_with(Default::default), change);
            }
        }
        Ok(merged)
    }

    async fn prepare_next_turn(&self, turn: TurnContext<'_>) -> Result<Option<NextTurn>, HookError> {
        let mut merged: Option<NextTurn> = None;
        for hook in &self.hooks {
            if let Some(next) = hook.prepare_next_turn(turn).await? {
                merge_next(merged.get_or_insert_with(Default::default), next);
            }
        }
        Ok(merged)
    }

    async fn declare_changes(&self, context: &AgentContext) -> Option<AgentMessage> {
        for hook in &self.hooks {
            if let Some(message) = hook.declare_changes(context).await {
                return Some(message);
            }
        }
        None
    }

    async fn should_stop_after_turn(&self, turn: TurnContext<'_>) -> Result<bool, HookError> {
        for hook in &self.hooks {
            if hook.should_stop_after_turn(turn).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn continue_after_turn(&self, turn: TurnContext<'_>) -> Result<bool, HookError> {
        // Every hook is asked (each may hold a pending answer to clear); any may continue.
        let mut any = false;
        for hook in &self.hooks {
            any |= hook.continue_after_turn(turn).await?;
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::AgentContext;
    use pi_ai::{AssistantMessage, Content, ToolCall};
    use serde_json::json;

    /// Appends its tag to the `path` argument, blocks when told, rewrites results' details.
    struct Tagger {
        tag: &'static str,
        block: bool,
        key: Option<&'static str>,
    }

    #[async_trait]
    impl AgentHooks for Tagger {
        async fn get_api_key(&self, _provider: &str) -> Result<Option<String>, HookError> {
            Ok(self.key.map(str::to_string))
        }

        async fn before_tool_call(
            &self,
            call: ToolCallContext<'_>,
            _cancel: &CancellationToken,
        ) -> Result<Option<BeforeToolCall>, HookError> {
            if self.block {
                return Ok(Some(BeforeToolCall::block(format!("blocked by {}", self.tag))));
            }
            let path = call.args["path"].as_str().unwrap_or_default();
            Ok(Some(BeforeToolCall {
                args: Some(json!({"path": format!("{path}+{}", self.tag)})),
                ..Default::default()
            }))
        }

        async fn after_tool_call(
            &self,
            _call: ToolCallContext<'_>,
            result: &ToolOutput,
            _is_error: bool,
            _cancel: &CancellationToken,
        ) -> Result<Option<AfterToolCall>, HookError> {
            let seen = result.details.clone().unwrap_or(json!([]));
            let mut list = seen.as_array().cloned().unwrap_or_default();
            list.push(json!(self.tag));
            Ok(Some(AfterToolCall {
                details: Some(Value::Array(list)),
                ..Default::default()
            }))
        }
    }

    fn tagger(tag: &'static str) -> Arc<dyn AgentHooks> {
        Arc::new(Tagger {
            tag,
            block: false,
            key: None,
        })
    }

    fn fixtures() -> (AssistantMessage, ToolCall, AgentContext) {
        let call = ToolCall {
            id: "c1".into(),
            name: "read".into(),
            arguments: json!({"path": "a"}),
            ..Default::default()
        };
        let message = pi_ai::faux::faux_reply(vec![Content::ToolCall(call.clone())], pi_ai::StopReason::ToolUse);
        (message, call, AgentContext::default())
    }

    #[tokio::test]
    async fn rewritten_arguments_feed_the_next_hook_and_the_first_block_wins() {
        let (message, call, context) = fixtures();
        let args = json!({"path": "a"});
        let view = ToolCallContext {
            assistant_message: &message,
            tool_call: &call,
            args: &args,
            context: &context,
            parent_tool_call_id: None,
        };
        let cancel = CancellationToken::new();
        let chain = HookChain::new(vec![tagger("one"), tagger("two")]);
        let out = chain.before_tool_call(view, &cancel).await.unwrap().unwrap();
        assert_eq!(out.args, Some(json!({"path": "a+one+two"})));
        assert!(!out.block);

        let blocker: Arc<dyn AgentHooks> = Arc::new(Tagger {
            tag: "guard",
            block: true,
            key: None,
        });
        let chain = HookChain::new(vec![tagger("one"), blocker, tagger("never")]);
        let out = chain.before_tool_call(view, &cancel).await.unwrap().unwrap();
        assert!(out.block);
        assert_eq!(out.reason.as_deref(), Some("blocked by guard"));
    }

    #[tokio::test]
    async fn each_after_hook_sees_the_result_the_previous_left() {
        let (message, call, context) = fixtures();
        let args = json!({});
        let view = ToolCallContext {
            assistant_message: &message,
            tool_call: &call,
            args: &args,
            context: &context,
            parent_tool_call_id: None,
        };
        let chain = HookChain::new(vec![tagger("one"), tagger("two")]);
        let result = ToolOutput::text("x");
        let out = chain
            .after_tool_call(view, &result, false, &CancellationToken::new())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(out.details, Some(json!(["one", "two"])));
    }

    #[tokio::test]
    async fn the_first_hook_naming_a_key_wins() {
        let keyed = |key| -> Arc<dyn AgentHooks> {
            Arc::new(Tagger {
                tag: "k",
                block: false,
                key,
            })
        };
        let chain = HookChain::new(vec![keyed(None), keyed(Some("second")), keyed(Some("third"))]);
        assert_eq!(chain.get_api_key("p").await.unwrap().as_deref(), Some("second"));
        assert_eq!(HookChain::default().get_api_key("p").await.unwrap(), None);
    }
}
