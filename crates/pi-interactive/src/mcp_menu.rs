//! `/mcp` in the terminal UI: the configured MCP servers with their state, exposure and
//! scope (those that need attention first), a page per server (transport, files, state, the
//! full error; tools, reconnect, sign-in and sign-out, exposure, enable/disable, in the project
//! too), the sign-in screen (progress, the authorization URL, a pasted redirect URL, cancel),
//! and the `/mcp reconnect|login|logout [server]` subcommands.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pi_mcp::config::ServerPatch;
use pi_mcp::{Exposure, Scope};
use pi_tui::components::SelectItem;

use tokio_util::sync::{CancellationToken, DropGuard};

use super::dialogs::{Dialog, Refresh, Refreshed};
use super::effect::{blocking, blocking_task, notice, spawn, then, Ctx, Effect, Overlay, Picker};
use super::events::Msg;
use super::mcp_sign_in::{set_stage, McpSignInView, SharedStage, Stage};
use pi_coding_agent::mcp::runtime::McpRuntime;
use pi_coding_agent::mcp::server::{McpServer, Phase};
use pi_coding_agent::mcp::sign_in::SignInControls;

const USAGE: &str = "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]";

/// What each exposure means, for the exposure menu and the tools page.
const EXPOSURES: [(Exposure, &str); 3] = [
    (
        Exposure::Codemode,
        "called from codemode scripts; not declared to the model",
    ),
    (Exposure::Deferred, "found through tool_search, declared once found"),
    (Exposure::Direct, "declared to the model as tools of their own"),
];

/// `/mcp [login|logout|reconnect] [server]`.
pub fn command(cx: &Ctx<'_>, arg: &str) -> Vec<Effect> {
    let mut words = arg.split_whitespace();
    let (action, name): (&'static str, _) = match (words.next(), words.next(), words.next()) {
        (None, _, _) => return open_list(cx),
        (Some("reconnect"), name, None) => ("reconnect", name.map(str::to_string)),
        (Some("login"), name, None) => ("login", name.map(str::to_string)),
        (Some("logout"), name, None) => ("logout", name.map(str::to_string)),
        _ => return vec![notice(USAGE, "warning")],
    };
    // As pi 1.6, a subcommand first lets the servers finish starting, so that the one meant
    // (the one that failed, the one that needs sign-in) is known.
    let runtime = cx.session.services().mcp().clone();
    vec![spawn(async move {
        runtime.wait_for_all().await;
        then(move |cx| {
            let name = name.as_deref();
            match action {
                "reconnect" => pick_then(cx, name, Pick::RECONNECT, |cx, server| {
                    vec![reconnect(cx, server, false)]
                }),
                "login" => pick_then(cx, name, Pick::OAUTH, |cx, server| {
                    start_sign_in(cx, server, SignInFrom::Command)
                }),
                _ => pick_then(cx, name, Pick::OAUTH, |cx, server| vec![sign_out(cx, server, false)]),
            }
        })
    })]
}

/// Which servers a subcommand applies to, which of them it prefers when none is named, and
/// what it says when none applies.
#[derive(Clone, Copy)]
struct Pick {
    eligible: fn(&McpServer) -> bool,
    preferred: fn(&McpServer) -> bool,
    none: &'static str,
}

impl Pick {
    /// `/mcp reconnect`: enabled servers, those that failed or lost their connection first.
    const RECONNECT: Pick = Pick {
        eligible: McpServer::is_enabled,
        preferred: |s| matches!(s.phase(), Phase::Failed(_) | Phase::Closed),
        none: "No enabled MCP server to reconnect.",
    };
    /// `/mcp login|logout`: OAuth servers, those that need sign-in first.
    const OAUTH: Pick = Pick {
        eligible: uses_oauth,
        preferred: |s| matches!(s.phase(), Phase::NeedsSignIn(_)),
        none: "No enabled MCP server uses OAuth. Only HTTP servers without an Authorization header do.",
    };
}

