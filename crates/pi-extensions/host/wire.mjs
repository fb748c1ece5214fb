// The host's end of the wire: JSON lines over the Unix socket whose path pi passes in
// PI_EXTENSION_HOST_SOCKET. Requests and responses carry ids in both directions; a message
// without an id is a notification. Nothing here writes to stdout: extensions own it.
import net from "node:net";

export const PROTOCOL_VERSION = 2;

export function connectWire(socketPath, onRequest, onNotification) {
	const socket = net.createConnection(socketPath);
	const pending = new Map();
	let nextId = 1;
	// The pieces of a line not yet ended.
	let partial = [];
	let closed = false;

	const send = (message) => {
		if (closed) return;
		socket.write(`${JSON.stringify(message)}\n`);
	};

	const respond = (id, promise) => {
		Promise.resolve()
			.then(promise)
			.then(
				(result) => send({ id, result: result === undefined ? null : result }),
				(error) => send({ id, error: toWireError(error) }),
			);
	};

	const onLine = (line) => {
		if (line.length === 0) return;
		let message;
		try {
			message = JSON.parse(line);
		} catch (error) {
			send({ method: "protocolError", params: { message: `unreadable line: ${String(error)}` } });
			return;
		}
		if (message.method !== undefined && message.id !== undefined) {
			respond(message.id, () => onRequest(message.method, message.params ?? {}));
		} else if (message.method !== undefined) {
			try {
				onNotification(message.method, message.params ?? {});
			} catch (error) {
				send({ method: "protocolError", params: { message: String(error?.stack ?? error) } });
			}
		} else if (message.id !== undefined) {
			const waiter = pending.get(message.id);
			if (!waiter) return;
			pending.delete(message.id);
			if (message.error) {
				waiter.reject(new Error(message.error.message ?? "request failed"));
			} else {
				waiter.resolve(message.result);
			}
		}
	};

	socket.setEncoding("utf8");
	// Only the chunk that just arrived is searched for the end of a line, and the pieces of a
	// long line are joined once: a line of a megabyte (the model list in a state update) comes
	// in many chunks, and searching and copying it whole on each would cost time quadratic in
	// its length.
	socket.on("data", (chunk) => {
		let start = 0;
		let newline = chunk.indexOf("\n");
		while (newline >= 0) {
			let line = chunk.slice(start, newline);
			if (partial.length > 0) {
				partial.push(line);
				line = partial.join("");
				partial = [];
			}
			onLine(line);
			start = newline + 1;
			newline = chunk.indexOf("\n", start);
		}
		if (start < chunk.length) partial.push(start === 0 ? chunk : chunk.slice(start));
	});
	// pi went away: nothing is left to serve.
	const exit = () => {
		closed = true;
		for (const waiter of pending.values()) waiter.reject(new Error("pi closed the extension host connection"));
		pending.clear();
		process.exit(0);
	};
	socket.on("close", exit);
	socket.on("error", exit);

	return {
		notify: (method, params) => send({ method, params }),
		request: (method, params) =>
			new Promise((resolve, reject) => {
				if (closed) {
					reject(new Error("pi closed the extension host connection"));
					return;
				}
				const id = nextId++;
				pending.set(id, { resolve, reject });
				send({ id, method, params });
			}),
		whenConnected: new Promise((resolve) => socket.once("connect", resolve)),
		close: () =>
			new Promise((resolve) => {
				closed = true;
				socket.end(resolve);
			}),
	};
}

export function toWireError(error) {
	if (error && typeof error === "object" && typeof error.code === "string" && error.wire) {
		return { code: error.code, message: error.message };
	}
	const message = error instanceof Error ? error.message : String(error);
	return { code: "failed", message, stack: error instanceof Error ? error.stack : undefined };
}

export function wireError(code, message) {
	const error = new Error(message);
	error.code = code;
	error.wire = true;
	return error;
}
