//! The typed getters (with pi 0.73.1's defaults) and setters of every known settings key.

use std::path::PathBuf;

use pi_ai::{ThinkingBudgets, ThinkingLevel};
use serde_json::{Map, Value};

use super::{
    as_u64, BranchSummarySettings, CacheWarmingMode, CompactionSettings, PackageSource, ProviderRetrySettings,
    QueueMode, RetrySettings, SettingsManager, SettingsScope, Transport,
};
use crate::config::paths::expand_tilde_with;

impl SettingsManager {
    // ----- typed getters (defaults as in pi 0.73.1) -------------------------------------

    pub fn last_changelog_version(&self) -> Option<&str> {
        self.str_of("lastChangelogVersion")
    }
    /// `sessionDir` with `~` expanded.
    pub fn session_dir(&self) -> Option<PathBuf> {
        let dir = self.str_of("sessionDir").filter(|s| !s.is_empty())?;
        Some(expand_tilde_with(dir, &self.home))
    }
    pub fn default_provider(&self) -> Option<&str> {
        self.str_of("defaultProvider")
    }
    pub fn default_model(&self) -> Option<&str> {
        self.str_of("defaultModel")
    }
    pub fn default_thinking_level(&self) -> Option<ThinkingLevel> {
        self.str_of("defaultThinkingLevel").and_then(ThinkingLevel::parse)
    }
    pub fn transport(&self) -> Transport {
        self.str_of("transport")
            .and_then(Transport::parse)
            .unwrap_or(Transport::Auto)
    }
    pub fn steering_mode(&self) -> QueueMode {
        self.str_of("steeringMode")
            .and_then(QueueMode::parse)
            .unwrap_or(QueueMode::OneAtATime)
    }
    pub fn follow_up_mode(&self) -> QueueMode {
        self.str_of("followUpMode")
            .and_then(QueueMode::parse)
            .unwrap_or(QueueMode::OneAtATime)
    }
    /// `theme`; `None` means pick dark or light from the terminal.
    pub fn theme(&self) -> Option<&str> {
        self.str_of("theme")
    }
    pub fn compaction(&self) -> CompactionSettings {
        CompactionSettings {
            enabled: self.nested_bool("compaction", "enabled").unwrap_or(true),
            reserve_tokens: self.nested_u64("compaction", "reserveTokens").unwrap_or(16384),
            keep_recent_tokens: self.nested_u64("compaction", "keepRecentTokens").unwrap_or(20000),
        }
    }
    pub fn branch_summary(&self) -> BranchSummarySettings {
        BranchSummarySettings {
            reserve_tokens: self.nested_u64("branchSummary", "reserveTokens").unwrap_or(16384),
            skip_prompt: self.nested_bool("branchSummary", "skipPrompt").unwrap_or(false),
        }
    }
    pub fn retry(&self) -> RetrySettings {
        RetrySettings {
            enabled: self.nested_bool("retry", "enabled").unwrap_or(true),
            max_retries: self
                .nested_u64("retry", "maxRetries")
                .map(|n| n.min(u32::MAX as u64) as u32)
                .unwrap_or(3),
            base_delay_ms: self.nested_u64("retry", "baseDelayMs").unwrap_or(2000),
        }
    }
    pub fn provider_retry(&self) -> ProviderRetrySettings {
        let provider = self.get_nested("retry", "provider").and_then(Value::as_object);
        let field = |k: &str| provider.and_then(|p| p.get(k)).and_then(as_u64);
        ProviderRetrySettings {
            timeout_ms: field("timeoutMs"),
            max_retries: field("maxRetries").map(|n| n.min(u32::MAX as u64) as u32),
            max_retry_delay_ms: field("maxRetryDelayMs").unwrap_or(60000),
        }
    }
    /// pi 1.6's `httpIdleTimeoutMs`: how long a provider response may stall before it fails
    /// (`0` or `"disabled"`: never). An unreadable value gives the default here; startup
    /// refuses it through [`Self::http_idle_timeout_setting`].
    pub fn http_idle_timeout_ms(&self) -> u64 {
        self.http_idle_timeout_setting()
            .unwrap_or(pi_ai::http::DEFAULT_IDLE_TIMEOUT_MS)
    }

