//! AgentSession against the faux provider: persistence, retries, queues and extension hooks.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use pi_agent::{Agent, AgentOptions};
use pi_ai::faux::{faux_error, faux_reply, faux_text, FauxOptions, FauxProvider, FauxStep};
use pi_ai::StopReason;
use serde_json::json;

use super::extensions::{InputAction, SessionExtensions};
use super::hooks::SessionHooks;
use super::loadout::Loadout;
use super::{AgentSession, AgentSessionParts, SessionEvent, SessionListener};
use crate::config::auth::AuthStorage;
use crate::config::paths::DocsPaths;
use crate::config::settings::SettingsManager;
use crate::config::ModelRegistry;

/// Every event as its JSON `type`.
#[derive(Default)]
struct Types(Mutex<Vec<String>>);

#[async_trait]
impl SessionListener for Types {
    async fn on_event(&self, event: &SessionEvent<'_>) {
        let Some(line) = event.wire_json() else { return };
        let json: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        self.0
            .lock()
            .unwrap()
            .push(json["type"].as_str().unwrap_or_default().to_string());
    }
}

fn session_with(faux: &FauxProvider, settings: serde_json::Value) -> (AgentSession, Arc<Types>) {
    session_with_prompt(faux, settings, "")
}

fn session_with_prompt(
    faux: &FauxProvider,
    settings: serde_json::Value,
    system_prompt: &str,
) -> (AgentSession, Arc<Types>) {
    let loadout = Arc::new(Loadout::fixed(system_prompt.to_string(), Vec::new()));
    session_with_loadout(faux, settings, loadout)
}

fn session_with_loadout(
    faux: &FauxProvider,
    settings: serde_json::Value,
    loadout: Arc<Loadout>,
) -> (AgentSession, Arc<Types>) {
    let model = faux.model().clone();
    let auth = AuthStorage::in_memory(Default::default(), |_| Some("key".to_string()));
    let registry = Arc::new(Mutex::new(ModelRegistry::new(vec![model.clone()], auth, None)));
    let initial = loadout.current();
    let agent = Agent::new(AgentOptions {
        model: model.clone(),
        stream_fn: faux.stream_fn(),
        hooks: Arc::new(SessionHooks::new(Arc::clone(&registry)).with_loadout(Arc::clone(&loadout))),
        system_prompt: initial.system_prompt,
        tools: initial.tools,
        ..Default::default()
    });
    let session = AgentSession::new(AgentSessionParts {
        cwd: std::env::temp_dir(),
        agent,
        store: pi_session::SessionManager::in_memory("/tmp"),
        services: crate::services::Services::with_registry(Arc::clone(&registry)),
        registry,
        settings: Arc::new(Mutex::new(SettingsManager::in_memory(settings))),
        resources: Default::default(),
        docs: DocsPaths::under(std::path::Path::new("/docs")),
        model: Some(model),
        loadout,
    });
    let types = Arc::new(Types::default());
    session.subscribe(types.clone());
    (session, types)
}

#[tokio::test]
async fn prompts_are_persisted_and_answered() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![FauxStep::Reply(Box::new(faux_reply(
        vec![faux_text("hi there")],
        StopReason::Stop,
    )))]);
    let (session, _) = session_with(&faux, json!({}));
    session.prompt("hello", vec![]).await.expect("prompt");
    assert_eq!(session.last_assistant_text().as_deref(), Some("hi there"));
    let kinds: Vec<String> =
        session.with_store(|s| s.get_entries().iter().map(|e| e.kind.type_name().to_string()).collect());
    // The loadout's system message, the prompt and the reply.
    assert_eq!(kinds, vec!["message", "message", "message"]);
    let roles: Vec<String> = session.messages().iter().map(|m| m.role().to_string()).collect();
    assert_eq!(roles, ["system", "user", "assistant"]);
}

