#!/usr/bin/env python3
"""Write a pi session file (JSONL, version 3) with N messages, for the resume and history cases.

Usage: gen/session.py OUT.jsonl MESSAGES CWD

The conversation repeats a four-message round: a user request (~250 characters), an assistant
reply with text and a `read` tool call, the tool result (~760 characters) and a final assistant
text (~380 characters); 5,000 messages make about 3.5 MB, the size bench/session-load.sh uses.
Assistant usage numbers are small on purpose: the run measures resuming, not compaction.
"""
import json
import sys
import uuid
from datetime import datetime, timedelta, timezone

WORDS = ["session", "tree", "branch", "entry", "context", "model", "file", "leaf"]


def filler(n, seed):
    out, i = [], seed
    length = 0
    while length < n:
        w = WORDS[i % len(WORDS)]
        out.append(w)
        length += len(w) + 1
        i = (i * 31 + 7) % (1 << 32)
    return " ".join(out)


def main():
    path, total, cwd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    clock = [0]

    def stamp():
        clock[0] += 1
        t = start + timedelta(milliseconds=clock[0] * 37)
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z", int(t.timestamp() * 1000)

    counter = [0]

    def new_id():
        counter[0] += 1
        return f"{counter[0]:08x}"

    usage = {"input": 1200, "output": 40, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1240,
             "cost": {"input": 0.0012, "output": 0.00008, "cacheRead": 0, "cacheWrite": 0, "total": 0.00128}}
    lines = []
    iso, _ = stamp()
    sid = str(uuid.UUID(int=0x01A22AAF0000700080000000000000 + total))
    lines.append({"type": "session", "version": 3, "id": sid, "timestamp": iso, "cwd": cwd})
    parent = None

    def entry(kind, **fields):
        nonlocal parent
        iso, _ = stamp()
        eid = new_id()
        lines.append({"type": kind, "id": eid, "parentId": parent, "timestamp": iso, **fields})
        parent = eid

    entry("model_change", provider="mock-openai", modelId="mock-model")
    entry("thinking_level_change", thinkingLevel="off")

    def message(msg):
        _, ms = stamp()
        msg["timestamp"] = ms
        entry("message", message=msg)

    def assistant(content, stop):
        return {"role": "assistant", "content": content, "api": "openai-completions",
                "provider": "mock-openai", "model": "mock-model", "usage": usage, "stopReason": stop}

    written, turn = 0, 0
    while written < total:
        turn += 1
        call_id = f"call_bench_{turn}"
        round_ = [
            {"role": "user", "content": [{"type": "text", "text": filler(250, turn)}]},
            assistant([{"type": "text", "text": filler(170, turn + 1)},
                       {"type": "toolCall", "id": call_id, "name": "read",
                        "arguments": {"path": f"src/file_{turn}.rs", "offset": 1}}], "toolUse"),
            {"role": "toolResult", "toolCallId": call_id, "toolName": "read",
             "content": [{"type": "text", "text": filler(760, turn + 2)}], "isError": False},
            assistant([{"type": "text", "text": filler(380, turn + 3)}], "stop"),
        ]
        for msg in round_[: total - written]:
            message(msg)
            written += 1
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
