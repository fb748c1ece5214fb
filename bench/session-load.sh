#!/bin/sh
# Load a 5,000-message session (~3.7 MB) and rebuild its context; prints best and median of 30.
# Budget: <= 30 ms. Usage: bench/session-load.sh [file.jsonl]
# Builds the example optimised (opt-level 3) without a separate release tree.
set -eu
cd "$(dirname "$0")/.."
exec cargo run -q -p pi-session --example session_load \
  --config 'profile.dev.package."*".opt-level=3' \
  --config 'profile.dev.package.pi-session.opt-level=3' \
  --config 'profile.dev.package.pi-ai.opt-level=3' \
  -- "$@"
