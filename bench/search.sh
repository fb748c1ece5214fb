#!/usr/bin/env bash
# Times pi's in-process grep/find (crates/pi-tools/examples/search.rs) against rg and fd on a
# generated tree of 100,000 files. Usage: bench/search.sh [tree-dir] [files]
# Builds the example with the release profile unless PI_BENCH_PROFILE says otherwise (e.g. dev).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tree="${1:-${TMPDIR:-/tmp}/pi-search-bench}"
files="${2:-100000}"
profile="${PI_BENCH_PROFILE:-release}"
runs="${PI_BENCH_RUNS:-5}"

if [ ! -f "$tree/.done-$files" ]; then
  echo "generating $files files under $tree" >&2
  rm -rf "$tree"
  mkdir -p "$tree"
  python3 - "$tree" "$files" <<'PY'
import os, sys
tree, total = sys.argv[1], int(sys.argv[2])
per_dir = 100
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
os.makedirs(os.path.join(tree, ".git"), exist_ok=True)
with open(os.path.join(tree, ".gitignore"), "w") as f:
    f.write("*.log\nbuild/\n")
for i in range(total):
    d = os.path.join(tree, f"pkg{i // (per_dir * 10):03d}", f"mod{(i // per_dir) % 10}")
    if i % per_dir == 0:
        os.makedirs(d, exist_ok=True)
    ext = (".rs", ".ts", ".md", ".txt", ".log")[i % 5]
    with open(os.path.join(d, f"file{i}{ext}"), "w") as f:
        for j in range(20):
            w = words[(i + j) % len(words)]
            f.write(f"fn {w}_{j}() {{ let x = {i * j}; }} // {w}\n")
        if i % 1000 == 7:
            f.write("let needle_marker = 42;\n")
PY
  touch "$tree/.done-$files"
fi

if [ "$profile" = "release" ]; then
  cargo build --quiet --release -p pi-tools --example search --manifest-path "$root/Cargo.toml"
  dir="release"
else
  cargo build --quiet --profile "$profile" -p pi-tools --example search --manifest-path "$root/Cargo.toml"
  dir="debug"
fi
target="${CARGO_TARGET_DIR:-$root/target}"
bin="$target/$dir/examples/search"

fd_bin="$(command -v fd || command -v fdfind || true)"
rg_bin="$(command -v rg || true)"

# Best wall time of $runs runs, in milliseconds.
best_ms() {
  local best=""
  for _ in $(seq "$runs"); do
    local start end ms
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    ms=$(( (end - start) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
  done
  echo "$best"
}

report() {
  local name="$1" ours="$2" theirs="$3"
  if [ -n "$theirs" ] && [ "$theirs" -gt 0 ]; then
    printf '%-28s pi %6s ms   reference %6s ms   ratio %s\n' "$name" "$ours" "$theirs" \
      "$(awk "BEGIN { printf \"%.2f\", $ours / $theirs }")"
  else
    printf '%-28s pi %6s ms   reference (not installed)\n' "$name" "$ours"
  fi
}

echo "tree: $tree ($files files), best of $runs, profile $profile"
ours=$(best_ms "$bin" grep needle_marker "$tree")
theirs=""
[ -n "$rg_bin" ] && theirs=$(best_ms "$rg_bin" --hidden -n --color=never -- needle_marker "$tree")
report "grep needle_marker" "$ours" "$theirs"

ours=$(best_ms "$bin" grep 'fn \w+_1\d\(' "$tree")
theirs=""
[ -n "$rg_bin" ] && theirs=$(best_ms "$rg_bin" --hidden -n --color=never -- 'fn \w+_1\d\(' "$tree")
report "grep regex (many matches)" "$ours" "$theirs"

ours=$(best_ms "$bin" find '*.rs' "$tree")
theirs=""
if [ -n "$fd_bin" ]; then
  if "$fd_bin" --help 2>/dev/null | grep -q -- --no-require-git; then
    theirs=$(best_ms "$fd_bin" --glob --color=never --hidden --no-require-git -- '*.rs' "$tree")
  else
    theirs=$(best_ms "$fd_bin" --glob --color=never --hidden -- '*.rs' "$tree")
  fi
fi
report "find *.rs" "$ours" "$theirs"

ours=$(best_ms "$bin" find 'mod3/*.md' "$tree")
theirs=""
if [ -n "$fd_bin" ]; then
  theirs=$(best_ms "$fd_bin" --glob --color=never --hidden --full-path -- '**/mod3/*.md' "$tree")
fi
report "find mod3/*.md (full path)" "$ours" "$theirs"