/// Run `then` on the server a subcommand means, as pi 1.6 resolves it: the one named, else the
/// only eligible one, else the only preferred one, else the one picked from a list.
fn pick_then(
    cx: &Ctx<'_>,
    name: Option<&str>,
    pick: Pick,
    then: impl FnOnce(&Ctx<'_>, Arc<McpServer>) -> Vec<Effect> + Send + 'static,
) -> Vec<Effect> {
    if let Some(name) = name {
        return match find(cx, name) {
            None => vec![notice(format!("No MCP server named \"{name}\"."), "error")],
            Some(server) if !(pick.eligible)(&server) => vec![notice(pick.none, "error")],
            Some(server) => then(cx, server),
        };
    }
    let candidates: Vec<_> = cx
        .session
        .services()
        .mcp()
        .servers()
        .into_iter()
        .filter(|s| (pick.eligible)(s))
        .collect();
    let preferred: Vec<_> = candidates.iter().filter(|s| (pick.preferred)(s)).collect();
    match (candidates.len(), preferred.as_slice()) {
        (0, _) => vec![notice(pick.none, "dim")],
        (1, _) => then(cx, Arc::clone(&candidates[0])),
        (_, [one]) => {
            let one = Arc::clone(one);
            then(cx, one)
        }
        _ => {
            // Several fit: the user picks one (pi 1.6's "MCP server" selector).
            let items = candidates
                .iter()
                .map(|s| SelectItem::new(s.name()).with_label(s.name()))
                .collect();
            let dialog = Dialog::choice("MCP server", items, false, cx.theme.clone());
            vec![Effect::Open(Overlay {
                view: Box::new(dialog),
                picker: Picker::Custom(Box::new(move |cx, value| {
                    match value.and_then(|name| find(cx, &name)) {
                        Some(server) => then(cx, server),
                        None => Vec::new(),
                    }
                })),
            })]
        }
    }
}

/// Whether signing in applies: an enabled HTTP server without an Authorization header or a
/// provider's login.
fn uses_oauth(server: &McpServer) -> bool {
    server.is_enabled() && server.entry.config.uses_oauth()
}

/// Where a server is, as its row says it (`connected · 3 tools · resources`).
pub fn describe_state(server: &McpServer, first_line_only: bool) -> String {
    match server.phase() {
        Phase::Disabled => "disabled".into(),
        Phase::Starting => "starting".into(),
        Phase::Connecting => "connecting…".into(),
        Phase::Connected(c) => {
            let n = c.tools.len();
            let resources = if c.client.server_info().has_resources() {
                " · resources"
            } else {
                ""
            };
            format!("connected · {n} tool{}{resources}", if n == 1 { "" } else { "s" })
        }
        Phase::NeedsSignIn(_) => "needs sign-in".into(),
        Phase::Failed(message) => {
            let text = if first_line_only {
                message.lines().next().unwrap_or("").to_string()
            } else {
                message
            };
            format!("failed: {text}")
        }
        Phase::Closed => "disconnected".into(),
    }
}

/// Servers that need the user come first: sign-in, failures, lost connections, starting.
fn attention_rank(server: &McpServer) -> u8 {
    match server.phase() {
        Phase::NeedsSignIn(_) => 0,
        Phase::Failed(_) => 1,
        Phase::Closed => 2,
        Phase::Starting | Phase::Connecting => 3,
        Phase::Connected(_) => 4,
        Phase::Disabled => 5,
    }
}

fn scope_of(server: &McpServer) -> &'static str {
    match (server.entry.scope, &server.entry.override_path) {
        (Scope::Global, Some(_)) => "global, project override",
        (scope, _) => scope.as_str(),
    }
}

