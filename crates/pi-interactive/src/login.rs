//! `/login` and `/logout` as pi 1.6 shows them: the method menu (an account or an API key),
//! the provider lists (partners first, each with its credential state), the sign-in screen
//! that follows a `pi-oauth` flow run by the login session API (`config::login_session`),
//! API-key entry, and removing stored credentials. What the flows save goes to auth.json;
//! the registry reads it again before the result is said.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use tokio_util::sync::CancellationToken;

use super::commands::paths_for;
use super::effect::{blocking, notice, then, Ctx, Effect, Overlay, Picker};
use super::events::Msg;
use super::login_view::{ChoiceRow, FlowRequest, LoginChoice, LoginFlow};
use pi_coding_agent::config::auth::Credential;
use pi_coding_agent::config::login_session::{self, LoginUpdate};
use pi_coding_agent::config::oauth::LoginError;

const ACCOUNT: &str = "Sign in with an account";
const API_KEY: &str = "Sign in with an API key";

/// Providers 1.6 lists first and marks with `✦`.
const PARTNERS: &[&str] = &["radius", "openrouter"];

/// Built-in providers that take an API key but have no chat models, so the registry's model
/// list never names them: TypeSafe serves classifier models only.
const KEY_ONLY: &[&str] = &["typesafe"];

/// Whether pi's built-in llama.cpp extension is on for this run: its provider is then offered
/// for an API key (set once when the terminal UI starts).
static LLAMA_ON: AtomicBool = AtomicBool::new(false);

/// Say whether the built-in llama.cpp provider is on for this run.
pub fn set_llama_provider(on: bool) {
    LLAMA_ON.store(on, Ordering::Relaxed);
}

/// Providers whose only login is an account (never offered for an API key).
const OAUTH_ONLY: &[&str] = &["openai-codex"];

/// What a provider calls its key where that is not "<name> API key" (pi 1.6's key prompts).
const KEY_NAMES: &[(&str, &str)] = &[
    ("azure", "Azure OpenAI API key"),
    ("github-copilot", "GitHub Copilot token"),
    ("google", "Gemini API key"),
    ("huggingface", "Hugging Face token"),
    ("kimi-coding", "Kimi API key"),
    ("meta", "Meta Model API key"),
    ("moonshotai-cn", "Moonshot AI API key"),
    ("opencode", "OpenCode API key"),
    ("opencode-go", "OpenCode API key"),
];

/// The key a provider's login asks for: `Enter <this>`.
fn key_name(p: &ProviderOption) -> String {
    KEY_NAMES
        .iter()
        .find(|(id, _)| *id == p.id)
        .map_or_else(|| format!("{} API key", p.name), |(_, name)| (*name).to_string())
}

/// Where a cancelled sign-in or key entry goes back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoginBack {
    /// The first menu (its Radius row starts a sign-in directly).
    Menu,
    /// A provider list: accounts (`Some(true)`), keys (`Some(false)`) or both.
    List(Option<bool>),
}

/// The value of the first menu's Radius row (its label names the provider).
const RADIUS_ROW: &str = "radius";

/// What Radius's method menu says about it (our wording of pi 1.6's line).
const RADIUS_INTRO: &str = "Radius is a service made for Pi by the people who build Pi, Earendil Works";

/// A provider offered by the login and logout lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderOption {
    pub id: String,
    pub name: String,
    pub oauth: bool,
}

/// A step of a running sign-in, for the screen that shows it.
#[derive(Debug)]
pub enum LoginStep {
    Update(LoginUpdate),
    /// The sign-in ended (its screen closes).
    Finished {
        provider: ProviderOption,
        result: Result<(), LoginError>,
    },
    UrlCopied(Result<(), String>),
    CodeCopied(bool),
}

/// Numbers sign-ins, so a late update of an earlier one never reaches a newer screen.
static NEXT_LOGIN: AtomicU64 = AtomicU64::new(1);

fn show(view: impl pi_tui::Component + 'static, picker: Picker) -> Vec<Effect> {
    vec![Effect::Open(Overlay {
        view: Box::new(view),
        picker,
    })]
}

/// Partners first, then by name.
fn sort_options(options: &mut [ProviderOption]) {
    options.sort_by_key(|o| {
        let partner = PARTNERS.iter().position(|p| *p == o.id).unwrap_or(PARTNERS.len());
        (partner, o.name.to_lowercase())
    });
}

