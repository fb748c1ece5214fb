#!/usr/bin/env python3
"""Generate the search tree: N files (default 100,000), 100 per directory, 20 lines each, a
`needle_marker` line in every thousandth file, a `.gitignore` that hides the `.log` fifth.

Usage: gen/tree.py DIR [FILES]. The layout is the one bench/search.sh generates, and the same
`.done-FILES` marker is written, so both scripts share one tree.
"""
import os
import shutil
import sys

tree = sys.argv[1]
total = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
marker = os.path.join(tree, f".done-{total}")
if os.path.exists(marker):
    sys.exit(0)
shutil.rmtree(tree, ignore_errors=True)
os.makedirs(os.path.join(tree, ".git"), exist_ok=True)
per_dir = 100
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()
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
open(marker, "w").close()
