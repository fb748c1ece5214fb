//! Unit tests of effect application: commands and picker results run through a context,
//! their effects checked, then applied to an app over a faux session.

use std::sync::{Arc, Mutex};

use pi_agent::{Agent, AgentOptions};
use pi_ai::faux::{FauxModel, FauxOptions, FauxProvider};
use pi_tui::{InputEvent, Tui};

use super::super::command_registry::CommandRegistry;
use super::super::commands;
use super::super::dialogs::Dialog;
use super::super::effect::{notice, Effect, OnResult, Overlay, Picker, Replace};
use super::super::events::{LiveUpdate, Msg, UiSender};
use super::super::theme::UiTheme;
use super::super::tool_block::ToolBlock;
use super::prompt::bash_chunk_sink;
use super::App;
use pi_coding_agent::config::auth::AuthStorage;
use pi_coding_agent::config::paths::DocsPaths;
use pi_coding_agent::config::settings::SettingsManager;
use pi_coding_agent::config::ModelRegistry;
use pi_coding_agent::session::hooks::SessionHooks;
use pi_coding_agent::session::loadout::Loadout;
use pi_coding_agent::session::{AgentSession, AgentSessionParts};
use pi_coding_agent::session_host::SessionHost;

fn faux() -> FauxProvider {
    let model = |id: &str| FauxModel {
        id: id.into(),
        name: None,
        reasoning: false,
        input: None,
        cost: Default::default(),
        context_window: Some(1000),
        max_tokens: None,
    };
    FauxProvider::new(FauxOptions {
        models: vec![model("foo-1"), model("foo-2"), model("bar")],
        ..Default::default()
    })
}

struct Fixture {
    app: App,
    tui: Tui,
    rx: tokio::sync::mpsc::Receiver<Msg>,
    tx: UiSender,
    _faux: FauxProvider,
}

fn fixture_with(commands: CommandRegistry) -> Fixture {
    let faux = faux();
    let model = faux.model().clone();
    let auth = AuthStorage::in_memory(Default::default(), |_| Some("key".to_string()));
    let registry = Arc::new(Mutex::new(ModelRegistry::new(faux.models().to_vec(), auth, None)));
    let loadout = Arc::new(Loadout::fixed(String::new(), Vec::new()));
    let agent = Agent::new(AgentOptions {
        model: model.clone(),
        stream_fn: faux.stream_fn(),
        hooks: Arc::new(SessionHooks::new(Arc::clone(&registry)).with_loadout(Arc::clone(&loadout))),
        ..Default::default()
    });
    let session = AgentSession::new(AgentSessionParts {
        cwd: std::env::temp_dir(),
        agent,
        store: pi_session::SessionManager::in_memory("/tmp"),
        services: pi_coding_agent::services::Services::with_registry(Arc::clone(&registry)),
        registry,
        settings: Arc::new(Mutex::new(SettingsManager::in_memory(serde_json::json!({})))),
        resources: Default::default(),
        docs: DocsPaths::under(std::path::Path::new("/docs")),
        model: Some(model),
        loadout,
    });
    let host = Arc::new(SessionHost::new(Default::default(), std::env::temp_dir(), session));
    let (tx, rx) = UiSender::channel();
    let sender = tx.clone();
    let app = App::new(
        host,
        Arc::new(UiTheme::fallback()),
        pi_tui::keybindings(),
        tx,
        commands,
        40,
        false,
    );
    Fixture {
        app,
        tui: Tui::new(80, 40),
        rx,
        tx: sender,
        _faux: faux,
    }
}

fn fixture() -> Fixture {
    fixture_with(commands::builtins())
}

fn run(f: &Fixture, text: &str) -> Option<Vec<Effect>> {
    f.app.commands().run(&f.app.ctx(), text)
}

/// Wait for the next task continuation and apply it.
async fn next_then(f: &mut Fixture) {
    loop {
        match f.rx.recv().await {
            Some(Msg::Then(then)) => return f.app.run_then(then, &mut f.tui),
            Some(_) => continue,
            None => panic!("channel closed"),
        }
    }
}

fn chat_len(f: &mut Fixture) -> usize {
    f.app.view_mut().chat.len()
}

