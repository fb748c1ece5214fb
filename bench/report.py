#!/usr/bin/env python3
"""Turn the raw results of bench/run (in OUT) into the Markdown report.

Usage: report.py OUT [CASE...]. Reads OUT/machine.tsv, OUT/CASE.meta, the hyperfine exports
OUT/CASE.hf.N.json, the memory samples OUT/CASE.SIDE.rss.N and OUT/CASE.SIDE.probe.time
(`/usr/bin/time -f '%e %M'`), and the pseudo-terminal results OUT/CASE.SIDE.pty.json.
"""
import glob
import json
import os
import statistics
import sys

# Budgets from ARCHITECTURE.md ("Performance budgets"): (time ms, peak RSS MiB), or a rule.
BUDGETS = {
    "version": {"ms": 5, "mib": 8},
    "hello": {"ms": 20, "mib": 20},
    "tools": {"ms": 80},
    "resume": {"ms": 60, "mib": 40},
    "print-20k": {"rule": "mock"},
    "json-5k": {"ms": 300, "mib": 40},
    "json-20k": {"rule": "flat"},
    "first-frame": {"ms": 15},
    "keystroke": {"ms": 2},
    "scroll": {"ms": 2},
}


def fmt_ms(ms):
    if ms is None:
        return "?"
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def fmt_mib(mib):
    if mib is None:
        return "–"
    if mib >= 1024:
        return f"{mib / 1024:.1f} GiB"
    return f"{mib:.1f} MiB"


def output_bytes(out, case, side):
    """The size of a side's probe output, when the probe counted it (pipe cases)."""
    try:
        with open(os.path.join(out, f"{case}.{side}.probe.bytes")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def human_bytes(n):
    if n is None:
        return "n/a"
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit} ({n:,} bytes)"
    return f"{n} bytes"


def read_meta(out, case):
    meta = {}
    path = os.path.join(out, f"{case}.meta")
    if not os.path.exists(path):
        return None
    for line in open(path):
        key, _, value = line.rstrip("\n").partition("\t")
        meta[key] = value
    return meta


def time_samples(out, case, side):
    times = []
    for path in sorted(glob.glob(os.path.join(out, f"{case}.hf.*.json"))):
        try:
            results = json.load(open(path))["results"]
        except (ValueError, KeyError, OSError):
            continue
        for result in results:
            if result["command"] == side:
                times.extend(t * 1000 for t in result["times"])
    return times


def rss_samples(out, case, side):
    """Peak RSS in MiB from every /usr/bin/time sample of a side (probe included)."""
    values = []
    paths = glob.glob(os.path.join(out, f"{case}.{side}.rss.*")) + [os.path.join(out, f"{case}.{side}.probe.time")]
    for path in paths:
        if not os.path.exists(path):
            continue
        for line in open(path):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                values.append(int(parts[1]) / 1024)
    return values


def failed_runs(out, case, side):
    """Memory runs (not the probe) whose command exited non-zero."""
    count = 0
    for path in glob.glob(os.path.join(out, f"{case}.{side}.rss.*")):
        if any(line.startswith("Command exited with non-zero status") for line in open(path)):
            count += 1
    return count


def probe_time(out, case, side):
    path = os.path.join(out, f"{case}.{side}.probe.time")
    if os.path.exists(path):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 2:
                try:
                    return float(parts[0]) * 1000
                except ValueError:
                    pass
    return None


class Side:
    """What one binary did in one case."""

    def __init__(self, out, case, side, meta):
        self.available = False
        self.reason = ""
        self.times = []
        self.rss = None
        self.rss_max = None
        self.failed_runs = 0
        pty = os.path.join(out, f"{case}.{side}.pty.json")
        if os.path.exists(pty):
            try:
                data = json.load(open(pty))
            except (ValueError, OSError):
                err = open(os.path.join(out, f"{case}.{side}.pty.err")).read().strip().splitlines()
                data = {"available": False, "reason": err[-1] if err else "no result", "ms": []}
            self.available = data["available"] and bool(data["ms"])
            self.reason = data.get("reason") or "no result"
            self.times = data["ms"]
            self.rss = (data.get("rss_kb", 0) / 1024 or None) if self.available else None
            return
        status = meta.get(f"{side}_status")
        if status is None:
            self.reason = "not run"
            return
        samples = rss_samples(out, case, side)
        self.rss = statistics.median(samples) if samples else None
        self.rss_max = max(samples) if samples else None
        self.failed_runs = failed_runs(out, case, side)
        if status != "ok":
            took = probe_time(out, case, side)
            self.reason = status + (f" (after {fmt_ms(took)}, peak {fmt_mib(max(samples))})" if took and samples else "")
            self.rss = None
            return
        self.times = time_samples(out, case, side)
        self.available = bool(self.times)
        if not self.available:
            self.reason = meta.get("note", "no timings")

    @property
    def median(self):
        return statistics.median(self.times) if self.times else None

    def cell(self):
        if not self.available:
            return f"n/a: {self.reason}"
        text = f"{fmt_ms(self.median)} ({fmt_ms(min(self.times))} – {fmt_ms(max(self.times))})"
        if self.failed_runs:
            text += f" ({self.failed_runs} memory runs failed)"
        return text

    def rss_cell(self):
        """Median peak RSS; the largest sample too when it is well above the median."""
        text = fmt_mib(self.rss)
        if self.rss and self.rss_max and self.rss_max > 1.25 * self.rss:
            text += f" (max {fmt_mib(self.rss_max)})"
        return text