    /// `httpIdleTimeoutMs`, or pi 1.6's error for a value that is not a non-negative number
    /// of milliseconds (1.6 stops at startup with it).
    pub fn http_idle_timeout_setting(&self) -> Result<u64, String> {
        Ok(self
            .milliseconds("httpIdleTimeoutMs")?
            .unwrap_or(pi_ai::http::DEFAULT_IDLE_TIMEOUT_MS))
    }

    /// A duration setting in milliseconds as pi 1.6 reads it: a number or numeric text,
    /// `"disabled"` as 0, fractions floored; `Ok(None)` when unset, and 1.6's
    /// `Invalid <key> setting: <value>` for anything else (negative, empty, not a number).
    fn milliseconds(&self, key: &str) -> Result<Option<u64>, String> {
        let Some(value) = self.effective().get(key) else {
            return Ok(None);
        };
        let parsed = match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) if s.trim().eq_ignore_ascii_case("disabled") => Some(0.0),
            Value::String(s) => js_text_number(s.trim()),
            _ => None,
        };
        parsed
            .filter(|ms| ms.is_finite() && *ms >= 0.0)
            .map(|ms| Some(ms.floor() as u64))
            .ok_or_else(|| format!("Invalid {key} setting: {}", js_display(value)))
    }
    /// `websocketConnectTimeoutMs`: milliseconds (a number or numeric text; 0 or `"disabled"`
    /// waits as long as it takes). Unset keeps the transport's 15 s; a value that is not a
    /// duration is pi 1.6's error, which fails every request of the session.
    pub fn websocket_connect_timeout_ms(&self) -> Result<Option<u64>, String> {
        self.milliseconds("websocketConnectTimeoutMs")
    }
    /// pi 1.6's `cacheWarming`, read from the global settings only; anything but `off`,
    /// `streaming` or `idle` gives the default, `idle`.
    pub fn cache_warming_mode(&self) -> CacheWarmingMode {
        self.global
            .get("cacheWarming")
            .and_then(Value::as_str)
            .and_then(CacheWarmingMode::parse)
            .unwrap_or(CacheWarmingMode::Idle)
    }
    pub fn hide_thinking_block(&self) -> bool {
        self.bool_of("hideThinkingBlock").unwrap_or(false)
    }
    pub fn shell_path(&self) -> Option<&str> {
        self.str_of("shellPath")
    }
    pub fn shell_command_prefix(&self) -> Option<&str> {
        self.str_of("shellCommandPrefix")
    }
    /// `npmCommand`; `None` means plain `npm`.
    pub fn npm_command(&self) -> Option<Vec<String>> {
        self.get("npmCommand").map(|_| self.string_list("npmCommand"))
    }
    pub fn quiet_startup(&self) -> bool {
        self.bool_of("quietStartup").unwrap_or(false)
    }
    pub fn collapse_changelog(&self) -> bool {
        self.bool_of("collapseChangelog").unwrap_or(false)
    }
    /// Whether install telemetry is on: `PI_TELEMETRY` when set (`1`, `true` or `yes`), else
    /// the setting. pi 1.6 also names itself to OpenRouter, NVIDIA and OpenCode only then.
    pub fn install_telemetry_active(&self) -> bool {
        match std::env::var("PI_TELEMETRY") {
            Ok(flag) => flag == "1" || flag.eq_ignore_ascii_case("true") || flag.eq_ignore_ascii_case("yes"),
            Err(_) => self.enable_install_telemetry(),
        }
    }
    pub fn enable_install_telemetry(&self) -> bool {
        self.bool_of("enableInstallTelemetry").unwrap_or(true)
    }
    pub fn packages(&self) -> Vec<PackageSource> {
        self.get("packages")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| match v {
                        Value::String(s) => Some(PackageSource::Source(s.clone())),
                        Value::Object(o) => Some(PackageSource::Filtered(o.clone())),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
    pub fn extension_paths(&self) -> Vec<String> {
        self.string_list("extensions")
    }
    pub fn skill_paths(&self) -> Vec<String> {
        self.string_list("skills")
    }
    pub fn prompt_template_paths(&self) -> Vec<String> {
        self.string_list("prompts")
    }
    pub fn theme_paths(&self) -> Vec<String> {
        self.string_list("themes")
    }
    pub fn enable_skill_commands(&self) -> bool {
        self.bool_of("enableSkillCommands").unwrap_or(true)
    }
    pub fn thinking_budgets(&self) -> Option<ThinkingBudgets> {
        serde_json::from_value(self.get("thinkingBudgets")?.clone()).ok()
    }
    /// `terminal.trueColor` when it is a boolean (`"auto"` and absent leave it to detection).
    pub fn terminal_true_color(&self) -> Option<bool> {
        self.nested_bool("terminal", "trueColor")
    }
    /// What `terminal.images` (`"kitty"`, `"iterm2"`, `false`), `terminal.hyperlinks` and
    /// `terminal.trueColor` (booleans) force over detection and the environment; `"auto"`
    /// and anything else leave it to them.
    pub fn terminal_capability_overrides(&self) -> pi_tui::components::CapabilityOverrides {
        use pi_tui::components::ImageProtocol;
        let images = match self.get_nested("terminal", "images") {
            Some(Value::String(s)) if s == "kitty" => Some(Some(ImageProtocol::Kitty)),
            Some(Value::String(s)) if s == "iterm2" => Some(Some(ImageProtocol::ITerm2)),
            Some(Value::Bool(false)) => Some(None),
            _ => None,
        };
        pi_tui::components::CapabilityOverrides {
            images,
            hyperlinks: self.nested_bool("terminal", "hyperlinks"),
            true_color: self.terminal_true_color(),
        }
    }
    pub fn show_images(&self) -> bool {
        self.nested_bool("terminal", "showImages").unwrap_or(true)
    }
    pub fn image_width_cells(&self) -> u64 {
        match self.get_nested("terminal", "imageWidthCells").and_then(Value::as_f64) {
            Some(w) if w.is_finite() => (w.floor().max(1.0)) as u64,
            _ => 60,
        }
    }
    /// `terminal.clearOnShrink`, else `PI_CLEAR_ON_SHRINK=1`.
    pub fn clear_on_shrink(&self) -> bool {
        self.nested_bool("terminal", "clearOnShrink")
            .unwrap_or_else(|| std::env::var("PI_CLEAR_ON_SHRINK").is_ok_and(|v| v == "1"))
    }
    pub fn show_terminal_progress(&self) -> bool {
        self.nested_bool("terminal", "showTerminalProgress").unwrap_or(false)
    }
    pub fn image_auto_resize(&self) -> bool {
        self.nested_bool("images", "autoResize").unwrap_or(true)
    }
    pub fn block_images(&self) -> bool {
        self.nested_bool("images", "blockImages").unwrap_or(false)
    }
    pub fn enabled_models(&self) -> Option<Vec<String>> {
        self.get("enabledModels").map(|_| self.string_list("enabledModels"))
    }
    /// The command Ctrl+G edits the prompt with: `externalEditor`, else `$VISUAL`, else
    /// `$EDITOR`, else `nano`.
    pub fn external_editor_command(&self) -> String {
        self.str_of("externalEditor")
            .filter(|c| !c.trim().is_empty())
            .map(str::to_string)
            .or_else(|| {
                ["VISUAL", "EDITOR"]
                    .iter()
                    .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            })
            .unwrap_or_else(|| "nano".to_string())
    }
    /// `doubleEscapeAction`: `tree`, `fork` or `none`.
    pub fn double_escape_action(&self) -> &str {
        self.str_of("doubleEscapeAction").unwrap_or("tree")
    }
    /// `treeFilterMode`; anything unknown is `default`.
    pub fn tree_filter_mode(&self) -> &str {
        match self.str_of("treeFilterMode") {
            Some(m @ ("default" | "no-tools" | "user-only" | "labeled-only" | "all")) => m,
            _ => "default",
        }
    }
    /// `tuiMode`: true unless `"regular"` (fullscreen is the default).
    pub fn tui_fullscreen(&self) -> bool {
        self.str_of("tuiMode") != Some("regular")
    }
    /// `fullscreenExitOutput`: print the transcript on leaving fullscreen (else only the
    /// resume hint).
    pub fn fullscreen_exit_transcript(&self) -> bool {
        self.str_of("fullscreenExitOutput") != Some("resume-hint")
    }
    /// `fullscreenCopyOnSelect` (default on).
    pub fn fullscreen_copy_on_select(&self) -> bool {
        self.bool_of("fullscreenCopyOnSelect").unwrap_or(true)
    }
    /// `fullscreenWheelScrollLines`: `None` is `"auto"`, else 1 to 100 lines.
    pub fn fullscreen_wheel_lines(&self) -> Option<u64> {
        self.get("fullscreenWheelScrollLines")
            .and_then(as_u64)
            .map(|n| n.clamp(1, 100))
    }
    /// `showHardwareCursor`, else `PI_HARDWARE_CURSOR=1`.
    pub fn show_hardware_cursor(&self) -> bool {
        self.bool_of("showHardwareCursor")
            .unwrap_or_else(|| std::env::var("PI_HARDWARE_CURSOR").is_ok_and(|v| v == "1"))
    }
    pub fn editor_padding_x(&self) -> u64 {
        self.get("editorPaddingX").and_then(as_u64).unwrap_or(0)
    }
    pub fn autocomplete_max_visible(&self) -> u64 {
        self.get("autocompleteMaxVisible").and_then(as_u64).unwrap_or(5)
    }
    pub fn code_block_indent(&self) -> &str {
        self.get_nested("markdown", "codeBlockIndent")
            .and_then(Value::as_str)
            .unwrap_or("  ")
    }
    /// `outputPad`: columns before messages, tool and command output (`0` or the default `1`).
    pub fn output_pad(&self) -> u64 {
        match self.get("outputPad").and_then(as_u64) {
            Some(0) => 0,
            _ => 1,
        }
    }
    /// `sessionShareDestination`: `auto` (the default), `gist` or `radius`.
    pub fn session_share_destination(&self) -> &str {
        match self.str_of("sessionShareDestination") {
            Some(d @ ("gist" | "radius")) => d,
            _ => "auto",
        }
    }
    /// `markdown.mermaid`: `off`, `final` or the default `streaming`.
    pub fn mermaid_mode(&self) -> &str {
        match self.get_nested("markdown", "mermaid").and_then(Value::as_str) {
            Some(m @ ("off" | "final")) => m,
            _ => "streaming",
        }
    }
    /// `showCacheMissNotices` (default off).
    pub fn show_cache_miss_notices(&self) -> bool {
        self.bool_of("showCacheMissNotices").unwrap_or(false)
    }
    /// `quietStartup` as the settings menu shows it: `true`, `header` or `false`.
    pub fn quiet_startup_choice(&self) -> &'static str {
        match self.get("quietStartup") {
            Some(Value::Bool(true)) => "true",
            Some(Value::String(s)) if s == "header" => "header",
            _ => "false",
        }
    }
    /// `defaultProjectTrust` of the global settings only: `ask` (the default), `always`, `never`.
    pub fn default_project_trust(&self) -> &str {
        match self.global.get("defaultProjectTrust").and_then(Value::as_str) {
            Some(v @ ("always" | "never")) => v,
            _ => "ask",
        }
    }
    /// `modelThinkingLevels`: startup thinking levels keyed `provider/modelId`.
    pub fn model_thinking_levels(&self) -> Map<String, Value> {
        self.get("modelThinkingLevels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }
    /// `warnings.<name>`, default true (e.g. `anthropicExtraUsage`).
    pub fn warning_enabled(&self, name: &str) -> bool {
        self.nested_bool("warnings", name).unwrap_or(true)
    }

    // ----- setters (global unless named project) ---------------------------------------

    pub fn set_last_changelog_version(&mut self, version: &str) {
        self.set(SettingsScope::Global, "lastChangelogVersion", Some(version.into()));
    }
    pub fn set_default_provider(&mut self, provider: &str) {
        self.set(SettingsScope::Global, "defaultProvider", Some(provider.into()));
    }
    pub fn set_default_model(&mut self, model: &str) {
        self.set(SettingsScope::Global, "defaultModel", Some(model.into()));
    }
    /// Both in one write.
    pub fn set_default_model_and_provider(&mut self, provider: &str, model: &str) {
        self.global.insert("defaultProvider".into(), provider.into());
        self.global.insert("defaultModel".into(), model.into());
        self.modified_global.mark("defaultProvider", None);
        self.modified_global.mark("defaultModel", None);
        self.save(SettingsScope::Global);
    }
    pub fn set_default_thinking_level(&mut self, level: ThinkingLevel) {
        self.set(
            SettingsScope::Global,
            "defaultThinkingLevel",
            Some(level.as_str().into()),
        );
    }
    pub fn set_cache_warming_mode(&mut self, mode: CacheWarmingMode) {
        self.set(SettingsScope::Global, "cacheWarming", Some(mode.as_str().into()));
    }
    pub fn set_transport(&mut self, transport: Transport) {
        self.set(SettingsScope::Global, "transport", Some(transport.as_str().into()));
        self.transport_listener.notify(transport);
    }
    pub fn set_steering_mode(&mut self, mode: QueueMode) {
        self.set(SettingsScope::Global, "steeringMode", Some(mode.as_str().into()));
    }
    pub fn set_follow_up_mode(&mut self, mode: QueueMode) {
        self.set(SettingsScope::Global, "followUpMode", Some(mode.as_str().into()));
    }
    pub fn set_theme(&mut self, theme: &str) {
        self.set(SettingsScope::Global, "theme", Some(theme.into()));
    }
    pub fn set_compaction_enabled(&mut self, enabled: bool) {
        self.set_nested(SettingsScope::Global, "compaction", "enabled", Some(enabled.into()));
    }
    pub fn set_retry_enabled(&mut self, enabled: bool) {
        self.set_nested(SettingsScope::Global, "retry", "enabled", Some(enabled.into()));
    }
    pub fn set_hide_thinking_block(&mut self, hide: bool) {
        self.set(SettingsScope::Global, "hideThinkingBlock", Some(hide.into()));
    }
    pub fn set_quiet_startup(&mut self, quiet: bool) {
        self.set(SettingsScope::Global, "quietStartup", Some(quiet.into()));
    }
    pub fn set_enabled_models(&mut self, patterns: Option<Vec<String>>) {
        self.set(SettingsScope::Global, "enabledModels", patterns.map(Value::from));
    }
    pub fn set_show_images(&mut self, show: bool) {
        self.set_nested(SettingsScope::Global, "terminal", "showImages", Some(show.into()));
    }
    pub fn set_image_width_cells(&mut self, width: u64) {
        self.set_nested(
            SettingsScope::Global,
            "terminal",
            "imageWidthCells",
            Some(width.max(1).into()),
        );
    }
    pub fn set_image_auto_resize(&mut self, enabled: bool) {
        self.set_nested(SettingsScope::Global, "images", "autoResize", Some(enabled.into()));
    }
    pub fn set_block_images(&mut self, blocked: bool) {
        self.set_nested(SettingsScope::Global, "images", "blockImages", Some(blocked.into()));
    }
    pub fn set_editor_padding_x(&mut self, padding: u64) {
        self.set(SettingsScope::Global, "editorPaddingX", Some(padding.min(3).into()));
    }
    pub fn set_autocomplete_max_visible(&mut self, max: u64) {
        self.set(
            SettingsScope::Global,
            "autocompleteMaxVisible",
            Some(max.clamp(3, 20).into()),
        );
    }
    pub fn set_shell_path(&mut self, path: Option<&str>) {
        self.set(SettingsScope::Global, "shellPath", path.map(Value::from));
    }
    pub fn set_shell_command_prefix(&mut self, prefix: Option<&str>) {
        self.set(SettingsScope::Global, "shellCommandPrefix", prefix.map(Value::from));
    }
    pub fn set_npm_command(&mut self, command: Option<Vec<String>>) {
        self.set(SettingsScope::Global, "npmCommand", command.map(Value::from));
    }
    pub fn set_collapse_changelog(&mut self, collapse: bool) {
        self.set(SettingsScope::Global, "collapseChangelog", Some(collapse.into()));
    }
    pub fn set_enable_install_telemetry(&mut self, enabled: bool) {
        self.set(SettingsScope::Global, "enableInstallTelemetry", Some(enabled.into()));
    }
    pub fn set_enable_skill_commands(&mut self, enabled: bool) {
        self.set(SettingsScope::Global, "enableSkillCommands", Some(enabled.into()));
    }
    /// A fullscreen setting (`tuiMode`, `fullscreenExitOutput`, `fullscreenScrollbar`,
    /// `fullscreenCopyOnSelect`, `fullscreenWheelScrollLines`) as the menu writes it.
    pub fn set_tui_value(&mut self, key: &str, value: Value) {
        self.set(SettingsScope::Global, key, Some(value));
    }
    /// `fullscreenScrollbar`: `auto`, `always` or `hidden`.
    pub fn fullscreen_scrollbar(&self) -> &str {
        match self.str_of("fullscreenScrollbar") {
            Some(v @ ("always" | "hidden")) => v,
            _ => "auto",
        }
    }
    pub fn set_double_escape_action(&mut self, action: &str) {
        self.set(SettingsScope::Global, "doubleEscapeAction", Some(action.into()));
    }
    pub fn set_tree_filter_mode(&mut self, mode: &str) {
        self.set(SettingsScope::Global, "treeFilterMode", Some(mode.into()));
    }
    pub fn set_show_hardware_cursor(&mut self, enabled: bool) {
        self.set(SettingsScope::Global, "showHardwareCursor", Some(enabled.into()));
    }
    pub fn set_clear_on_shrink(&mut self, enabled: bool) {
        self.set_nested(SettingsScope::Global, "terminal", "clearOnShrink", Some(enabled.into()));
    }
    pub fn set_show_terminal_progress(&mut self, enabled: bool) {
        self.set_nested(
            SettingsScope::Global,
            "terminal",
            "showTerminalProgress",
            Some(enabled.into()),
        );
    }
    pub fn set_output_pad(&mut self, pad: u64) {
        self.set(SettingsScope::Global, "outputPad", Some(pad.min(1).into()));
    }
    pub fn set_session_share_destination(&mut self, destination: &str) {
        self.set(
            SettingsScope::Global,
            "sessionShareDestination",
            Some(destination.into()),
        );
    }
    /// `httpIdleTimeoutMs` in milliseconds (`0`: disabled), as pi writes it: a number.
    pub fn set_http_idle_timeout_ms(&mut self, ms: u64) {
        self.set(SettingsScope::Global, "httpIdleTimeoutMs", Some(ms.into()));
    }
    pub fn set_mermaid_mode(&mut self, mode: &str) {
        self.set_nested(SettingsScope::Global, "markdown", "mermaid", Some(mode.into()));
    }
    pub fn set_show_cache_miss_notices(&mut self, show: bool) {
        self.set(SettingsScope::Global, "showCacheMissNotices", Some(show.into()));
    }
    /// `quietStartup` from the menu's choice: `true` and `false` as booleans, `"header"` as text.
    pub fn set_quiet_startup_choice(&mut self, choice: &str) {
        let value = match choice {
            "header" => Value::from("header"),
            other => Value::Bool(other == "true"),
        };
        self.set(SettingsScope::Global, "quietStartup", Some(value));
    }
    pub fn set_default_project_trust(&mut self, trust: &str) {
        self.set(SettingsScope::Global, "defaultProjectTrust", Some(trust.into()));
    }
    /// Set (`Some`) or clear (`None`) the startup thinking level of `provider/model_id`; the
    /// key goes away with its last entry.
    pub fn set_model_thinking_level(&mut self, provider: &str, model_id: &str, level: Option<&str>) {
        let mut levels = self
            .global
            .get("modelThinkingLevels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let key = format!("{provider}/{model_id}");
        match level {
            Some(level) => {
                levels.insert(key, level.into());
            }
            None => {
                levels.remove(&key);
            }
        }
        let value = (!levels.is_empty()).then_some(Value::Object(levels));
        self.set(SettingsScope::Global, "modelThinkingLevels", value);
    }
    /// Replace the whole `warnings` object (e.g. `{"anthropicExtraUsage": false}`).
    pub fn set_warnings(&mut self, warnings: Map<String, Value>) {
        self.set(SettingsScope::Global, "warnings", Some(Value::Object(warnings)));
    }
    /// `skills`/`prompts`/`themes`/`extensions`/`packages` of one scope.
    pub fn set_resource_list(&mut self, scope: SettingsScope, key: &str, values: Vec<Value>) {
        self.set(scope, key, Some(Value::Array(values)));
    }
}

/// JavaScript's `Number(text)` for trimmed, non-empty text: decimal, `0x`/`0o`/`0b` integers,
/// `Infinity`; `None` where JavaScript gives `NaN`.
fn js_text_number(text: &str) -> Option<f64> {
    if text.is_empty() {
        return None;
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = text
            .strip_prefix(prefix)
            .or_else(|| text.strip_prefix(&prefix.to_uppercase()))
        {
            return u64::from_str_radix(digits, radix).ok().map(|n| n as f64);
        }
    }
    let unsigned = text.trim_start_matches(['+', '-']);
    if unsigned == "Infinity" {
        return Some(if text.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    // Rust also reads `inf` and `nan`, which JavaScript does not.
    if !unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    text.parse::<f64>().ok()
}

/// A settings value as JavaScript's `String(value)` writes it in pi 1.6's messages.
fn js_display(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n
            .as_f64()
            .map(pi_ai::json_number::js_number_string)
            .unwrap_or_else(|| n.to_string()),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|v| if v.is_null() { String::new() } else { js_display(v) })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}