/// Wake the screen whenever one of `servers` changes phase, until the guard is dropped (the
/// dialog showing them closed).
fn wake_on_changes(cx: &Ctx<'_>, servers: &[Arc<McpServer>]) -> DropGuard {
    let cancel = CancellationToken::new();
    let token = cancel.clone();
    let mut receivers: Vec<_> = servers.iter().map(|s| s.watch_phase()).collect();
    let tx = cx.tx.clone();
    tokio::spawn(async move {
        while !receivers.is_empty() {
            let changed = tokio::select! {
                _ = token.cancelled() => None,
                (result, index, _) = futures::future::select_all(receivers.iter_mut().map(|r| Box::pin(r.changed()))) => {
                    Some((result.is_ok(), index))
                }
            };
            match changed {
                None => break,
                // That server is gone: follow the others.
                Some((false, index)) => {
                    receivers.swap_remove(index);
                }
                // An empty continuation: the loop draws a frame, and the dialog refreshes.
                Some((true, _)) => {
                    if !tx.send(Msg::Then(then(|_| Vec::new()))).await {
                        break;
                    }
                }
            }
        }
    });
    cancel.drop_guard()
}

/// The list's rows: those that need attention first, then by name.
fn list_rows(runtime: &McpRuntime) -> Refreshed {
    let mut servers = runtime.servers();
    servers.sort_by(|a, b| {
        attention_rank(a)
            .cmp(&attention_rank(b))
            .then_with(|| a.name().cmp(b.name()))
    });
    let width = servers
        .iter()
        .map(|s| s.name().chars().count())
        .max()
        .unwrap_or(0)
        .max(30);
    let items = servers
        .iter()
        .map(|s| {
            let exposure = s.entry.config.exposure.as_str();
            SelectItem::new(s.name())
                .with_label(format!("{:width$}", s.name()))
                .with_description(format!("{} · {exposure} · {}", describe_state(s, true), scope_of(s)))
        })
        .collect();
    let errors = runtime.config_errors().iter().map(|e| format!("config: {e}")).collect();
    Refreshed {
        items,
        details: Vec::new(),
        errors,
    }
}

/// What the rows say, to tell whether they changed.
fn fingerprint(rows: &Refreshed) -> Vec<String> {
    rows.items
        .iter()
        .map(|i| format!("{}\t{}", i.value, i.description.as_deref().unwrap_or("")))
        .chain(rows.details.iter().cloned())
        .chain(rows.errors.iter().cloned())
        .collect()
}

/// A refresh that gives new rows only when `rows` computes different ones.
fn refresh_when_changed(first: &Refreshed, mut rows: impl FnMut() -> Refreshed + Send + 'static) -> Refresh {
    let mut last = fingerprint(first);
    Box::new(move || {
        let now = rows();
        let print = fingerprint(&now);
        (print != last).then(|| {
            last = print;
            now
        })
    })
}

/// The list of servers; it follows their state while it is open.
pub fn open_list(cx: &Ctx<'_>) -> Vec<Effect> {
    let runtime = cx.session.services().mcp().clone();
    let servers = runtime.servers();
    if servers.is_empty() {
        let global = cx.paths().agent_dir.join("mcp.json");
        let errors: Vec<String> = runtime.config_errors().iter().map(|e| format!("config: {e}")).collect();
        let message = format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.",
            global.display()
        );
        // A panel in the editor's place, as pi 1.6 shows it.
        let panel = Dialog::message("MCP servers", vec![message], errors, cx.theme.clone()).accent_rules();
        return vec![Effect::Open(Overlay {
            view: Box::new(panel),
            picker: Picker::Custom(Box::new(|_, _| Vec::new())),
        })];
    }
    let rows = list_rows(&runtime);
    let refresh = refresh_when_changed(&rows, move || list_rows(&runtime));
    let dialog = Dialog::choice("MCP servers", rows.items, false, cx.theme.clone())
        .accent_rules()
        .with_details(Vec::new(), rows.errors)
        .with_hint("enter manage • escape/ctrl+c close")
        .flush_list()
        .live(refresh, wake_on_changes(cx, &servers));
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(|cx, value| match value {
            Some(name) => open_server(cx, &name),
            None => Vec::new(),
        })),
    })]
}

/// The project's `mcp.json`, when the project is trusted (only then is it read).
fn project_file(cx: &Ctx<'_>) -> Option<PathBuf> {
    cx.session
        .services()
        .project_trusted()
        .then(|| cx.paths().cwd.join(".pi").join("mcp.json"))
}

