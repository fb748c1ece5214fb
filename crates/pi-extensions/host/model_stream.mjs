// `ctx.modelRegistry.stream` and `complete`: one request through pi (`models.complete`) with
// request-time auth. A stream's events come back as `models.event` notifications before pi's
// answer (the final message); aborting the caller's signal sends `models.cancel`, and pi
// stops the request, which then ends as pi-ai's aborted message.

let nextStreamId = 1;
/** The streams waiting for pi's events, by id. */
const open = new Map();

/** `models.event {streamId, event}` from pi. */
export function onModelEvent({ streamId, event }) {
	open.get(streamId)?.push(event);
}

/** A request aborted before it started, shaped as pi-ai's. */
function abortedMessage(model) {
	return {
		role: "assistant",
		content: [],
		api: model?.api,
		provider: model?.provider,
		model: model?.id,
		usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
		stopReason: "aborted",
		errorMessage: "This operation was aborted",
		timestamp: Date.now(),
		durationMs: 0,
	};
}

/** A failed request (the host lost pi, say), shaped as pi-ai's error message. */
function failedMessage(model, error) {
	return { ...abortedMessage(model), stopReason: "error", errorMessage: error instanceof Error ? error.message : String(error) };
}

/** pi-ai's AssistantMessageEventStream as far as extensions use it: async iteration and `result()`. */
class ModelEventStream {
	constructor() {
		this.queue = [];
		this.waiting = [];
		this.ended = false;
	}
	push(event) {
		const next = this.waiting.shift();
		if (next) next({ value: event, done: false });
		else this.queue.push(event);
	}
	end(finalMessage) {
		this.ended = true;
		this.final = finalMessage;
		for (const next of this.waiting.splice(0)) next({ value: undefined, done: true });
	}
	[Symbol.asyncIterator]() {
		return {
			next: () => {
				if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift(), done: false });
				if (this.ended) return Promise.resolve({ value: undefined, done: true });
				return new Promise((resolve) => this.waiting.push(resolve));
			},
		};
	}
	result() {
		return this.settled;
	}
}

/**
 * Start one request for `model`; the stream's `result()` is the final assistant message.
 * `events`: whether pi sends the events (a stream) or only the answer (`complete`).
 */
export function requestModel(runtime, model, context, options = {}, events = true) {
	const { signal, onPayload: _onPayload, ...rest } = options ?? {};
	const stream = new ModelEventStream();
	const finish = (message, terminal) => {
		if (events && terminal) stream.push(terminal);
		stream.end(message);
		return message;
	};
	if (signal?.aborted) {
		const message = abortedMessage(model);
		stream.settled = Promise.resolve(finish(message, { type: "error", reason: "aborted", error: message }));
		return stream;
	}
	const streamId = nextStreamId++;
	if (events) open.set(streamId, stream);
	const cancel = () => runtime.wire.notify("models.cancel", { streamId });
	signal?.addEventListener("abort", cancel, { once: true });
	const ref = { provider: model?.provider, id: model?.id };
	stream.settled = runtime.wire
		.request("models.complete", { model: ref, context, options: rest, streamId, events })
		// pi sent every event (the terminal one included) before its answer.
		.then((message) => finish(message), (error) => {
			const message = failedMessage(model, error);
			return finish(message, { type: "error", reason: "error", error: message });
		})
		.finally(() => {
			signal?.removeEventListener("abort", cancel);
			open.delete(streamId);
		});
	return stream;
}
