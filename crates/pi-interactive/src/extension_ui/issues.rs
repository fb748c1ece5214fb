//! What pi 1.6 lists under `[Extension issues]`, in its order: extensions that failed to
//! load (after a `/reload`; at startup a failure stops pi before the screen), extension
//! commands named like a built-in command, then clashing shortcuts.

use pi_extensions::Registrations;
use pi_tui::Keybindings;

use super::super::loaded_resources::Issue;

/// The issues of the loaded extensions; `is_builtin` says whether a command name is one of
/// the app's own.
pub fn extension_issues(
    registrations: &Registrations,
    kb: &Keybindings,
    is_builtin: impl Fn(&str) -> bool,
) -> Vec<Issue> {
    let mut out: Vec<Issue> = registrations
        .errors
        .iter()
        .map(|e| Issue {
            path: e.path.clone(),
            message: e.error.clone(),
            error: true,
        })
        .collect();
    let commands = registrations.commands();
    for ((ext, command), invocation) in commands.iter().zip(registrations.command_invocations()) {
        if !is_builtin(&command.name) {
            continue;
        }
        let name = &command.name;
        let message = if invocation == *name {
            format!(
                "Extension command '/{name}' conflicts with built-in interactive command. Skipping in autocomplete."
            )
        } else {
            format!("Extension command '/{name}' conflicts with built-in interactive command. Available as '/{invocation}'.")
        };
        out.push(Issue {
            path: ext.path.clone(),
            message,
            error: false,
        });
    }
    out.extend(
        super::shortcuts::diagnostics(&registrations.extensions, kb)
            .into_iter()
            .map(|(path, message)| Issue {
                path,
                message,
                error: false,
            }),
    );
    out
}
