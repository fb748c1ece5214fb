#!/usr/bin/env python3
"""A tiny extension host in Python, speaking pi's extension host protocol, version 1
(docs/extension-protocol.md).

It ignores the files pi asks it to load and provides one extension of its own: a tool
`py_word_count` that counts the words of a text, plus an `input` handler that leaves prompts
alone. Run pi with it in place of the Node host:

    PI_EXTENSION_HOST="python3 docs/examples/python-extension-host/host.py" pi -e anything -p "..."

Only the standard library is used.
"""

import json
import os
import socket
import sys

PROTOCOL_VERSION = 2
EXTENSION_PATH = "python:word-count"


def extension_info():
    return {
        "path": EXTENSION_PATH,
        "resolvedPath": os.path.abspath(__file__),
        "tools": [
            {
                "name": "py_word_count",
                "label": "Word count",
                "description": "Counts the words of a text.",
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text to count"}},
                    "required": ["text"],
                },
            }
        ],
        "events": ["input"],
    }


def call_tool(params):
    text = params.get("params", {}).get("text", "")
    count = len(text.split())
    return {"content": [{"type": "text", "text": f"{count} words"}], "details": {"words": count}}


def answer(method, params):
    """The result of one request from pi, or raises LookupError for an unknown method."""
    if method == "initialize":
        return {"protocolVersion": PROTOCOL_VERSION, "node": "python-" + sys.version.split()[0], "pid": os.getpid()}
    if method in ("load", "reload", "registrations"):
        return {"extensions": [extension_info()], "errors": []}
    if method == "dispatch":
        # `input` answers "continue"; every other event has no handler here.
        if params.get("event") == "input":
            return {"result": {"action": "continue"}, "errors": []}
        return {"result": None, "errors": []}
    if method == "callTool":
        return call_tool(params)
    if method == "runCommand":
        return {"found": False}
    if method in ("setFlags", "shutdown"):
        return None
    if method == "ping":
        return {"pong": True}
    raise LookupError(method)


def main():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(os.environ["PI_EXTENSION_HOST_SOCKET"])
    reader = sock.makefile("r", encoding="utf-8", newline="\n")

    def send(message):
        sock.sendall((json.dumps(message) + "\n").encode("utf-8"))

    send({"method": "hello", "params": {"protocolVersion": PROTOCOL_VERSION, "node": "python", "pid": os.getpid()}})
    for line in reader:
        if not line.strip():
            continue
        message = json.loads(line)
        if "method" not in message or "id" not in message:
            continue  # a notification or a response: nothing to answer
        method, request_id = message["method"], message["id"]
        try:
            send({"id": request_id, "result": answer(method, message.get("params") or {})})
        except LookupError:
            send({"id": request_id, "error": {"code": "unknown_method", "message": f"unknown method {method}"}})
        if method == "shutdown":
            break
    sock.close()


if __name__ == "__main__":
    main()