/// The providers the API-key login offers: every provider of a known model except the
/// account-only ones, partners first, then by name.
pub fn api_key_providers(providers: impl IntoIterator<Item = (String, String)>) -> Vec<ProviderOption> {
    let mut out: Vec<ProviderOption> = Vec::new();
    for (id, name) in providers {
        if OAUTH_ONLY.contains(&id.as_str()) || out.iter().any(|o| o.id == id) {
            continue;
        }
        out.push(ProviderOption { id, name, oauth: false });
    }
    sort_options(&mut out);
    out
}

/// The providers with an account sign-in, named as the registry names them.
fn account_providers(cx: &Ctx<'_>) -> Vec<ProviderOption> {
    account_providers_of(&cx.session)
}

fn account_providers_of(session: &pi_coding_agent::session::AgentSession) -> Vec<ProviderOption> {
    let Ok(reg) = session.registry().lock() else {
        return Vec::new();
    };
    let mut out: Vec<ProviderOption> = login_session::providers()
        .into_iter()
        .map(|p| ProviderOption {
            id: p.id.to_string(),
            name: reg.provider_display_name(p.id).to_string(),
            oauth: true,
        })
        .collect();
    // models.json providers with `"oauth": "radius"` sign in to their own gateway.
    for (id, gateway) in pi_coding_agent::config::oauth::radius_gateways(&paths_for(session)) {
        if !out.iter().any(|o| o.id == id) {
            out.push(ProviderOption {
                id,
                name: gateway.name,
                oauth: true,
            });
        }
    }
    // Providers extensions registered with their own sign-in (an `oauth` block).
    for (id, name) in session.services().extensions().oauth_logins() {
        out.retain(|o| o.id != id);
        out.push(ProviderOption { id, name, oauth: true });
    }
    sort_options(&mut out);
    out
}

fn key_providers(cx: &Ctx<'_>) -> Vec<ProviderOption> {
    key_providers_of(&cx.session)
}

fn key_providers_of(session: &pi_coding_agent::session::AgentSession) -> Vec<ProviderOption> {
    let Ok(reg) = session.registry().lock() else {
        return Vec::new();
    };
    // A Radius gateway takes a key before its list is fetched (it has no models until then).
    let gateways = reg.radius_gateways("");
    api_key_providers(
        reg.all()
            .iter()
            .map(|m| m.provider.as_str())
            .chain(gateways.iter().map(|(id, _)| id.as_str()))
            .chain(KEY_ONLY.iter().copied())
            .chain(LLAMA_ON.load(Ordering::Relaxed).then_some(super::login_llama::PROVIDER))
            .map(|id| (id.to_string(), reg.provider_display_name(id).to_string())),
    )
}

/// Providers whose account sign-in is a subscription (the others are plain accounts).
const SUBSCRIPTIONS: &[&str] = &[
    "anthropic",
    "github-copilot",
    "kimi-coding",
    "meta",
    "openai",
    "openai-codex",
    "xai",
];

/// The `/login <provider>` completions: each provider once, partners first, then by name,
/// with its name and the kinds of sign-in it offers (`Radius · account/API key`).
pub fn completion_candidates(session: &pi_coding_agent::session::AgentSession) -> Vec<(String, String)> {
    let mut merged: Vec<(ProviderOption, bool, bool)> = Vec::new();
    for p in account_providers_of(session)
        .into_iter()
        .chain(key_providers_of(session))
    {
        match merged.iter_mut().find(|(o, _, _)| o.id == p.id) {
            Some(entry) => {
                entry.1 |= p.oauth;
                entry.2 |= !p.oauth;
            }
            None => {
                let (oauth, key) = (p.oauth, !p.oauth);
                merged.push((p, oauth, key));
            }
        }
    }
    let mut options: Vec<ProviderOption> = merged.iter().map(|(o, _, _)| o.clone()).collect();
    sort_options(&mut options);
    options
        .into_iter()
        .filter_map(|o| {
            let (_, oauth, key) = merged.iter().find(|(m, _, _)| m.id == o.id)?;
            let mut kinds = Vec::new();
            if *oauth {
                kinds.push(if SUBSCRIPTIONS.contains(&o.id.as_str()) {
                    "subscription"
                } else {
                    "account"
                });
            }
            if *key {
                kinds.push("API key");
            }
            let kinds = kinds.join("/");
            let description = if o.name == o.id {
                kinds
            } else {
                format!("{} · {kinds}", o.name)
            };
            Some((o.id, description))
        })
        .collect()
}

