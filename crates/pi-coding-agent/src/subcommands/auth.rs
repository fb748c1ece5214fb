//! `pi auth`: which auth command was asked for, its flags, its help, and its exit code. The
//! commands themselves are in `auth_credentials` (print-api-key, print-bearer-token, check)
//! and `auth_login` (login, logout).

use std::io::IsTerminal;

use crate::cli::console::Console;
use crate::config::paths::Paths;
use crate::config::ModelRegistry;

use super::{auth_credentials, auth_login};

/// The credential commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Check,
    ApiKey,
    BearerToken,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Check => "auth check",
            Kind::ApiKey => "auth print-api-key",
            Kind::BearerToken => "auth print-bearer-token",
        }
    }

    pub fn usage(self) -> &'static str {
        match self {
            Kind::Check => "pi auth check --provider <provider> [--json] [--credentials] [--no-refresh]",
            Kind::ApiKey => "pi auth print-api-key --provider <provider> [--model <model>]",
            Kind::BearerToken => {
                "pi auth print-bearer-token --provider <provider> [--model <model>] [--min-expiry <duration>]"
            }
        }
    }
}

/// A parsed credential command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub kind: Kind,
    /// The arguments left for the normal flag parser (`--provider`, `--model`, …).
    pub args: Vec<String>,
    pub json: bool,
    pub credentials: bool,
    pub no_refresh: bool,
    pub min_expiry_ms: Option<u64>,
}

fn help_text() -> &'static str {
    "Usage:
  pi auth login <provider> [--api-key] [--no-browser]
  pi auth logout <provider>
  pi auth print-api-key [--provider <provider>] [--model <model>]
  pi auth print-bearer-token [--provider <provider>] [--model <model>] [--min-expiry <duration>]
  pi auth check [--provider <provider>] [--model <model>] [--json] [--credentials] [--no-refresh]

Manage the credentials pi keeps in ~/.pi/agent/auth.json, hand them to other programs, or
find out whether a provider can be used.

Commands:
  login <provider>         Store an API key (or sign in with an account), then exit
  logout <provider>        Forget the stored credential; environment and models.json stay
  print-api-key            Print the API key pi would send
  print-bearer-token       Print an OAuth access token, refreshed when it is about to expire
  check                    Print ready, not_ready or invalid and exit 0, 1 or 2

Choosing the provider (print-api-key, print-bearer-token and check need one of them):
  --provider <provider>    The provider by id
  --model <model>          The provider of this model

Login options:
  --api-key                Store an API key instead of signing in with an account
  --no-browser             Do not open a browser for an account sign-in

Other options:
  --min-expiry <duration>  print-bearer-token: the token must stay valid this long (30m, 1h)
  --json                   check: print the result as JSON
  --credentials            check: print the credential (or add it to the JSON)
  --no-refresh             check: do not refresh an expired OAuth token"
}

/// `pi auth`, `pi auth help` and any `--help`/`-h` show the help.
fn is_help(argv: &[String]) -> bool {
    argv.get(1).is_none_or(|a| a == "help") || argv.iter().any(|a| a == "--help" || a == "-h")
}

/// A duration like `30m`, `1h`, `90s` or `500ms`, in milliseconds.
fn parse_duration_ms(text: &str) -> Option<u64> {
    let digits = text.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let amount: u64 = text[..digits].parse().ok()?;
    let factor = match text[digits..].to_ascii_lowercase().as_str() {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    amount.checked_mul(factor)
}

/// Parse `auth print-api-key|print-bearer-token|check …`; `Err` with the message.
pub fn parse_command(argv: &[String]) -> Result<Command, String> {
    let kind = match argv.get(1).map(String::as_str) {
        Some("check") => Kind::Check,
        Some("print-api-key") => Kind::ApiKey,
        Some("print-bearer-token") => Kind::BearerToken,
        other => {
            return Err(format!(
                "Unknown auth command \"{}\". Use \"pi auth login\", \"pi auth logout\", \"pi auth print-api-key\", \"pi auth print-bearer-token\", or \"pi auth check\".",
                other.unwrap_or_default()
            ))
        }
    };
    let mut command = Command {
        kind,
        args: Vec::new(),
        json: false,
        credentials: false,
        no_refresh: false,
        min_expiry_ms: None,
    };
    let mut rest = argv[2..].iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--min-expiry" => {
                if kind != Kind::BearerToken {
                    return Err("--min-expiry is only supported by print-bearer-token".into());
                }
                let ms = rest.next().and_then(|v| parse_duration_ms(v));
                command.min_expiry_ms =
                    Some(ms.ok_or_else(|| "--min-expiry must use a duration such as 30m or 1h".to_string())?);
            }
            flag @ ("--json" | "--credentials" | "--no-refresh") => {
                if kind != Kind::Check {
                    return Err(format!("{flag} is only supported by auth check"));
                }
                match flag {
                    "--json" => command.json = true,
                    "--credentials" => command.credentials = true,
                    _ => command.no_refresh = true,
                }
            }
            _ => command.args.push(arg.clone()),
        }
    }
    Ok(command)
}