fn find(cx: &Ctx<'_>, name: &str) -> Option<Arc<McpServer>> {
    cx.session
        .services()
        .mcp()
        .servers()
        .into_iter()
        .find(|s| s.name() == name)
}

/// A server's page: what it is, where it is configured, its state, and what can be done in
/// that state. `in_project`: the project's `mcp.json` can override this global server.
fn page_rows(server: &McpServer, in_project: bool, message: Option<&str>) -> Refreshed {
    let entry = &server.entry;
    let saved = match (&entry.override_path, entry.scope) {
        (Some(_), _) => "saved to the project mcp.json".to_string(),
        (None, scope) => format!("saved to the {} mcp.json", scope.as_str()),
    };
    let project_saved = "saved to the project mcp.json";
    let phase = server.phase();
    let mut items = Vec::new();
    if matches!(phase, Phase::Disabled) {
        items.push(
            SelectItem::new("enable")
                .with_label("Enable")
                .with_description(saved.clone()),
        );
        if in_project {
            items.push(
                SelectItem::new("enable-project")
                    .with_label("Enable in this project")
                    .with_description(project_saved),
            );
        }
    } else {
        if let Phase::NeedsSignIn(_) = &phase {
            items.push(
                SelectItem::new("sign-in")
                    .with_label("Sign in")
                    .with_description("opens the browser"),
            );
        }
        if let Phase::Connected(c) = &phase {
            items.push(
                SelectItem::new("tools")
                    .with_label("Tools")
                    .with_description(format!("{} offered", c.tools.len())),
            );
        }
        if matches!(
            phase,
            Phase::Failed(_) | Phase::Closed | Phase::Connected(_) | Phase::NeedsSignIn(_)
        ) {
            items.push(SelectItem::new("reconnect").with_label("Reconnect"));
        }
        if matches!(phase, Phase::Connected(_)) && uses_oauth(server) {
            items.push(
                SelectItem::new("sign-out")
                    .with_label("Sign out")
                    .with_description("deletes the stored credentials"),
            );
        }
        items.push(
            SelectItem::new("exposure")
                .with_label("Exposure")
                .with_description(entry.config.exposure.as_str()),
        );
        items.push(SelectItem::new("disable").with_label("Disable").with_description(saved));
        if in_project {
            items.push(
                SelectItem::new("disable-project")
                    .with_label("Disable in this project")
                    .with_description(project_saved),
            );
        }
    }
    let mut details = vec![
        entry.config.describe_transport(),
        format!("{}: {}", entry.scope.as_str(), entry.source.display()),
    ];
    if let Some(o) = &entry.override_path {
        details.push(format!("project override: {}", o.display()));
    }
    details.push(format!("State: {}", describe_state(server, true)));
    // What the last action said (a failed sign-in, say), then the connection's error.
    let mut errors: Vec<String> = message.into_iter().flat_map(str::lines).map(str::to_string).collect();
    // A server that needs sign-in says so in its state line (and offers "Sign in").
    if let Phase::Failed(error) = &phase {
        errors.extend(error.lines().map(str::to_string));
    }
    Refreshed { items, details, errors }
}

/// One server's page; it follows the server's state while it is open.
pub fn open_server(cx: &Ctx<'_>, name: &str) -> Vec<Effect> {
    open_server_saying(cx, name, None)
}

