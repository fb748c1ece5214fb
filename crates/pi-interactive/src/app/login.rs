//! The app's side of a sign-in screen: steps of the running flow go to its screen while it
//! is shown; its end closes the screen and is reported.

use pi_tui::Tui;

use super::super::effect::Picker;
use super::super::login::{self, LoginStep};
use super::super::login_view::{LoginChoice, LoginFlow};
use super::App;

impl App {
    /// Whether a `/login` list shows an animated partner name (it is drawn again each frame).
    pub fn brand_animating(&self, tui: &mut Tui) -> bool {
        match &self.picker {
            Some((id, Picker::LoginMethod(_) | Picker::LoginProvider { .. })) => {
                tui.overlay_mut::<LoginChoice>(*id).is_some_and(|c| c.animating())
            }
            _ => false,
        }
    }

    /// A step of sign-in `id`.
    pub(super) fn login_step(&mut self, id: u64, step: LoginStep, tui: &mut Tui) {
        let shown = match &self.picker {
            Some((overlay, Picker::LoginFlow { .. })) => {
                let overlay = *overlay;
                tui.overlay_mut::<LoginFlow>(overlay)
                    .is_some_and(|f| f.id() == id)
                    .then_some(overlay)
            }
            _ => None,
        };
        let Some(overlay) = shown else {
            let effects = login::step_without_screen(&self.ctx(), step);
            self.apply(effects, tui);
            return;
        };
        match step {
            LoginStep::Finished { provider, result } => {
                tui.hide_overlay(overlay);
                self.picker = None;
                let effects = login::finished(&self.ctx(), provider, result);
                self.apply(effects, tui);
            }
            other => {
                if let Some(flow) = tui.overlay_mut::<LoginFlow>(overlay) {
                    match other {
                        LoginStep::Update(update) => flow.apply(update),
                        LoginStep::UrlCopied(result) => flow.url_copied(result),
                        LoginStep::CodeCopied(ok) => flow.code_copied(ok),
                        LoginStep::Finished { .. } => {}
                    }
                }
            }
        }
    }
}
