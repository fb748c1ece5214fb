//! The slash commands the interactive mode knows: a registry that submitting `/name` and the
//! editor's slash menu and autocomplete all read from. The built-ins are registered first
//! (in pi's order); code loaded at run time (an extension host, MCP prompts) registers more
//! with [`CommandRegistry::register`], and its handler returns effects like a built-in's
//! does. A name registered twice keeps the first handler, so a built-in cannot be shadowed.
//! The slash menu is filled from the registry when the app starts; a host that registers
//! commands later must hand the editor the new list (not needed yet: nothing registers late).

use std::sync::Arc;

use super::effect::{Ctx, Effect};

/// A command's handler: the context and the text after the name (trimmed).
pub type Handler = Arc<dyn Fn(&Ctx<'_>, &str) -> Vec<Effect> + Send + Sync>;

/// One registered command.
#[derive(Clone)]
pub struct CommandSpec {
    pub name: String,
    pub description: String,
    pub handler: Handler,
}

/// Every command, in registration order.
#[derive(Clone, Default)]
pub struct CommandRegistry {
    commands: Vec<CommandSpec>,
}

impl CommandRegistry {
    /// Add a command; false (and nothing changes) when the name is taken.
    pub fn register(
        &mut self,
        name: impl Into<String>,
        description: impl Into<String>,
        handler: impl Fn(&Ctx<'_>, &str) -> Vec<Effect> + Send + Sync + 'static,
    ) -> bool {
        let name = name.into();
        if self.find(&name).is_some() {
            return false;
        }
        self.commands.push(CommandSpec {
            name,
            description: description.into(),
            handler: Arc::new(handler),
        });
        true
    }

    pub fn find(&self, name: &str) -> Option<&CommandSpec> {
        self.commands.iter().find(|c| c.name == name)
    }

    /// Entries for the editor's slash menu and autocomplete.
    pub fn slash_commands(&self) -> Vec<pi_tui::autocomplete::SlashCommand> {
        self.commands
            .iter()
            .map(|c| pi_tui::autocomplete::SlashCommand::new(c.name.clone(), c.description.clone()))
            .collect()
    }

    /// Run `/name args`: `None` when `text` names no registered command (it is then a
    /// prompt), else the command's effects.
    pub fn run(&self, ctx: &Ctx<'_>, text: &str) -> Option<Vec<Effect>> {
        let body = text.strip_prefix('/')?;
        let (name, arg) = match body.split_once(char::is_whitespace) {
            Some((n, a)) => (n, a.trim()),
            None => (body, ""),
        };
        let spec = self.find(name)?;
        Some((spec.handler)(ctx, arg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_registration_of_a_name_wins_and_order_is_kept() {
        let mut r = CommandRegistry::default();
        assert!(r.register("a", "first", |_, _| vec![Effect::Quit]));
        assert!(r.register("b", "second", |_, _| Vec::new()));
        assert!(!r.register("a", "again", |_, _| Vec::new()));
        let names: Vec<String> = r.slash_commands().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(r.find("a").map(|c| c.description.as_str()), Some("first"));
    }
}
