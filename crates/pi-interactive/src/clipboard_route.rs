//! Where a copy goes once the clipboard tools had their try, as pi 1.6 decides it: OSC 52 for
//! remote sessions and for a machine without any display (the terminal is then the only way
//! to a clipboard), otherwise the tool's result stands, and a failure says what to install.

/// OSC 52 payloads longer than this (base64 characters) are not sent: terminals drop them.
const MAX_OSC52_ENCODED: usize = 100_000;

/// What became of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Send the text as OSC 52.
    pub osc52: bool,
    /// Whether the copy counts as done, or the error to show.
    pub result: Result<(), String>,
}

/// Decide for `text`, the clipboard tool having answered `native`, under this process's
/// environment.
pub fn route(native: &Result<(), String>, text: &str) -> Route {
    route_with(native, text.len().div_ceil(3) * 4, cfg!(target_os = "linux"), &|k| {
        std::env::var(k).ok()
    })
}

/// [`route`] with the base64 length, the platform and the environment given.
fn route_with(
    native: &Result<(), String>,
    encoded_len: usize,
    linux: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Route {
    // As pi tests them: an empty variable counts as unset.
    let set = |k: &str| env(k).is_some_and(|v| !v.is_empty());
    let remote = set("SSH_CONNECTION")
        || set("SSH_CLIENT")
        || set("MOSH_CONNECTION")
        || env("PI_CLIPBOARD_OSC52").as_deref() == Some("1");
    let headless = linux && !set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("TERMUX_VERSION");
    let mut copied = native.is_ok();
    let mut osc52 = false;
    let mut oversized = false;
    // OSC 52 cannot say whether it worked, so a desktop with a display reports the tool's
    // failure instead of sending it.
    if remote || (!copied && headless) {
        if encoded_len <= MAX_OSC52_ENCODED {
            osc52 = true;
            copied = true;
        } else {
            oversized = true;
        }
    }
    let result = if copied {
        Ok(())
    } else if oversized {
        Err("Clipboard unavailable: text exceeds the OSC 52 size limit".to_string())
    } else if set("TERMUX_VERSION") {
        Err("Clipboard unavailable: install the Termux:API app and `termux-api` package".to_string())
    } else if linux && set("WAYLAND_DISPLAY") {
        Err("Clipboard unavailable: install `wl-clipboard` (`wl-copy`) or check Wayland access".to_string())
    } else if linux && set("DISPLAY") {
        Err("Clipboard unavailable: install `xclip` or `xsel`, or check X11 access".to_string())
    } else {
        Err("Clipboard unavailable".to_string())
    };
    Route { osc52, result }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decide(native: Result<(), String>, len: usize, vars: &[(&str, &str)]) -> Route {
        let env = |k: &str| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        route_with(&native, len, true, &env)
    }

    fn failed() -> Result<(), String> {
        Err("no tool".into())
    }

    #[test]
    fn without_a_display_the_copy_goes_out_as_osc52() {
        let r = decide(failed(), 10, &[("DISPLAY", "")]);
        assert_eq!(
            r,
            Route {
                osc52: true,
                result: Ok(())
            }
        );
        // Too long for OSC 52.
        let r = decide(failed(), 100_001, &[]);
        assert!(!r.osc52);
        assert_eq!(
            r.result.unwrap_err(),
            "Clipboard unavailable: text exceeds the OSC 52 size limit"
        );
    }

    #[test]
    fn a_desktop_without_a_tool_says_what_to_install() {
        let r = decide(failed(), 10, &[("DISPLAY", ":0")]);
        assert!(!r.osc52);
        assert_eq!(
            r.result.unwrap_err(),
            "Clipboard unavailable: install `xclip` or `xsel`, or check X11 access"
        );
        let r = decide(failed(), 10, &[("DISPLAY", ":0"), ("WAYLAND_DISPLAY", "wayland-0")]);
        assert!(r.result.unwrap_err().contains("`wl-clipboard`"));
        // A tool that worked needs no OSC 52.
        assert_eq!(
            decide(Ok(()), 10, &[("DISPLAY", ":0")]),
            Route {
                osc52: false,
                result: Ok(())
            }
        );
    }

    #[test]
    fn remote_sessions_and_the_switch_send_osc52_as_well() {
        for var in ["SSH_CONNECTION", "SSH_CLIENT", "MOSH_CONNECTION"] {
            let r = decide(Ok(()), 10, &[("DISPLAY", ":0"), (var, "x")]);
            assert_eq!(
                r,
                Route {
                    osc52: true,
                    result: Ok(())
                },
                "{var}"
            );
        }
        let r = decide(failed(), 10, &[("DISPLAY", ":0"), ("PI_CLIPBOARD_OSC52", "1")]);
        assert_eq!(
            r,
            Route {
                osc52: true,
                result: Ok(())
            }
        );
        let r = decide(failed(), 10, &[("DISPLAY", ":0"), ("PI_CLIPBOARD_OSC52", "0")]);
        assert!(!r.osc52 && r.result.is_err());
    }
}
