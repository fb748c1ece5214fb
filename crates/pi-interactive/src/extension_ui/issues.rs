//! What pi 1.6 lists under `[Extension issues]`, in its order: extensions that failed to
//! load (after a `/reload`; at startup a failure stops pi before the screen), extension
//! commands named like a built-in command, then clashing shortcuts.

use pi_extensions::Registrations;
use pi_tui::Keybindings;

use super::super::loaded_resources::Issue;

/// The name each command is run by, in registration order: a name several extensions
/// register is numbered by its occurrence (`name:1`, `name:2`), skipping numbers another
/// command already holds, as pi 1.6 names them.
pub fn invocation_names(names: &[&str]) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for name in names {
        *counts.entry(name).or_default() += 1;
    }
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut taken: std::collections::HashSet<String> = std::collections::HashSet::new();
    names
        .iter()
        .map(|name| {
            let occurrence = {
                let n = seen.entry(name).or_default();
                *n += 1;
                *n
            };
            let mut invocation = if counts[name] > 1 {
                format!("{name}:{occurrence}")
            } else {
                (*name).to_string()
            };
            let mut suffix = occurrence;
            while taken.contains(&invocation) {
                suffix += 1;
                invocation = format!("{name}:{suffix}");
            }
            taken.insert(invocation.clone());
            invocation
        })
        .collect()
}

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
    let names: Vec<&str> = commands.iter().map(|(_, c)| c.name.as_str()).collect();
    for ((ext, command), invocation) in commands.iter().zip(invocation_names(&names)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_names_are_numbered_by_occurrence_around_names_already_taken() {
        assert_eq!(invocation_names(&["a", "b"]), ["a", "b"]);
        assert_eq!(invocation_names(&["dup", "x", "dup"]), ["dup:1", "x", "dup:2"]);
        // `m:1` is an extension's own name: the first `m` takes the next free number.
        assert_eq!(invocation_names(&["m:1", "m", "m"]), ["m:1", "m:2", "m:3"]);
    }
}
