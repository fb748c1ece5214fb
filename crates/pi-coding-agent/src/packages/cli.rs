//! The package subcommands (`pi install`, `remove`/`uninstall`, `update`, `list`): their
//! arguments, help, messages and exit codes.

use std::io::IsTerminal;

use super::manager::PackageManager;
use super::process::Output;
use super::self_update;
use crate::config::paths::Paths;

/// Which subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Install,
    Remove,
    Update,
    List,
}

impl Command {
    fn name(self) -> &'static str {
        match self {
            Command::Install => "install",
            Command::Remove => "remove",
            Command::Update => "update",
            Command::List => "list",
        }
    }

    /// The one-line usage (also part of error hints).
    pub fn usage(self) -> &'static str {
        match self {
            Command::Install => "pi install <source> [-l]",
            Command::Remove => "pi remove <source> [-l]",
            Command::Update => "pi update [source|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve] [--force]",
            Command::List => "pi list",
        }
    }
}

/// What `pi update` should update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpdateTarget {
    /// pi and every package.
    All,
    /// The model catalogs only.
    Models,
    /// pi only.
    SelfOnly,
    /// Packages only: all of them, or the one named.
    Packages(Option<String>),
}

/// A parsed package subcommand, with the first problem of each kind found in its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageCommand {
    pub command: Command,
    pub source: Option<String>,
    pub update_target: UpdateTarget,
    pub local: bool,
    pub force: bool,
    /// `--approve` / `--no-approve`: trust or ignore the project's files for this command.
    pub project_trust_override: Option<bool>,
    /// A bare `pi update` updates pi only and says how to update the packages too.
    pub extensions_skipped_note: bool,
    pub help: bool,
    pub invalid_option: Option<String>,
    pub invalid_argument: Option<String>,
    pub missing_option_value: Option<String>,
    pub conflict: Option<String>,
}

/// Parse `argv` (starting with the subcommand); `None` when it is not a package subcommand.
pub fn parse(argv: &[String]) -> Option<PackageCommand> {
    let (first, rest) = argv.split_first()?;
    let command = match first.as_str() {
        "install" => Command::Install,
        "remove" | "uninstall" => Command::Remove,
        "update" => Command::Update,
        "list" => Command::List,
        _ => return None,
    };
    let is_update = command == Command::Update;
    let mut p = PackageCommand {
        command,
        source: None,
        update_target: UpdateTarget::All,
        local: false,
        force: false,
        project_trust_override: None,
        extensions_skipped_note: false,
        help: false,
        invalid_option: None,
        invalid_argument: None,
        missing_option_value: None,
        conflict: None,
    };
    let (mut self_flag, mut extensions_flag, mut models_flag, mut all_flag) = (false, false, false, false);
    let mut extension_source: Option<String> = None;
    let mut i = 0;
    while i < rest.len() {
        let arg = rest[i].as_str();
        let mut invalid = false;
        match arg {
            "-h" | "--help" => p.help = true,
            "-l" | "--local" if matches!(command, Command::Install | Command::Remove) => p.local = true,
            "--self" if is_update => self_flag = true,
            "--extensions" if is_update => extensions_flag = true,
            "--models" if is_update => models_flag = true,
            "--all" if is_update => all_flag = true,
            "--approve" | "-a" => p.project_trust_override = Some(true),
            "--no-approve" | "-na" => p.project_trust_override = Some(false),
            "--force" if is_update => p.force = true,
            "--extension" if is_update => match rest.get(i + 1) {
                Some(v) if !v.is_empty() && !v.starts_with('-') => {
                    if extension_source.is_some() {
                        p.conflict
                            .get_or_insert_with(|| "--extension can only be provided once".into());
                    } else {
                        extension_source = Some(v.clone());
                    }
                    i += 1;
                }
                _ => {
                    p.missing_option_value.get_or_insert_with(|| arg.to_string());
                }
            },
            _ if arg.starts_with('-') => invalid = true,
            _ => {
                if p.source.is_none() {
                    p.source = Some(arg.to_string());
                } else {
                    p.invalid_argument.get_or_insert_with(|| arg.to_string());
                }
            }
        }
        if invalid {
            p.invalid_option.get_or_insert_with(|| arg.to_string());
        }
        i += 1;
    }
    if is_update {
        let mut conflict = |text: &str| {
            p.conflict.get_or_insert_with(|| text.to_string());
        };
        if all_flag && (self_flag || extensions_flag || models_flag || extension_source.is_some()) {
            conflict("--all cannot be combined with --self, --extensions, --models, or --extension");
        }
        if all_flag && p.source.is_some() {
            conflict("--all cannot be combined with a positional source");
        }
        let target = if models_flag {
            if self_flag || extensions_flag || all_flag || extension_source.is_some() {
                conflict("--models cannot be combined with --self, --extensions, --all, or --extension");
            }
            if p.source.is_some() {
                conflict("--models cannot be combined with a positional source");
            }
            UpdateTarget::Models
        } else if let Some(ext) = extension_source {
            if self_flag || extensions_flag || all_flag {
                conflict("--extension cannot be combined with --self, --extensions, or --all");
            }
            if p.source.is_some() {
                conflict("--extension cannot be combined with a positional source");
            }
            UpdateTarget::Packages(Some(ext))
        } else if let Some(source) = p.source.clone() {
            if source == "self" || source == "pi" {
                if extensions_flag {
                    UpdateTarget::All
                } else {
                    UpdateTarget::SelfOnly
                }
            } else {
                if extensions_flag || self_flag || all_flag {
                    conflict("positional update targets cannot be combined with --self, --extensions, or --all");
                }
                UpdateTarget::Packages(Some(source))
            }
        } else {
            match (all_flag, self_flag, extensions_flag) {
                (true, _, _) | (false, true, true) => UpdateTarget::All,
                (false, true, false) => UpdateTarget::SelfOnly,
                (false, false, true) => UpdateTarget::Packages(None),
                (false, false, false) => {
                    p.extensions_skipped_note = true;
                    UpdateTarget::SelfOnly
                }
            }
        };
        p.update_target = target;
    }
    Some(p)
}