#[tokio::test]
async fn transient_errors_are_retried_with_events() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        FauxStep::Reply(Box::new(faux_error(vec![], "503 service unavailable"))),
        FauxStep::Reply(Box::new(faux_reply(vec![faux_text("recovered")], StopReason::Stop))),
    ]);
    let (session, types) = session_with(&faux, json!({"retry": {"baseDelayMs": 1}}));
    session.prompt("hello", vec![]).await.expect("prompt");
    assert_eq!(session.last_assistant_text().as_deref(), Some("recovered"));
    let types = types.0.lock().unwrap().clone();
    let retry: Vec<&String> = types.iter().filter(|t| t.starts_with("auto_retry")).collect();
    assert_eq!(retry, ["auto_retry_start", "auto_retry_end"]);
    // The failed reply left the context but stays in the file, omitted by a context_edit
    // (announced as entry_appended), and the run ends settled.
    let in_context = session.messages().iter().filter(|m| m.as_assistant().is_some()).count();
    assert_eq!(in_context, 1);
    let kinds: Vec<String> =
        session.with_store(|s| s.get_entries().iter().map(|e| e.type_name().to_string()).collect());
    assert_eq!(kinds, ["message", "message", "message", "context_edit", "message"]);
    assert_eq!(session.with_store(|s| s.build_context().messages.len()), 3);
    let at = |name: &str| types.iter().position(|t| t == name).unwrap_or(usize::MAX);
    assert!(at("auto_retry_start") < at("entry_appended"));
    assert_eq!(types.last().map(String::as_str), Some("agent_settled"));
}

#[tokio::test]
async fn retries_give_up_after_the_configured_attempts() {
    let faux = FauxProvider::new(FauxOptions::default());
    let steps = (0..3)
        .map(|_| FauxStep::Reply(Box::new(faux_error(vec![], "500 boom"))))
        .collect();
    faux.set_responses(steps);
    let (session, types) = session_with(&faux, json!({"retry": {"baseDelayMs": 1, "maxRetries": 2}}));
    session.prompt("hello", vec![]).await.expect("prompt");
    assert_eq!(faux.call_count(), 3);
    let types = types.0.lock().unwrap().clone();
    assert_eq!(types.iter().filter(|t| *t == "auto_retry_start").count(), 2);
    assert_eq!(types[types.len() - 2..], ["auto_retry_end", "agent_settled"]);
}

#[tokio::test]
async fn non_transient_errors_are_not_retried() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![FauxStep::Reply(Box::new(faux_error(vec![], "400 bad request")))]);
    let (session, types) = session_with(&faux, json!({"retry": {"baseDelayMs": 1}}));
    session.prompt("hello", vec![]).await.expect("prompt");
    assert_eq!(faux.call_count(), 1);
    assert!(!types.0.lock().unwrap().iter().any(|t| t.starts_with("auto_retry")));
}

struct Rewrite;

#[async_trait]
impl SessionExtensions for Rewrite {
    async fn run_command(&self, name: &str, _args: &str) -> Option<Result<(), String>> {
        (name == "mine").then_some(Ok(()))
    }

    async fn on_input(&self, text: &str) -> InputAction {
        match text {
            "skip" => InputAction::Handled,
            other => InputAction::Transform(format!("{other}!")),
        }
    }
}

#[tokio::test]
async fn extension_hooks_shape_the_prompt() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![FauxStep::Reply(Box::new(faux_reply(
        vec![faux_text("ok")],
        StopReason::Stop,
    )))]);
    let (session, _) = session_with(&faux, json!({}));
    session.set_extensions(Arc::new(Rewrite));
    session.prompt("/mine arg", vec![]).await.expect("command");
    session.prompt("skip", vec![]).await.expect("handled");
    assert_eq!(faux.call_count(), 0);
    session.prompt("hello", vec![]).await.expect("prompt");
    let first_user = session
        .messages()
        .iter()
        .find_map(|m| m.as_llm().filter(|m| m.role() == "user").cloned());
    match first_user {
        Some(pi_ai::Message::User(u)) => assert_eq!(u.content.text(), "hello!"),
        other => panic!("expected a user message, got {other:?}"),
    }
}

/// Overrides the system prompt for prompts that start with "special".
struct SpecialPrompt;

