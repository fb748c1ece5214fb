//! The extension host against real Node: loading, registrations, tools, chained events, the
//! state mirror, console output, crashes, hangs and restarts. Node is `PI_TEST_NODE`, else
//! `/usr/bin/node`, else `node` on PATH; the npm packages come from `PI_EXTENSION_MODULES` or the
//! reference pi install (`PI_REFERENCE_PI`, else `PI_REFERENCE_DIR` or the `scripts/test-deps`
//! cache). Without them each test fails under CI and prints one `skipped:` line elsewhere
//! (`pi_test_support::require`).

mod caches;
mod calls;
mod examples;
mod failures;
mod lazy;
mod loading;
mod other_language;
mod support;