/// A server's page with what the last action on it said.
fn open_server_saying(cx: &Ctx<'_>, name: &str, message: Option<String>) -> Vec<Effect> {
    let Some(server) = find(cx, name) else {
        return vec![notice("This server is no longer configured.", "warning")];
    };
    let entry = &server.entry;
    let in_project = entry.scope == Scope::Global && entry.override_path.is_none() && project_file(cx).is_some();
    let rows = page_rows(&server, in_project, message.as_deref());
    let guard = wake_on_changes(cx, std::slice::from_ref(&server));
    let watched = Arc::clone(&server);
    let refresh = refresh_when_changed(&rows, move || page_rows(&watched, in_project, message.as_deref()));
    let dialog = Dialog::choice(format!("MCP server {name}"), rows.items, false, cx.theme.clone())
        .accent_rules()
        .with_details(rows.details, rows.errors)
        .with_hint("enter select • escape/ctrl+c back")
        .flush_list()
        .live(refresh, guard);
    let name = name.to_string();
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(move |cx, value| match value.as_deref() {
            None => open_list(cx),
            Some(action) => act(cx, &name, action),
        })),
    })]
}

fn act(cx: &Ctx<'_>, name: &str, action: &str) -> Vec<Effect> {
    let Some(server) = find(cx, name) else {
        return open_list(cx);
    };
    match action {
        "tools" => open_tools(cx, &server),
        "reconnect" => vec![reconnect(cx, server, true)],
        "exposure" => open_exposure(cx, &server),
        "sign-in" => start_sign_in(cx, server, SignInFrom::Page),
        "sign-out" => vec![sign_out(cx, server, true)],
        "enable" | "disable" | "enable-project" | "disable-project" => {
            let enabled = action.starts_with("enable");
            let file = if action.ends_with("-project") {
                project_file(cx)
            } else {
                Some(
                    server
                        .entry
                        .override_path
                        .clone()
                        .unwrap_or_else(|| server.entry.source.clone()),
                )
            };
            let as_override = action.ends_with("-project") || server.entry.override_path.is_some();
            let patch = ServerPatch {
                enabled: Some(enabled),
                ..Default::default()
            };
            let Some(file) = file else {
                return open_server(cx, name);
            };
            // The change applies now (the server connects or closes) and is saved for later runs.
            let runtime = cx.session.services().mcp().clone();
            let live = Arc::clone(&server);
            vec![
                blocking_task(async move {
                    runtime.set_enabled(&live, enabled).await;
                    then(|_| Vec::new())
                }),
                save_quietly(file, name.to_string(), patch, as_override),
            ]
        }
        _ => open_server(cx, name),
    }
}

/// Write `patch` to `file` off the UI thread and say where it went.
fn save(file: PathBuf, name: String, patch: ServerPatch, as_override: bool) -> Effect {
    blocking(move || {
        let result = pi_mcp::config::update_server(&file, &name, &patch, as_override);
        then(move |cx| {
            let mut out = vec![match result {
                Ok(()) => notice(saved_notice(&file), "dim"),
                Err(e) => notice(e.to_string(), "error"),
            }];
            out.extend(open_server(cx, &name));
            out
        })
    })
}

/// Write `patch` to `file` off the UI thread, then show the page again (its state says what
/// changed); only a failure is reported.
fn save_quietly(file: PathBuf, name: String, patch: ServerPatch, as_override: bool) -> Effect {
    blocking(move || {
        let result = pi_mcp::config::update_server(&file, &name, &patch, as_override);
        then(move |cx| {
            let mut out = Vec::new();
            if let Err(e) = result {
                out.push(notice(e.to_string(), "error"));
            }
            out.extend(open_server(cx, &name));
            out
        })
    })
}

fn saved_notice(file: &Path) -> String {
    format!("Saved to {}. It applies when pi starts next.", file.display())
}

