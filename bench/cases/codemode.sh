# codemode case of bench/run (sourced by it; uses its reset_case, start_mock, measure, $work).
#
#   codemode-10  `pi --tools read,ls,codemode -p ...` whose model sends one codemode script that
#                makes 10 nested tool calls (8 reads and 2 ls, all in parallel) and returns a
#                summary; the second request carries the script's result. Both sides start
#                their sandbox for the call (the Rust pi: a QuickJS VM on a thread; pi 1.6: a
#                worker with QuickJS in WebAssembly).

codemode_scenario() { # file
  python3 - "$1" <<'PY'
import json, sys
code = (
    "const paths = ['hello.txt', 'src/app.py'];\n"
    "const calls = [];\n"
    "for (let i = 0; i < 8; i++) calls.push(tools.read({path: paths[i % 2]}));\n"
    "calls.push(tools.ls({path: '.'}), tools.ls({path: 'src'}));\n"
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

EXTRA_CASES+=(codemode-10)