/// Terminal styling, only when stdout is a terminal.
#[derive(Clone, Copy)]
pub struct Style {
    pub color: bool,
}

impl Style {
    pub fn detect() -> Self {
        Style {
            color: std::io::stdout().is_terminal(),
        }
    }
    fn wrap(self, open: &str, close: &str, text: &str) -> String {
        if self.color {
            format!("\x1b[{open}m{text}\x1b[{close}m")
        } else {
            text.to_string()
        }
    }
    pub fn red(self, t: &str) -> String {
        self.wrap("31", "39", t)
    }
    pub fn green(self, t: &str) -> String {
        self.wrap("32", "39", t)
    }
    pub fn dim(self, t: &str) -> String {
        self.wrap("2", "22", t)
    }
    pub fn yellow(self, t: &str) -> String {
        self.wrap("33", "39", t)
    }
    pub fn bold(self, t: &str) -> String {
        self.wrap("1", "22", t)
    }
}

fn help_text(command: Command, style: Style) -> String {
    let body = match command {
        Command::Install => {
            "\
Install a package and add its source to the settings.

Options:
  -l, --local    Install for this project (.pi/settings.json)

Examples:
  pi install npm:@foo/bar
  pi install git:github.com/user/repo
  pi install git:git@github.com:user/repo
  pi install https://github.com/user/repo
  pi install ssh://git@github.com/user/repo
  pi install ./local/path
"
        }
        Command::Remove => {
            "\
Uninstall a package and remove its source from the settings.
Alias: pi uninstall <source> [-l]

Options:
  -l, --local    Remove from the project settings (.pi/settings.json)

Examples:
  pi remove npm:@foo/bar
  pi uninstall npm:@foo/bar
"
        }
        Command::Update => {
            "\
Update pi, the installed packages (pinned packages are left alone) or the model catalogs.

Options:
  --self                  Update pi only (the default)
  --extensions            Update the installed packages only
  --models                Refresh the model catalogs only
  --all                   Update pi and every package
  --extension <source>    Update one package only
  --approve, --no-approve Trust or ignore this project's package settings
  --force                 Reinstall pi even when it is the latest version

Short forms:
  pi update                Update pi only
  pi update --all          Update pi and every package
  pi update <source>       Update one package
  pi update pi             Update pi only (self is an alias of pi)
"
        }
        Command::List => {
            "\
List the packages of the user and project settings.
"
        }
    };
    format!("{}\n  {}\n\n{body}", style.bold("Usage:"), command.usage())
}

/// Print one problem with the command line and its hint; exit code 1.
fn usage_error(style: Style, message: &str, hint: &str) -> i32 {
    eprintln!("{}", style.red(message));
    eprintln!("{}", style.dim(hint));
    1
}

/// Run a package subcommand; `None` when `argv` is not one.
pub fn run(argv: &[String]) -> Option<i32> {
    let p = parse(argv)?;
    Some(run_parsed(
        &p,
        Paths::for_cwd(std::env::current_dir().unwrap_or_default()),
    ))
}