fn open_tools(cx: &Ctx<'_>, server: &Arc<McpServer>) -> Vec<Effect> {
    let Phase::Connected(c) = server.phase() else {
        return open_server(cx, server.name());
    };
    let exposure = server.entry.config.exposure;
    let meaning = EXPOSURES
        .iter()
        .find(|(e, _)| *e == exposure)
        .map_or("unreachable", |(_, m)| m);
    let mut details = vec![format!("Exposure {}: {meaning}", exposure.as_str())];
    if !server.entry.config.tool_exposure.is_empty() {
        details.push("Some tools override it with toolExposure.".into());
    }
    let items: Vec<SelectItem> = c
        .tools
        .iter()
        .map(|t| {
            let first = t
                .description
                .as_deref()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            let own = server.entry.config.tool_exposure(&t.name);
            let description = if own == exposure {
                first
            } else {
                format!("[{}] {first}", own.as_str())
            };
            SelectItem::new(t.name.clone())
                .with_label(t.name.clone())
                .with_description(description)
        })
        .collect();
    if items.is_empty() {
        return vec![notice("The server offers no tools.", "dim")];
    }
    let dialog = Dialog::choice(format!("Tools of {}", server.name()), items, false, cx.theme.clone())
        .accent_rules()
        .with_details(details, Vec::new())
        .with_hint("enter/escape back");
    let name = server.name().to_string();
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(move |cx, _| open_server(cx, &name))),
    })]
}

fn open_exposure(cx: &Ctx<'_>, server: &Arc<McpServer>) -> Vec<Effect> {
    let current = server.entry.config.exposure;
    let items = EXPOSURES
        .iter()
        .map(|(e, meaning)| {
            let mark = if *e == current { "✓ " } else { "  " };
            SelectItem::new(e.as_str())
                .with_label(format!("{mark}{}", e.as_str()))
                .with_description(*meaning)
        })
        .collect();
    let file = server
        .entry
        .override_path
        .clone()
        .unwrap_or_else(|| server.entry.source.clone());
    let mut dialog = Dialog::choice(format!("Exposure of {}", server.name()), items, false, cx.theme.clone())
        .accent_rules()
        .with_details(vec![format!("Saved to {}.", file.display())], Vec::new())
        .with_hint("enter save • escape back");
    dialog.select_value(current.as_str());
    let name = server.name().to_string();
    let as_override = server.entry.override_path.is_some();
    vec![Effect::Open(Overlay {
        view: Box::new(dialog),
        picker: Picker::Custom(Box::new(move |cx, value| {
            match value.as_deref().and_then(Exposure::parse).filter(|e| *e != current) {
                Some(exposure) => {
                    let patch = ServerPatch {
                        exposure: Some(exposure),
                        ..Default::default()
                    };
                    vec![save(file, name, patch, as_override)]
                }
                None => open_server(cx, &name),
            }
        })),
    })]
}

/// Connect `server` again; the outcome comes back as a notice, or from the page as the page.
fn reconnect(cx: &Ctx<'_>, server: Arc<McpServer>, reopen: bool) -> Effect {
    let runtime = cx.session.services().mcp().clone();
    blocking_task(async move {
        let phase = runtime.reconnect(&server).await;
        let name = server.name().to_string();
        // As pi 1.6 (and /mcp over RPC): a failed connection is an error that says why.
        let (text, style) = match phase {
            Phase::Failed(error) => (format!("MCP server \"{name}\" failed to connect: {error}"), "error"),
            _ => (
                format!(
                    "Reconnected to MCP server \"{name}\" ({}).",
                    describe_state(&server, true)
                ),
                "dim",
            ),
        };
        then(move |cx| {
            // From the page, as in 1.6, the page's state line says how it went.
            if reopen {
                return open_server(cx, &name);
            }
            vec![notice(text, style)]
        })
    })
}

/// Where a sign-in was started: a server's page (it ends back on the page, which says what
/// went wrong) or `/mcp login` (the screen closes and a notice says how it ended), as in 1.6.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SignInFrom {
    Page,
    Command,
}

