# codemode case of bench/run (sourced by it; uses its reset_case, start_mock, measure, $work).
#
#   codemode-10  `pi --tools read,ls,codemode -p ...` whose model sends one codemode script that
#                makes 10 nested tool calls (8 reads and 2 ls, all in parallel) and returns a
#                summary; the second request carries the script's result. Both sides start
#                their sandbox for the call (the Rust pi: a QuickJS VM on a thread; pi 1.6: a
#                worker with QuickJS in WebAssembly).
#   codemode-100 the same with 100 nested calls (80 reads, 20 ls, all in parallel): the cost
#                per nested call once the sandbox is up.

codemode_scenario() { # file [nested calls, a multiple of 10]
  python3 - "$1" "${2:-10}" <<'PY'
import json, sys
n = int(sys.argv[2])
reads, lists = n * 8 // 10, n * 2 // 10
code = (
    "const paths = ['hello.txt', 'src/app.py'];\n"
    "const calls = [];\n"
    f"for (let i = 0; i < {reads}; i++) calls.push(tools.read({{path: paths[i % 2]}}));\n"
    f"for (let i = 0; i < {lists}; i++) calls.push(tools.ls({{path: i % 2 ? 'src' : '.'}}));\n"
    "const results = await Promise.all(calls);\n"
    "return results.map((r) => String(r).split('\\n')[0]).join(' | ');"
)
scenario = {
    "mode": "sequential",
    "turns": [
        {"tool_calls": [{"name": "codemode", "arguments": {"code": code}}]},
        {"text": "codemode done"},
    ],
    "default": {"text": "codemode done"},
}
json.dump(scenario, open(sys.argv[1], "w"), indent=2)
PY
}

case_codemode-10() {
  reset_case codemode-10 "one codemode script making 10 nested tool calls, print mode (2 requests)"
  codemode_scenario "$work/codemode.json"
  start_mock "$work/codemode.json"
  ARGS="--tools read,ls,codemode -p \"Read the files with one script.\""
  EXPECT="codemode done"
  measure
}

case_codemode-100() {
  reset_case codemode-100 "one codemode script making 100 nested tool calls, print mode (2 requests)"
  codemode_scenario "$work/codemode100.json" 100
  start_mock "$work/codemode100.json"
  ARGS="--tools read,ls,codemode -p \"Read the files with one script.\""
  EXPECT="codemode done"
  measure
}

EXTRA_CASES+=(codemode-10 codemode-100)
