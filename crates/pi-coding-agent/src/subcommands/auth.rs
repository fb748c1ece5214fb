//! `pi auth`: log in and out, print credentials, check a provider's readiness.

/// Run `pi auth …`; `None` when `argv` is not an auth command.
pub fn run(argv: &[String]) -> Option<i32> {
    if argv.first().map(String::as_str) != Some("auth") {
        return None;
    }
    None
}