/// Start signing in to `server`: the browser opens, and the sign-in screen follows the flow
/// until it ends.
fn start_sign_in(cx: &Ctx<'_>, server: Arc<McpServer>, from: SignInFrom) -> Vec<Effect> {
    let runtime = cx.session.services().mcp().clone();
    let name = server.name().to_string();
    let mut sign_in = match runtime.start_sign_in(&name) {
        Ok(sign_in) => sign_in,
        Err(e) if from == SignInFrom::Page => return open_server_saying(cx, &name, Some(e)),
        Err(e) => return vec![notice(e, "error")],
    };
    let stage: SharedStage = Arc::new(Mutex::new(Stage::Status("Contacting the authorization server…".into())));
    let shown = Arc::new(AtomicBool::new(true));
    let controls = sign_in.controls();
    let tx = cx.tx.clone();
    let progress = Arc::clone(&stage);
    let still_shown = Arc::clone(&shown);
    tokio::spawn(async move {
        while let Some(event) = sign_in.next_event().await {
            set_stage(&progress, stage_of(&event));
            // An empty continuation draws a frame, which reads the new stage.
            if !tx.send(Msg::Then(then(|_| Vec::new()))).await {
                sign_in.cancel();
            }
        }
        let (result, line) = sign_in.finish().await;
        let ok = result.is_success();
        let cancelled = matches!(result, pi_mcp::login::LoginResult::Cancelled);
        tx.send(Msg::Then(then(move |cx| {
            let on_screen = still_shown.swap(false, Ordering::SeqCst);
            match from {
                // Back on the page, which says what went wrong (1.6 shows nothing on success).
                SignInFrom::Page => open_server_saying(cx, &name, (!ok).then_some(line)),
                // The screen closes; the notice says how it ended.
                SignInFrom::Command => {
                    let style = if ok || cancelled { "dim" } else { "error" };
                    let mut out = Vec::new();
                    if on_screen {
                        out.push(Effect::CloseOverlay);
                    }
                    out.push(notice(line, style));
                    out
                }
            }
        })))
        .await;
    });
    sign_in_screen(cx, &server, stage, shown, controls)
}

/// The screen's stage for a step of the flow.
fn stage_of(event: &pi_mcp::login::LoginEvent) -> Stage {
    use pi_mcp::login::LoginEvent;
    match event {
        LoginEvent::Contacting => Stage::Status("Contacting the authorization server…".into()),
        LoginEvent::AuthorizationUrl(url) => Stage::Url {
            url: url.clone(),
            copied: None,
        },
        LoginEvent::Connecting => Stage::Status("Connecting…".into()),
    }
}

/// The sign-in screen: the flow's progress, then the authorization URL (with the copy key)
/// and an input for the URL the browser was sent to when it runs on another machine. Enter
/// hands the URL over; Esc cancels the sign-in.
fn sign_in_screen(
    cx: &Ctx<'_>,
    server: &McpServer,
    stage: SharedStage,
    shown: Arc<AtomicBool>,
    controls: SignInControls,
) -> Vec<Effect> {
    let view = McpSignInView::new(
        format!("Sign in to {}", server.name()),
        cx.theme.clone(),
        Arc::clone(&stage),
    );
    let server_name = server.name().to_string();
    vec![Effect::Open(Overlay {
        view: Box::new(view),
        picker: Picker::Custom(Box::new(move |cx, value| match value {
            Some(url) => {
                controls.paste_redirect_url(&url);
                set_stage(&stage, Stage::Status("Connecting…".into()));
                match find(cx, &server_name) {
                    // The flow goes on: the same screen, now connecting.
                    Some(server) if shown.load(Ordering::SeqCst) => sign_in_screen(cx, &server, stage, shown, controls),
                    _ => Vec::new(),
                }
            }
            None => {
                shown.store(false, Ordering::SeqCst);
                controls.cancel();
                Vec::new()
            }
        })),
    })]
}

/// Forget the server's stored sign-in; from its page the page shows again (its state says
/// what changed), from `/mcp logout` a notice says it.
fn sign_out(cx: &Ctx<'_>, server: Arc<McpServer>, from_page: bool) -> Effect {
    let runtime = cx.session.services().mcp().clone();
    blocking_task(async move {
        let name = server.name().to_string();
        let result = runtime.sign_out(&name).await;
        then(move |cx| {
            if from_page {
                return match result {
                    Ok(_) => open_server(cx, &name),
                    Err(e) => open_server_saying(cx, &name, Some(e)),
                };
            }
            vec![match result {
                Ok(text) => notice(text, "dim"),
                Err(e) => notice(e, "error"),
            }]
        })
    })
}
