#!/usr/bin/env python3
"""Run N `pi --mode rpc` processes at once, each in its own copy of a project, each sending one
prompt and reading events until `agent_end`; report how many finished, the wall time, the CPU
of all of them and their memory (peak of the summed resident sets, sampled every 10 ms, and the
largest single peak).

Usage: rpc_swarm.py N PROJECT_TEMPLATE WORKDIR PROMPT -- PI [ARGS...]

Prints one JSON object. Exit status 0 when all N processes finished their run.
"""
import json
import os
import resource
import selectors
import shutil
import subprocess
import sys
import time


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main():
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") != 4:
        sys.exit(__doc__)
    n, template, workdir, prompt = int(argv[0]), argv[1], argv[2], argv[3]
    cmd = argv[5:]
    timeout = float(os.environ.get("PI_BENCH_SWARM_TIMEOUT", "120"))
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    dirs = []
    for i in range(n):
        d = os.path.join(workdir, f"p{i}")
        shutil.copytree(template, d)
        dirs.append(d)
    line = json.dumps({"id": "1", "type": "prompt", "message": prompt}) + "\n"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    procs = []
    sel = selectors.DefaultSelector()
    for d in dirs:
        p = subprocess.Popen(cmd, cwd=d, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
        p.stdin.write(line.encode())
        p.stdin.flush()
        os.set_blocking(p.stdout.fileno(), False)
        state = {"proc": p, "buf": b"", "done": False, "hwm": 0}
        procs.append(state)
        sel.register(p.stdout, selectors.EVENT_READ, state)
    peak_sum = 0
    last_sample = 0.0
    open_streams = len(procs)
    while open_streams and time.monotonic() - start < timeout:
        for key, _ in sel.select(timeout=0.01):
            st = key.data
            try:
                chunk = os.read(key.fileobj.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            st["buf"] += chunk
            if not st["done"] and b'"type":"agent_end"' in st["buf"]:
                st["done"] = True
                st["hwm"] = hwm_kib(st["proc"].pid)
                # Closing stdin ends the RPC session; pi then exits.
                st["proc"].stdin.close()
            # Only the unfinished tail of the buffer is needed to find agent_end.
            if len(st["buf"]) > 1 << 16:
                st["buf"] = st["buf"][-4096:]
        now = time.monotonic()
        if now - last_sample >= 0.01:
            last_sample = now
            peak_sum = max(peak_sum, sum(rss_kib(st["proc"].pid) for st in procs if st["proc"].poll() is None))
    finished = 0
    for st in procs:
        p = st["proc"]
        try:
            p.wait(timeout=max(1.0, timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if st["done"] and p.returncode == 0:
            finished += 1
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({
        "processes": n,
        "finished": finished,
        "wall_s": round(wall, 3),
        "cpu_user_s": round(after.ru_utime - before.ru_utime, 3),
        "cpu_sys_s": round(after.ru_stime - before.ru_stime, 3),
        "peak_total_rss_mib": round(peak_sum / 1024, 1),
        "max_process_rss_mib": round(max(st["hwm"] for st in procs) / 1024, 1),
    }))
    sys.exit(0 if finished == n else 1)


if __name__ == "__main__":
    main()