/// Run a parsed subcommand against `paths`; returns the exit code.
pub fn run_parsed(p: &PackageCommand, paths: Paths) -> i32 {
    let style = Style::detect();
    let usage = p.command.usage();
    if p.help {
        println!("{}", help_text(p.command, style));
        return 0;
    }
    if let Some(opt) = &p.invalid_option {
        return usage_error(
            style,
            &format!("Unknown option {opt} for \"{}\".", p.command.name()),
            &format!("Use \"pi --help\" or \"{usage}\"."),
        );
    }
    if let Some(opt) = &p.missing_option_value {
        return usage_error(style, &format!("Missing value for {opt}."), &format!("Usage: {usage}"));
    }
    if let Some(arg) = &p.invalid_argument {
        return usage_error(
            style,
            &format!("Unexpected argument {arg}."),
            &format!("Usage: {usage}"),
        );
    }
    if let Some(conflict) = &p.conflict {
        return usage_error(style, conflict, &format!("Usage: {usage}"));
    }
    let source = p.source.clone().unwrap_or_default();
    if matches!(p.command, Command::Install | Command::Remove) && source.is_empty() {
        return usage_error(
            style,
            &format!("Missing {} source.", p.command.name()),
            &format!("Usage: {usage}"),
        );
    }
    if p.command == Command::Update && p.update_target == UpdateTarget::Models {
        return refresh_model_catalogs(&paths, style);
    }

    // Package commands never ask: an undecided project with files of its own is not trusted.
    let settings_for_trust = crate::config::settings::SettingsManager::load(&paths);
    let trust_file = paths.agent_dir.join("trust.json");
    let (trusted, _) = crate::config::trust::resolve_project_trust(&crate::config::trust::TrustQuery {
        cwd: &paths.cwd,
        home: &paths.home,
        trust_file: &trust_file,
        cli_override: p.project_trust_override,
        default: crate::config::trust::DefaultTrust::from_setting(
            settings_for_trust.global_settings().get("defaultProjectTrust"),
        ),
        can_ask: false,
    });
    if !trusted && p.local && matches!(p.command, Command::Install | Command::Remove) {
        eprintln!(
            "{}",
            style.red("Project is not trusted. Use --approve to modify local package config.")
        );
        return 1;
    }

    let mut pm = PackageManager::new(
        paths,
        Output::Inherit,
        Box::new(move |line: &str| println!("{}", style.dim(line))),
    );
    if !trusted {
        pm.settings.ignore_project();
    }
    for e in pm.settings.drain_errors() {
        eprintln!(
            "{}",
            style.wrap(
                "33",
                "39",
                &format!(
                    "Warning (package command, {} settings): {}",
                    e.scope.as_str(),
                    e.message
                )
            )
        );
    }
    let result = match p.command {
        Command::Install => pm.install_and_persist(&source, p.local).map(|()| {
            println!("{}", style.green(&format!("Installed {source}")));
            0
        }),
        Command::Remove => pm.remove_and_persist(&source, p.local).map(|removed| {
            if removed {
                println!("{}", style.green(&format!("Removed {source}")));
                0
            } else {
                eprintln!("{}", style.red(&format!("No matching package found for {source}")));
                1
            }
        }),
        Command::List => {
            print_list(&pm, style);
            Ok(0)
        }
        Command::Update => update(&mut pm, p, style),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}", style.red(&format!("Error: {e}")));
            1
        }
    }
}

fn print_list(pm: &PackageManager, style: Style) {
    let all = pm.list_configured();
    if all.is_empty() {
        println!("{}", style.dim("No packages installed."));
        return;
    }
    let print_section = |title: &str, scope: super::Scope| {
        println!("{}", style.bold(title));
        for pkg in all.iter().filter(|p| p.scope == scope) {
            if pkg.filtered {
                println!("  {} (filtered)", pkg.source);
            } else {
                println!("  {}", pkg.source);
            }
            if let Some(path) = &pkg.installed_path {
                println!("{}", style.dim(&format!("    {}", path.display())));
            }
        }
    };
    let has_user = all.iter().any(|p| p.scope == super::Scope::User);
    let has_project = all.iter().any(|p| p.scope == super::Scope::Project);
    if has_user {
        print_section("User packages:", super::Scope::User);
    }
    if has_project {
        if has_user {
            println!();
        }
        print_section("Project packages:", super::Scope::Project);
    }
}

/// `pi update --models`: fetch the catalogues of the configured providers into
/// models-store.json (`config::models_store_refresh`).
fn refresh_model_catalogs(paths: &Paths, style: Style) -> i32 {
    match crate::config::models_store_refresh::refresh_for_update(paths) {
        Ok(warnings) => {
            for warning in warnings {
                eprintln!("{}", style.yellow(&warning));
            }
            println!("{}", style.green("Model catalogs refreshed"));
            0
        }
        Err(e) => {
            eprintln!("{}", style.red(&format!("Error: {e}")));
            1
        }
    }
}