#[tokio::test]
async fn model_with_a_filter_opens_the_model_picker_filtered() {
    let f = fixture();
    // Text naming no single model: the catalogues are refreshed first, and said so.
    let effects = run(&f, "/model foo").expect("a command");
    assert!(
        matches!(effects.as_slice(), [Effect::StatusLine(t), Effect::Blocking(_)] if t == "Refreshing model catalogs…"),
        "{effects:?}"
    );
    // Then (no model answering still) the picker opens searching for the text.
    let effects = commands::open_model_picker(&f.app.ctx(), Some("foo"));
    // The picker, and the refresh of the model catalogues it shows the outcome of.
    assert_eq!(effects.len(), 2, "{effects:?}");
    assert!(matches!(effects[1], Effect::Blocking(_)), "{effects:?}");
    let Some(Effect::Open(Overlay { view, picker })) = effects.into_iter().next() else {
        panic!("not an overlay");
    };
    assert!(matches!(picker, Picker::Model));
    let list = view
        .as_any()
        .downcast_ref::<super::super::model_picker::ModelPicker>()
        .expect("the model picker");
    assert_eq!(list.shown_count(), 2, "only the foo models match");
    assert!(list.selected_key().is_some_and(|k| k.starts_with("faux/foo-")));
}

#[tokio::test]
async fn model_with_an_exact_name_switches_off_the_async_threads() {
    let mut f = fixture();
    let effects = run(&f, "/model faux/bar").expect("a command");
    assert!(matches!(effects.as_slice(), [Effect::Blocking(_)]), "{effects:?}");
    let before = chat_len(&mut f);
    f.app.apply(effects, &mut f.tui);
    next_then(&mut f).await;
    assert_eq!(f.app.session().model().map(|m| m.id).as_deref(), Some("bar"));
    assert_eq!(chat_len(&mut f), before + 1, "a notice says which model");
}

#[tokio::test]
async fn commands_return_effects_and_leave_the_app_alone() {
    let f = fixture();
    assert!(matches!(run(&f, "/quit").as_deref(), Some([Effect::Quit])));
    assert!(matches!(
        run(&f, "/new").as_deref(),
        Some([Effect::ReplaceSession(Replace::New)])
    ));
    assert!(matches!(
        run(&f, "/import").as_deref(),
        Some([Effect::Notice(_, "error")])
    ));
    // `/import <path>` asks first (a Yes/No dialog, reported to the program status as a
    // permission question, as pi 1.6's) before replacing the session.
    let import = run(&f, "/import saved.jsonl").expect("a command");
    let [Effect::Open(Overlay {
        picker: Picker::Blocking {
            kind: "permission",
            title,
            ..
        },
        ..
    })] = import.as_slice()
    else {
        panic!("{import:?}");
    };
    assert_eq!(title, "Import session");
    // Nothing written yet: cloning is refused (pi 1.6's error), or there is nothing to clone.
    assert!(matches!(
        run(&f, "/clone").as_deref(),
        Some([Effect::Notice(_, "error") | Effect::StatusLine(_)])
    ));
    assert!(matches!(
        run(&f, "/export").as_deref(),
        Some([Effect::Notice(_, "error")])
    ));
    assert!(run(&f, "/not-a-command").is_none(), "unknown names are prompts");
    assert!(!f.app.quit_requested(), "nothing was applied");
}

#[tokio::test]
async fn applying_quit_and_notices_changes_the_app() {
    let mut f = fixture();
    let before = chat_len(&mut f);
    f.app.apply(vec![notice("hello", "dim"), Effect::Quit], &mut f.tui);
    assert_eq!(chat_len(&mut f), before + 1);
    assert!(f.app.quit_requested());
}

#[tokio::test]
async fn a_registered_command_opens_its_own_dialog_and_gets_the_result() {
    let got: Arc<Mutex<Vec<Option<String>>>> = Arc::default();
    let mut registry = commands::builtins();
    let seen = got.clone();
    assert!(registry.register("ext", "An extension's command", move |cx, _| {
        let seen = seen.clone();
        let on_result: OnResult = Box::new(move |_, value| {
            seen.lock().unwrap().push(value);
            vec![notice("extension done", "dim")]
        });
        vec![Effect::Open(Overlay {
            view: Box::new(Dialog::prompt("Ext", "Name?", "pi", cx.theme.clone())),
            picker: Picker::Custom(on_result),
        })]
    }));
    assert!(!registry.register("model", "shadowing a built-in", |_, _| Vec::new()));
    let mut f = fixture_with(registry);
    assert!(f.app.commands().slash_commands().iter().any(|c| c.name == "ext"));
    f.app.submit("/ext".into(), false, &mut f.tui);
    assert!(f.app.overlay_open());
    let enter = InputEvent::Key(pi_tui::parse_key("\r", false).expect("key"));
    let before = chat_len(&mut f);
    f.app.handle_input(&enter, &mut f.tui);
    assert!(!f.app.overlay_open());
    assert_eq!(*got.lock().unwrap(), [Some("pi".to_string())]);
    assert_eq!(chat_len(&mut f), before + 1);
}