/// `/login [provider]`: with a provider that names one sign-in, that sign-in; with one that
/// offers both kinds, their menu; else the lists (searched for the text).
pub fn command(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let query = arg.trim();
    if query.is_empty() {
        return open_login(cx);
    }
    let q = query.to_lowercase();
    let matching: Vec<ProviderOption> = account_providers(cx)
        .into_iter()
        .chain(key_providers(cx))
        .filter(|o| o.id.to_lowercase() == q || o.name.to_lowercase() == q)
        .collect();
    match matching.as_slice() {
        [one] => start(cx, one.clone(), None),
        [first, ..] if matching.iter().all(|o| o.id == first.id) => {
            let title = format!("Select authentication method for {}:", first.name);
            show(
                LoginChoice::menu(title, method_rows(), cx.theme.clone()),
                Picker::LoginMethod(Some(matching)),
            )
        }
        _ => open_providers(cx, None, query),
    }
}

fn method_rows() -> Vec<ChoiceRow> {
    [ACCOUNT, API_KEY]
        .iter()
        .map(|l| ChoiceRow {
            value: l.to_string(),
            label: l.to_string(),
            suffix: String::new(),
        })
        .collect()
}

/// Radius among the account sign-ins, which the first menu offers directly.
fn radius_option(cx: &Ctx<'_>) -> Option<ProviderOption> {
    account_providers(cx).into_iter().find(|o| o.id == RADIUS_ROW)
}

/// `/login`: first the kind of login; as in pi 1.6 the menu ends with Radius's own sign-in.
pub fn open_login(cx: &Ctx<'_>) -> Vec<Effect> {
    let mut rows = method_rows();
    if let Some(radius) = radius_option(cx) {
        let suffix = match cx.session.registry().lock() {
            Ok(reg) => status_of(cx, &reg, &radius, false),
            Err(_) => String::new(),
        };
        rows.push(ChoiceRow {
            value: RADIUS_ROW.to_string(),
            label: format!("Sign in with {}", radius.name),
            suffix,
        });
    }
    show(
        LoginChoice::menu("Select authentication method:", rows, cx.theme.clone()).with_brand_animation(),
        Picker::LoginMethod(None),
    )
}

/// The credential state a row shows after the provider's name (1.6's wording and colours).
/// `/logout` lists only stored credentials and says `configured` of each; `/login` names
/// where the auth comes from (`stored`, `runtime`, `models_json_key`, `env: NAME`, ...).
fn status_of(cx: &Ctx<'_>, reg: &pi_coding_agent::config::ModelRegistry, p: &ProviderOption, logout: bool) -> String {
    let t = cx.theme;
    let status = reg.auth_status(&p.id);
    let configured = logout || status["configured"].as_bool().unwrap_or(false);
    if !configured {
        return t.paint("muted", " • not configured");
    }
    let oauth = match reg.auth().get(&p.id) {
        Some(c) => matches!(c, Credential::OAuth { .. }),
        None => false,
    };
    if oauth != p.oauth {
        let kind = if oauth { "subscription" } else { "API key" };
        return format!(
            "{}{}",
            t.paint("muted", " • "),
            t.paint("warning", &format!("{kind} configured"))
        );
    }
    let source = if logout {
        ""
    } else {
        status["label"]
            .as_str()
            .or(status["source"].as_str())
            .unwrap_or_default()
    };
    t.paint("success", &format!(" ✓ {}", source_label(source)))
}