/// The registry the runtime would build in `cwd`: built-in models, models.json, auth.json and
/// the environment.
pub fn open_registry(paths: &Paths) -> ModelRegistry {
    let auth = crate::config::oauth::open_auth(paths);
    ModelRegistry::from_catalogue(auth, Some(paths.models_path()))
}

/// Run `pi auth …`; `None` when `argv` is not an auth command.
pub fn run(argv: &[String]) -> Option<i32> {
    if argv.first().map(String::as_str) != Some("auth") {
        return None;
    }
    let console = Console {
        stdout_taken: false,
        color: std::io::stderr().is_terminal(),
    };
    if is_help(argv) {
        println!("{}", help_text());
        return Some(0);
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let paths = Paths::for_cwd(cwd);
    // `--offline` was applied already; it is no argument of the commands.
    let rest: Vec<String> = argv[2..].iter().filter(|a| *a != "--offline").cloned().collect();
    if matches!(argv[1].as_str(), "login" | "logout") {
        crate::config::agent_files::ensure_runtime_files(&paths);
    }
    match argv[1].as_str() {
        "login" => return Some(auth_login::login(&rest, &paths, &console)),
        "logout" => return Some(auth_login::logout(&rest, &paths, &console)),
        _ => {}
    }
    let command = match parse_command(argv) {
        Ok(c) => c,
        Err(e) => {
            console.error(&e);
            return Some(1);
        }
    };
    let parsed = crate::cli::parse_args(&command.args);
    if let Some((flag, _)) = parsed.unknown_flags.first() {
        console.bare_error(&format!("Unknown option --{flag} for \"{}\".", command.kind.name()));
        console.hint(&format!("Use \"pi --help\" or \"{}\".", command.kind.usage()));
        return Some(1);
    }
    Some(auth_credentials::run(&command, &parsed, &paths, &console))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn help_forms() {
        assert!(is_help(&argv(&["auth"])));
        assert!(is_help(&argv(&["auth", "help"])));
        assert!(is_help(&argv(&["auth", "check", "--help"])));
        assert!(!is_help(&argv(&["auth", "check"])));
    }

    #[test]
    fn commands_and_their_flags() {
        let c = parse_command(&argv(&["auth", "check", "--provider", "x", "--json", "--no-refresh"])).unwrap();
        assert_eq!(c.kind, Kind::Check);
        assert_eq!(c.args, argv(&["--provider", "x"]));
        assert!(c.json && c.no_refresh && !c.credentials);
        let c = parse_command(&argv(&["auth", "print-bearer-token", "--min-expiry", "30m"])).unwrap();
        assert_eq!(c.min_expiry_ms, Some(1_800_000));
        assert_eq!(
            parse_command(&argv(&["auth", "print-api-key", "--json"])),
            Err("--json is only supported by auth check".into())
        );
        assert_eq!(
            parse_command(&argv(&["auth", "check", "--min-expiry", "1h"])),
            Err("--min-expiry is only supported by print-bearer-token".into())
        );
        assert_eq!(
            parse_command(&argv(&["auth", "print-bearer-token", "--min-expiry", "soon"])),
            Err("--min-expiry must use a duration such as 30m or 1h".into())
        );
        assert!(parse_command(&argv(&["auth", "bogus"]))
            .unwrap_err()
            .starts_with("Unknown auth command \"bogus\"."));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ms("500ms"), Some(500));
        assert_eq!(parse_duration_ms("90S"), Some(90_000));
        assert_eq!(parse_duration_ms("2h"), Some(7_200_000));
        assert_eq!(parse_duration_ms("h"), None);
        assert_eq!(parse_duration_ms("5d"), None);
    }
}
