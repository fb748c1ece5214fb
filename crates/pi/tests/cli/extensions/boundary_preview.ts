// Records the `context` preview boundary handlers see, one JSON line per handler call in the
// file named by BOUNDARY_LOG. At `agent_before_settle` the first handler proposes a note, an
// edit of the first user message and a mark; the second handler sees them applied. With
// BOUNDARY_INVALID set, the first handler proposes an edit of an entry that does not exist.
import { appendFileSync } from "node:fs";

const text = (content: any): string =>
	typeof content === "string" ? content : (content ?? []).map((part: any) => part.text ?? `[${part.type}]`).join("");

function summary(label: string, event: any) {
	const context = event.context;
	return {
		label,
		proposed: event.entries.map((entry: any) => entry.type),
		entries: context.contextEntries.map(
			(entry: any) =>
				`${entry.sourceEntry.type}:${entry.sourceEntry.message?.role ?? entry.sourceEntry.customType ?? ""}=${entry.messages.length}`,
		),
		messages: context.contextMessages.map((message: any) => message.role),
		llm: context.llmMessages
			.filter((message: any) => message.role !== "system")
			.map((message: any) => `${message.role}:${text(message.content)}`),
		pending: context.pendingMessages.length,
		canContinue: context.canContinue,
	};
}

export default function (pi: any) {
	const log = (line: unknown) => appendFileSync(process.env.BOUNDARY_LOG!, `${JSON.stringify(line)}\n`);
	pi.on("turn_end", (event: any) => {
		log(summary("turn_end", event));
	});
	pi.on("agent_before_settle", (event: any) => {
		log(summary("settle 1", event));
		const user = event.context.contextEntries.find((entry: any) => entry.sourceEntry.message?.role === "user");
		const targetId = process.env.BOUNDARY_INVALID ? "no-such-entry" : user.sourceEntry.id;
		return {
			entries: [
				...event.entries,
				{ type: "custom_message", customType: "note", content: "a note", display: true },
				{ type: "context_edit", targetId, replacement: { content: "edited" } },
				{ type: "custom", customType: "mark", data: { n: 1 } },
			],
		};
	});
	pi.on("agent_before_settle", (event: any) => {
		log(summary("settle 2", event));
	});
}