/// How 1.6 names where a configured provider's auth comes from: environment variable names
/// as `env: NAME`, a stored credential seen from `/logout` as `configured`, else the source.
fn source_label(source: &str) -> String {
    let env_name = |n: &str| {
        let mut chars = n.chars();
        chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    if source.is_empty() || source == "OAuth" || source == "stored credential" {
        "configured".to_string()
    } else if source.split(", ").all(env_name) {
        format!("env: {source}")
    } else {
        source.to_string()
    }
}

fn rows_for(cx: &Ctx<'_>, options: &[ProviderOption], logout: bool) -> Vec<ChoiceRow> {
    let Ok(reg) = cx.session.registry().lock() else {
        return Vec::new();
    };
    options
        .iter()
        .map(|p| {
            let partner = if PARTNERS.contains(&p.id.as_str()) {
                cx.theme.paint("muted", " ✦")
            } else {
                String::new()
            };
            ChoiceRow {
                value: p.id.clone(),
                label: p.name.clone(),
                suffix: format!("{partner}{}", status_of(cx, &reg, p, logout)),
            }
        })
        .collect()
}

/// The provider list of one kind (`Some(true)` accounts, `Some(false)` keys, `None` both).
fn open_providers(cx: &Ctx<'_>, oauth: Option<bool>, query: &str) -> Vec<Effect> {
    let options: Vec<ProviderOption> = match oauth {
        Some(true) => account_providers(cx),
        Some(false) => key_providers(cx),
        None => {
            let mut all = account_providers(cx);
            all.extend(key_providers(cx));
            sort_options(&mut all);
            all
        }
    };
    if options.is_empty() {
        let text = match oauth {
            Some(true) => "No account providers available.",
            Some(false) => "No API key providers available.",
            None => "No login providers available.",
        };
        return vec![Effect::StatusLine(text.into())];
    }
    let rows = rows_for(cx, &options, false);
    let list = LoginChoice::searchable(
        "Select provider to configure:",
        rows,
        query,
        "No providers available",
        cx.theme.clone(),
    )
    .with_brand_animation();
    show(list, Picker::LoginProvider { oauth, options })
}

/// `/logout`: every stored credential.
pub fn open_logout(cx: &Ctx<'_>) -> Vec<Effect> {
    let mut options: Vec<ProviderOption> = match cx.session.registry().lock() {
        Ok(reg) => {
            let auth = reg.auth();
            auth.list()
                .into_iter()
                .filter_map(|id| {
                    let cred = auth.get(&id)?;
                    Some(ProviderOption {
                        name: reg.provider_display_name(&id).to_string(),
                        oauth: matches!(cred, Credential::OAuth { .. }),
                        id,
                    })
                })
                .collect()
        }
        Err(_) => return Vec::new(),
    };
    if options.is_empty() {
        return vec![Effect::StatusLine(
            "No stored credentials to remove. /logout only removes credentials saved by /login; environment variables and models.json config are unchanged.".into(),
        )];
    }
    sort_options(&mut options);
    let rows = rows_for(cx, &options, true);
    let list = LoginChoice::searchable(
        "Select provider to logout:",
        rows,
        "",
        "No providers logged in. Use /login first.",
        cx.theme.clone(),
    );
    show(list, Picker::Logout(options))
}

/// The login method was chosen (for one provider when the menu was opened for it).
pub fn method_chosen(cx: &Ctx<'_>, only: Option<Vec<ProviderOption>>, value: &str) -> Vec<Effect> {
    if only.is_none() && value == RADIUS_ROW {
        return match radius_option(cx) {
            Some(p) => start(cx, p, Some(LoginBack::Menu)),
            None => Vec::new(),
        };
    }
    let oauth = value == ACCOUNT;
    match only {
        Some(options) => match options.into_iter().find(|o| o.oauth == oauth) {
            Some(p) => start(cx, p, None),
            None => Vec::new(),
        },
        None => open_providers(cx, Some(oauth), ""),
    }
}

/// A provider was chosen for login.
pub fn provider_chosen(cx: &Ctx<'_>, oauth: Option<bool>, options: &[ProviderOption], value: &str) -> Vec<Effect> {
    match options.iter().find(|o| o.id == value).cloned() {
        Some(p) => start(cx, p, Some(LoginBack::List(oauth))),
        None => Vec::new(),
    }
}

/// A list closed without a choice: the provider list goes back to the method menu.
pub fn list_cancelled(cx: &Ctx<'_>, oauth: Option<bool>) -> Vec<Effect> {
    match oauth {
        Some(_) => open_login(cx),
        None => Vec::new(),
    }
}

/// A sign-in or key entry was cancelled: back to the list it was started from.
pub fn flow_cancelled(cx: &Ctx<'_>, back: Option<LoginBack>) -> Vec<Effect> {
    match back {
        Some(LoginBack::Menu) => open_login(cx),
        Some(LoginBack::List(oauth)) => open_providers(cx, oauth, ""),
        None => Vec::new(),
    }
}

/// Start the login of `p`: the sign-in screen for an account, key entry otherwise.
/// `back` is the list to reopen on cancel.
fn start(cx: &Ctx<'_>, p: ProviderOption, back: Option<LoginBack>) -> Vec<Effect> {
    // llama.cpp's key comes with its server's URL, asked and checked by its own flow.
    if p.oauth || p.id == super::login_llama::PROVIDER {
        return start_sign_in(cx, p, back);
    }
    let title = format!("Login to {}", p.name);
    let details = if p.id == "amazon-bedrock" {
        vec![
            (
                "AWS profiles, IAM keys and role credentials work too (set them in the environment).".to_string(),
                "text",
            ),
            ("See:".to_string(), "muted"),
            (
                format!("  {}", cx.paths().agent_dir.join("docs").join("providers.md").display()),
                "accent",
            ),
        ]
    } else {
        Vec::new()
    };
    let message = format!("Enter {}", key_name(&p));
    let view = LoginFlow::key_entry(title, &message, details, cx.theme.clone());
    show(view, Picker::LoginKey { provider: p, back })
}

/// The sign-in screen, with the flow running behind it; its updates come back as
/// [`Effect::Login`].
fn start_sign_in(cx: &Ctx<'_>, p: ProviderOption, back: Option<LoginBack>) -> Vec<Effect> {
    let id = NEXT_LOGIN.fetch_add(1, Ordering::Relaxed);
    let cancel = CancellationToken::new();
    let mut view = LoginFlow::new(id, format!("Login to {}", p.name), cancel.clone(), cx.theme.clone());
    if p.id == RADIUS_ROW {
        view = view.with_intro(RADIUS_INTRO);
    }
    let paths = paths_for(&cx.session);
    let tx = cx.tx.clone();
    let provider = p.clone();
    let extensions = cx.session.services().extensions().clone();
    let agent = cx.session.clone();
    tokio::spawn(async move {
        let mut session = if !provider.oauth && provider.id == super::login_llama::PROVIDER {
            login_session::start_custom_login(move |ui| super::login_llama::login(agent, ui))
        } else if extensions.has_oauth_provider(&provider.id) {
            let id = provider.id.clone();
            login_session::start_custom_login(move |ui| {
                pi_coding_agent::extensions::oauth_login::login(extensions, id, ui)
            })
        } else {
            login_session::start_login(paths, &provider.id)
        };
        let mut stopping = false;
        loop {
            let next = if stopping {
                session.next().await
            } else {
                tokio::select! {
                    u = session.next() => u,
                    _ = cancel.cancelled() => {
                        session.cancel();
                        stopping = true;
                        continue;
                    }
                }
            };
            let Some(update) = next else { break };
            let (step, done) = match update {
                LoginUpdate::Finished(result) => (
                    LoginStep::Finished {
                        provider: provider.clone(),
                        result,
                    },
                    true,
                ),
                other => (LoginStep::Update(other), false),
            };
            let delivered = tx.send(Msg::Then(then(move |_| vec![Effect::Login(id, step)]))).await;
            if done || !delivered {
                break;
            }
        }
    });
    show(view, Picker::LoginFlow { provider: p, back })
}

/// What a sign-in screen asked for after a key: a copy, or opening a device page.
pub fn flow_request(id: u64, request: FlowRequest) -> Effect {
    match request {
        FlowRequest::CopyUrl(url) => blocking(move || {
            let result = super::commands::copy_to_clipboard(&url);
            then(move |_| vec![Effect::Login(id, LoginStep::UrlCopied(result))])
        }),
        FlowRequest::OpenAndCopy { uri, code } => blocking(move || {
            pi_coding_agent::subcommands::auth_oauth::open_url(&uri);
            let ok = super::commands::copy_to_clipboard(&code).is_ok();
            then(move |_| vec![Effect::Login(id, LoginStep::CodeCopied(ok))])
        }),
    }
}

/// A step for a sign-in screen that is no longer shown (cancelled): only its end matters.
pub fn step_without_screen(cx: &Ctx<'_>, step: LoginStep) -> Vec<Effect> {
    match step {
        LoginStep::Finished { provider, result } => finished(cx, provider, result),
        // A question nobody will answer: dropping it cancels the flow.
        _ => Vec::new(),
    }
}

/// A sign-in ended: the registry reads auth.json again, then the outcome is said (and the
/// provider's first model is taken when there was none).
pub fn finished(cx: &Ctx<'_>, p: ProviderOption, result: Result<(), LoginError>) -> Vec<Effect> {
    match result {
        Err(LoginError::Cancelled) => Vec::new(),
        Err(e) if !p.oauth => vec![notice(format!("Failed to save API key for {}: {e}", p.name), "error")],
        Err(e) => vec![notice(format!("Failed to login to {}: {e}", p.name), "error")],
        Ok(()) => {
            let registry = cx.session.registry().clone();
            let paths = paths_for(&cx.session);
            vec![blocking(move || {
                // As 1.6: the provider's catalogue first (a Radius gateway lists its models
                // only to a signed-in account), then the registry reads it.
                let catalog = pi_coding_agent::config::models_store_refresh::refresh_after_login(&paths, &p.id);
                if let Ok(mut reg) = registry.lock() {
                    reg.auth_mut().reload();
                    reg.refresh();
                }
                then(move |cx| {
                    let action = if p.oauth {
                        format!("Logged in to {}", p.name)
                    } else {
                        format!("Saved API key for {}", p.name)
                    };
                    let mut out = saved(cx, &p, action.clone());
                    out.extend(catalog_warning(&action, catalog));
                    out
                })
            })]
        }
    }
}

/// pi 1.6's warning when the catalogue refresh after a login did not finish.
fn catalog_warning(
    action: &str,
    catalog: pi_coding_agent::config::models_store_refresh::PickerRefresh,
) -> Option<Effect> {
    use pi_coding_agent::config::models_store_refresh::PickerRefresh;
    let text = match catalog {
        PickerRefresh::Done => return None,
        PickerRefresh::TimedOut => format!("{action}, but its model catalog refresh timed out; using cached models."),
        PickerRefresh::Failed(_) => {
            format!("{action}, but its model catalog could not be refreshed; using cached models.")
        }
    };
    Some(notice(text, "warning"))
}

/// Say that the credential of `p` was saved; without a model yet, take the provider's first.
fn saved(cx: &Ctx<'_>, p: &ProviderOption, action: String) -> Vec<Effect> {
    let path = paths_for(&cx.session).auth_path();
    let mut out = Vec::new();
    if cx.session.model().is_none() {
        match cx.session.available_models().into_iter().find(|m| m.provider == p.id) {
            Some(m) => {
                out.push(Effect::StatusLine(format!(
                    "{action}. Selected {}. Credentials saved to {}",
                    m.id,
                    path.display()
                )));
                out.push(super::commands::set_model(cx.session.clone(), m));
            }
            None => {
                out.push(Effect::StatusLine(format!(
                    "{action}. Credentials saved to {}",
                    path.display()
                )));
                out.push(notice(
                    format!("{action}, but no models are available for that provider. Use /model to select a model."),
                    "error",
                ));
            }
        }
    } else {
        out.push(Effect::StatusLine(format!(
            "{action}. Credentials saved to {}",
            path.display()
        )));
        // The model in use may be the one this sign-in now reaches through a subscription.
        out.push(Effect::CheckSubscription);
    }
    out.push(Effect::RefreshFooter);
    out
}

/// Change the stored credentials and refresh the registry, then write auth.json with the
/// registry unlocked (its file lock may wait for another pi); on the blocking pool. The error,
/// if any.
fn change_auth(
    registry: &std::sync::Mutex<pi_coding_agent::config::ModelRegistry>,
    change: impl FnOnce(&mut pi_coding_agent::config::auth::AuthStorage) -> pi_coding_agent::config::auth::AuthWrite,
) -> Option<String> {
    let write = match registry.lock() {
        Ok(mut reg) => {
            let write = change(reg.auth_mut());
            reg.refresh();
            write
        }
        Err(_) => return Some("the model registry is unavailable".to_string()),
    };
    write.apply().err()
}

/// The API key was entered: saved on the blocking pool, then reported.
pub fn key_entered(cx: &Ctx<'_>, p: ProviderOption, key: &str) -> Vec<Effect> {
    let key = key.trim().to_string();
    if key.is_empty() {
        return vec![notice(
            format!("Failed to save API key for {}: API key cannot be empty.", p.name),
            "error",
        )];
    }
    let registry = cx.session.registry().clone();
    let paths = paths_for(&cx.session);
    vec![blocking(move || {
        let error = change_auth(&registry, |auth| auth.stage(&p.id, Some(Credential::api_key(&key))));
        // As after an account sign-in: the provider's catalogue, then the registry reads it.
        let catalog = error.is_none().then(|| {
            let outcome = pi_coding_agent::config::models_store_refresh::refresh_after_login(&paths, &p.id);
            if let Ok(mut reg) = registry.lock() {
                reg.refresh();
            }
            outcome
        });
        then(move |cx| match error {
            Some(e) => vec![notice(format!("Failed to save API key for {}: {e}", p.name), "error")],
            None => {
                let action = format!("Saved API key for {}", p.name);
                let mut out = saved(cx, &p, action.clone());
                out.extend(catalog.and_then(|c| catalog_warning(&action, c)));
                out
            }
        })
    })]
}

/// A credential was chosen for removal: removed on the blocking pool, then reported.
pub fn logout_chosen(cx: &Ctx<'_>, options: &[ProviderOption], value: &str) -> Vec<Effect> {
    let Some(p) = options.iter().find(|o| o.id == value).cloned() else {
        return Vec::new();
    };
    let registry = cx.session.registry().clone();
    vec![blocking(move || {
        let error = change_auth(&registry, |auth| auth.stage(&p.id, None));
        let text = match error {
            Some(e) => Err(format!("Logout failed: {e}")),
            None if p.oauth => Ok(format!("Logged out of {}", p.name)),
            None => Ok(format!(
                "Removed stored API key for {}. Environment variables and models.json config are unchanged.",
                p.name
            )),
        };
        then(move |_| {
            vec![
                match text {
                    Ok(t) => Effect::StatusLine(t),
                    Err(t) => notice(t, "error"),
                },
                Effect::RefreshFooter,
            ]
        })
    })]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_providers_skip_subscription_only_and_duplicates() {
        let v = api_key_providers(vec![
            ("openai".to_string(), "OpenAI".to_string()),
            ("openai-codex".to_string(), "OpenAI Codex".to_string()),
            ("github-copilot".to_string(), "GitHub Copilot".to_string()),
            ("anthropic".to_string(), "Anthropic".to_string()),
            ("openai".to_string(), "OpenAI".to_string()),
        ]);
        let ids: Vec<&str> = v.iter().map(|o| o.id.as_str()).collect();
        // Copilot also takes a token, as in pi 1.6; Codex only an account.
        assert_eq!(ids, ["anthropic", "github-copilot", "openai"]);
        let v = api_key_providers(vec![
            ("openai".to_string(), "OpenAI".to_string()),
            ("openrouter".to_string(), "OpenRouter".to_string()),
            ("radius".to_string(), "Radius".to_string()),
        ]);
        let ids: Vec<&str> = v.iter().map(|o| o.id.as_str()).collect();
        assert_eq!(ids, ["radius", "openrouter", "openai"], "partners first");
    }

    #[test]
    fn sources_read_as_in_pi_1_6() {
        assert_eq!(source_label("stored"), "stored");
        assert_eq!(source_label("models_json_key"), "models_json_key");
        assert_eq!(source_label("ANTHROPIC_API_KEY"), "env: ANTHROPIC_API_KEY");
        assert_eq!(source_label("AWS_PROFILE, AWS_REGION"), "env: AWS_PROFILE, AWS_REGION");
        assert_eq!(source_label("environment"), "environment");
        assert_eq!(source_label("stored credential"), "configured");
        assert_eq!(source_label(""), "configured");
    }

    #[test]
    fn key_prompts_use_each_provider_s_own_name_for_its_key() {
        let p = |id: &str, name: &str| ProviderOption {
            id: id.into(),
            name: name.into(),
            oauth: false,
        };
        assert_eq!(key_name(&p("github-copilot", "GitHub Copilot")), "GitHub Copilot token");
        assert_eq!(key_name(&p("google", "Google")), "Gemini API key");
        assert_eq!(key_name(&p("anthropic", "Anthropic")), "Anthropic API key");
    }
}