fn update(pm: &mut PackageManager, p: &PackageCommand, style: Style) -> Result<i32, super::PackageError> {
    let target = &p.update_target;
    if p.extensions_skipped_note {
        println!(
            "{}",
            style.dim("Extensions are skipped. Run pi update --extensions to update extensions.")
        );
    }
    let packages = match target {
        UpdateTarget::All => Some(None),
        UpdateTarget::Packages(s) => Some(s.clone()),
        UpdateTarget::SelfOnly | UpdateTarget::Models => None,
    };
    if let Some(one) = packages {
        pm.update(one.as_deref())?;
        if super::is_offline() {
            println!("{}", style.yellow("Skipped package updates (offline mode)"));
        } else {
            match one {
                Some(s) => println!("{}", style.green(&format!("Updated {s}"))),
                None => println!("{}", style.green("Updated packages")),
            }
        }
    }
    if matches!(target, UpdateTarget::All | UpdateTarget::SelfOnly) {
        return Ok(self_update::run(p.force, style));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> PackageCommand {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).expect("a package command")
    }

    #[test]
    fn commands_and_options() {
        assert!(parse(&["hello".to_string()]).is_none());
        assert!(parse(&[]).is_none());
        let c = p(&["uninstall", "npm:x", "-l"]);
        assert_eq!(
            (c.command, c.source.as_deref(), c.local),
            (Command::Remove, Some("npm:x"), true)
        );
        assert_eq!(p(&["update", "-l"]).invalid_option.as_deref(), Some("-l"));
        assert_eq!(p(&["list", "--self"]).invalid_option.as_deref(), Some("--self"));
        assert_eq!(p(&["install", "a", "b"]).invalid_argument.as_deref(), Some("b"));
        assert!(p(&["list", "--help"]).help);
    }

    #[test]
    fn update_targets_and_conflicts() {
        let bare = p(&["update"]);
        assert_eq!(bare.update_target, UpdateTarget::SelfOnly, "a bare update is pi only");
        assert!(bare.extensions_skipped_note);
        assert!(!p(&["update", "--self"]).extensions_skipped_note);
        assert_eq!(p(&["update", "--all"]).update_target, UpdateTarget::All);
        assert_eq!(p(&["update", "--models"]).update_target, UpdateTarget::Models);
        assert_eq!(p(&["update", "pi"]).update_target, UpdateTarget::SelfOnly);
        assert_eq!(p(&["update", "self", "--extensions"]).update_target, UpdateTarget::All);
        assert_eq!(p(&["update", "--self"]).update_target, UpdateTarget::SelfOnly);
        assert_eq!(
            p(&["update", "--self", "--extensions"]).update_target,
            UpdateTarget::All
        );
        assert_eq!(
            p(&["update", "--extensions"]).update_target,
            UpdateTarget::Packages(None)
        );
        assert_eq!(
            p(&["update", "--extension", "npm:a"]).update_target,
            UpdateTarget::Packages(Some("npm:a".into()))
        );
        assert_eq!(
            p(&["update", "npm:a"]).update_target,
            UpdateTarget::Packages(Some("npm:a".into()))
        );
        assert_eq!(p(&["update", "-a", "--no-approve"]).project_trust_override, Some(false));
        let conflict = |args: &[&str]| p(args).conflict;
        assert_eq!(
            conflict(&["update", "--all", "--self"]).as_deref(),
            Some("--all cannot be combined with --self, --extensions, --models, or --extension")
        );
        assert_eq!(
            conflict(&["update", "npm:a", "--all"]).as_deref(),
            Some("--all cannot be combined with a positional source")
        );
        assert_eq!(
            conflict(&["update", "--models", "--extensions"]).as_deref(),
            Some("--models cannot be combined with --self, --extensions, --all, or --extension")
        );
        assert_eq!(
            conflict(&["update", "--models", "x"]).as_deref(),
            Some("--models cannot be combined with a positional source")
        );
        assert_eq!(
            conflict(&["update", "--extension", "npm:a", "--self"]).as_deref(),
            Some("--extension cannot be combined with --self, --extensions, or --all")
        );
        assert_eq!(
            conflict(&["update", "npm:a", "--extensions"]).as_deref(),
            Some("positional update targets cannot be combined with --self, --extensions, or --all")
        );
        assert_eq!(
            conflict(&["update", "--extension", "a", "b"]).as_deref(),
            Some("--extension cannot be combined with a positional source")
        );
        assert_eq!(
            conflict(&["update", "--extension", "a", "--extension", "b"]).as_deref(),
            Some("--extension can only be provided once")
        );
        assert_eq!(
            p(&["update", "--extension"]).missing_option_value.as_deref(),
            Some("--extension")
        );
        assert_eq!(
            p(&["update", "--extension", "--self"]).missing_option_value.as_deref(),
            Some("--extension")
        );
    }
}
