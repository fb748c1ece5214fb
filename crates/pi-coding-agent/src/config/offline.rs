//! `PI_OFFLINE` read the way pi 1.6 reads it for each kind of network use.
//!
//! 1.6 does not read the variable one way: its startup turns `1`/`true`/`yes` into `1`
//! (with `--offline` likewise), then package installs and tool downloads stop only for those
//! values, the startup checks and the bug upload stop for any non-empty value, and the model
//! catalogues stop as soon as the variable exists, even empty. Every reader in pi asks
//! [`offline`] with the use it is about to make, so the three rules live here only.

use std::ffi::OsStr;

/// What a caller is about to fetch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkUse {
    /// Installing or updating packages, downloading fd or ripgrep: offline only for `1`,
    /// `true` or `yes` (any case).
    Downloads,
    /// The startup checks (pi's latest release, package updates) and the `/bug` upload:
    /// offline for any non-empty value.
    Checks,
    /// Fetching model catalogues (the start's refresh, the model picker's): offline whenever
    /// the variable is set, even to nothing.
    Catalogues,
}

/// Whether `PI_OFFLINE` forbids `usage`.
pub fn offline(usage: NetworkUse) -> bool {
    offline_for(usage, std::env::var_os("PI_OFFLINE").as_deref())
}

/// Whether a value of `PI_OFFLINE` (`None`: unset) forbids `usage`.
pub fn offline_for(usage: NetworkUse, value: Option<&OsStr>) -> bool {
    match usage {
        NetworkUse::Downloads => value.is_some_and(is_truthy),
        NetworkUse::Checks => value.is_some_and(|v| !v.is_empty()),
        NetworkUse::Catalogues => value.is_some(),
    }
}

/// `1`, `true` or `yes` in any case: the values 1.6's startup turns into `PI_OFFLINE=1`.
pub fn is_truthy(value: &OsStr) -> bool {
    value
        .to_str()
        .is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("yes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn each(value: Option<&str>) -> [bool; 3] {
        let v = value.map(OsStr::new);
        [
            offline_for(NetworkUse::Downloads, v),
            offline_for(NetworkUse::Checks, v),
            offline_for(NetworkUse::Catalogues, v),
        ]
    }

    #[test]
    fn each_use_reads_the_value_as_pi_1_6_does() {
        assert_eq!(each(None), [false, false, false]);
        assert_eq!(each(Some("")), [false, false, true]);
        assert_eq!(each(Some("0")), [false, true, true]);
        assert_eq!(each(Some("false")), [false, true, true]);
        for on in ["1", "true", "TRUE", "yes", "Yes"] {
            assert_eq!(each(Some(on)), [true, true, true], "{on}");
        }
    }
}
