// Logs, to the file named by PI_TRACE_FILE, the tool events and hooks an extension sees for the
// calls a codemode script makes: name, call id and the parent call id pi names.
import { appendFileSync } from "node:fs";

const EVENTS = ["tool_execution_start", "tool_execution_end", "tool_call", "tool_result"];

export default function (pi: any) {
	const file = process.env.PI_TRACE_FILE;
	if (!file) return;
	for (const name of EVENTS) {
		pi.on(name, (event: any) => {
			const end = name === "tool_execution_end" || name === "tool_result" ? ` isError=${event.isError}` : "";
			appendFileSync(file, `${name} ${event.toolName} ${event.toolCallId} parent=${event.parentToolCallId ?? "-"}${end}\n`);
		});
	}
}
