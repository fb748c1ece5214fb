#!/usr/bin/env python3
"""A minimal client of `pi --mode rpc`: send one prompt, print the answer as it streams.

    python3 client.py "What does this project do?"

Needs only the Python standard library and `pi` on PATH.
"""
import json
import subprocess
import sys


def main() -> int:
    prompt = " ".join(sys.argv[1:]) or "Say hello."
    pi = subprocess.Popen(
        ["pi", "--mode", "rpc", "--no-session"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )

    def send(command: dict) -> None:
        pi.stdin.write(json.dumps(command) + "\n")
        pi.stdin.flush()

    send({"id": "1", "type": "prompt", "message": prompt})
    code = 0
    for line in pi.stdout:
        record = json.loads(line)
        kind = record.get("type")
        if kind == "response" and not record.get("success"):
            print(f"error: {record.get('error')}", file=sys.stderr)
            code = 1
            break
        if kind == "message_update":
            event = record["assistantMessageEvent"]
            if event["type"] == "text_delta":
                print(event["delta"], end="", flush=True)
        elif kind == "message_end" and record["message"].get("role") == "assistant":
            if record["message"].get("stopReason") == "error":
                print(f"\nerror: {record['message'].get('errorMessage')}", file=sys.stderr)
                code = 1
        elif kind == "agent_end":
            print()
            break
    pi.stdin.close()
    pi.wait()
    return code


if __name__ == "__main__":
    sys.exit(main())
