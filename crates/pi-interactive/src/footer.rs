//! The footer: working folder, git branch and session name; token and cost totals, context
//! use, and the model with its thinking level.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_tui::{truncate_to_width, visible_width, Component, Frame, LineCache};

use pi_agent::AgentMessage;
use pi_session::{Entry, EntryKind};

use super::theme::UiTheme;
use pi_coding_agent::session::AgentSession;

/// Everything the footer shows, gathered from the session after each run step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FooterData {
    pub cwd: String,
    pub branch: Option<String>,
    pub session_name: Option<String>,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    pub context_percent: Option<f64>,
    pub context_window: u64,
    pub auto_compact: bool,
    pub model: Option<String>,
    pub provider: Option<String>,
    pub multiple_providers: bool,
    pub thinking: Option<String>,
    /// The share of the latest reply's prompt read from the cache, in percent.
    pub cache_hit: Option<f64>,
    /// The model is paid for by a subscription (an OAuth sign-in to a plan, or Kimi Coding).
    pub subscription: bool,
    /// `PI_EXPERIMENTAL=1`.
    pub experimental: bool,
}

/// Providers whose OAuth sign-in is a subscription plan rather than metered use.
const SUBSCRIPTION_PROVIDERS: [&str; 7] = [
    "anthropic",
    "openai-codex",
    "openai",
    "github-copilot",
    "kimi-coding",
    "meta",
    "xai",
];

/// pi's token format: `999`, `1.2k`, `45k`, `1.2M`.
pub fn format_tokens(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    if n < 1000 {
        n.to_string()
    } else if n < 10_000 {
        format!("{:.1}k", f / 1000.0)
    } else if n < 1_000_000 {
        format!("{}k", (f / 1000.0).round())
    } else if n < 10_000_000 {
        format!("{:.1}M", f / 1_000_000.0)
    } else {
        format!("{}M", (f / 1_000_000.0).round())
    }
}

/// `~` for the home folder, only for a path inside it (`/home/ann2` is not in `/home/ann`).
pub fn display_cwd(cwd: &Path) -> String {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    display_cwd_in(cwd, home.as_deref().map(Path::new))
}

fn display_cwd_in(cwd: &Path, home: Option<&Path>) -> String {
    let s = cwd.display().to_string();
    let Some(rest) = home.and_then(|h| cwd.strip_prefix(h).ok()) else {
        return s;
    };
    if rest.as_os_str().is_empty() {
        "~".to_string()
    } else {
        format!("~{}{}", std::path::MAIN_SEPARATOR, rest.display())
    }
}