#[async_trait]
impl SessionExtensions for SpecialPrompt {
    async fn before_agent_start(
        &self,
        prompt: &str,
        system_prompt: &str,
        _options: &serde_json::Value,
    ) -> super::extensions::BeforeAgentStart {
        super::extensions::BeforeAgentStart {
            system_prompt: prompt
                .starts_with("special")
                .then(|| format!("{system_prompt} (special)")),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn a_system_prompt_override_lasts_one_prompt() {
    let faux = FauxProvider::new(FauxOptions::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let step = {
        let seen = Arc::clone(&seen);
        FauxStep::Dynamic(Arc::new(
            move |ctx: &pi_ai::Context, _: &pi_ai::StreamOptions, _n, _m| {
                seen.lock().unwrap().push(ctx.system_prompt.clone().unwrap_or_default());
                faux_reply(vec![faux_text("ok")], StopReason::Stop)
            },
        ))
    };
    faux.set_responses(vec![step.clone(), step.clone(), step]);
    let (session, _) = session_with_prompt(&faux, json!({}), "base");
    session.set_extensions(Arc::new(SpecialPrompt));
    for text in ["special one", "plain", "special two"] {
        session.prompt(text, vec![]).await.expect("prompt");
    }
    assert_eq!(*seen.lock().unwrap(), ["base (special)", "base", "base (special)"]);
}

#[tokio::test]
async fn prompting_without_credentials_fails_with_pis_text() {
    let faux = FauxProvider::new(FauxOptions::default());
    let (session, _) = session_with(&faux, json!({}));
    let model = faux.model().clone();
    let auth = AuthStorage::in_memory(Default::default(), |_| None);
    *session.registry().lock().unwrap() = ModelRegistry::new(vec![model], auth, None);
    let err = session.prompt("hello", vec![]).await.expect_err("no key");
    assert!(
        matches!(&err, crate::session::PromptError::NoApiKey { provider, .. } if provider == "faux"),
        "{err}"
    );
    assert!(err.to_string().starts_with("No API key found for faux."), "{err}");
}

/// A tool that registers another tool when it runs (as an extension or an MCP server coming
/// up mid-run would).
struct Registrar(Arc<pi_agent::ToolRegistry>);

#[async_trait]
impl pi_agent::AgentTool for Registrar {
    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "registers deploy"
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: &str,
        _: serde_json::Value,
        _: tokio_util::sync::CancellationToken,
        _: pi_agent::ToolUpdateFn,
    ) -> Result<pi_agent::ToolOutput, pi_agent::ToolError> {
        let deploy: Arc<dyn pi_agent::AgentTool> = Arc::new(Named("deploy"));
        let meta = pi_agent::ToolMeta::of(deploy.as_ref(), pi_agent::ToolSource::Extension("e.ts".into()));
        self.0.register(deploy, meta);
        Ok(pi_agent::ToolOutput::text("registered"))
    }
}

struct Named(&'static str);

#[async_trait]
impl pi_agent::AgentTool for Named {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "a tool"
    }
    fn parameters(&self) -> serde_json::Value {
        json!({"type": "object"})
    }
    async fn execute(
        &self,
        _: &str,
        _: serde_json::Value,
        _: tokio_util::sync::CancellationToken,
        _: pi_agent::ToolUpdateFn,
    ) -> Result<pi_agent::ToolOutput, pi_agent::ToolError> {
        Ok(pi_agent::ToolOutput::text("ran"))
    }
}

#[tokio::test]
async fn tools_registered_mid_session_reach_the_next_request_and_the_prompt() {
    let registry = pi_agent::ToolRegistry::new();
    let probe: Arc<dyn pi_agent::AgentTool> = Arc::new(Registrar(Arc::clone(&registry)));
    let meta = pi_agent::ToolMeta::of(probe.as_ref(), pi_agent::ToolSource::Builtin);
    registry.register(probe, meta);
    let loadout = Arc::new(Loadout::new(
        Arc::clone(&registry),
        Box::new(
            |tools: &[crate::system_prompt::ToolPrompt], _: &crate::system_prompt::PromptEdits| {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                crate::system_prompt::PromptSections(vec![("preamble".into(), format!("tools: {}", names.join(",")))])
            },
        ),
    ));
    let faux = FauxProvider::new(FauxOptions::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = |reply: Vec<pi_ai::Content>, stop: StopReason| {
        let seen = Arc::clone(&seen);
        FauxStep::Dynamic(Arc::new(
            move |ctx: &pi_ai::Context, _: &pi_ai::StreamOptions, _n, _m| {
                let tools: Vec<String> = ctx.tools.iter().map(|t| t.name.clone()).collect();
                seen.lock()
                    .unwrap()
                    .push((ctx.system_prompt.clone().unwrap_or_default(), tools.join(",")));
                faux_reply(reply.clone(), stop)
            },
        ))
    };
    faux.set_responses(vec![
        record(
            vec![pi_ai::faux::faux_tool_call("probe", json!({}))],
            StopReason::ToolUse,
        ),
        record(vec![faux_text("done")], StopReason::Stop),
        record(vec![faux_text("again")], StopReason::Stop),
    ]);
    let (session, _) = session_with_loadout(&faux, json!({}), loadout);
    session.prompt("go", vec![]).await.expect("prompt");
    session.tool_registry().set_active(&["deploy"]);
    session.prompt("only deploy now", vec![]).await.expect("prompt");
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("tools: probe".to_string(), "probe".to_string()),
            // Registered by the tool call: declared and described in the same run's next request.
            ("tools: probe,deploy".to_string(), "probe,deploy".to_string()),
            // Deactivated between prompts.
            ("tools: deploy".to_string(), "deploy".to_string()),
        ]
    );
}

#[tokio::test]
async fn manual_compaction_streams_through_the_agents_stream_function() {
    let faux = FauxProvider::new(FauxOptions::default());
    faux.set_responses(vec![
        faux_reply(vec![faux_text("first answer")], StopReason::Stop).into(),
        faux_reply(vec![faux_text("second answer")], StopReason::Stop).into(),
        faux_reply(vec![faux_text("## Goal\nthe summary")], StopReason::Stop).into(),
    ]);
    // A keep-recent window small enough that the first exchange is summarised (pi 1.6
    // refuses when nothing precedes the kept range).
    let (session, _) = session_with(&faux, json!({"compaction": {"keepRecentTokens": 5}}));
    session.prompt("one", vec![]).await.expect("prompt");
    session.prompt("two", vec![]).await.expect("prompt");
    let result = session.compact(None).await.expect("compaction");
    assert_eq!(
        faux.call_count(),
        3,
        "the summary request went to the session's provider"
    );
    assert!(result.summary.contains("the summary"), "{}", result.summary);
}

/// Extensions that answer `session_before_tree` with `decision`.
struct TreeAnswer(super::extensions::TreeDecision);

#[async_trait]
impl SessionExtensions for TreeAnswer {
    fn handles(&self, event: &str) -> bool {
        event == "session_before_tree"
    }

    async fn before_tree(&self, _payload: serde_json::Value) -> super::extensions::TreeDecision {
        self.0.clone()
    }
}

async fn two_prompts(faux: &FauxProvider) -> (AgentSession, String) {
    faux.set_responses(vec![
        FauxStep::Reply(Box::new(faux_reply(vec![faux_text("one")], StopReason::Stop))),
        FauxStep::Reply(Box::new(faux_reply(vec![faux_text("two")], StopReason::Stop))),
    ]);
    let (session, _) = session_with(faux, json!({}));
    session.prompt("first", vec![]).await.expect("prompt");
    session.prompt("second", vec![]).await.expect("prompt");
    // The first reply: moving there leaves the second exchange behind.
    let target = session.with_store(|s| s.get_entries()[1].id.clone());
    (session, target)
}

#[tokio::test]
async fn an_extension_can_stop_a_tree_move_or_write_its_summary() {
    let faux = FauxProvider::new(FauxOptions::default());
    let (session, target) = two_prompts(&faux).await;
    let leaf_before = session.with_store(|s| s.get_leaf_id().map(str::to_string));
    session.set_extensions(Arc::new(TreeAnswer(super::extensions::TreeDecision {
        cancel: true,
        ..Default::default()
    })));
    let options = super::tree_ops::NavigateOptions {
        summarize: true,
        ..Default::default()
    };
    let outcome = session
        .navigate_tree(&target, options.clone(), tokio_util::sync::CancellationToken::new())
        .await
        .expect("navigate");
    assert!(outcome.cancelled);
    assert_eq!(session.with_store(|s| s.get_leaf_id().map(str::to_string)), leaf_before);

    session.set_extensions(Arc::new(TreeAnswer(super::extensions::TreeDecision {
        summary: Some(super::extensions::ExtensionSummary {
            summary: "written by an extension".into(),
            details: Some(json!({"n": 1})),
            usage: Some(json!({"input": 7})),
        }),
        ..Default::default()
    })));
    let outcome = session
        .navigate_tree(&target, options, tokio_util::sync::CancellationToken::new())
        .await
        .expect("navigate");
    assert!(!outcome.cancelled);
    let summary = session.with_store(|s| {
        let id = outcome.summary_entry_id.clone().expect("a summary entry");
        serde_json::to_value(s.get_entry(&id).expect("entry")).expect("json")
    });
    assert_eq!(summary["summary"], "written by an extension");
    assert_eq!(summary["fromHook"], true);
    assert_eq!(summary["details"], json!({"n": 1}));
    assert_eq!(
        summary["usage"],
        json!({"input": 7}),
        "the extension's usage is kept as given"
    );
    // The model was asked for the two replies only, never for the summary.
    assert_eq!(faux.call_count(), 2);
}
