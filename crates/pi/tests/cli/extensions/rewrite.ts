// Rewrites a request on its way out and the reply on its way in: `context` drops the first
// user message, `context_with_system` checks the system message leads, the provider events add
// a header and a body field and count the stream, and `message_end` replaces the assistant's
// text before the session records it.
export default function (pi: any) {
	let streamEvents = 0;
	let status = 0;
	pi.on("context", (event: any) => {
		const users = event.messages.filter((m: any) => m.role === "user");
		if (users.length < 2) return undefined;
		const first = event.messages.indexOf(users[0]);
		return { messages: event.messages.filter((_: any, i: number) => i !== first) };
	});
	pi.on("context_with_system", (event: any) => {
		if (event.messages[0]?.role !== "system") throw new Error("no leading system message");
		return undefined;
	});
	pi.on("before_provider_headers", (event: any) => {
		event.headers["x-from-extension"] = "yes";
	});
	pi.on("before_provider_request", (event: any) => ({ ...event.payload, x_extension: true }));
	pi.on("after_provider_response", (event: any) => {
		status = event.status;
	});
	pi.on("provider_stream_event", () => {
		streamEvents += 1;
	});
	pi.on("message_end", (event: any) => {
		if (event.message.role !== "assistant") return undefined;
		const text = `rewritten after ${streamEvents} events, status ${status}`;
		return { message: { ...event.message, content: [{ type: "text", text }] } };
	});
}