/// The branch checked out in the repository holding `cwd` (`None` outside git; a detached
/// head shows as `detached`).
pub fn git_branch(cwd: &Path) -> Option<String> {
    let mut dir: Option<PathBuf> = Some(cwd.to_path_buf());
    while let Some(d) = dir {
        let git = d.join(".git");
        let head_file = if git.is_dir() {
            Some(git.join("HEAD"))
        } else if git.is_file() {
            // A worktree: `gitdir: <path>`.
            std::fs::read_to_string(&git)
                .ok()
                .and_then(|t| t.strip_prefix("gitdir:").map(|p| PathBuf::from(p.trim()).join("HEAD")))
        } else {
            None
        };
        if let Some(h) = head_file {
            let head = std::fs::read_to_string(h).ok()?;
            let head = head.trim();
            return Some(match head.strip_prefix("ref: refs/heads/") {
                Some(b) => b.to_string(),
                None => "detached".to_string(),
            });
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    None
}

/// Token and cost totals over every entry of the session file, as pi 1.6 counts them:
/// replies on abandoned branches and before a compaction, cache refreshes, summaries and
/// tool results' own calls. Entries are only ever appended, so an update reads only what
/// was added since the last one (the footer refreshes after every assistant message).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Entries already counted.
    counted: usize,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub cost: f64,
    /// The cache hit rate of the latest reply (none when its prompt had no tokens).
    pub latest_cache_hit: Option<f64>,
}

impl Totals {
    /// Count the entries past those already counted; returns how many were read. Fewer
    /// entries than were counted (another session) are counted afresh.
    pub fn update(&mut self, entries: &[Entry]) -> usize {
        if entries.len() < self.counted {
            self.reset();
        }
        let added = &entries[self.counted..];
        for e in added {
            match &e.kind {
                EntryKind::Message { message, .. } => match message {
                    AgentMessage::Llm(pi_ai::Message::Assistant(a)) => {
                        self.add(&a.usage);
                        let prompt = a.usage.input + a.usage.cache_read + a.usage.cache_write;
                        self.latest_cache_hit = (prompt > 0).then(|| a.usage.cache_read as f64 / prompt as f64 * 100.0);
                    }
                    AgentMessage::Llm(pi_ai::Message::ToolResult(r)) => {
                        if let Some(u) = r.extra.get("usage") {
                            self.add_value(u);
                        }
                    }
                    _ => {}
                },
                EntryKind::Unknown { type_name, fields } if type_name == "usage" => {
                    if let Some(u) = fields.get("usage") {
                        self.add_value(u);
                    }
                }
                EntryKind::Compaction { extra, .. } | EntryKind::BranchSummary { extra, .. } => {
                    if let Some(u) = extra.get("usage") {
                        self.add_value(u);
                    }
                }
                _ => {}
            }
        }
        self.counted = entries.len();
        added.len()
    }

    fn add(&mut self, u: &pi_ai::Usage) {
        self.input += u.input;
        self.output += u.output;
        self.cache_read += u.cache_read;
        self.cache_write += u.cache_write;
        self.cost += u.cost.total;
    }

    /// A usage kept as JSON; missing fields count as nothing.
    fn add_value(&mut self, u: &serde_json::Value) {
        let n = |key: &str| u.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
        self.input += n("input");
        self.output += n("output");
        self.cache_read += n("cacheRead");
        self.cache_write += n("cacheWrite");
        self.cost += u
            .pointer("/cost/total")
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(0.0);
    }

    /// Forget everything: the next update counts the whole transcript.
    pub fn reset(&mut self) {
        *self = Totals::default();
    }
}

impl FooterData {
    /// Read the session through borrows: the totals are brought up to date with what was
    /// appended, the context use reads the branch and the transcript in place. Nothing of
    /// the history is copied.
    pub fn gather(session: &AgentSession, branch: Option<String>, totals: &mut Totals) -> FooterData {
        session.with_store(|s| totals.update(s.get_entries()));
        let model = session.model();
        let context = context_usage(session, model.as_ref().map(|m| m.context_window));
        let (multiple_providers, oauth) = session
            .registry()
            .lock()
            .map(|r| {
                let av = r.available();
                let multiple = av.iter().any(|m| m.provider != av[0].provider);
                let oauth = model.as_ref().is_some_and(|m| {
                    matches!(
                        r.auth().get(&m.provider),
                        Some(pi_coding_agent::config::auth::Credential::OAuth { .. })
                    )
                });
                (multiple, oauth)
            })
            .unwrap_or((false, false));
        let subscription = model.as_ref().is_some_and(|m| {
            m.provider == "kimi-coding" || (oauth && SUBSCRIPTION_PROVIDERS.contains(&m.provider.as_str()))
        });
        let auto_compact = session
            .settings()
            .lock()
            .map(|s| s.compaction().enabled)
            .unwrap_or(true);
        let name = session.with_store(|s| s.session_name().map(str::to_string));
        FooterData {
            cwd: display_cwd(session.cwd()),
            branch,
            session_name: name,
            input: totals.input,
            output: totals.output,
            cache_read: totals.cache_read,
            cache_write: totals.cache_write,
            cost: totals.cost,
            // As pi 1.6: no usage at all (no model) reads 0.0%; `?` is for a usage whose
            // size is not known yet (after a compaction).
            context_percent: context.as_ref().map_or(Some(0.0), |c| c.percent),
            context_window: context.as_ref().map_or(0, |c| c.context_window),
            auto_compact,
            thinking: model
                .as_ref()
                .filter(|m| m.reasoning)
                .map(|_| session.thinking_level().as_str().to_string()),
            provider: model.as_ref().map(|m| m.provider.clone()),
            model: model.map(|m| m.id),
            multiple_providers,
            cache_hit: totals.latest_cache_hit,
            subscription,
            experimental: std::env::var("PI_EXPERIMENTAL").is_ok_and(|v| v == "1"),
        }
    }
}

/// The session's context use, as `AgentSession::context_usage` computes it, without copying
/// the branch: the branch decides whether a compaction left the use unknown, then the
/// transcript is estimated in place (from its last reported usage on).
fn context_usage(session: &AgentSession, window: Option<u64>) -> Option<pi_coding_agent::compaction::ContextUsage> {
    let gate = session.with_store(|s| pi_coding_agent::compaction::context_usage(window, &s.get_branch(None), &[]))?;
    if gate.tokens.is_none() {
        return Some(gate);
    }
    session.with_messages(|m| pi_coding_agent::compaction::context_usage(window, &[], m))
}

pub struct Footer {
    data: FooterData,
    theme: Arc<UiTheme>,
    cache: LineCache,
}

impl Footer {
    pub fn new(theme: Arc<UiTheme>) -> Self {
        Footer {
            data: FooterData::default(),
            theme,
            cache: LineCache::default(),
        }
    }

    pub fn set_data(&mut self, data: FooterData) {
        if data != self.data {
            self.data = data;
            self.cache.clear();
        }
    }

    pub fn set_theme(&mut self, theme: Arc<UiTheme>) {
        self.theme = theme;
        self.cache.clear();
    }

    fn lines(&self, width: usize) -> Vec<String> {
        let d = &self.data;
        let t = &self.theme;
        let mut first = d.cwd.clone();
        if let Some(b) = &d.branch {
            first.push_str(&format!(" ({b})"));
        }
        if let Some(n) = &d.session_name {
            first.push_str(&format!(" • {n}"));
        }
        let first = t.paint("dim", &truncate_to_width(&first, width, "..."));

        let mut left = Vec::new();
        if d.input > 0 {
            left.push(format!("↑{}", format_tokens(d.input)));
        }
        if d.output > 0 {
            left.push(format!("↓{}", format_tokens(d.output)));
        }
        if d.cache_read > 0 {
            left.push(format!("R{}", format_tokens(d.cache_read)));
        }
        if d.cache_write > 0 {
            left.push(format!("W{}", format_tokens(d.cache_write)));
        }
        if d.cache_read > 0 || d.cache_write > 0 {
            if let Some(rate) = d.cache_hit {
                left.push(format!("CH{rate:.1}%"));
            }
        }
        if d.cost > 0.0 || d.subscription {
            let sub = if d.subscription { " (sub)" } else { "" };
            left.push(format!("${:.3}{sub}", d.cost));
        }
        let pct = d.context_percent.map_or("?".to_string(), |p| format!("{p:.1}%"));
        let ctx = format!(
            "{pct}/{}{}",
            format_tokens(d.context_window),
            if d.auto_compact { " (auto)" } else { "" }
        );
        let ctx_token = match d.context_percent {
            Some(p) if p > 90.0 => "error",
            Some(p) if p > 70.0 => "warning",
            _ => "dim",
        };
        let left_plain = if left.is_empty() {
            ctx.clone()
        } else {
            format!("{} {ctx}", left.join(" "))
        };
        let mut left_styled = if left.is_empty() {
            t.paint(ctx_token, &ctx)
        } else {
            format!("{} {}", t.paint("dim", &left.join(" ")), t.paint(ctx_token, &ctx))
        };
        let mut left_plain = left_plain;
        if d.experimental {
            left_plain.push_str(" • xp");
            left_styled.push_str(&format!(" {} {}", t.paint("dim", "•"), t.bold("warning", "xp")));
        }
        // Without a model pi 1.6 runs on a placeholder model whose id is `unknown`.
        let mut right = d.model.clone().unwrap_or_else(|| "unknown".to_string());
        if let Some(level) = &d.thinking {
            if level == "off" {
                right.push_str(" • thinking off");
            } else {
                right.push_str(&format!(" • {level}"));
            }
        }
        if d.multiple_providers {
            if let Some(p) = &d.provider {
                let with = format!("({p}) {right}");
                if visible_width(&left_plain) + 2 + visible_width(&with) <= width {
                    right = with;
                }
            }
        }
        let lw = visible_width(&left_plain);
        let rw = visible_width(&right);
        let second = if lw > width {
            t.paint("dim", &truncate_to_width(&left_plain, width, "..."))
        } else if lw + 2 + rw <= width {
            format!("{left_styled}{}{}", " ".repeat(width - lw - rw), t.paint("dim", &right))
        } else if lw + 2 < width {
            // The model's side gives way first, cut to what is left.
            let cut = truncate_to_width(&right, width - lw - 2, "");
            let pad = width - lw - visible_width(&cut);
            format!("{left_styled}{}{}", " ".repeat(pad), t.paint("dim", &cut))
        } else {
            left_styled
        };
        vec![first, second]
    }
}

impl Component for Footer {
    fn render(&mut self, width: usize, out: &mut Frame) {
        let lines = match self.cache.get(width) {
            Some(l) => l,
            None => {
                let l = self.lines(width);
                self.cache.set(width, l)
            }
        };
        out.push(lines);
    }
    fn invalidate(&mut self) {
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::{render_lines, strip_ansi};

    #[test]
    fn token_format() {
        assert_eq!(format_tokens(999), "999");
        assert_eq!(format_tokens(1234), "1.2k");
        assert_eq!(format_tokens(45_600), "46k");
        assert_eq!(format_tokens(1_234_567), "1.2M");
    }

    fn entry(kind: EntryKind) -> Entry {
        Entry {
            id: "e".into(),
            parent_id: None,
            timestamp: String::new(),
            kind,
        }
    }

    fn message(m: pi_ai::AssistantMessage) -> Entry {
        entry(EntryKind::Message {
            message: AgentMessage::Llm(pi_ai::Message::Assistant(Arc::new(m))),
            extra: Default::default(),
        })
    }

    fn reply(input: u64, cost: f64) -> Entry {
        let mut m = pi_ai::AssistantMessage::default();
        m.usage.input = input;
        m.usage.cost.total = cost;
        message(m)
    }

    #[test]
    fn totals_read_only_the_messages_added_since_the_last_update() {
        let mut history: Vec<Entry> = (0..1000).map(|_| reply(2, 0.5)).collect();
        let mut totals = Totals::default();
        assert_eq!(totals.update(&history), 1000);
        history.push(reply(5, 1.0));
        // The refresh after one more reply reads that reply, not the history.
        assert_eq!(totals.update(&history), 1);
        assert_eq!(totals.update(&history), 0);
        assert_eq!(totals.input, 2005);
        assert!((totals.cost - 501.0).abs() < 1e-9);
        // Another, shorter session is counted afresh.
        history.truncate(10);
        assert_eq!(totals.update(&history), 10);
        assert_eq!(totals.input, 20);
        // Summaries and cache refreshes count too.
        let mut extra = pi_session::Extra::new();
        extra.insert(
            "usage".into(),
            serde_json::json!({"input": 7, "output": 3, "cost": {"total": 0.25}}),
        );
        history.push(entry(EntryKind::Compaction {
            summary: String::new(),
            first_kept_entry_id: String::new(),
            tokens_before: Box::new(serde_json::json!(0)),
            details: None,
            from_hook: None,
            extra,
        }));
        let mut fields = serde_json::Map::new();
        fields.insert(
            "usage".into(),
            serde_json::json!({"cacheRead": 100, "cost": {"total": 0.5}}),
        );
        history.push(entry(EntryKind::Unknown {
            type_name: "usage".into(),
            fields: Box::new(fields),
        }));
        assert_eq!(totals.update(&history), 2);
        assert_eq!((totals.input, totals.output, totals.cache_read), (27, 3, 100));
        assert!((totals.cost - 5.75).abs() < 1e-9);
    }

    #[test]
    fn home_becomes_a_tilde_only_for_paths_inside_it() {
        let home = Path::new("/home/ann");
        assert_eq!(display_cwd_in(Path::new("/home/ann"), Some(home)), "~");
        assert_eq!(display_cwd_in(Path::new("/home/ann/proj"), Some(home)), "~/proj");
        assert_eq!(
            display_cwd_in(Path::new("/home/ann2/proj"), Some(home)),
            "/home/ann2/proj"
        );
        assert_eq!(display_cwd_in(Path::new("/srv"), None), "/srv");
    }

    #[test]
    fn cache_hit_rate_subscription_and_experimental_marks() {
        let mut history = vec![reply(100, 0.5)];
        let mut cached = pi_ai::AssistantMessage::default();
        cached.usage.input = 250;
        cached.usage.cache_read = 750;
        history.push(message(cached));
        let mut totals = Totals::default();
        totals.update(&history);
        assert_eq!(totals.latest_cache_hit, Some(75.0));
        let mut f = Footer::new(Arc::new(UiTheme::fallback()));
        f.set_data(FooterData {
            input: totals.input,
            cache_read: totals.cache_read,
            cost: 0.5,
            cache_hit: totals.latest_cache_hit,
            subscription: true,
            experimental: true,
            context_percent: None,
            context_window: 200_000,
            auto_compact: true,
            model: Some("claude".into()),
            ..Default::default()
        });
        let lines: Vec<String> = render_lines(&mut f, 80).iter().map(|l| strip_ansi(l)).collect();
        assert!(
            lines[1].starts_with("↑350 R750 CH75.0% $0.500 (sub) ?/200k (auto) • xp"),
            "{}",
            lines[1]
        );
        // Too narrow for both sides: the model's side is cut, the stats stay whole.
        let lines: Vec<String> = render_lines(&mut f, 53).iter().map(|l| strip_ansi(l)).collect();
        assert!(lines[1].ends_with("  cl"), "{:?}", lines[1]);
    }

    #[test]
    fn footer_lines() {
        let mut f = Footer::new(Arc::new(UiTheme::fallback()));
        f.set_data(FooterData {
            cwd: "~/proj".into(),
            branch: Some("main".into()),
            session_name: Some("work".into()),
            input: 1200,
            output: 34,
            cost: 0.0123,
            context_percent: Some(1.5),
            context_window: 128_000,
            auto_compact: true,
            model: Some("mock-model".into()),
            ..Default::default()
        });
        let lines: Vec<String> = render_lines(&mut f, 60).iter().map(|l| strip_ansi(l)).collect();
        assert_eq!(lines[0], "~/proj (main) • work");
        assert!(
            lines[1].starts_with("↑1.2k ↓34 $0.012 1.5%/128k (auto)"),
            "{}",
            lines[1]
        );
        assert!(lines[1].ends_with("mock-model"));
        assert_eq!(visible_width(&lines[1]), 60);
    }
}