#[tokio::test]
async fn a_settings_change_is_visible_at_once_and_written_off_the_ui_thread() {
    let mut f = fixture();
    let effects = super::super::settings_menu::apply(&f.app.ctx(), "quiet-startup", "true");
    assert!(matches!(effects.as_slice(), [Effect::Settings(_)]), "{effects:?}");
    f.app.apply(effects, &mut f.tui);
    let settings = f.app.session().settings().clone();
    assert!(settings.lock().unwrap().quiet_startup());
}

#[tokio::test]
async fn bash_output_is_handed_over_chunk_by_chunk() {
    let mut f = fixture();
    let (tx, _rx) = UiSender::channel();
    let mut sink = bash_chunk_sink(tx.clone(), "user-bash-1".into());
    let chunk = "0123456789";
    for _ in 0..1000 {
        sink(chunk);
    }
    // Each byte crosses once: resending the output so far per chunk would be ~5 MB.
    assert_eq!(tx.live().bytes(), 10_000);
    let pending = tx.live().drain();
    assert_eq!(pending.len(), 1);
    assert!(matches!(&pending[0].1, LiveUpdate::Append(t) if t.len() == 10_000));

    // The app appends what arrives to the block.
    let id = "user-bash-9";
    let block = ToolBlock::user_bash(id, serde_json::json!({"command": "x"}), f.app.theme.clone(), false);
    f.app.tools.insert(id.to_string(), f.app.view.chat.len());
    f.app.view.chat.push(Box::new(block));
    let mut sink = bash_chunk_sink(f.app.tx.clone(), id.to_string());
    sink("a\n");
    assert!(f.app.apply_live());
    sink("b\n");
    assert!(f.app.apply_live());
    let i = f.app.tools[id];
    let lines = pi_tui::render_lines(f.app.view.chat.child_mut::<ToolBlock>(i).expect("block"), 60);
    let text: Vec<String> = lines.iter().map(|l| pi_tui::strip_ansi(l).trim().to_string()).collect();
    assert!(
        text.iter().any(|l| l == "a") && text.iter().any(|l| l == "b"),
        "{text:?}"
    );
}

#[tokio::test]
async fn live_output_that_arrives_before_its_block_waits_for_it() {
    let mut f = fixture();
    f.app.tx.tool_output("t1", "early output".into()).await;
    assert!(!f.app.apply_live(), "no block yet: nothing shown, nothing lost");
    f.app.on_event(super::super::events::UiEvent::ToolStart {
        id: "t1".into(),
        name: "bash".into(),
        args: serde_json::json!({"command": "x"}),
    });
    assert!(f.app.apply_live());
    let i = f.app.tools["t1"];
    let lines = pi_tui::render_lines(f.app.view.chat.child_mut::<ToolBlock>(i).expect("block"), 60);
    assert!(lines.iter().any(|l| pi_tui::strip_ansi(l).contains("early output")));
}

#[tokio::test]
async fn an_extension_select_opens_a_dialog_and_gets_the_choice() {
    use pi_coding_agent::extension_ui::{DialogOptions, ExtensionUiHost};
    let mut f = fixture();
    let ui = super::super::extension_ui::InteractiveUi::new(f.tx.clone());
    let pick = tokio::spawn(async move {
        ui.select("Pick one", &["alpha".into(), "beta".into()], DialogOptions::default())
            .await
    });
    next_then(&mut f).await;
    assert!(f.app.overlay_open());
    let key = |s: &str| InputEvent::Key(pi_tui::parse_key(s, false).expect("key"));
    f.app.handle_input(&key("\x1b[B"), &mut f.tui);
    f.app.handle_input(&key("\r"), &mut f.tui);
    assert!(!f.app.overlay_open());
    assert_eq!(pick.await.expect("task"), Some("beta".to_string()));
}

#[tokio::test]
async fn an_extension_dialog_resolves_to_its_default_on_timeout() {
    use pi_coding_agent::extension_ui::{DialogOptions, ExtensionUiHost};
    let mut f = fixture();
    let ui = super::super::extension_ui::InteractiveUi::new(f.tx.clone());
    let answer = tokio::spawn(async move {
        let opts = DialogOptions {
            timeout: Some(std::time::Duration::from_millis(30)),
            cancel: None,
        };
        ui.confirm("Sure?", "", opts).await
    });
    next_then(&mut f).await;
    assert!(f.app.overlay_open());
    assert!(!answer.await.expect("task"), "a timed-out confirm is false");
}