def judge(case, ours, results, out):
    """Budget text and met/missed for the Rust side."""
    budget = BUDGETS.get(case)
    if budget is None:
        return "–", "–"
    if "rule" in budget and budget["rule"] == "mock":
        mock = time_samples_mock(out, case)
        text = "≤ 1.2× the mock alone" + (f" ({fmt_ms(1.2 * statistics.median(mock))})" if mock else "")
        if not ours.available or not mock:
            return text, "not measured yet"
        return text, "met" if ours.median <= 1.2 * statistics.median(mock) else "missed"
    if "rule" in budget and budget["rule"] == "flat":
        text = "completes; largest peak RSS ≤ 1.25× the 5,000-token case's median"
        five = results.get("json-5k")
        if five is None and read_meta(out, "json-5k") is not None:
            five = Side(out, "json-5k", "ours", read_meta(out, "json-5k"))
        if not ours.available or five is None or not five.available or ours.rss_max is None or five.rss is None:
            return text, "not measured yet"
        return text, "met" if ours.rss_max <= 1.25 * five.rss else "missed (memory)"
    parts = [f"≤ {budget['ms']} ms"] + ([f"≤ {budget['mib']} MiB"] if "mib" in budget else [])
    text = ", ".join(parts)
    mock = time_samples_mock(out, case)
    if mock:
        text += f" (the mock alone answers this request in {fmt_ms(statistics.median(mock))})"
    if not ours.available:
        return text, "not measured yet"
    missed = []
    if ours.median > budget["ms"]:
        missed.append("time")
    if "mib" in budget and (ours.rss is None or ours.rss > budget["mib"]):
        missed.append("memory")
    return text, "met" if not missed else f"missed ({', '.join(missed)})"


def time_samples_mock(out, case):
    path = os.path.join(out, f"{case}.mock.json")
    if not os.path.exists(path):
        return []
    return [t * 1000 for r in json.load(open(path))["results"] for t in r["times"]]


def swarm_cell(out, case, side):
    """The rpc50 results of one side: medians over the rounds of bench/rpc_swarm.py."""
    runs = []
    for path in sorted(glob.glob(os.path.join(out, f"{case}.{side}.swarm.*.json"))):
        try:
            runs.append(json.loads(open(path).read()))
        except (OSError, ValueError):
            pass
    if not runs:
        return "n/a"
    med = lambda key: statistics.median(r[key] for r in runs)
    done = min(r["finished"] for r in runs)
    return (f"{done}/{runs[0]['processes']} finished; wall {fmt_ms(1000 * med('wall_s'))}, "
            f"CPU {med('cpu_user_s') + med('cpu_sys_s'):.2f} s (user {med('cpu_user_s'):.2f}, sys {med('cpu_sys_s'):.2f}), "
            f"summed peak RSS {fmt_mib(med('peak_total_rss_mib'))}, largest process {fmt_mib(med('max_process_rss_mib'))}")


def main():
    out = sys.argv[1]
    cases = sys.argv[2:]
    machine = []
    path = os.path.join(out, "machine.tsv")
    if os.path.exists(path):
        machine = [line.rstrip("\n").split("\t", 1) for line in open(path) if "\t" in line]
    have_ts = any(key == "ts" for key, _ in machine)

    print("| | |\n|---|---|")
    for key, value in machine:
        print(f"| {key} | {value} |")
    print()
    header = ["case", "ours median (min – max)", "ours peak RSS"]
    if have_ts:
        header += ["TypeScript median (min – max)", "TS peak RSS", "TS ÷ ours"]
    header += ["budget", "status"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    results, metas, swarms = {}, {}, []
    for case in cases:
        meta = read_meta(out, case)
        if meta is None and not glob.glob(os.path.join(out, f"{case}.*.pty.json")):
            continue
        meta = meta or {}
        metas[case] = meta
        if glob.glob(os.path.join(out, f"{case}.*.swarm.*.json")):
            swarms.append(case)
            continue
        ours = Side(out, case, "ours", meta)
        results[case] = ours
        row = [f"{case}: {meta.get('title', '')}", ours.cell(), ours.rss_cell()]
        if have_ts:
            ts = Side(out, case, "ts", meta)
            ratio = "–"
            if ours.available and ts.available and ours.median:
                ratio = f"{ts.median / ours.median:.1f}×"
            row += [ts.cell(), ts.rss_cell(), ratio]
        budget, status = judge(case, ours, results, out)
        row += [budget, status]
        print("| " + " | ".join(row) + " |")
    print()
    sizes = [(case, output_bytes(out, case, "ours"), output_bytes(out, case, "ts")) for case in results]
    sizes = [s for s in sizes if s[1] is not None or s[2] is not None]
    if sizes:
        print("Bytes written to stdout (the checking run of each side, through a pipe):")
        print()
        for case, ours_bytes, ts_bytes in sizes:
            line = f"* `{case}`: ours {human_bytes(ours_bytes)}"
            if have_ts:
                line += f", TypeScript {human_bytes(ts_bytes)}"
            print(line)
        print()
    for case in swarms:
        print(f"**{case}: {metas[case].get('title', '')}** (medians of the rounds)")
        print()
        print(f"* ours: {swarm_cell(out, case, 'ours')}")
        if have_ts:
            print(f"* TypeScript: {swarm_cell(out, case, 'ts')}")
        print()
    print("Commands (cwd, then each binary's command; `PI_CODING_AGENT_DIR` and `PI_OFFLINE=1` are set):")
    print()
    for case, meta in metas.items():
        print(f"* `{case}` in `{meta.get('cwd', '')}`")
        for key in ("ours_cmd", "ts_cmd", "mock_cmd", "session", "tree", "extensions", "note"):
            if key in meta:
                print(f"  * {key.replace('_cmd', '')}: `{meta[key]}`")


if __name__ == "__main__":
    main()
